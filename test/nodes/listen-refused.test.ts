import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { finished, localMain } from '../support/local-node.js';

/**
 * A node whose HTTP address is taken says so in one line naming `MEMQL_HTTP_LISTEN`
 * and what to do, and exits 1: no stack trace.
 */

t.test('a port in use is one line naming MEMQL_HTTP_LISTEN', async (t) => {
  const taken = createServer();
  taken.listen(0, '127.0.0.1');
  await once(taken, 'listening');
  t.teardown(() => new Promise<void>((resolve) => taken.close(() => resolve())));
  const port = (taken.address() as { port: number }).port;
  const cwd = await mkdtemp(join(tmpdir(), 'memql-listen-'));
  await chmod(cwd, 0o755);
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  const run = await finished(
    spawn(process.execPath, [localMain], {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', MEMQL_HTTP_LISTEN: `127.0.0.1:${port}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  t.equal(run.code, 1);
  const lines = run.stderr.trim().split('\n');
  t.equal(lines.length, 1, `one line: ${run.stderr}`);
  t.match(lines[0], `MEMQL_HTTP_LISTEN=127.0.0.1:${port}: 127.0.0.1:${port} is in use`);
  t.match(lines[0], 'set MEMQL_HTTP_LISTEN to another address');
  t.notMatch(run.stderr, /\n\s+at /, 'no stack trace');
});
