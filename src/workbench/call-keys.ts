/**
 * A file action's idempotency key (`callId`), on the workbench that runs it. The key
 * is recorded before the action runs, with the call's digest; a repeat of the same call
 * gets the answer recorded under the key, and a different call with the key is refused
 * with `call_id_conflict` before anything runs. `exec` and `build` record theirs in the
 * statement that queues their command (`store/commands.ts`), and a repeat follows that
 * command.
 *
 * What is replayed: the answer of a call that changed something (`fs_write`,
 * `fs_delete`, `fetch`, `promote_artifact`), when it succeeded or was refused for a
 * reason a retry cannot change (an error of category `caller` or `policy`). A read
 * (`fs_read`, `fs_list`) keeps only its key and is read again. A call whose first
 * attempt left no answer (the database failed, the node died) runs again when repeated.
 *
 * @module
 */

import {
  callDigest,
  type DispatchResult,
  type Envelope,
  ERROR_CODES,
  WorkbenchError,
} from '../contract/index.js';
import {
  type CallRecord,
  claimCallKey,
  type Db,
  recordCallOutcome,
  sameCall,
} from '../store/index.js';
import type { Logger } from '../telemetry/index.js';

/** The actions whose answer is kept under their key. */
const REPLAYED: ReadonlySet<string> = new Set([
  'fs_write',
  'fs_delete',
  'fetch',
  'promote_artifact',
]);

/** The refusal of a key that names another call. */
export function callIdConflictError(record: CallRecord): WorkbenchError {
  const when = record.createdAt.toISOString();
  return new WorkbenchError(
    'call_id_conflict',
    `call_id_conflict: callId "${record.callId}" was used in run "${record.runId}" at ${when} for ` +
      `another call (action ${record.action}); nothing ran. Give every new call a new callId ` +
      "(the model's tool-call id is one); repeat a call with its own callId only to get its outcome",
    {
      runId: record.runId,
      callId: record.callId,
      recordedAction: record.action,
      recordedAt: when,
      ...(record.commandId ? { commandId: record.commandId } : {}),
    },
  );
}

/** Whether an answer is the call's outcome for good, so a repeat replays it. */
function definitive(result: DispatchResult): boolean {
  if (result.ok) return true;
  const category = ERROR_CODES[result.errorCode].category;
  return category === 'caller' || category === 'policy';
}

/** What {@link FileCallKeys} needs. */
export interface FileCallKeysDeps {
  db: Db;
  nodeId: string;
  log: Logger;
}

/** The keys of the file actions this node runs (see the module comment). */
export class FileCallKeys {
  /** Calls with a key under way on this node, by run and key. */
  private readonly inFlight = new Map<
    string,
    { digest: string; answer: Promise<DispatchResult> }
  >();

  constructor(private readonly deps: FileCallKeysDeps) {}

  /**
   * Answers `envelope` through its key: runs `work` for the first call with it (or a
   * repeat of a call that left no answer), replays a recorded answer, and refuses a
   * key that names another call. `work` never throws; a failure to read or write the
   * key throws (the caller answers it as it answers any failure).
   */
  async run(envelope: Envelope, work: () => Promise<DispatchResult>): Promise<DispatchResult> {
    const callId = envelope.callId;
    if (callId === undefined) return work();
    const digest = callDigest(envelope);
    const slot = `${envelope.runId}\u0000${callId}`;
    const running = this.inFlight.get(slot);
    // The same call again while the first is under way here: its answer is this one's.
    if (running && running.digest === digest) return running.answer;
    const answer = this.claimAndAnswer(envelope, callId, digest, work);
    this.inFlight.set(slot, { digest, answer });
    try {
      return await answer;
    } finally {
      if (this.inFlight.get(slot)?.answer === answer) this.inFlight.delete(slot);
    }
  }

  private async claimAndAnswer(
    envelope: Envelope,
    callId: string,
    digest: string,
    work: () => Promise<DispatchResult>,
  ): Promise<DispatchResult> {
    const record = await claimCallKey(this.deps.db, {
      runId: envelope.runId,
      callId,
      action: envelope.action,
      digest,
      nodeId: this.deps.nodeId,
    });
    if (record !== null) {
      if (record.action !== envelope.action || !sameCall(record, digest)) {
        throw callIdConflictError(record);
      }
      if (record.outcome !== null) return record.outcome as DispatchResult;
    }
    return this.answer(envelope, callId, work);
  }

  private async answer(
    envelope: Envelope,
    callId: string,
    work: () => Promise<DispatchResult>,
  ): Promise<DispatchResult> {
    const result = await work();
    if (REPLAYED.has(envelope.action) && definitive(result)) {
      try {
        await recordCallOutcome(this.deps.db, envelope.runId, callId, result);
      } catch (err) {
        // The call took effect; only its replay is lost: a repeat runs it again.
        this.deps.log.warn(
          { runId: envelope.runId, callId, err: (err as Error).message },
          'the answer of a call was not kept under its callId',
        );
      }
    }
    return result;
  }
}
