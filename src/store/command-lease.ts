/**
 * The moves of a command that its worker makes under a lease: claim (several at once,
 * only of runs the node may hold), heartbeat, expire, finish (claiming the slot's next
 * commands in the same statement), cancel, and the recovery of commands whose worker
 * is gone. Like the enqueue (`commands.ts`), each is one statement that also writes its
 * audit event, and every guard (status, lease owner) is checked by the update itself.
 *
 * @module
 */

import type { CommandEgress, ExpectedOutputResult } from '../contract/index.js';
import { artifactsInsert, artifactsParam, type NewArtifact } from './artifacts.js';
import { commandEventsInsert } from './command-events.js';
import {
  COLUMNS,
  type Command,
  columnsOf,
  type FilesRefused,
  type TerminalCommandStatus,
  toCommand,
} from './command-row.js';
import { getCommand } from './commands.js';
import type { Queryable } from './db.js';
import type { GoneEvidence } from './db-continuity.js';
import { NO_HEAD_COLUMNS, workspaceHeadJoin } from './manifest.js';
import { evidenceParams, mayBeLiveWorkerCondition } from './workers.js';

/**
 * Which commands a node may claim: those of runs whose workspace it holds, whose
 * workspace no node holds, or whose holder is gone (no live worker). A run's
 * commands thus wait for a live holder however long its queue is (queue wait is the
 * signal to add capacity), and only a dead holder's work moves, through a fenced
 * takeover by the node that claims it.
 */
export interface ClaimAffinity {
  nodeId: string;
  /** How long a worker's heartbeat counts it live, ms. */
  livenessMs: number;
  /**
   * When an old heartbeat proves a holder gone: only once the database has been steady
   * (`db-continuity.ts`), so an outage everyone lived through moves no workspace.
   * Without it, an old heartbeat is taken at its word.
   */
  evidence?: GoneEvidence;
}

/**
 * Claims up to `limit` of the first claimable queued commands for `leaseOwner`, in the
 * order of their places in the queue (`command-place.ts`: a run's later command stands
 * where its previous one stood, at most the follow-up lead before its own arrival), and
 * writes their `workspace_command.running` events, in one statement; returns them in
 * that order (none when nothing is queued), each with its run's head (`claimedHead`).
 * The pick walks the partial index of queued rows in that order; `SKIP LOCKED` lets
 * concurrent workers, on any node, claim different rows without waiting, and the update
 * checks each row is still queued, so no command is claimed twice. Without `affinity`,
 * any queued command is claimable.
 */
export async function claimCommands(
  q: Queryable,
  leaseOwner: string,
  leaseMs: number,
  limit: number,
  affinity?: ClaimAffinity,
): Promise<Command[]> {
  const rows = await q.query(
    `with ${claimCtes({ owner: 1, lease: 2, node: 3, liveness: 4, limit: 5, steady: 6, gap: 7 })},
     events as (${commandEventsInsert('claimed')})
     select ${COLUMNS}, wh.* from claimed ${workspaceHeadJoin('claimed.run_id')}
     order by queue_place, queued_at, id`,
    [
      leaseOwner,
      leaseMs,
      affinity?.nodeId ?? null,
      affinity?.livenessMs ?? 0,
      limit,
      ...evidenceParams(affinity?.evidence),
    ],
  );
  return rows.map(toCommand);
}

/**
 * The `picked` and `claimed` CTEs of a claim: the first queued commands, by place, this
 * worker may take (see {@link ClaimAffinity}), at most the `limit` parameter, claimed under
 * its lease. Parameters are named by their positions in the statement.
 */
function claimCtes(p: {
  owner: number;
  lease: number;
  node: number;
  liveness: number;
  limit: number;
  steady: number;
  gap: number;
}): string {
  return `picked as materialized (
       select q.id from workspace_command q
       left join workbench_workspace w on w.run_id = q.run_id and w.status = 'provisioned'
       where q.status = 'queued'
         and ($${p.node}::text is null or w.node_id is null or w.node_id = $${p.node}
              or not exists (select 1 from workbench_worker k
                             where k.node_id = w.node_id and ${mayBeLiveWorkerCondition('k', p)}))
       order by q.queue_place, q.queued_at, q.id limit $${p.limit} for update of q skip locked
     ), claimed as (
       update workspace_command c set status = 'running', lease_owner = $${p.owner},
         lease_expires_at = now() + ($${p.lease} * interval '1 millisecond'),
         attempts = c.attempts + 1, started_at = now()
       from picked p where c.id = p.id and c.status = 'queued'
       returning ${columnsOf('c')}
     )`;
}

