/**
 * Case 3: `fs_write` of 1 KiB (new content every time, so sync uploads a blob) then
 * `fs_read` of it, through the mesh, against a raw local write and read; and the same
 * with the workbench node on the S3 object store against a raw S3 put and get with
 * the SDK client configured the same way.
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createS3Client } from '../../../src/objects/index.js';
import { BENCH_AUTHORITY, type BenchContext, envelope, expectOk } from '../context.js';
import { type Row, ratioRow, sampleInterleaved } from '../harness.js';
import { startAgent, startWorkbenchProcess } from '../mesh.js';

const KiB = 1024;

export async function filesMesh(ctx: BenchContext): Promise<Row[]> {
  const { db, url } = await ctx.openDb();
  const [fsRun, s3Run] = await ctx.runs(db, 2);
  const samples = ctx.pick(20, 100);
  const rows: Row[] = [];

  const writeRead = async (agent: Awaited<ReturnType<typeof startAgent>>, runId: string) => {
    const content = randomBytes(KiB / 2).toString('hex');
    const w = await agent.dispatch(
      envelope(runId, 'fs_write', { path: 'f.txt', content }),
      BENCH_AUTHORITY,
    );
    expectOk(w.result, 'fs_write');
    const r = await agent.dispatch(envelope(runId, 'fs_read', { path: 'f.txt' }), BENCH_AUTHORITY);
    expectOk(r.result, 'fs_read');
  };

  // Filesystem object store (the embedded default) against a raw local write + read.
  const fsWb = await startWorkbenchProcess(ctx, url, [fsRun!]);
  const fsAgent = await startAgent(ctx, fsWb);
  const localDir = await ctx.dir('raw-files');
  const [meshFs, rawFs] = await sampleInterleaved(
    [
      { name: 'mesh', run: () => writeRead(fsAgent, fsRun!) },
      {
        name: 'raw',
        run: async () => {
          const p = join(localDir, 'f.txt');
          await writeFile(p, randomBytes(KiB / 2).toString('hex'));
          await readFile(p);
        },
      },
    ],
    { samples, warmup: 5 },
  );
  rows.push(
    ratioRow(
      {
        case: '3 files via mesh',
        subject: 'fs_write 1 KiB + fs_read (fs store)',
        baseline: 'raw writeFile + readFile',
        unit: 'ms',
        target: 'info (no target set)',
      },
      meshFs ?? [],
      rawFs ?? [],
      null,
    ),
  );

  // S3 object store against a raw SDK put + get.
  const s3Env = await ctx.s3Env();
  const s3Wb = await startWorkbenchProcess(ctx, url, [s3Run!], s3Env);
  const s3Agent = await startAgent(ctx, s3Wb);
  const s3 = await ctx.s3();
  const client = createS3Client({
    region: s3.region,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
  });
  ctx.defer(async () => client.destroy());
  const key = `${s3Env.MEMQL_S3_PREFIX}-raw/f.txt`;
  const [meshS3, rawS3] = await sampleInterleaved(
    [
      { name: 'mesh', run: () => writeRead(s3Agent, s3Run!) },
      {
        name: 'raw',
        run: async () => {
          await client.send(
            new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: randomBytes(KiB) }),
          );
          const got = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
          await got.Body?.transformToByteArray();
        },
      },
    ],
    { samples, warmup: 5 },
  );
  rows.push(
    ratioRow(
      {
        case: '3 files via mesh',
        subject: 'fs_write 1 KiB + fs_read (S3 store)',
        baseline: 'raw S3 put + get (SDK)',
        unit: 'ms',
        target: 'info (no target set)',
      },
      meshS3 ?? [],
      rawS3 ?? [],
      null,
    ),
  );
  return rows;
}
