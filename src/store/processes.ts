/**
 * A run's background processes and their output, durably: the rows a replica writes as
 * it starts a process, appends its output and records its end, and that any agent
 * replica reads (a process by id, a run's processes, output from an offset).
 *
 * - **Start** is one statement that also holds the run's cap on live processes: a start
 *   beyond it inserts nothing and says how many run. A start with a `callId` the run
 *   used already answers the process it started (one key, one process).
 * - **Output** is appended in order per stream: a chunk lands only at the stream's
 *   current end (its byte count moves with it, in the same statement), so a chunk sent
 *   twice is a duplicate and a chunk after a lost one is a gap, never a hole in what a
 *   reader sees. Output lands only while the process runs: once it ended, what it
 *   printed is complete.
 * - **End** moves a running process of this node to `exited`, `killed` or
 *   `node_stopping`; {@link loseProcesses} moves a node's running processes to `lost`
 *   (its process is gone). Each move writes its `workspace_process.*` audit event in the
 *   same statement, with ids, status, exit code, signal, byte counts and duration:
 *   never the request (command text, environment) or output.
 *
 * @module
 */

import type { ProcessErrorCode } from '../contract/index.js';
import type { Queryable } from './db.js';
import { bytesOrNull, date, dateOrNull, jsonColumn, textOrNull } from './rows.js';

/** Where a process is: running, or how it ended. */
export type ProcessStatus = 'running' | 'exited' | 'killed' | 'lost' | 'node_stopping';

/** The statuses a process ends in. */
export type ProcessEnd = Exclude<ProcessStatus, 'running'>;

/** One of a process's output streams (a PTY's output is `stdout`). */
export type ProcessStream = 'stdout' | 'stderr';

/** A process row. */
export interface ProcessRow {
  id: string;
  runId: string;
  ownerUserId: string;
  /** The replica that runs (or ran) it. */
  nodeId: string;
  callId: string | null;
  /** What started it: command, cwd, env, pty. Never stdin. */
  request: Record<string, unknown>;
  status: ProcessStatus;
  /** Why it ended without its own doing; null while it runs, or when it did. */
  errorCode: ProcessErrorCode | null;
  exitCode: number | null;
  signal: string | null;
  /** Bytes of each stream kept so far. */
  stdoutBytes: number;
  stderrBytes: number;
  startedAt: Date;
  endedAt: Date | null;
}

/** What {@link startProcess} records. */
export interface NewProcess {
  id: string;
  runId: string;
  ownerUserId: string;
  nodeId: string;
  callId?: string | null;
  request: Record<string, unknown>;
}

/** The `workspace_process.*` audit event types. */
export const PROCESS_EVENT_TYPES = [
  'workspace_process.started',
  'workspace_process.exited',
  'workspace_process.killed',
  'workspace_process.lost',
] as const;

const COLUMNS = `id, run_id, owner_user_id, node_id, call_id, request, status, error_code,
  exit_code, signal, stdout_bytes, stderr_bytes, started_at, ended_at`;

/** Byte-count column of each stream. */
const BYTES_COLUMN: Record<ProcessStream, string> = {
  stdout: 'stdout_bytes',
  stderr: 'stderr_bytes',
};
const STREAM_CODE: Record<ProcessStream, number> = { stdout: 1, stderr: 2 };

function toProcess(r: Record<string, unknown>): ProcessRow {
  return {
    id: String(r.id),
    runId: String(r.run_id),
    ownerUserId: String(r.owner_user_id),
    nodeId: String(r.node_id),
    callId: textOrNull(r.call_id),
    request: jsonColumn<Record<string, unknown>>(r.request ?? {}),
    status: r.status as ProcessStatus,
    errorCode: textOrNull(r.error_code) as ProcessErrorCode | null,
    exitCode: r.exit_code === null || r.exit_code === undefined ? null : Number(r.exit_code),
    signal: textOrNull(r.signal),
    stdoutBytes: Number(r.stdout_bytes),
    stderrBytes: Number(r.stderr_bytes),
    startedAt: date(r.started_at),
    endedAt: dateOrNull(r.ended_at),
  };
}

/**
 * The audit insert of the rows of CTE `source` (a `returning ${COLUMNS}`), as event
 * `type` (a SQL expression over the row, `p`). Metadata: an allow-list of scalars.
 */
function processEventsInsert(source: string, type: string): string {
  return `insert into audit_event (event_type, run_id, owner_user_id, metadata)
    select ${type}, p.run_id, p.owner_user_id, jsonb_build_object(
      'processId', p.id, 'nodeId', p.node_id, 'status', p.status, 'errorCode', p.error_code,
      'exitCode', p.exit_code,
      'signal', case when p.signal ~ '^SIG[A-Z0-9+-]{1,12}$' then p.signal end,
      'stdoutBytes', p.stdout_bytes, 'stderrBytes', p.stderr_bytes,
      'durationMs', case when p.ended_at is null then null else greatest(0,
        floor(extract(epoch from p.ended_at) * 1000) - floor(extract(epoch from p.started_at) * 1000))::bigint end)
    from ${source} p`;
}

