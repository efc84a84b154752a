import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import t from 'tap';
import { MAX_FILE_WRITE_BYTES } from '../../src/client/index.js';
import { cliMain, finished, startAndStop } from '../support/local-node.js';

/**
 * Large files through the CLI on a real local node: a 200 MiB file from `--from` and
 * a 60 MiB one piped on stdin go in as streams and come back byte for byte (to
 * `--out` and to stdout); a write that passes the workspace's quota part way leaves
 * no file; an `--append` past the 32 MiB an appended file may reach is refused before
 * anything is sent.
 */

// It moves over half a gigabyte through a real node: on a busy shared machine that
// takes minutes, so this file gets more than the default time.
t.setTimeout(600_000);

const MiB = 1024 * 1024;
const cwd = await mkdtemp(join(tmpdir(), 'memql-large-'));
t.teardown(() => rm(cwd, { recursive: true, force: true }));
await chmod(cwd, 0o755);

/** Writes `size` random bytes to `path` in 1 MiB pieces; returns their SHA-256. */
async function randomFile(path: string, size: number): Promise<string> {
  const hash = createHash('sha256');
  const out = createWriteStream(path);
  for (let left = size; left > 0; left -= MiB) {
    const piece = randomBytes(Math.min(MiB, left));
    hash.update(piece);
    if (!out.write(piece)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r, j) => out.end((err?: Error | null) => (err ? j(err) : r())));
  return hash.digest('hex');
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

const big = join(cwd, 'big.bin');
const bigSha = await randomFile(big, 200 * MiB);
const medium = join(cwd, 'medium.bin');
const mediumSha = await randomFile(medium, 60 * MiB);
const twelve = join(cwd, 'twelve.bin');
await randomFile(twelve, 12 * MiB);

t.test('200 MiB and 60 MiB round trips; no cut file after a failure part way', async (t) => {
  type Seen = { code: number | null; stdout: string; stderr: string };
  const seen: Record<string, Seen> = {};
  let bigBack = '';
  let mediumBack = '';
  const run = await startAndStop(
    cwd,
    // Room for the two files and 10 MiB more: a third of 12 MiB fails at its second part.
    { MEMQL_WORKSPACE_MAX_BYTES: String(270 * MiB) },
    async (stdout) => {
      const url = /API: +(http:\/\/\S+?)\/v1/.exec(stdout)![1]!;
      const token = /token: +(\S+)/.exec(stdout)![1]!;
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', MEMQL_URL: url, MEMQL_TOKEN: token };
      const memql = (args: string[]) =>
        finished(
          spawn(process.execPath, [cliMain, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] }),
        );
      const runId = (await memql(['runs', 'create'])).stdout.trim();

      seen.big = await memql(['fs', 'write', runId, 'data/big.bin', '--from', big]);
      seen.bigRead = await memql([
        'fs',
        'read',
        runId,
        'data/big.bin',
        '--out',
        join(cwd, 'big.out'),
      ]);
      bigBack = await sha256Of(join(cwd, 'big.out'));

      // Piped in on stdin, read back on stdout.
      const writer = spawn(
        process.execPath,
        [cliMain, 'fs', 'write', runId, 'medium.bin', '--from', '-'],
        {
          env,
          stdio: ['pipe', 'pipe', 'pipe'],
        },
      );
      const written = finished(writer);
      await pipeline(createReadStream(medium), writer.stdin!);
      seen.medium = await written;
      const reader = spawn(process.execPath, [cliMain, 'fs', 'read', runId, 'medium.bin'], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const hash = createHash('sha256');
      const [read] = await Promise.all([finished(reader), pipeline(reader.stdout!, hash)]);
      seen.mediumRead = read;
      mediumBack = hash.digest('hex');

      seen.over = await memql(['fs', 'write', runId, 'over.bin', '--from', twelve]);
      seen.append = await memql(['fs', 'write', runId, 'medium.bin', '--from', medium, '--append']);
      seen.listing = await memql(['--json', 'fs', 'ls', runId, '--recursive']);
    },
  );
  t.equal(run.code, 0, run.stderr.slice(-500));
  t.equal(seen.big!.code, 0, seen.big!.stderr);
  t.match(seen.big!.stdout, 'wrote 200.0 MiB to data/big.bin');
  t.equal(seen.bigRead!.code, 0, seen.bigRead!.stderr);
  t.equal(bigBack, bigSha, '200 MiB back byte for byte');
  t.equal(seen.medium!.code, 0, seen.medium!.stderr);
  t.equal(seen.mediumRead!.code, 0, seen.mediumRead!.stderr);
  t.equal(mediumBack, mediumSha, '60 MiB from stdin back on stdout byte for byte');

  t.equal(seen.over!.code, 1, 'over the workspace quota part way');
  t.match(seen.over!.stderr, 'workspace_quota_exceeded');
  t.equal(seen.append!.code, 1);
  t.match(
    seen.append!.stderr,
    `error: payload_too_large: the source is ${60 * MiB} bytes; a file appended to through the API grows to at most ${MAX_FILE_WRITE_BYTES} bytes (32 MiB). Nothing was sent`,
  );
  const entries = (
    JSON.parse(seen.listing!.stdout) as { entries: { path: string; size: number }[] }
  ).entries;
  t.same(
    entries.map((e) => [e.path, e.size]),
    [
      ['data', entries[0]!.size],
      ['medium.bin', 60 * MiB],
      ['data/big.bin', 200 * MiB],
    ],
    'the refused file is not in the workspace, and the appended-to one is as it was',
  );
  t.equal((await readFile(join(cwd, 'big.out'))).length, 200 * MiB);
});
