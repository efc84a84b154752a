/**
 * What a worker host does with one parsed call: the checks a worker makes itself
 * (defence in depth: the agent made them before sending) and then the action, on the
 * user's root. Only the worker actions are served (`WORKER_ACTIONS`); the call's
 * environment hint is checked against the worker's own offer, so a call that needs
 * what this machine lacks is refused here too, before anything runs.
 *
 * Paths are relative to the root the user chose and are shared by every run: the root
 * is the user's files, not a per-run workspace. The workbench's file actions refuse
 * `..`, absolute paths and links out of the root; created files keep the worker
 * user's ownership.
 *
 * @module
 */

import {
  type DispatchResult,
  type Envelope,
  environmentFailure,
  errorResult,
  evaluateEnvironment,
  isWorkerAction,
  type OutputSink,
  okResult,
  resultFromError,
  WORKER_ACTIONS,
  type WorkerOffer,
} from '../contract/index.js';
import { type FileContext, fsDelete, fsList, fsRead, fsWrite } from '../files/index.js';
import type { Logger } from '../telemetry/index.js';
import { type WorkerExecDeps, workerExec } from './worker-exec.js';
import { providesTable } from './worker-offer.js';

/** What a worker host serves calls with. */
export interface WorkerActionDeps extends WorkerExecDeps {
  /** What this worker declared in its hello: the hint is checked against it. */
  readonly offer: WorkerOffer;
  /** Largest `fs_read` answer, bytes. */
  readonly maxReadBytes: number;
  /** Largest file `fs_write` leaves, bytes. */
  readonly maxWriteBytes: number;
  readonly log: Logger;
}

/** The refusal of an action a worker host does not serve, or `null`. */
export function refuseAction(action: string): DispatchResult | null {
  if (isWorkerAction(action)) return null;
  return errorResult(
    'invalid_arguments',
    `invalid_arguments: action "${action}" does not run on worker hosts; they serve only ${WORKER_ACTIONS.join(', ')}`,
    { field: 'action' },
  );
}

/**
 * Serves one call: refuses an action outside the worker actions and a hint this
 * worker's offer does not meet, then runs the action. Never throws: a failure is the
 * result.
 */
export async function serveWorkerCall(
  deps: WorkerActionDeps,
  envelope: Envelope,
  ctx: { signal: AbortSignal; output: OutputSink },
): Promise<DispatchResult> {
  const refused =
    refuseAction(envelope.action) ??
    environmentFailure(
      evaluateEnvironment(envelope.environment, providesTable(deps.offer.provides), deps.offer.os),
    );
  if (refused) return refused;
  const files: FileContext = {
    root: deps.root,
    maxReadBytes: deps.maxReadBytes,
    maxWriteBytes: deps.maxWriteBytes,
  };
  try {
    switch (envelope.action) {
      case 'fs_read':
        return okResult(await fsRead(files, envelope.args));
      case 'fs_list':
        return okResult(await fsList(files, envelope.args));
      case 'fs_write':
        return okResult(await fsWrite(files, envelope.args));
      case 'fs_delete':
        return okResult(await fsDelete(files, envelope.args));
      case 'exec':
        return okResult(
          await workerExec(deps, envelope.args, { signal: ctx.signal, onOutput: ctx.output }),
        );
      default:
        // Unreachable: refuseAction let only the worker actions through.
        return refuseAction(envelope.action) ?? errorResult('internal', 'internal: no action');
    }
  } catch (err) {
    const result = resultFromError(err);
    if (result.errorCode === 'internal') {
      deps.log.error(
        { err, action: envelope.action, runId: envelope.runId },
        'worker action failed',
      );
    }
    return result;
  }
}
