import {
  isTerminalRunStatus,
  type RunNetwork,
  type RunStatus,
  TERMINAL_RUN_STATUSES,
  type TerminalRunStatus,
} from '../contract/index.js';
import type { Queryable } from './db.js';
import { StoreError } from './errors.js';
import { date, dateOrNull, jsonColumn, textOrNull } from './rows.js';

export { isTerminalRunStatus, type RunStatus, TERMINAL_RUN_STATUSES, type TerminalRunStatus };

/** A run row. */
export interface Run {
  id: string;
  ownerUserId: string;
  conversationId: string | null;
  status: RunStatus;
  createdAt: Date;
  updatedAt: Date;
  endedAt: Date | null;
  retentionExpiresAt: Date | null;
  deletedAt: Date | null;
  /** What its commands may reach: host rules as written and secret names; empty: no network. */
  network: RunNetwork;
}

/** The run columns every query of a whole run reads, in {@link toRun}'s order. */
export const RUN_COLUMNS = `id, owner_user_id, conversation_id, status, created_at, updated_at, ended_at,
  retention_expires_at, deleted_at, egress_allow, egress_secrets`;

/** A run row as read with {@link RUN_COLUMNS}. */
export function toRun(r: Record<string, unknown>): Run {
  return {
    id: String(r.id),
    ownerUserId: String(r.owner_user_id),
    conversationId: textOrNull(r.conversation_id),
    status: r.status as RunStatus,
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
    endedAt: dateOrNull(r.ended_at),
    retentionExpiresAt: dateOrNull(r.retention_expires_at),
    deletedAt: dateOrNull(r.deleted_at),
    network: {
      allow: jsonColumn<string[] | null>(r.egress_allow) ?? [],
      secrets: jsonColumn<string[] | null>(r.egress_secrets) ?? [],
    },
  };
}

/** What {@link createRun} needs. */
export interface NewRun {
  id: string;
  ownerUserId: string;
  conversationId?: string | null;
  retentionExpiresAt?: Date | null;
  /** Its network policy, already checked against the operator's bounds. Default: none. */
  network?: RunNetwork;
}

/** Inserts a running run. An existing id is a `conflict`. */
export async function createRun(q: Queryable, run: NewRun): Promise<Run> {
  const rows = await q.query(
    `insert into run (id, owner_user_id, conversation_id, retention_expires_at, egress_allow,
       egress_secrets)
     values ($1, $2, $3, $4, $5::text::jsonb, $6::text::jsonb) returning ${RUN_COLUMNS}`,
    [
      run.id,
      run.ownerUserId,
      run.conversationId ?? null,
      run.retentionExpiresAt ?? null,
      JSON.stringify(run.network?.allow ?? []),
      JSON.stringify(run.network?.secrets ?? []),
    ],
  );
  return toRun(rows[0]!);
}

/** Reads a run that has not been deleted; null when absent or deleted. */
export async function getRun(q: Queryable, id: string): Promise<Run | null> {
  const rows = await q.query(
    `select ${RUN_COLUMNS} from run where id = $1 and deleted_at is null`,
    [id],
  );
  return rows[0] ? toRun(rows[0]) : null;
}

/** Reads a run only when `ownerUserId` owns it: another user's run reads as absent. */
export async function getRunForOwner(
  q: Queryable,
  id: string,
  ownerUserId: string,
): Promise<Run | null> {
  const rows = await q.query(
    `select ${RUN_COLUMNS} from run where id = $1 and owner_user_id = $2 and deleted_at is null`,
    [id, ownerUserId],
  );
  return rows[0] ? toRun(rows[0]) : null;
}

/** The outcome of {@link finishRun}. */
export interface FinishRunResult {
  run: Run;
  /** False when the run already had this terminal status (an idempotent repeat). */
  changed: boolean;
}

/**
 * Moves a running run to a terminal status. Repeating the same status is a no-op;
 * asking for a different terminal status than the one recorded is a `conflict`, and
 * an absent run is `not_found`.
 */
export async function finishRun(
  q: Queryable,
  id: string,
  status: TerminalRunStatus,
): Promise<FinishRunResult> {
  const updated = await q.query(
    `update run set status = $2, ended_at = now(), updated_at = now()
     where id = $1 and status = 'running' and deleted_at is null returning ${RUN_COLUMNS}`,
    [id, status],
  );
  if (updated[0]) return { run: toRun(updated[0]), changed: true };
  const current = await getRun(q, id);
  if (!current) throw new StoreError('not_found', `run "${id}" does not exist`);
  if (current.status !== status) {
    throw new StoreError(
      'conflict',
      `run "${id}" already ended as "${current.status}"; it cannot become "${status}"`,
    );
  }
  return { run: current, changed: false };
}

/** Marks a run deleted (its files and commands are removed by cleanup). Idempotent. */
export async function markRunDeleted(q: Queryable, id: string): Promise<boolean> {
  const n = await q.execute(
    `update run set deleted_at = coalesce(deleted_at, now()), updated_at = now() where id = $1`,
    [id],
  );
  return n > 0;
}

/**
 * Runs whose workspace data must be cleaned up: deleted, or past retention, while a
 * workspace row of theirs is not yet marked deleted.
 */
export async function listRunsAwaitingCleanup(
  q: Queryable,
  now: Date,
  limit = 100,
): Promise<Run[]> {
  const rows = await q.query(
    `select ${RUN_COLUMNS} from run r
     where (r.deleted_at is not null or r.retention_expires_at <= $1)
       and exists (select 1 from workbench_workspace w
                   where w.run_id = r.id and w.status <> 'deleted')
     order by r.id limit $2`,
    [now, limit],
  );
  return rows.map(toRun);
}

/**
 * The runs `ownerUserId` owns, newest first, a page at a time: only `status` when
 * given, only runs older than the run `before` (the previous page's last id) when
 * given. Deleted runs are left out. Another user's run as `before` matches no row, so
 * the page is empty rather than a window onto that user's runs.
 */
export async function listRunsForOwner(
  q: Queryable,
  ownerUserId: string,
  options: { status?: RunStatus; limit: number; before?: string },
): Promise<Run[]> {
  const rows = await q.query(
    `select ${RUN_COLUMNS} from run r
     where r.owner_user_id = $1 and r.deleted_at is null
       and ($2::text is null or r.status = $2::text)
       and ($3::text is null or (r.created_at, r.id) < (
         select b.created_at, b.id from run b where b.id = $3::text and b.owner_user_id = $1))
     order by r.created_at desc, r.id desc
     limit $4::int`,
    [ownerUserId, options.status ?? null, options.before ?? null, options.limit],
  );
  return rows.map(toRun);
}
