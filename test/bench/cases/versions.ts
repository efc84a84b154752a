/**
 * Case 15: a workspace's history on a tree of 10,000 files (1,000 with `--size=small`),
 * the filesystem store (the embedded default), so the figures are the history's own
 * cost rather than an object server's.
 *
 * - **Fork** (`forkRun`, what `POST /v1/runs/:runId/fork` runs) against copying the
 *   run's objects as a fork that copied bytes would (each blob read and written under
 *   the new run's prefix, eight at once). Target: at most 0.05 of the copy.
 * - **Restore of one changed file** (`restoreCopy`, what `version_restore` runs on the
 *   holder) against the sync of one changed file (`syncWorkspace` after a command
 *   rewrote it, what every command's result waits for). Interleaved: a sync commits a
 *   new content of one file, a restore puts the version before it back. Target: at
 *   most 1.5 times the sync.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FsObjectStore, getBytes } from '../../../src/objects/index.js';
import { forkRun } from '../../../src/store/index.js';
import {
  emptySnapshot,
  mapLimit,
  materializeTarget,
  restoreCopy,
  syncWorkspace,
} from '../../../src/workbench/sync/index.js';
import { holdWorkspace, listKeys } from '../../workbench/sync/fixtures.js';
import type { BenchContext } from '../context.js';
import { type Row, ratioRow, sampleInterleaved } from '../harness.js';
import { fixturePath, writeFixture } from '../workspace-fixture.js';

const CASE = '15 versions';

export async function versions(ctx: BenchContext): Promise<Row[]> {
  const { db } = await ctx.openDb();
  const objects = new FsObjectStore({ baseDir: await ctx.dir('version-objects') });
  const deps = { db, objects, log: ctx.log };
  const files = ctx.pick(1000, 10_000);
  const fileBytes = 1024;
  const [runId] = await ctx.runs(db, 1);
  const dir = await ctx.dir('version-ws');
  await writeFixture(dir, files, fileBytes);
  const generation = await holdWorkspace(db, runId!, 'bench');
  const base = emptySnapshot();
  const target = { runId: runId!, dir, nodeId: 'bench', generation, base };
  await syncWorkspace(deps, target);

  // Fork against copying every blob.
  const blobs = await listKeys(objects, `runs/${runId}/blobs/`);
  let forks = 0;
  let copies = 0;
  const [fork, copy] = await sampleInterleaved(
    [
      {
        name: 'fork',
        run: async () => {
          forks += 1;
          const made = await forkRun(db, {
            fromRunId: runId!,
            ownerUserId: 'bench',
            version: base.version,
            fork: { id: `${runId}-fork-${forks}`, ownerUserId: 'bench' },
          });
          if (made.kind !== 'forked' || made.files !== files) {
            throw new Error(`fork: ${JSON.stringify(made)}`);
          }
        },
      },
      {
        name: 'copy',
        run: async () => {
          copies += 1;
          await mapLimit(blobs, 8, async (key) => {
            const bytes = await getBytes(objects, key);
            await objects.put(key.replace(`runs/${runId}/`, `copies/${copies}/`), bytes, {
              contentLength: bytes.length,
            });
          });
        },
      },
    ],
    { samples: ctx.pick(2, 5), warmup: 1 },
  );
  const forkedKeys = (await listKeys(objects, `runs/${runId}-fork-1/`)).length;

  // Restore of one changed file against the sync of one changed file.
  const material = materializeTarget(deps, { runId: runId!, dir });
  let k = 0;
  let restored = 0;
  const [restore, sync] = await sampleInterleaved(
    [
      {
        name: 'restore',
        before: async () => {
          // A change to take back: one file rewritten and synced, untimed.
          k = (k + 7919) % files;
          await writeFile(join(dir, fixturePath(k)), randomBytes(fileBytes));
          await syncWorkspace(deps, target);
        },
        run: async () => {
          const r = await restoreCopy(
            db,
            { ...material, nodeId: 'bench', generation, base },
            { source: 'restore', restoredFrom: base.version - 1 },
          );
          if (r.changed !== 1 || r.added + r.removed !== 0) {
            throw new Error(`restore changed ${JSON.stringify(r)}`);
          }
          restored += 1;
        },
      },
      {
        name: 'sync',
        before: async () => {
          k = (k + 7919) % files;
          await writeFile(join(dir, fixturePath(k)), randomBytes(fileBytes));
        },
        run: async () => {
          const r = await syncWorkspace(deps, target);
          if (r.uploaded !== 1) throw new Error(`sync uploaded ${r.uploaded}`);
        },
      },
    ],
    { samples: ctx.pick(10, 30), warmup: 2 },
  );
  return [
    ratioRow(
      {
        case: CASE,
        subject: `fork of a ${files}-file workspace`,
        baseline: 'copying its objects (get and put, 8 at once)',
        unit: 'ms',
        target: 'p50 ratio <= 0.05',
        note: `${blobs.length} blobs; objects written by a fork: ${forkedKeys}`,
      },
      fork!,
      copy!,
      (r) => r <= 0.05 && forkedKeys === 0,
    ),
    ratioRow(
      {
        case: CASE,
        subject: `restore of one changed file, ${files} files`,
        baseline: 'sync of one changed file, same tree',
        unit: 'ms',
        target: 'p50 ratio <= 1.5',
        note: `${restored} restores, each one file changed`,
      },
      restore!,
      sync!,
      (r) => r <= 1.5,
    ),
  ];
}
