/**
 * Case 6: cold hydrate of the large workspace from S3 (`hydrateWorkspace` into an
 * empty directory, as a substitute replica does after a takeover) against a raw
 * parallel download of the same objects with the SDK at the same concurrency, each
 * written to its file.
 *
 * @module
 */

import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { createObjectStore, createS3Client } from '../../../src/objects/index.js';
import { getManifest } from '../../../src/store/index.js';
import {
  blobKey,
  DEFAULT_SYNC_CONCURRENCY,
  emptySnapshot,
  hydrateWorkspace,
  mapLimit,
  syncWorkspace,
} from '../../../src/workbench/sync/index.js';
import { holdWorkspace } from '../../workbench/sync/fixtures.js';
import type { BenchContext } from '../context.js';
import { type Row, ratioRow, sampleInterleaved } from '../harness.js';
import { writeFixture } from '../workspace-fixture.js';

export async function hydrate(ctx: BenchContext): Promise<Row[]> {
  const { db } = await ctx.openDb();
  const s3 = await ctx.s3();
  const prefix = ctx.unique('hydrate');
  const objects = createObjectStore({
    kind: 's3',
    bucket: s3.bucket,
    prefix,
    region: s3.region,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
  });
  const client = createS3Client({
    region: s3.region,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
  ctx.defer(async () => client.destroy());
  const deps = { db, objects, log: ctx.log };
  const files = ctx.pick(2000, 10_000);
  const totalBytes = ctx.pick(10, 100) * 1024 * 1024;
  const [runId] = await ctx.runs(db, 1);
  const source = await ctx.dir('source');
  await writeFixture(source, files, Math.floor(totalBytes / files));
  const generation = await holdWorkspace(db, runId!, 'bench');
  const t0 = performance.now();
  await syncWorkspace(deps, {
    runId: runId!,
    dir: source,
    nodeId: 'bench',
    generation,
    base: emptySnapshot(),
  });
  const uploadS = (performance.now() - t0) / 1000;
  const manifest = await getManifest(db, runId!);

  const target = join(await ctx.dir('targets'), 'ws');
  const fresh = () => rm(target, { recursive: true, force: true });
  const [hyd, raw] = await sampleInterleaved(
    [
      {
        name: 'hydrate',
        before: fresh,
        run: async () => {
          const r = await hydrateWorkspace(deps, { runId: runId!, dir: target });
          if (r.downloaded !== files) throw new Error(`hydrated ${r.downloaded} of ${files} files`);
        },
      },
      {
        name: 'raw',
        before: fresh,
        run: async () => {
          await mapLimit(manifest.files, DEFAULT_SYNC_CONCURRENCY, async (f) => {
            const got = await client.send(
              new GetObjectCommand({
                Bucket: s3.bucket,
                Key: `${prefix}/${blobKey(runId!, f.hash)}`,
              }),
            );
            const bytes = await got.Body!.transformToByteArray();
            const path = join(target, f.path);
            await mkdir(dirname(path), { recursive: true });
            await writeFile(path, bytes);
          });
        },
      },
    ],
    { samples: ctx.pick(2, 3), warmup: 0 },
  );
  return [
    ratioRow(
      {
        case: '6 cold hydrate',
        subject: `hydrateWorkspace ${files} files from S3`,
        baseline: `raw SDK GetObject x ${files}, ${DEFAULT_SYNC_CONCURRENCY} at once`,
        unit: 'ms',
        target: 'p50 ratio <= 1.3',
        note: `${(totalBytes / 1024 / 1024).toFixed(0)} MiB; S3 is s3rver on 127.0.0.1; first upload took ${uploadS.toFixed(1)} s; one sample = one whole hydrate`,
      },
      hyd ?? [],
      raw ?? [],
      (r) => r <= 1.3,
    ),
  ];
}
