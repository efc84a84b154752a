/**
 * The `workspace_command.*` audit events, written by the statement of the move itself.
 *
 * Every move of a command (queued, claimed, finished, cancelled while queued,
 * recovered) is one statement: its `insert` or `update ... returning` feeds an
 * `insert into audit_event` in a data-modifying CTE ({@link commandEventsInsert}), so the
 * event exists exactly when the move happened and costs no transaction round trips.
 *
 * The metadata of an event is an explicit allow-list of fields: ids, statuses, codes,
 * counts and durations. Each field is given here twice, side by side: as the value read
 * from a {@link Command} (what log lines carry, {@link commandEventMetadata}) and as the
 * SQL expression the statement stores; a test holds the two to the same result on real
 * rows. A column added to the table later, or anything in `request` (command text, env,
 * stdin), stays out until someone adds it here on purpose. Output appears only as byte
 * counts and truncation flags.
 *
 * @module
 */

import type { AuditMetadata } from './audit-events.js';
import type { Command } from './command-row.js';

/** A signal name worth recording; anything else is recorded as null. */
const SIGNAL_NAME = /^SIG[A-Z0-9+-]{1,12}$/;
/** The same pattern in Postgres' regular expressions. */
const SIGNAL_NAME_SQL = `'^SIG[A-Z0-9+-]{1,12}$'`;

/** Milliseconds from `from` to `to` (never negative); null unless both are set. */
function msBetween(from: Date | null, to: Date | null): number | null {
  if (from === null || to === null) return null;
  const d = to.getTime() - from.getTime();
  return Number.isFinite(d) ? Math.max(0, d) : null;
}

/**
 * {@link msBetween} in SQL. Both drivers hand timestamps back as Dates truncated to the
 * millisecond, so each side is floored to the millisecond before subtracting.
 */
function msBetweenSql(from: string, to: string): string {
  const ms = (t: string) => `floor(extract(epoch from ${t}) * 1000)`;
  return `(case when ${from} is null or ${to} is null then null
    else greatest(0, ${ms(to)} - ${ms(from)})::bigint end)`;
}

/**
 * Milliseconds the command waited in the queue before a worker claimed it; null
 * when it never started (still queued, or cancelled while queued).
 */
export function queueWaitMs(command: Command): number | null {
  return msBetween(command.queuedAt, command.startedAt);
}

/**
 * Milliseconds from claim to terminal status (the time it held a worker slot); null
 * until it has both.
 */
export function commandDurationMs(command: Command): number | null {
  return msBetween(command.startedAt, command.finishedAt);
}

/** One allow-listed field: its value from a row, and the SQL over a row alias `r`. */
interface EventField {
  value(command: Command): string | number | boolean | null;
  sql(r: string): string;
}

/** The allow-list, in the order log lines show it. */
const FIELDS = {
  commandId: { value: (c) => c.id, sql: (r) => `${r}.id` },
  workspaceId: { value: (c) => c.workspaceId, sql: (r) => `${r}.workspace_id` },
  runId: { value: (c) => c.runId, sql: (r) => `${r}.run_id` },
  conversationId: { value: (c) => c.conversationId, sql: (r) => `${r}.conversation_id` },
  status: { value: (c) => c.status, sql: (r) => `${r}.status` },
  timeoutMs: { value: (c) => c.timeoutMs, sql: (r) => `${r}.timeout_ms` },
  attempts: { value: (c) => c.attempts, sql: (r) => `${r}.attempts` },
  cancelRequested: { value: (c) => c.cancelRequested, sql: (r) => `${r}.cancel_requested` },
  errorCode: { value: (c) => c.errorCode, sql: (r) => `${r}.error_code` },
  errorCategory: { value: (c) => c.errorCategory, sql: (r) => `${r}.error_category` },
  exitCode: { value: (c) => c.exitCode, sql: (r) => `${r}.exit_code` },
  signal: {
    value: (c) => (c.signal !== null && SIGNAL_NAME.test(c.signal) ? c.signal : null),
    sql: (r) => `(case when ${r}.signal ~ ${SIGNAL_NAME_SQL} then ${r}.signal end)`,
  },
  oomKilled: { value: (c) => c.oomKilled, sql: (r) => `${r}.oom_killed` },
  queueWaitMs: {
    value: queueWaitMs,
    sql: (r) => msBetweenSql(`${r}.queued_at`, `${r}.started_at`),
  },
  durationMs: {
    value: commandDurationMs,
    sql: (r) => msBetweenSql(`${r}.started_at`, `${r}.finished_at`),
  },
  execDurationMs: { value: (c) => c.execDurationMs, sql: (r) => `${r}.exec_duration_ms` },
  stdoutBytes: {
    value: (c) => c.stdout?.length ?? 0,
    sql: (r) => `coalesce(octet_length(${r}.stdout), 0)`,
  },
  stderrBytes: {
    value: (c) => c.stderr?.length ?? 0,
    sql: (r) => `coalesce(octet_length(${r}.stderr), 0)`,
  },
  stdoutTruncated: { value: (c) => c.stdoutTruncated, sql: (r) => `${r}.stdout_truncated` },
  stderrTruncated: { value: (c) => c.stderrTruncated, sql: (r) => `${r}.stderr_truncated` },
} satisfies Record<string, EventField>;

