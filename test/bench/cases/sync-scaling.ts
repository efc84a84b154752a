/**
 * Case 5: sync scaling. Workspaces of a small and a large number of files; a
 * "command" rewrites one file; the post-command `syncWorkspace` (the function the
 * host calls after every mutating action) must upload exactly one object, and its
 * time must grow with the tree no faster than a bare stat of the tree does.
 * Object store: the filesystem store (the embedded default), so the figure is the
 * sync's own cost rather than the object server's.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FsObjectStore } from '../../../src/objects/index.js';
import { emptySnapshot, syncWorkspace } from '../../../src/workbench/sync/index.js';
import { holdWorkspace } from '../../workbench/sync/fixtures.js';
import type { BenchContext } from '../context.js';
import { type Row, ratioRow, sampleInterleaved } from '../harness.js';
import { summarize } from '../stats.js';
import { fixturePath, statTree, writeFixture } from '../workspace-fixture.js';

interface SizeResult {
  files: number;
  sync: number[];
  stat: number[];
  uploads: number[];
  initialSyncMs: number;
}

export async function syncScaling(ctx: BenchContext): Promise<Row[]> {
  const { db } = await ctx.openDb();
  const objects = new FsObjectStore({ baseDir: await ctx.dir('objects') });
  const deps = { db, objects, log: ctx.log };
  const totalBytes = ctx.pick(10, 100) * 1024 * 1024;
  const sizes = ctx.pick([200, 2000], [1000, 10_000]);
  const large = sizes[1]!;
  const fileBytes = Math.floor(totalBytes / large);
  const samples = ctx.pick(10, 30);
  const results: SizeResult[] = [];
  for (const files of sizes) {
    const [runId] = await ctx.runs(db, 1);
    const dir = await ctx.dir('ws');
    await writeFixture(dir, files, fileBytes);
    const generation = await holdWorkspace(db, runId!, 'bench');
    const target = { runId: runId!, dir, nodeId: 'bench', generation, base: emptySnapshot() };
    const t0 = performance.now();
    await syncWorkspace(deps, target);
    const initialSyncMs = performance.now() - t0;
    const uploads: number[] = [];
    let k = 0;
    const [sync, stat] = await sampleInterleaved(
      [
        {
          name: 'sync',
          before: async () => {
            k = (k + 7919) % files;
            await writeFile(join(dir, fixturePath(k)), randomBytes(fileBytes));
          },
          run: async () => {
            // The base moves with each sync, as the host's warm copy does.
            const r = await syncWorkspace(deps, target);
            uploads.push(r.uploaded);
          },
        },
        { name: 'stat', run: () => statTree(dir).then(() => {}) },
      ],
      { samples, warmup: 2 },
    );
    results.push({
      files,
      sync: sync ?? [],
      stat: stat ?? [],
      uploads: uploads.slice(-samples),
      initialSyncMs,
    });
  }
  const rows: Row[] = [];
  for (const r of results) {
    const exact = r.uploads.every((u) => u === 1);
    rows.push(
      ratioRow(
        {
          case: '5 sync scaling',
          subject: `post-command sync, ${r.files} files`,
          baseline: `bare stat of the tree`,
          unit: 'ms',
          target: 'uploads exactly 1 object',
          note: `uploaded exactly one object in ${r.uploads.filter((u) => u === 1).length}/${r.uploads.length} syncs (${exact ? 'holds' : `NO: ${r.uploads.join(',')}`}); ${((fileBytes * r.files) / 1024 / 1024).toFixed(0)} MiB in ${fileBytes} B files; first full sync ${(r.initialSyncMs / 1000).toFixed(1)} s`,
        },
        r.sync,
        r.stat,
        () => exact,
      ),
    );
  }
  const [small, big] = results;
  if (small && big) {
    const growth = (a: number[], b: number[]) => summarize(b).median / summarize(a).median;
    const syncGrowth = growth(small.sync, big.sync);
    const statGrowth = growth(small.stat, big.stat);
    rows.push({
      case: '5 sync scaling',
      subject: `sync growth ${small.files} -> ${big.files} files`,
      baseline: 'stat growth, same trees',
      unit: 'x',
      subjectStats: { ...summarize([syncGrowth]) },
      baselineStats: { ...summarize([statGrowth]) },
      ratio: syncGrowth / statGrowth,
      target: 'ratio <= 1 (+10% noise allowance)',
      holds: syncGrowth / statGrowth <= 1.1,
      note: `growth = p50 at ${big.files} files / p50 at ${small.files} files; sync x${syncGrowth.toFixed(2)}, stat x${statGrowth.toFixed(2)}`,
    });
  }
  return rows;
}
