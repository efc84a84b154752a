/**
 * The workbench's actions on a run's workspace beyond the file actions (those, with
 * the safe paths and path limits every action and sync share, are the `files` part's):
 * `exec`'s preparation and its answer, `build`'s command (queued as an `exec` is),
 * `fetch` into the workspace, `promote_artifact` (and the expected outputs of `exec`,
 * promoted the same way), and the upload stages of `fs_write` parts.
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
} from './exec.js';
export { type PromotedOutputs, storeExpectedOutputs } from './expected-outputs.js';
export { type FetchLimits, runFetch } from './fetch.js';
export { contentTypeFor, promoteArtifact } from './promote-artifact.js';
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
