/**
 * The base of a directory's next sync: the manifest version it was reconciled from,
 * with its entries.
 *
 * @module
 */

import type { Manifest, ManifestFile } from '../../store/index.js';

/**
 * The manifest version a directory was reconciled from, with its entries: the base of
 * the next sync's three-way merge. Held in the warm cache beside the directory.
 */
export interface BaseSnapshot {
  version: number;
  /** The node that had committed `version`. */
  updatedByNode: string | null;
  /** The entries at `version`, by path. */
  files: Map<string, ManifestFile>;
}

/** The snapshot of a manifest read in full. */
export function snapshotOf(manifest: Manifest): BaseSnapshot {
  return {
    version: manifest.version,
    updatedByNode: manifest.updatedByNode,
    files: new Map(manifest.files.map((f) => [f.path, f])),
  };
}

/** The snapshot of a run with no commit yet: version 0, no files. */
export function emptySnapshot(): BaseSnapshot {
  return { version: 0, updatedByNode: null, files: new Map() };
}
