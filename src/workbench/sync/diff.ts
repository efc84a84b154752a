/**
 * The decisions of workspace sync, as functions of data: which local files match the
 * durable manifest, which must be read to find out, what to upload and commit after a
 * command, and what to download or remove before one. No I/O here; the callers in
 * `workspace-sync.ts` scan, hash and transfer.
 *
 * The quick check: a local file whose size, modification time (in whole milliseconds)
 * and permission bits equal its manifest entry is taken as unchanged without reading
 * it, as rsync and git do. A file rewritten with the same size and then given back
 * its old mtime (`touch -d`, `cp -p`) therefore passes for unchanged; sync runs after
 * a command has exited, so nothing else writes while it looks.
 *
 * What is durable: regular files only. Symbolic links, sockets, fifos and device
 * files are never synced (a link is not followed and its target is not uploaded),
 * and directories exist only as the parents of files, so an empty directory is not
 * durable. Mode means the permission bits (`mode & 0o777`).
 *
 * Both planners run in two passes: the first, on the scan alone, names the files
 * whose content is unknown (`needHash`); the caller hashes exactly those, fills in
 * `hash`, and calls the planner again, which then has nothing left to hash.
 *
 * @module
 */

import type { ManifestFile } from '../../store/index.js';

/** Permission bits kept in the manifest. */
export const MODE_MASK = 0o777;

/** A regular file found by the local scan. */
export interface LocalFile {
  /** Workspace-relative path, `/`-separated. */
  path: string;
  /** Bytes. */
  size: number;
  /** Modification time, milliseconds since the epoch (compared rounded to whole ms). */
  mtimeMs: number;
  /** Permission bits. */
  mode: number;
  /** Lowercase hex SHA-256, present only once the file has been read. */
  hash?: string;
}

/** What a local file is next to the manifest entry at its path. */
type Comparison =
  /** Quick check passed, or content and metadata are known to be equal. */
  | { kind: 'same' }
  /** Content known (or trusted by the quick check) to be equal; mode or mtime moved. */
  | { kind: 'metadata'; hash: string }
  /** Content differs (or the path is new) and the local hash is known. */
  | { kind: 'content'; hash: string }
  /** The file must be read before anything can be said. */
  | { kind: 'unknown' };

/**
 * Whole milliseconds of an mtime. Rounded, not truncated: setting a time of `ms / 1000`
 * seconds (as hydrate does) can read back a nanosecond short of `ms`.
 */
export function wholeMs(mtimeMs: number): number {
  return Math.round(mtimeMs);
}

function sameStat(local: LocalFile, entry: ManifestFile): boolean {
  return local.size === entry.size && wholeMs(local.mtimeMs) === entry.mtimeMs;
}

function compare(local: LocalFile, entry: ManifestFile | undefined): Comparison {
  if (entry === undefined) {
    return local.hash === undefined ? { kind: 'unknown' } : { kind: 'content', hash: local.hash };
  }
  if (local.hash !== undefined && local.hash !== entry.hash) {
    return { kind: 'content', hash: local.hash };
  }
  if (sameStat(local, entry)) {
    return (local.mode & MODE_MASK) === entry.mode
      ? { kind: 'same' }
      : { kind: 'metadata', hash: entry.hash };
  }
  return local.hash === undefined ? { kind: 'unknown' } : { kind: 'metadata', hash: entry.hash };
}

function toEntry(local: LocalFile, hash: string, blobRunId?: string): ManifestFile {
  return {
    path: local.path,
    hash,
    size: local.size,
    mode: local.mode & MODE_MASK,
    mtimeMs: wholeMs(local.mtimeMs),
    ...(blobRunId === undefined ? {} : { blobRunId }),
  };
}

/**
 * Where the content of each hash the manifest refers to is kept, for the hashes whose
 * blob is another run's only (a fork's entries): an entry written with such content (a
 * copy, a rename, a new mode) names that run, since its own prefix lacks the blob and
 * no upload is planned for a hash the manifest refers to.
 */
function foreignBlobs(entries: ReadonlyMap<string, ManifestFile>): Map<string, string> {
  const own = new Set<string>();
  const foreign = new Map<string, string>();
  for (const f of entries.values()) {
    if (f.blobRunId === undefined) own.add(f.hash);
    else foreign.set(f.hash, f.blobRunId);
  }
  for (const hash of own) foreign.delete(hash);
  return foreign;
}

/** A manifest as a list of entries, or already keyed by path. */
export type ManifestEntries = readonly ManifestFile[] | ReadonlyMap<string, ManifestFile>;

function byPath(files: ManifestEntries): ReadonlyMap<string, ManifestFile> {
  return Array.isArray(files)
    ? new Map((files as readonly ManifestFile[]).map((f) => [f.path, f]))
    : (files as ReadonlyMap<string, ManifestFile>);
}