/** The event a move into an end status is: `node_stopping` is a kill by the node. */
const END_EVENT_SQL = `'workspace_process.' || case p.status when 'node_stopping' then 'killed' else p.status end`;

/** What {@link startProcess} did. */
export type ProcessStart =
  | { readonly kind: 'started'; readonly process: ProcessRow }
  /** The run used this `callId` already: the process it started then. */
  | { readonly kind: 'replayed'; readonly process: ProcessRow }
  /** The run has `live` processes running, its cap: nothing was started. */
  | { readonly kind: 'limit'; readonly live: number };

/**
 * Records a process as running on `nodeId`, with its `started` event, unless the run
 * already has `maxLive` running (then nothing) or used `callId` already (then that one).
 */
export async function startProcess(
  q: Queryable,
  p: NewProcess,
  maxLive: number,
): Promise<ProcessStart> {
  const callId = p.callId ?? null;
  const rows = await q.query(
    `with live as (
       select count(*)::int as n from workspace_process where run_id = $2 and status = 'running'
     ), inserted as (
       insert into workspace_process (id, run_id, owner_user_id, node_id, call_id, request)
       select $1, $2, $3, $4, $5, $6::text::jsonb from live where live.n < $7
       on conflict (run_id, call_id) do nothing
       returning ${COLUMNS}
     ), events as (${processEventsInsert('inserted', `'workspace_process.started'`)})
     select 'started' as kind, (select n from live) as live, ${COLUMNS} from inserted
     union all
     select 'replayed', (select n from live), ${COLUMNS} from workspace_process
       where $5::text is not null and run_id = $2 and call_id = $5::text
     union all
     select 'none', (select n from live), ${COLUMNS.replace(/\w+/g, 'null')}`,
    [p.id, p.runId, p.ownerUserId, p.nodeId, callId, JSON.stringify(p.request), maxLive],
  );
  const started = rows.find((r) => r.kind === 'started');
  if (started) return { kind: 'started', process: toProcess(started) };
  const replayed = rows.find((r) => r.kind === 'replayed');
  if (replayed) return { kind: 'replayed', process: toProcess(replayed) };
  return { kind: 'limit', live: Number(rows[0]?.live ?? 0) };
}

/** What {@link appendProcessOutput} did with a chunk. */
export type AppendResult =
  /** Kept: the stream now ends at `offset + bytes.length`. */
  | 'appended'
  /** The stream already holds these bytes (a chunk sent again). */
  | 'duplicate'
  /** Not at the stream's end: a chunk before it is missing. Nothing was kept. */
  | 'gap'
  /** The process is not running (ended, or no such process): nothing was kept. */
  | 'not_running';

/**
 * Appends one chunk of a running process's output at `offset` of its stream, which must
 * be the stream's current end (see the module comment).
 */
export async function appendProcessOutput(
  q: Queryable,
  processId: string,
  stream: ProcessStream,
  offset: number,
  bytes: Uint8Array,
): Promise<AppendResult> {
  if (bytes.length === 0) return 'duplicate';
  const column = BYTES_COLUMN[stream];
  const rows = await q.query(
    `with moved as (
       update workspace_process set ${column} = ${column} + $4
       where id = $1 and status = 'running' and ${column} = $3
       returning id
     ), kept as (
       insert into workspace_process_output (process_id, stream, start_offset, bytes)
       select $1, $2, $3, $5 from moved returning 1
     )
     select (select count(*)::int from kept) as kept, p.status, p.${column} as total
     from (select 1) one left join workspace_process p on p.id = $1`,
    [processId, STREAM_CODE[stream], offset, bytes.length, Buffer.from(bytes)],
  );
  const r = rows[0] ?? {};
  if (Number(r.kept) === 1) return 'appended';
  if (r.status !== 'running') return 'not_running';
  // The statement read the row as it was before: `total` is the end the chunk missed.
  return offset + bytes.length <= Number(r.total) ? 'duplicate' : 'gap';
}

/** A piece of a stream, from {@link readProcessOutput}. */
export interface OutputRead {
  /** The bytes from `offset`, at most the asked-for count. */
  bytes: Buffer;
  /** Where they start in the stream (the offset asked for, or the stream's end if past it). */
  offset: number;
  /** Where the next read starts: `offset + bytes.length`. */
  next: number;
  /** The stream's length so far. */
  total: number;
  /** True when the process has ended and `next` is the stream's end: nothing more will come. */
  complete: boolean;
  /** The process's status as the read found it. */
  status: ProcessStatus;
}

/**
 * Reads a process's stream from `offset`, at most `maxBytes`; null when there is no such
 * process. An offset past the stream's end reads nothing, from its end.
 */