/** {@link claimCommands} of one command: the first claimable one by place, or null. */
export async function claimNextCommand(
  q: Queryable,
  leaseOwner: string,
  leaseMs: number,
  affinity?: ClaimAffinity,
): Promise<Command | null> {
  return (await claimCommands(q, leaseOwner, leaseMs, 1, affinity))[0] ?? null;
}

/** Extends a running command's lease; false when the lease is no longer ours. */
export async function heartbeatCommand(
  q: Queryable,
  id: string,
  leaseOwner: string,
  leaseMs: number,
): Promise<boolean> {
  return (await heartbeatCommandLease(q, id, leaseOwner, leaseMs)).held;
}

/** What a worker learns from one heartbeat. */
export interface LeaseHeartbeat {
  /** False when the lease is no longer this owner's: stop, and record nothing. */
  held: boolean;
  /** True when someone asked to cancel the command: kill the sandbox. */
  cancelRequested: boolean;
}

/**
 * Extends a running command's lease, like {@link heartbeatCommand}, and reads the
 * cancel flag in the same statement, so a worker on another node learns of a cancel
 * within one heartbeat.
 */
export async function heartbeatCommandLease(
  q: Queryable,
  id: string,
  leaseOwner: string,
  leaseMs: number,
): Promise<LeaseHeartbeat> {
  const rows = await q.query(
    `update workspace_command set lease_expires_at = now() + ($3 * interval '1 millisecond')
     where id = $1 and status = 'running' and lease_owner = $2
     returning cancel_requested`,
    [id, leaseOwner, leaseMs],
  );
  const row = rows[0];
  return { held: row !== undefined, cancelRequested: row?.cancel_requested === true };
}

/**
 * Lets a running command's lease lapse now, still under the compare-and-set on status
 * and owner: a worker shutting down hands the command to stale recovery at once
 * instead of after a full lease. False when the lease was not this owner's.
 */
export async function expireCommandLease(
  q: Queryable,
  id: string,
  leaseOwner: string,
): Promise<boolean> {
  const n = await q.execute(
    `update workspace_command set lease_expires_at = now()
     where id = $1 and status = 'running' and lease_owner = $2`,
    [id, leaseOwner],
  );
  return n > 0;
}

/** The outcome a worker records for a command it ran. */
export interface CommandOutcome {
  status: Exclude<TerminalCommandStatus, 'cancelled'> | 'cancelled';
  exitCode?: number | null;
  errorCode?: string | null;
  errorCategory?: string | null;
  stdout?: Uint8Array | null;
  stderr?: Uint8Array | null;
  stdoutTruncated?: boolean;
  stderrTruncated?: boolean;
  signal?: string | null;
  oomKilled?: boolean;
  execDurationMs?: number | null;
  filesRefused?: FilesRefused | null;
  /** What became of the expected outputs (a command that succeeded and named some). */
  outputs?: readonly ExpectedOutputResult[] | null;
  /** What the command's network did (it ran with its run's network); null when it had none. */
  egress?: CommandEgress | null;
  /** The workspace version the command's sync left. */
  workspaceVersion?: number | null;
  /**
   * Artifacts of the outputs that were promoted, their bytes already stored: recorded
   * (each with its `artifact.promoted` event) by the statement that records the
   * outcome, and only if it does, so an artifact exists exactly when its command's
   * result does.
   */
  artifacts?: readonly NewArtifact[];
}

/**
 * Records a running command's outcome and writes its event (`completed`, `failed`,
 * `timed_out` or `cancelled`), and the artifacts of its promoted outputs with theirs,
 * in one statement, only if it is still running under this lease owner: a late
 * finisher never overwrites a recovered or cancelled command, nor adds artifacts to it.
 */
export async function finishCommand(
  q: Queryable,
  id: string,
  leaseOwner: string,
  outcome: CommandOutcome,
): Promise<Command | null> {
  return (await finishAndClaim(q, id, leaseOwner, outcome)).row;
}

/** What a worker takes on with a finish: its next commands (see {@link finishAndClaim}). */
export interface ClaimWithFinish {
  /** Most commands to claim (the slot the finished command frees: usually 1). */
  limit: number;
  leaseMs: number;
  affinity?: ClaimAffinity;
}

/**
 * {@link finishCommand}, and in the same statement, with `next`, the claim of the
 * worker's next commands (as {@link claimCommands} would make it, its events and each
 * claimed command's head included): a worker with commands waiting moves from one to
 * the next in one statement. The finished row is null when it was no longer this
 * worker's to finish; the claim is made either way (the slot is free).
 */
