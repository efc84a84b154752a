import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { MAX_FILE_WRITE_BYTES } from '../../src/client/index.js';
import { cliMain, finished, startAndStop } from '../support/local-node.js';

/**
 * `memql fs write` never leaves a cut file: a source over the API's file limit is
 * refused before anything is sent, and a write that fails part way (here the
 * workspace's quota, set low on a real local node) deletes what it had written.
 */

const cwd = await mkdtemp(join(tmpdir(), 'memql-large-'));
t.teardown(() => rm(cwd, { recursive: true, force: true }));
await chmod(cwd, 0o755);
const big = join(cwd, 'big.bin');
await writeFile(big, randomBytes(MAX_FILE_WRITE_BYTES + 1));
const medium = join(cwd, 'medium.bin');
await writeFile(medium, randomBytes(5 * 1024 * 1024));

t.test('too large up front, and no cut file after a failure part way', async (t) => {
  const seen: Record<string, { code: number | null; stdout: string; stderr: string }> = {};
  const run = await startAndStop(
    cwd,
    { MEMQL_WORKSPACE_MAX_BYTES: String(3 * 1024 * 1024) },
    async (stdout) => {
      const url = /API: +(http:\/\/\S+?)\/v1/.exec(stdout)![1]!;
      const token = /token: +(\S+)/.exec(stdout)![1]!;
      const memql = (args: string[]) =>
        finished(
          spawn(process.execPath, [cliMain, ...args], {
            env: { PATH: process.env.PATH ?? '/usr/bin:/bin', MEMQL_URL: url, MEMQL_TOKEN: token },
            stdio: ['ignore', 'pipe', 'pipe'],
          }),
        );
      const runId = (await memql(['runs', 'create'])).stdout.trim();
      seen.big = await memql(['fs', 'write', runId, 'big.bin', '--from', big]);
      seen.medium = await memql(['fs', 'write', runId, 'medium.bin', '--from', medium]);
      seen.small = await memql(['fs', 'write', runId, 'small.txt', '--content', 'kept']);
      seen.listing = await memql(['--json', 'fs', 'ls', runId]);
    },
  );
  t.equal(run.code, 0, run.stderr.slice(-500));
  t.equal(seen.big!.code, 1);
  t.match(
    seen.big!.stderr,
    `error: payload_too_large: the source is ${MAX_FILE_WRITE_BYTES + 1} bytes; a file written through the API is at most ${MAX_FILE_WRITE_BYTES} bytes (32 MiB). Nothing was sent`,
  );
  t.equal(seen.medium!.code, 1, 'over the workspace quota part way');
  t.match(seen.medium!.stderr, 'workspace_quota_exceeded');
  t.equal(seen.small!.code, 0);
  const entries = (JSON.parse(seen.listing!.stdout) as { entries: { path: string }[] }).entries;
  t.same(
    entries.map((e) => e.path),
    ['small.txt'],
    'neither the refused nor the failed file is in the workspace',
  );
});
