/**
 * Helpers of the workspace sync tests: a Postgres database per test file, run rows,
 * workspace trees written and read back, and a hasher that records which files were
 * read (it wraps the real one, so the bytes are still hashed).
 */

import { createHash, randomUUID } from 'node:crypto';
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pino from 'pino';
import type { Test } from 'tap';
import type { ObjectStore } from '../../../src/objects/index.js';
import {
  createRun,
  type Db,
  getLiveWorkspace,
  getManifest,
  type Manifest,
  openDb,
  provisionWorkspace,
  releaseLiveWorkspace,
} from '../../../src/store/index.js';
import type { Logger } from '../../../src/telemetry/logger.js';
import { type BaseSnapshot, snapshotOf } from '../../../src/workbench/sync/base-snapshot.js';
import { sha256WorkspaceFile, type WorkspaceFileRef } from '../../../src/workbench/sync/blobs.js';
import type { WorkspaceSyncDeps } from '../../../src/workbench/sync/sync-deps.js';
import { type SyncResult, syncWorkspace } from '../../../src/workbench/sync/workspace-sync.js';
import { createTestDatabase } from '../../support/postgres.js';

export const silentLog: Logger = pino({ level: 'silent' });

/** Opens a fresh database for the file; dropped at teardown. */
export async function openTestDb(t: Test): Promise<{ db: Db; url: string }> {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const db = await openDb({ kind: 'postgres', url: database.url });
  t.teardown(() => db.close());
  return { db, url: database.url };
}

/** A run row with a fresh id. */
export async function newRun(db: Db): Promise<string> {
  const id = `run-${randomUUID()}`;
  await createRun(db, { id, ownerUserId: 'owner-1' });
  return id;
}

/** A fresh workbench root for `t`, removed at teardown. */
export async function freshRoot(t: Test): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'memql-sync-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  return root;
}

/** Records which workspace files were read to hash them. */
export interface CountingHasher {
  hashFile: (file: WorkspaceFileRef) => Promise<string>;
  /** Relative paths read, in order. */
  seen: string[];
  /** Runs once before the next read (then forgotten): to change things mid-sync. */
  beforeNext?: () => Promise<void>;
}

export function countingHasher(): CountingHasher {
  const counter: CountingHasher = {
    seen: [],
    hashFile: async (file) => {
      const hook = counter.beforeNext;
      counter.beforeNext = undefined;
      if (hook) await hook();
      counter.seen.push(file.rel);
      return sha256WorkspaceFile(file);
    },
  };
  return counter;
}

/** Sync deps over `objects` with a counting hasher. */
export function syncDeps(
  db: Db,
  objects: ObjectStore,
  extra: Partial<WorkspaceSyncDeps> = {},
): WorkspaceSyncDeps & { hasher: CountingHasher } {
  const hasher = countingHasher();
  return { db, objects, log: silentLog, hashFile: hasher.hashFile, hasher, ...extra };
}

/** A file to write: text content, or content with a mode. */
export type TreeFile = string | { content: string | Buffer; mode?: number };

/** Writes files (creating parents) under `dir`. */
export async function writeTree(dir: string, files: Record<string, TreeFile>): Promise<void> {
  for (const [path, spec] of Object.entries(files)) {
    const abs = join(dir, path);
    await mkdir(dirname(abs), { recursive: true });
    const content = typeof spec === 'string' ? spec : spec.content;
    await writeFile(abs, content);
    // writeFile's mode applies only to new files, through the umask.
    await chmod(abs, typeof spec === 'string' ? 0o644 : (spec.mode ?? 0o644));
  }
}

/** One entry read back by {@link readTree}. */
export interface TreeEntry {
  kind: 'file' | 'link' | 'dir' | 'other';
  /** sha256 of a file, target of a link. */
  value?: string;
  mode?: number;
  mtimeMs?: number;
}