/** What to commit after a command: the outcome of {@link planSync}. */
export interface SyncPlan {
  /** Paths whose manifest entry stays as it is. */
  unchanged: string[];
  /** Files to read and hash before the plan is complete (first pass only). */
  needHash: LocalFile[];
  /** Manifest entries to write: new files, changed content, changed mode or mtime. */
  upserts: ManifestFile[];
  /** Manifest paths with no local regular file any more. */
  deletes: string[];
}

/** Compares a local scan with the manifest it was reconciled from (the sync's base). */
export function planSync(manifest: ManifestEntries, local: readonly LocalFile[]): SyncPlan {
  const entries = byPath(manifest);
  const foreign = foreignBlobs(entries);
  const plan: SyncPlan = { unchanged: [], needHash: [], upserts: [], deletes: [] };
  const seen = new Set<string>();
  for (const file of local) {
    seen.add(file.path);
    const c = compare(file, entries.get(file.path));
    if (c.kind === 'same') plan.unchanged.push(file.path);
    else if (c.kind === 'unknown') plan.needHash.push(file);
    else plan.upserts.push(toEntry(file, c.hash, foreign.get(c.hash)));
  }
  for (const path of entries.keys()) if (!seen.has(path)) plan.deletes.push(path);
  return plan;
}

/** One blob to put: its content hash and a local file that holds the content. */
export interface BlobUpload {
  hash: string;
  /** Path of one local file with this content (any, when several share it). */
  path: string;
  size: number;
}

/**
 * The blobs the upserts need that the manifest does not already refer to, one per
 * distinct hash. Blobs the manifest refers to are in the store already (uploads come
 * before the commit that names them); the caller may still find others there.
 */
export function planUploads(
  manifest: ManifestEntries,
  upserts: readonly ManifestFile[],
): BlobUpload[] {
  const known = new Set<string>();
  for (const f of byPath(manifest).values()) known.add(f.hash);
  const uploads = new Map<string, BlobUpload>();
  for (const f of upserts) {
    if (known.has(f.hash) || uploads.has(f.hash)) continue;
    uploads.set(f.hash, { hash: f.hash, path: f.path, size: f.size });
  }
  return [...uploads.values()];
}

/** What to change in a local directory to make it match the manifest. */
export interface ReconcilePlan {
  /** Manifest paths whose local file already matches. */
  keep: string[];
  /** Files to read and hash before the plan is complete (first pass only). */
  needHash: LocalFile[];
  /** Entries to download: missing locally, or different content. */
  download: ManifestFile[];
  /** Entries whose local content is right but whose mode or mtime must be set. */
  fixMetadata: ManifestFile[];
  /** Local paths that are not in the manifest (files, links, other non-durable entries). */
  remove: string[];
}

/**
 * Compares a local scan with the manifest the directory must match. `others` are the
 * scan's non-durable entries (links, sockets, fifos, devices): removed unless a
 * manifest file is to be written over them.
 */
export function planReconcile(
  manifest: readonly ManifestFile[],
  local: readonly LocalFile[],
  others: readonly string[] = [],
): ReconcilePlan {
  const entries = byPath(manifest);
  const plan: ReconcilePlan = { keep: [], needHash: [], download: [], fixMetadata: [], remove: [] };
  const seen = new Set<string>();
  for (const file of local) {
    const entry = entries.get(file.path);
    if (entry === undefined) {
      plan.remove.push(file.path);
      continue;
    }
    seen.add(file.path);
    const c = compare(file, entry);
    if (c.kind === 'same') plan.keep.push(file.path);
    else if (c.kind === 'unknown') plan.needHash.push(file);
    else if (c.kind === 'metadata') plan.fixMetadata.push(entry);
    else plan.download.push(entry);
  }
  for (const path of others) if (!entries.has(path)) plan.remove.push(path);
  for (const entry of manifest) {
    if (!seen.has(entry.path)) plan.download.push(entry);
  }
  return plan;
}

/** The manifest's head as the store reports it. */
export interface ManifestHead {
  version: number;
  updatedByNode: string | null;
}

/** What this node knows about its local copy of a run's workspace. */
export interface LocalSyncState {
  /** This node's id. */
  nodeId: string;
  /** The manifest version the directory was last synced to or hydrated from, if known. */
  lastSyncedVersion: number | undefined;
  /**
   * The node that had committed that version, as the manifest named it then. Omitted
   * means this node (the version came from its own commit).
   */
  lastSyncedBy?: string | null;
}

/**
 * `current` when the directory is known to match the manifest head: nobody has
 * committed since this node last synced or hydrated it, so no scan is needed.
 * Otherwise `full`: scan and make the directory match.
 */
export function decideReconcile(head: ManifestHead, local: LocalSyncState): 'current' | 'full' {
  if (local.lastSyncedVersion === undefined) return 'full';
  const expectedBy = local.lastSyncedBy === undefined ? local.nodeId : local.lastSyncedBy;
  return head.version === local.lastSyncedVersion && head.updatedByNode === expectedBy
    ? 'current'
    : 'full';
}
