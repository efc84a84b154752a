/**
 * The command queue's statements other than its worker's moves (those are in
 * `command-lease.ts`): the enqueue, which writes its audit event in the same statement
 * (and may insert the command already claimed), the notice to other nodes' workers,
 * reads, the live counts, deletion and listing.
 *
 * @module
 */

import { WorkbenchError } from '../contract/index.js';
import { CallIdConflict, getCallRecord, sameCall } from './call-keys.js';
import { enqueueEventsInsert } from './command-events.js';
import { DEFAULT_FOLLOW_UP_LEAD_MS, placeSql } from './command-place.js';
import { COLUMNS, type Command, type CommandStatus, toCommand } from './command-row.js';
import type { Db, Queryable, Subscription } from './db.js';
import { workspaceHeadJoin } from './manifest.js';

export {
  type Command,
  type CommandStatus,
  type FilesRefused,
  TERMINAL_COMMAND_STATUSES,
  type TerminalCommandStatus,
} from './command-row.js';

/**
 * The channel an enqueue notifies (Postgres `NOTIFY`, payload: a {@link QueuedNotice}
 * as JSON), so idle workers of other nodes claim without waiting for their poll.
 */
export const COMMAND_QUEUED_CHANNEL = 'memql_command_queued';

/** What a worker hears of a command queued anywhere. */
export interface QueuedNotice {
  /** Who queued it (the `notify` of {@link EnqueueOptions}): that queue woke itself. */
  sender: string;
  /**
   * The node holding the run's workspace when it was queued, or null when none held
   * it: only that node's workers may claim it while it lives (see {@link ClaimAffinity}).
   */
  holder: string | null;
}

/** What {@link enqueueCommand} needs. */
export interface NewCommand {
  id: string;
  runId: string;
  workspaceId?: string | null;
  ownerUserId: string;
  conversationId?: string | null;
  callId?: string | null;
  /**
   * With a `callId`: the call's action and digest, recorded under the key in the same
   * statement (see `call-keys.ts`). Without them the key is recorded as `exec` with no
   * digest, so any repeat replays it.
   */
  call?: { action: string; digest: string; nodeId: string };
  request: Record<string, unknown>;
  timeoutMs: number;
}

/** Options of {@link enqueueCommand}. */
export interface EnqueueOptions {
  /**
   * Also `NOTIFY` {@link COMMAND_QUEUED_CHANNEL}, in the same statement, naming this
   * sender (a queue of node `nodeId`), unless `nodeId` holds the run's workspace: then
   * only that node's workers may claim the command, and the sender woke its own. Only
   * worth it on a driver that can listen.
   */
  notify?: { sender: string; nodeId: string };
  /**
   * Insert the command already claimed by this worker (`running`, its lease taken),
   * when nothing queued waits and no other node holds the run's workspace: the
   * enqueuing worker has a free slot and runs it itself, with no claim statement and no
   * wait. Otherwise it is queued as without the option.
   */
  claim?: { leaseOwner: string; leaseMs: number; nodeId: string };
  /**
   * How far before its arrival a later command of a run may stand in the queue, ms
   * (`MEMQL_QUEUE_FOLLOW_UP_LEAD_MS`; see `command-place.ts`). Default 30000; 0 is
   * first come, first served.
   */
  followUpLeadMs?: number;
}

/**
 * Queues a command at its place (`command-place.ts`) and writes its
 * `workspace_command.queued` event, in one statement.
 * A `callId` is recorded under the run's keys in the same statement. With a key the run
 * already has, nothing is inserted (and no event written): the command the key names
 * is returned with `created: false`, or, when the key names another call (another
 * digest, or a file action), {@link CallIdConflict} is thrown; when retention removed
 * the command the key names, `command_expired` is.
 */