export async function finishAndClaim(
  q: Queryable,
  id: string,
  leaseOwner: string,
  outcome: CommandOutcome,
  next?: ClaimWithFinish,
): Promise<{ row: Command | null; claimed: Command[] }> {
  const claim = next !== undefined && next.limit > 0;
  const artifacts = outcome.artifacts ?? [];
  const params: unknown[] = [
    id,
    leaseOwner,
    outcome.status,
    outcome.exitCode ?? null,
    outcome.errorCode ?? null,
    outcome.errorCategory ?? null,
    outcome.stdout ? Buffer.from(outcome.stdout) : null,
    outcome.stderr ? Buffer.from(outcome.stderr) : null,
    outcome.stdoutTruncated ?? false,
    outcome.stderrTruncated ?? false,
    outcome.signal ?? null,
    outcome.oomKilled ?? false,
    outcome.execDurationMs === null || outcome.execDurationMs === undefined
      ? null
      : Math.round(outcome.execDurationMs),
    outcome.filesRefused ? JSON.stringify(outcome.filesRefused) : null,
    outcome.outputs ? JSON.stringify(outcome.outputs) : null,
    outcome.egress ? JSON.stringify(outcome.egress) : null,
    outcome.workspaceVersion ?? null,
  ];
  const param = (value: unknown) => params.push(value);
  const promoted =
    artifacts.length > 0
      ? `, ${artifactsInsert({ rows: param(artifactsParam(artifacts)), commandId: 1, guard: 'finished' })}`
      : '';
  const claiming = claim
    ? `, ${claimCtes({
        owner: 2,
        lease: param(next.leaseMs),
        node: param(next.affinity?.nodeId ?? null),
        liveness: param(next.affinity?.livenessMs ?? 0),
        limit: param(next.limit),
        steady: param(evidenceParams(next.affinity?.evidence)[0]),
        gap: param(evidenceParams(next.affinity?.evidence)[1]),
      })},
     moved as (select * from finished union all select * from claimed),
     events as (${commandEventsInsert('moved')})
     select 'finished' as moved_as, ${COLUMNS}, ${NO_HEAD_COLUMNS} from finished
     union all select 'claimed', ${COLUMNS}, wh.* from claimed ${workspaceHeadJoin('claimed.run_id')}`
    : `, events as (${commandEventsInsert('finished')})
     select 'finished' as moved_as, ${COLUMNS} from finished`;
  const rows = await q.query(
    `with finished as (
       update workspace_command set status = $3, exit_code = $4, error_code = $5,
         error_category = $6, stdout = $7, stderr = $8, stdout_truncated = $9,
         stderr_truncated = $10, signal = $11, oom_killed = $12, exec_duration_ms = $13,
         files_refused = $14::text::jsonb, outputs = $15::text::jsonb,
         egress = $16::text::jsonb, workspace_version = $17, finished_at = now(),
         lease_owner = null, lease_expires_at = null
       where id = $1 and status = 'running' and lease_owner = $2
       returning ${COLUMNS}
     )${promoted}${claiming}`,
    params,
  );
  const finished = rows.find((r) => r.moved_as === 'finished');
  const claimed = rows
    .filter((r) => r.moved_as === 'claimed')
    .map(toCommand)
    .sort(
      (a, b) =>
        a.queuePlace.getTime() - b.queuePlace.getTime() ||
        a.queuedAt.getTime() - b.queuedAt.getTime() ||
        (a.id < b.id ? -1 : 1),
    );
  return { row: finished ? toCommand(finished) : null, claimed };
}

/**
 * Cancels a command: a queued one ends `cancelled` at once, with its event; a running
 * one is flagged so its worker kills the sandbox and records the end. Returns the row
 * afterwards, or null when absent.
 */
export async function requestCommandCancel(q: Queryable, id: string): Promise<Command | null> {
  return (await cancelCommand(q, id)).command;
}

/**
 * What a cancel request did: `cancelled` (it was queued and is now terminal),
 * `flagged` (it is running; its worker will kill it), or `none` (already terminal,
 * or absent).
 */
export type CancelEffect = 'cancelled' | 'flagged' | 'none';

/** {@link requestCommandCancel}, also saying which of the moves it made. */
export async function cancelCommand(
  q: Queryable,
  id: string,
): Promise<{ command: Command | null; effect: CancelEffect }> {
  const queued = await q.query(
    `with cancelled as (
       update workspace_command set status = 'cancelled', cancel_requested = true,
         error_code = 'cancelled', error_category = 'cancelled', finished_at = now()
       where id = $1 and status = 'queued' returning ${COLUMNS}
     ), events as (${commandEventsInsert('cancelled')})
     select ${COLUMNS} from cancelled`,
    [id],
  );
  if (queued[0]) return { command: toCommand(queued[0]), effect: 'cancelled' };
  const running = await q.query(
    `update workspace_command set cancel_requested = true
     where id = $1 and status = 'running' returning ${COLUMNS}`,
    [id],
  );
  if (running[0]) return { command: toCommand(running[0]), effect: 'flagged' };
  return { command: await getCommand(q, id), effect: 'none' };
}
