/**
 * The host's side of the file actions, `fetch` and `promote_artifact`: the run, its
 * holder and head read in one statement under the run's lock, then the action on the
 * reconciled copy; a mutating one's sync records the version as this action's.
 *
 * @module
 */

import { type Envelope, WorkbenchError } from '../contract/index.js';
import { type FileContext, fsDelete, fsList, fsRead } from '../files/index.js';
import type { ObjectStore } from '../objects/index.js';
import type { Db, Run } from '../store/index.js';
import { type FetchLimits, promoteArtifact, runFetch } from './actions/index.js';
import type { HeldCopy, WorkspaceAccess } from './lifecycle/index.js';
import { type WriteCallDeps, writeCall } from './write-call.js';

/** A file action's envelope: anything the host runs but commands, processes and versions. */
export type FileEnvelope = Exclude<
  Envelope,
  { action: 'exec' | 'build' | `process_${string}` | `version_${string}` }
>;

/** What the file actions need of the host. */
export interface FileCallsDeps extends WriteCallDeps {
  db: Db;
  objects: ObjectStore;
  access: WorkspaceAccess;
  /** Read and write caps of the file actions, bytes. */
  files: { maxReadBytes: number; maxWriteBytes: number };
  fileOwner?: { uid: number; gid: number };
  fetch: FetchLimits;
}

/** Runs one file action; `signal` cancels a `fetch`. */
export function fileCall(
  deps: FileCallsDeps,
  envelope: FileEnvelope,
  signal?: AbortSignal,
): Promise<unknown> {
  const files = (held: HeldCopy): FileContext => ({
    root: held.dir,
    ...deps.files,
    ...(deps.fileOwner ? { owner: deps.fileOwner } : {}),
  });
  // A mutating action's sync records the version as this action's.
  const origin = {
    source: 'action' as const,
    action: envelope.action,
    ...(envelope.callId === undefined ? {} : { callId: envelope.callId }),
  };
  const call = <T>(mutating: boolean, work: (held: HeldCopy, run: Run) => Promise<T>) =>
    deps.access.call(envelope.runId, mutating ? origin : false, work);
  switch (envelope.action) {
    case 'fs_read':
      return call(false, (held) => fsRead(files(held), envelope.args));
    case 'fs_list':
      return call(false, (held) => fsList(files(held), envelope.args));
    case 'fs_write':
      return writeCall(deps, envelope.runId, envelope.args, call, files);
    case 'fs_delete':
      return call(true, (held) => fsDelete(files(held), envelope.args));
    case 'fetch':
      return call(true, (held) => runFetch(files(held), deps.fetch, envelope.args, signal));
    case 'promote_artifact':
      return call(false, (held, run) => promoteArtifact(deps, files(held), run, envelope.args));
    default:
      throw new WorkbenchError(
        'internal',
        `internal: unhandled action ${(envelope as Envelope).action}`,
      );
  }
}