export async function enqueueCommand(
  q: Queryable,
  cmd: NewCommand,
  options: EnqueueOptions = {},
): Promise<{ command: Command; created: boolean }> {
  // A notice costs more than its message: Postgres serializes the commits of notifying
  // transactions. The enqueue of a node for a run it holds (every call through a host)
  // sends none.
  const notify =
    options.notify === undefined
      ? ''
      : `, (select case when h.node_id is distinct from $14::text then
             pg_notify('${COMMAND_QUEUED_CHANNEL}',
               json_build_object('sender', $13::text, 'holder', h.node_id)::text) end
           from (select (select w.node_id from workbench_workspace w
                         where w.run_id = $2 and w.status = 'provisioned') as node_id) h)
           as notified`;
  const claim = options.claim;
  const n = options.notify === undefined ? 13 : 15;
  // The claim's guard: nothing queued waits (it might stand ahead) and the run's workspace
  // is this node's or nobody's.
  const claimed = claim
    ? `(not exists (select 1 from workspace_command where status = 'queued')
         and not exists (select 1 from workbench_workspace w where w.run_id = $2
                         and w.status = 'provisioned' and w.node_id <> $${n + 2}))`
    : 'false';
  const rows = await q.query(
    `with gate as (select ${claimed} as claim),
     keyed as (
       insert into workbench_call (run_id, call_id, action, digest, command_id, node_id)
       select $2, $6::text, $9::text, $10::text, $1, $11::text where $6::text is not null
       on conflict do nothing returning 1
     ),
     inserted as (
       insert into workspace_command (id, run_id, workspace_id, owner_user_id, conversation_id,
         call_id, request, timeout_ms, status, lease_owner, lease_expires_at, attempts, started_at,
         queue_place)
       select $1, $2, $3, $4, $5, $6, $7::text::jsonb, $8,
         case when g.claim then 'running' else 'queued' end,
         case when g.claim then $${n}::text end,
         case when g.claim then now() + ($${n + 1}::bigint * interval '1 millisecond') end,
         case when g.claim then 1 else 0 end,
         case when g.claim then now() end,
         ${placeSql(2, 12)}
       from gate g
       where $6::text is null or exists (select 1 from keyed)
       on conflict (run_id, call_id) where call_id is not null do nothing
       returning ${COLUMNS}
     ), events as (${enqueueEventsInsert('inserted')})
     select ${COLUMNS}${notify}${claim ? ', wh.*' : ''} from inserted
       ${claim ? workspaceHeadJoin('inserted.run_id') : ''}`,
    [
      cmd.id,
      cmd.runId,
      cmd.workspaceId ?? null,
      cmd.ownerUserId,
      cmd.conversationId ?? null,
      cmd.callId ?? null,
      JSON.stringify(cmd.request),
      cmd.timeoutMs,
      cmd.call?.action ?? 'exec',
      cmd.call?.digest ?? null,
      cmd.call?.nodeId ?? null,
      options.followUpLeadMs ?? DEFAULT_FOLLOW_UP_LEAD_MS,
      ...(options.notify === undefined ? [] : [options.notify.sender, options.notify.nodeId]),
      claim?.leaseOwner ?? null,
      claim?.leaseMs ?? 0,
      ...(claim ? [claim.nodeId] : []),
    ],
  );
  if (rows[0]) return { command: toCommand(rows[0]), created: true };
  const record = await getCallRecord(q, cmd.runId, cmd.callId!);
  const digest = cmd.call?.digest;
  if (record && (record.commandId === null || (digest && !sameCall(record, digest)))) {
    throw new CallIdConflict(record);
  }
  const first = await getCommandByCallId(q, cmd.runId, cmd.callId!);
  if (first === null) {
    // The key outlives its command: retention removed the row, and the call is not run
    // again under the same key.
    throw new WorkbenchError(
      'command_expired',
      `command_expired: the command callId "${cmd.callId}" queued in this run finished longer ago than this deployment keeps command results (MEMQL_COMMAND_KEEP_MS), and its record was removed; it is not run again under this callId. Send it with a new callId to run it again`,
    );
  }
  return { command: first, created: false };
}

/**
 * Calls `onQueued` for every notice an {@link enqueueCommand} with `notify` sent, on
 * any node, and `onListening` each time the listening connection is (re)established
 * (what was queued while it was down is not announced). Null when the driver cannot
 * listen: PGlite is one connection in this process, where the enqueuing queue wakes
 * its own worker and polling finds the rest.
 */
