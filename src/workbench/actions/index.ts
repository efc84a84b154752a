/**
 * The workbench's actions on a run's workspace: the file actions (`fs_*`), `exec`'s
 * preparation and sandbox run, `build`'s command (queued as an `exec` is), `fetch` into the workspace, `promote_artifact` (and the
 * expected outputs of `exec`, promoted the same way), and the
 * path rules they share with sync (safe paths, the kernel's path limits, tree removal).
 * The only door into the room: files outside `actions/` import from here.
 *
 * @module
 */
export { BUILD_ENV, buildCommandText, prepareBuild, shellWord } from './build.js';
export {
  type ExecDeps,
  type ExecLimits,
  type ExecPayload,
  execPayload,
  prepareExec,
  requireRunner,
  runInSandbox,
} from './exec.js';
export { type PromotedOutputs, storeExpectedOutputs } from './expected-outputs.js';
export { type FetchLimits, runFetch } from './fetch.js';
export { type FileContext, fsDelete, fsList, fsRead, fsWrite } from './files.js';
export { pathBytesFit, truncateForReport, utf8Bytes } from './path-limits.js';
export { contentTypeFor, promoteArtifact } from './promote-artifact.js';
export { removeEntriesOf, removeTree } from './remove-tree.js';
export { isInsideRealRoot } from './safe-path.js';
export {
  abortUpload,
  dropFailedStage,
  partBytes,
  type UploadPart,
  writeUploadPart,
} from './upload.js';
export {
  removeRunStages,
  removeStagesBefore,
  type StageSweep,
  stagedBytes,
  sweepUploads,
  UPLOAD_IDLE_MS,
  UPLOADS_DIR,
  uploadStageDir,
} from './upload-stages.js';
