/**
 * Files on a directory root, with no store behind them: the file actions (`fs_read`,
 * `fs_list`, `fs_write`, `fs_delete`) and their limits, the safe paths every one of
 * them goes through (nothing escapes the root, links included), the kernel's path
 * limits, the types of entries the actions refuse, and the removal of a tree however
 * deep. The `rm` of a removal and the `find` of the quota watch's counts run from
 * small helper processes (`hostHelpers`), not from the node. The workbench acts on a
 * run's workspace with them; a worker host acts on its user's root.
 *
 * ```ts
 * const ctx = { root, maxReadBytes: MAX_READ_BYTES, maxWriteBytes: MAX_WRITE_BYTES };
 * const answer = await fsRead(ctx, envelope.args); // an `fs_read` call's parsed arguments
 * ```
 *
 * @packageDocumentation
 */
export {
  type FileContext,
  fsDelete,
  fsList,
  fsRead,
  fsWrite,
  MAX_READ_BYTES,
  MAX_WRITE_BYTES,
  openForRead,
  openForWrite,
  placeFile,
} from './file-actions.js';
export { type CountJob, firstExecutable, HelperLost, hostHelpers } from './host-helper.js';
export { pathBytesFit, truncateForReport, utf8Bytes } from './path-limits.js';
export { removeEntriesOf, removeTree } from './remove-tree.js';
export {
  checkWorkspaceFilePath,
  isInsideRealRoot,
  resolveWorkspacePath,
  splitWorkspacePath,
} from './safe-path.js';