export function listenForQueuedCommands(
  db: Db,
  onQueued: (notice: QueuedNotice) => void,
  onListening?: () => void,
): Promise<Subscription> | null {
  if (!db.listen) return null;
  return db.listen(
    COMMAND_QUEUED_CHANNEL,
    (payload) => {
      const notice = parseQueuedNotice(payload);
      if (notice) onQueued(notice);
    },
    onListening,
  );
}

/** A {@link QueuedNotice} from its payload; null for anything else on the channel. */
function parseQueuedNotice(payload: string): QueuedNotice | null {
  try {
    const v = JSON.parse(payload) as { sender?: unknown; holder?: unknown };
    if (typeof v.sender !== 'string') return null;
    return { sender: v.sender, holder: typeof v.holder === 'string' ? v.holder : null };
  } catch {
    return null;
  }
}

/** Reads one command. */
export async function getCommand(q: Queryable, id: string): Promise<Command | null> {
  const rows = await q.query(`select ${COLUMNS} from workspace_command where id = $1`, [id]);
  return rows[0] ? toCommand(rows[0]) : null;
}

/** The command a call with key `callId` queued in run `runId`, or null. */
export async function getCommandByCallId(
  q: Queryable,
  runId: string,
  callId: string,
): Promise<Command | null> {
  const rows = await q.query(
    `select ${COLUMNS} from workspace_command where run_id = $1 and call_id = $2`,
    [runId, callId],
  );
  return rows[0] ? toCommand(rows[0]) : null;
}

/** Reads several commands in one statement; ids without a row are absent from the result. */
export async function getCommands(q: Queryable, ids: readonly string[]): Promise<Command[]> {
  if (ids.length === 0) return [];
  const rows = await q.query(
    `select ${COLUMNS} from workspace_command where id = any($1::text[])`,
    [ids],
  );
  return rows.map(toCommand);
}

/** How many commands are in each live status, for telemetry. */
export async function countLiveCommands(
  q: Queryable,
): Promise<{ queued: number; running: number; cancelling: number }> {
  const rows = await q.query(
    `select count(*) filter (where status = 'queued') as queued,
       count(*) filter (where status = 'running' and not cancel_requested) as running,
       count(*) filter (where status = 'running' and cancel_requested) as cancelling
     from workspace_command where status in ('queued', 'running')`,
  );
  const r = rows[0] ?? {};
  return { queued: Number(r.queued), running: Number(r.running), cancelling: Number(r.cancelling) };
}

/** Removes a run's command rows (run deletion); returns how many. */
export async function deleteRunCommands(q: Queryable, runId: string): Promise<number> {
  return q.execute(
    `with keys as (delete from workbench_call where run_id = $1)
     delete from workspace_command where run_id = $1`,
    [runId],
  );
}

/**
 * A run's commands, newest first: by `queued_at` then id, both descending, so commands
 * queued in the same instant still have one order and a page boundary never skips or
 * repeats one. At most `limit`, of one `status` when given, and only those after
 * `before` in that order (`before` is a command id of this run; any other id lists
 * nothing). Output, request and expected outputs are not read: a list never carries them, and
 * {@link getCommand} reads one command whole.
 */
export async function listRunCommands(
  q: Queryable,
  runId: string,
  options: { status?: CommandStatus; limit: number; before?: string },
): Promise<Omit<Command, 'stdout' | 'stderr' | 'request' | 'outputs'>[]> {
  const unread = ['stdout', 'stderr', 'request', 'outputs'];
  const columns = COLUMNS.split(',')
    .map((c) => c.trim())
    .filter((c) => !unread.includes(c))
    .map((c) => `c.${c}`)
    .join(', ');
  const rows = await q.query(
    `select ${columns} from workspace_command c
     where c.run_id = $1
       and ($2::text is null or c.status = $2::text)
       and ($3::text is null or (c.queued_at, c.id) < (
         select b.queued_at, b.id from workspace_command b where b.id = $3::text and b.run_id = $1))
     order by c.queued_at desc, c.id desc
     limit $4::int`,
    [runId, options.status ?? null, options.before ?? null, options.limit],
  );
  return rows.map((r) => {
    const { stdout: _stdout, stderr: _stderr, request: _request, ...summary } = toCommand(r);
    return summary;
  });
}
