/**
 * Case 11: a workspace of many small files, made by one command. The post-command
 * sync of 100,000 new small files against uploading the same files to the same store
 * at the sync's own concurrency (read, put; no hashing, no manifest); and deleting the
 * run (its objects, manifest and warm directory, as `deleteRunData` does) against
 * deleting the same objects by key and removing the same directory. On the filesystem
 * store (the embedded default) with 100,000 files, and on s3rver with 10,000 (s3rver
 * stores each object as files of its own and deletes about a hundred a second, so a
 * hundred thousand would take the better part of an hour there).
 *
 * @module
 */

import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import pino from 'pino';
import { createObjectStore, type ObjectStore } from '../../../src/objects/index.js';
import { PAGES_IN_FLIGHT } from '../../../src/objects/prefix-delete.js';
import type { Db } from '../../../src/store/index.js';
import { deleteRunData } from '../../../src/workbench/lifecycle/index.js';
import {
  DEFAULT_SYNC_CONCURRENCY,
  emptySnapshot,
  mapLimit,
  syncWorkspace,
} from '../../../src/workbench/sync/index.js';
import { holdWorkspace } from '../../workbench/sync/fixtures.js';
import type { BenchContext } from '../context.js';
import { type Row, ratioRow, sampleInterleaved, skippedRow } from '../harness.js';
import { fixturePath, writeFixture } from '../workspace-fixture.js';

/** Bytes of each file: small, distinct content (every file is its own blob). */
const FILE_BYTES = 200;
/** Keys per `deleteMany`, as S3's DeleteObjects takes them. */
const DELETE_BATCH = 1000;

interface Store {
  name: string;
  objects: ObjectStore;
  files: number;
}

async function stores(ctx: BenchContext): Promise<Store[]> {
  const fs = createObjectStore({ kind: 'fs', baseDir: await ctx.dir('objects') });
  const s3 = await ctx.s3();
  const s3store = createObjectStore({
    kind: 's3',
    bucket: s3.bucket,
    prefix: ctx.unique('bulk'),
    region: s3.region,
    forcePathStyle: true,
    endpoint: s3.endpoint,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
  });
  return [
    { name: 'fs store', objects: fs, files: ctx.pick(10_000, 100_000) },
    { name: 's3rver', objects: s3store, files: ctx.pick(2_000, 10_000) },
  ];
}

/** A fresh workspace directory with `files` new files, and a run for it. */
async function freshWorkspace(ctx: BenchContext, db: Db, files: number) {
  const [runId] = await ctx.runs(db, 1);
  const root = await ctx.dir('root');
  const dir = join(root, runId!);
  await mkdir(dir, { recursive: true });
  await writeFixture(dir, files, FILE_BYTES);
  return { runId: runId!, root, dir };
}

async function syncAll(db: Db, objects: ObjectStore, ws: { runId: string; dir: string }) {
  const generation = await holdWorkspace(db, ws.runId, 'bench');
  return syncWorkspace(
    { db, objects, log: silentLog },
    { runId: ws.runId, dir: ws.dir, nodeId: 'bench', generation, base: emptySnapshot() },
  );
}

const silentLog = pino({ level: 'silent' });

export async function bulkFiles(ctx: BenchContext): Promise<Row[]> {
  const { db } = await ctx.openDb();
  const samples = ctx.pick(2, 2);
  const rows: Row[] = [];
  for (const store of await stores(ctx)) {
    try {
      rows.push(...(await measure(ctx, db, store, samples)));
    } catch (err) {
      rows.push(skippedRow(`11 bulk files (${store.name})`, (err as Error).message));
    }
  }
  return rows;
}

async function measure(ctx: BenchContext, db: Db, store: Store, samples: number): Promise<Row[]> {
  const rows: Row[] = [];
  const { objects, files } = store;
  // Sync: each sample a fresh workspace of `files` new files.
  let ws = await freshWorkspace(ctx, db, files);
  let uploaded = 0;
  const [sync, upload] = await sampleInterleaved(
    [
      {
        name: 'sync',
        before: async () => {
          ws = await freshWorkspace(ctx, db, files);
        },
        run: async () => {
          uploaded = (await syncAll(db, objects, ws)).uploaded;
        },
      },
      {
        name: 'upload',
        before: async () => {
          ws = await freshWorkspace(ctx, db, files);
        },
        run: () =>
          mapLimit(
            Array.from({ length: files }, (_, i) => i),
            DEFAULT_SYNC_CONCURRENCY,
            async (i) => {
              const path = fixturePath(i);
              await objects.put(`runs/${ws.runId}/raw/${path}`, await readFile(join(ws.dir, path)));
            },
          ),
      },
    ],
    { samples },
  );
  rows.push(
    ratioRow(
      {
        case: '11 bulk files',
        subject: `sync of ${files.toLocaleString('en')} new ${FILE_BYTES} B files (${store.name})`,
        baseline: `put of the same files, ${DEFAULT_SYNC_CONCURRENCY} at once`,
        unit: 'ms',
        target: 'p50 ratio <= 1.5',
        note: `the sync scans, hashes every file, uploads each blob, and commits ${files} manifest rows in one transaction; uploaded ${uploaded} blobs`,
      },
      sync ?? [],
      upload ?? [],
      (r) => r <= 1.5,
    ),
  );

  // Deletion: each sample a synced workspace, removed by deleteRunData or by hand.
  let keys: string[] = [];
  const [del, raw] = await sampleInterleaved(
    [
      {
        name: 'delete run',
        before: async () => {
          ws = await freshWorkspace(ctx, db, files);
          await syncAll(db, objects, ws);
        },
        run: () => deleteRunData({ db, objects, log: silentLog, workbenchRoot: ws.root }, ws.runId),
      },
      {
        name: 'delete objects',
        before: async () => {
          ws = await freshWorkspace(ctx, db, files);
          await syncAll(db, objects, ws);
          keys = (
            await db.query<{ hash: string }>(
              'select distinct hash from workspace_file where run_id = $1',
              [ws.runId],
            )
          ).map((r) => `runs/${ws.runId}/blobs/${r.hash}`);
        },
        run: async () => {
          const batches = [];
          for (let i = 0; i < keys.length; i += DELETE_BATCH) {
            batches.push(keys.slice(i, i + DELETE_BATCH));
          }
          await mapLimit(batches, PAGES_IN_FLIGHT, (b) => objects.deleteMany(b));
          await rm(ws.dir, { recursive: true, force: true });
        },
      },
    ],
    { samples },
  );
  rows.push(
    ratioRow(
      {
        case: '11 bulk files',
        subject: `delete the run of ${files.toLocaleString('en')} files (${store.name})`,
        baseline: `delete the same objects by key (${PAGES_IN_FLIGHT} batches of ${DELETE_BATCH} at once), remove the same directory`,
        unit: 'ms',
        target: 'p50 ratio <= 1.5',
        note: 'deleteRunData: objects under the run prefix, manifest and command rows, workspace rows, the warm directory',
      },
      del ?? [],
      raw ?? [],
      (r) => r <= 1.5,
    ),
  );
  return rows;
}