export async function readProcessOutput(
  q: Queryable,
  processId: string,
  stream: ProcessStream,
  offset: number,
  maxBytes: number,
): Promise<OutputRead | null> {
  const column = BYTES_COLUMN[stream];
  const head = await q.query(
    `select status, ${column} as total from workspace_process where id = $1`,
    [processId],
  );
  if (head.length === 0) return null;
  const total = Number(head[0]!.total);
  const status = head[0]!.status as ProcessStatus;
  const ended = status !== 'running';
  const from = Math.min(Math.max(0, offset), total);
  const until = Math.min(total, from + Math.max(0, maxBytes));
  const chunks =
    until > from
      ? await q.query(
          `select start_offset, bytes from workspace_process_output
           where process_id = $1 and stream = $2
             and start_offset < $4 and start_offset + length(bytes) > $3
           order by start_offset`,
          [processId, STREAM_CODE[stream], from, until],
        )
      : [];
  const parts: Buffer[] = [];
  for (const c of chunks) {
    const start = Number(c.start_offset);
    const data = bytesOrNull(c.bytes) ?? Buffer.alloc(0);
    parts.push(data.subarray(Math.max(0, from - start), Math.min(data.length, until - start)));
  }
  const bytes = Buffer.concat(parts);
  const next = from + bytes.length;
  return { bytes, offset: from, next, total, complete: ended && next >= total, status };
}

/** How a process ended, for {@link endProcess}. */
export interface ProcessOutcome {
  status: Exclude<ProcessEnd, 'lost'>;
  exitCode?: number | null;
  signal?: string | null;
  /** `node_stopping` with that status; `process_lifetime` for a kill at its lifetime. */
  errorCode?: Exclude<ProcessErrorCode, 'process_lost'> | null;
}

/**
 * Records the end of a running process of `nodeId`, with its event; null when it was not
 * running there (ended already, lost, another node's).
 */
export async function endProcess(
  q: Queryable,
  id: string,
  nodeId: string,
  outcome: ProcessOutcome,
): Promise<ProcessRow | null> {
  const rows = await q.query(
    `with ended as (
       update workspace_process
       set status = $3, exit_code = $4, signal = $5, error_code = $6, ended_at = now()
       where id = $1 and node_id = $2 and status = 'running'
       returning ${COLUMNS}
     ), events as (${processEventsInsert('ended', END_EVENT_SQL)})
     select ${COLUMNS} from ended`,
    [
      id,
      nodeId,
      outcome.status,
      outcome.exitCode ?? null,
      outcome.signal ?? null,
      outcome.errorCode ?? null,
    ],
  );
  return rows[0] ? toProcess(rows[0]) : null;
}

/**
 * Moves every running process of `nodeId` (of run `runId` only, when given) to `lost`,
 * with their events: the node's process that ran them is gone (it started again, or
 * another node took its workspace over as lost). Returns them.
 */
export async function loseProcesses(
  q: Queryable,
  nodeId: string,
  runId?: string,
): Promise<ProcessRow[]> {
  const rows = await q.query(
    `with lost as (
       update workspace_process set status = 'lost', error_code = 'process_lost', ended_at = now()
       where node_id = $1 and status = 'running' and ($2::text is null or run_id = $2::text)
       returning ${COLUMNS}
     ), events as (${processEventsInsert('lost', `'workspace_process.lost'`)})
     select ${COLUMNS} from lost`,
    [nodeId, runId ?? null],
  );
  return rows.map(toProcess);
}

/** One process by id; null when there is none. */
export async function getProcess(q: Queryable, id: string): Promise<ProcessRow | null> {
  const rows = await q.query(`select ${COLUMNS} from workspace_process where id = $1`, [id]);
  return rows[0] ? toProcess(rows[0]) : null;
}

/**
 * A run's processes, newest first (by start, then id), at most `limit`, only those after
 * `before` (a process id of this run) in that order.
 */
export async function listRunProcesses(
  q: Queryable,
  runId: string,
  options: { limit: number; before?: string; status?: ProcessStatus },
): Promise<ProcessRow[]> {
  const rows = await q.query(
    `select ${COLUMNS} from workspace_process p
     where p.run_id = $1 and ($2::text is null or p.status = $2::text)
       and ($3::text is null or (p.started_at, p.id) < (
         select b.started_at, b.id from workspace_process b where b.id = $3::text and b.run_id = $1))
     order by p.started_at desc, p.id desc
     limit $4::int`,
    [runId, options.status ?? null, options.before ?? null, options.limit],
  );
  return rows.map(toProcess);
}

/** Removes a run's processes and their output (run deletion); returns how many processes. */
export async function deleteRunProcesses(q: Queryable, runId: string): Promise<number> {
  return q.execute(
    `with output as (
       delete from workspace_process_output o using workspace_process p
       where o.process_id = p.id and p.run_id = $1
     )
     delete from workspace_process where run_id = $1`,
    [runId],
  );
}
