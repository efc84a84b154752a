/**
 * The routing record of each call sent to a worker host (`reroutedFrom`, needs, scope,
 * worker, outcome), so "why did this run on my laptop" is answerable afterwards. Reads
 * are scoped to the owner.
 */

import { randomBytes } from 'node:crypto';
import type { Scope, UnmetNeed } from '../contract/index.js';
import type { Queryable } from './db.js';
import { date, dateOrNull, jsonColumn, textOrNull } from './rows.js';

/** The routing record of one call sent to a worker host. */
export interface WorkerInvocation {
  id: string;
  ownerUserId: string;
  workerId: string;
  runId: string;
  action: string;
  callId: string | null;
  reroutedFrom: string;
  needs: UnmetNeed[];
  scope: Scope;
  /** `running` until the worker answers; `lost` when its stream ended first. */
  status: 'running' | 'succeeded' | 'failed' | 'lost';
  errorCode: string | null;
  startedAt: Date;
  finishedAt: Date | null;
  /** The agent node whose consent gate let the call run (the one it arrived at). */
  decidedBy: string | null;
  /** The agent node holding the worker's stream it was sent down: the same one, or a peer. */
  linkNodeId: string | null;
}

function toInvocation(r: Record<string, unknown>): WorkerInvocation {
  return {
    id: String(r.id),
    ownerUserId: String(r.owner_user_id),
    workerId: String(r.worker_id),
    runId: String(r.run_id),
    action: String(r.action),
    callId: textOrNull(r.call_id),
    reroutedFrom: String(r.rerouted_from),
    needs: jsonColumn<UnmetNeed[]>(r.needs),
    scope: String(r.scope) as Scope,
    status: String(r.status) as WorkerInvocation['status'],
    errorCode: textOrNull(r.error_code),
    startedAt: date(r.started_at),
    finishedAt: dateOrNull(r.finished_at),
    decidedBy: textOrNull(r.decided_by),
    linkNodeId: textOrNull(r.link_node_id),
  };
}

/** Records a call about to be sent to a worker; written before any frame goes out. */
export async function insertWorkerInvocation(
  q: Queryable,
  w: Pick<
    WorkerInvocation,
    'ownerUserId' | 'workerId' | 'runId' | 'action' | 'callId' | 'reroutedFrom' | 'needs' | 'scope'
  > &
    Partial<Pick<WorkerInvocation, 'decidedBy' | 'linkNodeId'>>,
): Promise<WorkerInvocation> {
  const id = `wiv_${randomBytes(12).toString('base64url')}`;
  const rows = await q.query(
    `insert into worker_invocation (id, owner_user_id, worker_id, run_id, action, call_id,
       rerouted_from, needs, scope, decided_by, link_node_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8::text::jsonb, $9, $10, $11) returning *`,
    [
      id,
      w.ownerUserId,
      w.workerId,
      w.runId,
      w.action,
      w.callId,
      w.reroutedFrom,
      JSON.stringify(w.needs),
      w.scope,
      w.decidedBy ?? null,
      w.linkNodeId ?? null,
    ],
  );
  return toInvocation(rows[0]!);
}

/** Records how a worker call ended. */
export async function finishWorkerInvocation(
  q: Queryable,
  id: string,
  status: 'succeeded' | 'failed' | 'lost',
  errorCode: string | null,
): Promise<void> {
  await q.execute(
    `update worker_invocation set status = $2, error_code = $3, finished_at = now()
     where id = $1 and status = 'running'`,
    [id, status, errorCode],
  );
}

/** Routing records of `ownerUserId`, newest first, narrowed by run or worker. */
export async function listWorkerInvocations(
  q: Queryable,
  ownerUserId: string,
  opts: { runId?: string; workerId?: string; limit?: number } = {},
): Promise<WorkerInvocation[]> {
  const rows = await q.query(
    `select * from worker_invocation
     where owner_user_id = $1 and ($2::text is null or run_id = $2)
       and ($3::text is null or worker_id = $3)
     order by started_at desc, id limit $4`,
    [ownerUserId, opts.runId ?? null, opts.workerId ?? null, opts.limit ?? 100],
  );
  return rows.map(toInvocation);
}

/** One routing record of `ownerUserId`; null when it is not theirs or does not exist. */
export async function getWorkerInvocation(
  q: Queryable,
  ownerUserId: string,
  id: string,
): Promise<WorkerInvocation | null> {
  const rows = await q.query(
    'select * from worker_invocation where id = $1 and owner_user_id = $2',
    [id, ownerUserId],
  );
  return rows[0] ? toInvocation(rows[0]) : null;
}