/** Every entry under `dir`, without following links, keyed by relative path. */
export async function readTree(dir: string): Promise<Record<string, TreeEntry>> {
  const out: Record<string, TreeEntry> = {};
  async function walk(rel: string): Promise<void> {
    for (const name of (await readdir(join(dir, rel))).sort()) {
      const path = rel === '' ? name : `${rel}/${name}`;
      const abs = join(dir, path);
      const st = await lstat(abs);
      if (st.isSymbolicLink()) out[path] = { kind: 'link', value: await readlink(abs) };
      else if (st.isDirectory()) {
        out[path] = { kind: 'dir' };
        await walk(path);
      } else if (st.isFile()) {
        out[path] = {
          kind: 'file',
          value: sha256(await readFile(abs)),
          mode: st.mode & 0o777,
          mtimeMs: Math.round(st.mtimeMs),
        };
      } else out[path] = { kind: 'other' };
    }
  }
  await walk('');
  return out;
}

/** Only the files of a tree, as path -> sha256 and mode. */
export function filesOf(tree: Record<string, TreeEntry>): Record<string, [string, number]> {
  const out: Record<string, [string, number]> = {};
  for (const [path, e] of Object.entries(tree)) {
    if (e.kind === 'file') out[path] = [e.value!, e.mode!];
  }
  return out;
}

export function sha256(bytes: string | Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Every key under `prefix`, all pages. */
export async function listKeys(store: ObjectStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(prefix, cursor === undefined ? {} : { cursor });
    keys.push(...page.items.map((i) => i.key));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return keys;
}

/** The manifest as path -> [hash, size, mode], with its version and writer. */
export async function manifestView(
  db: Db,
  runId: string,
): Promise<{
  version: number;
  by: string | null;
  files: Record<string, [string, number, number]>;
}> {
  const m: Manifest = await getManifest(db, runId);
  const files: Record<string, [string, number, number]> = {};
  for (const f of m.files) files[f.path] = [f.hash, f.size, f.mode];
  return { version: m.version, by: m.updatedByNode, files };
}

/** What the host remembers of one node's copy: its base, per object store (one durable copy). */
const bases = new WeakMap<ObjectStore, Map<string, BaseSnapshot>>();

function copyKey(runId: string, dir: string, nodeId: string): string {
  return `${runId}\n${dir}\n${nodeId}`;
}

/**
 * Makes `nodeId` the run's holder (taking the workspace over from another node, as a
 * routed call does) and returns its generation.
 */
export async function holdWorkspace(db: Db, runId: string, nodeId: string): Promise<number> {
  return db.transaction(async (tx) => {
    const live = await getLiveWorkspace(tx, runId);
    if (live?.nodeId === nodeId) return live.generation;
    if (live) await releaseLiveWorkspace(tx, runId, 'node_lost');
    const ws = await provisionWorkspace(tx, { runId, nodeId, ownerUserId: 'owner-1' });
    return ws.generation;
  });
}

/**
 * The base a test copy was last reconciled or synced to, or (when it has none) the
 * manifest as it stands: a copy the test wrote itself from nothing, or hydrated.
 */
export async function baseOf(
  deps: WorkspaceSyncDeps,
  target: { runId: string; dir: string; nodeId: string },
): Promise<BaseSnapshot> {
  const known = bases.get(deps.objects)?.get(copyKey(target.runId, target.dir, target.nodeId));
  return known ?? snapshotOf(await getManifest(deps.db, target.runId));
}

/** Remembers what a test copy matches now (after a reconcile). */
export function rememberBase(
  deps: WorkspaceSyncDeps,
  target: { runId: string; dir: string; nodeId: string },
  base: BaseSnapshot,
): void {
  let map = bases.get(deps.objects);
  if (!map) {
    map = new Map();
    bases.set(deps.objects, map);
  }
  map.set(copyKey(target.runId, target.dir, target.nodeId), base);
}

/**
 * Syncs a test copy the way the host does: as the holder, from the copy's base,
 * keeping the new base for the next sync.
 */
export async function syncAs(
  deps: WorkspaceSyncDeps,
  target: { runId: string; dir: string; nodeId: string },
): Promise<SyncResult> {
  const generation = await holdWorkspace(deps.db, target.runId, target.nodeId);
  const base = await baseOf(deps, target);
  const result = await syncWorkspace(deps, { ...target, generation, base });
  if (result.base) rememberBase(deps, target, result.base);
  else bases.get(deps.objects)?.delete(copyKey(target.runId, target.dir, target.nodeId));
  return result;
}
