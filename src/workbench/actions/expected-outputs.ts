/**
 * The expected outputs of an `exec`: workspace files the call named, promoted as
 * artifacts once its command has succeeded, exactly as `promote_artifact` would (the
 * same path, type and size checks, the same object key and row).
 *
 * Only the bytes are stored here. The rows go with the command's outcome: the queue
 * records them in the statement that finishes the command (`finishAndClaim`), so an
 * artifact exists exactly when its command's result does. Bytes stored for a finish
 * that never lands (the worker lost the command) are unreachable garbage, never an
 * artifact without its bytes.
 *
 * A missing output is reported, never skipped, and never turns the command into a
 * failure: each one ends up in the answer's `outputs` as an artifact or with the code
 * that says why not (`path_not_found`, `invalid_path`, `payload_too_large`, or
 * `unavailable` when the object store failed).
 *
 * @module
 */

import {
  type ExpectedOutput,
  type ExpectedOutputResult,
  INTERNAL_ERROR_MESSAGE,
  WorkbenchError,
  workbenchErrorOf,
} from '../../contract/index.js';
import type { FileContext } from '../../files/index.js';
import type { ObjectStore } from '../../objects/index.js';
import type { NewArtifact } from '../../store/index.js';
import type { Logger } from '../../telemetry/index.js';
import { storeArtifact } from './promote-artifact.js';

/** What became of a command's expected outputs: one result each, and the rows to record. */
export interface PromotedOutputs {
  /** One per expected output, in the call's order. */
  results: ExpectedOutputResult[];
  /** The artifacts of the outputs that were stored, to record with the command's result. */
  artifacts: NewArtifact[];
}

/**
 * Stores each expected output of a command that succeeded, one after another (the
 * workspace is held meanwhile, so nothing changes under them). `files.root` is the
 * command's workspace copy, after its changes were kept.
 */
export async function storeExpectedOutputs(
  deps: { objects: ObjectStore; log: Logger },
  files: FileContext,
  command: { id: string; runId: string; ownerUserId: string },
  outputs: readonly ExpectedOutput[],
): Promise<PromotedOutputs> {
  const promoted: PromotedOutputs = { results: [], artifacts: [] };
  const run = { id: command.runId, ownerUserId: command.ownerUserId };
  for (const output of outputs) {
    try {
      const stored = await storeArtifact(deps.objects, files, run, output);
      promoted.results.push({ path: output.path, artifact: stored.payload });
      promoted.artifacts.push(stored.row);
    } catch (err) {
      promoted.results.push({ path: output.path, error: outputError(deps.log, command, err) });
    }
  }
  return promoted;
}

/**
 * Why one output was not stored, as its result says it: the code the failure answers
 * anywhere (an object store outage is `unavailable`, as `promote_artifact` answers it).
 */
function outputError(
  log: Logger,
  command: { id: string; runId: string },
  err: unknown,
): { code: string; message: string } {
  if (err instanceof WorkbenchError) return { code: err.code, message: err.message };
  const known = workbenchErrorOf(err);
  if (known.code === 'internal') {
    log.error({ err, runId: command.runId, commandId: command.id }, 'expected output failed');
    return { code: 'internal', message: INTERNAL_ERROR_MESSAGE };
  }
  log.warn(
    { err, runId: command.runId, commandId: command.id },
    'an expected output could not be stored',
  );
  return {
    code: known.code,
    message: `${known.message}; the file is kept in the workspace, so promote it with promote_artifact`,
  };
}