/** The name of an allow-listed metadata field. */
export type CommandEventField = keyof typeof FIELDS;

/** The allow-listed metadata of a command, read from its row (what log lines carry). */
export function commandEventMetadata(command: Command): AuditMetadata {
  const metadata: AuditMetadata = {};
  for (const [name, field] of Object.entries(FIELDS)) metadata[name] = field.value(command);
  return metadata;
}

/** {@link commandEventMetadata} as a `jsonb` expression over the row alias `r`. */
export function commandEventMetadataSql(
  r: string,
  overrides: Partial<Record<CommandEventField, string>> = {},
): string {
  const pairs = Object.entries(FIELDS).map(
    ([name, field]) => `'${name}', ${overrides[name as CommandEventField] ?? field.sql(r)}`,
  );
  return `jsonb_build_object(${pairs.join(',\n    ')})`;
}

/**
 * Which event a move writes: the one its new status names (`queued`, `running`,
 * `cancelled` and the three ends), or `recovered_stale` for a running command that
 * recovery ended as `failed`.
 */
export type CommandEventOf = 'status' | 'recovered_stale';

/**
 * The body of a data-modifying CTE that writes one event per row of `source` (an
 * earlier CTE returning the command columns), in queue order, so the event ids of
 * a batch follow the order its commands were queued.
 */
export function commandEventsInsert(source: string, of: CommandEventOf = 'status'): string {
  const eventType =
    of === 'status' ? `'workspace_command.' || e.status` : `'workspace_command.recovered_stale'`;
  return `insert into audit_event (event_type, run_id, workspace_id, command_id, owner_user_id,
      metadata)
    select ${eventType}, e.run_id, e.workspace_id, e.id, e.owner_user_id,
      ${commandEventMetadataSql('e')}
    from ${source} e order by e.queued_at, e.id`;
}

/**
 * The events of the rows an enqueue inserted (`source` a CTE of them): each row's
 * `workspace_command.queued` event, as a row still queued carries it, then, for a row
 * its enqueuing worker claimed in the same statement, its `workspace_command.running`
 * event; in queue order, each command's two events one after the other.
 */
export function enqueueEventsInsert(source: string): string {
  const asQueued = commandEventMetadataSql('e', {
    status: `'queued'`,
    attempts: '0',
    queueWaitMs: 'null',
    durationMs: 'null',
  });
  return `insert into audit_event (event_type, run_id, workspace_id, command_id, owner_user_id,
      metadata)
    select case v.n when 1 then 'workspace_command.queued' else 'workspace_command.' || e.status end,
      e.run_id, e.workspace_id, e.id, e.owner_user_id,
      case v.n when 1 then ${asQueued} else ${commandEventMetadataSql('e')} end
    from ${source} e cross join (values (1), (2)) v(n)
    where v.n = 1 or e.status = 'running'
    order by e.queued_at, e.id, v.n`;
}
