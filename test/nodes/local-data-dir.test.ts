import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { LOCK_FILE, openDb } from '../../src/store/index.js';
import { cliMain, createToken, finished, startAndStop } from '../support/local-node.js';

/**
 * The local node's data directory is opened by one process at a time; users' tokens
 * are made through the running node instead.
 */

t.test('the embedded database is opened by one process at a time', async (t) => {
  const cwd = await mkdtemp(join(tmpdir(), 'memql-local-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  const dataDir = join(cwd, '.data');
  let refused: Awaited<ReturnType<typeof createToken>> | null = null;
  let holder = 0;
  const first = await startAndStop(cwd, {}, async (_stdout, pid) => {
    holder = pid;
    refused = await createToken(cwd, dataDir, 'bob');
  });
  t.equal(first.ready, true);
  t.equal(first.code, 0);
  t.equal(refused!.code, 1, 'a second process is refused while the node runs');
  t.match(
    refused!.stderr,
    `the embedded database in ${join(dataDir, 'pglite')} is open in process ${holder}`,
    "the refusal names the holder's pid",
  );
  t.match(refused!.stderr, 'Stop that process first, or point MEMQL_DATA_DIR at another directory');
  t.notMatch(refused!.stderr, /\n\s+at /, 'a refusal, not a stack trace');
  t.equal(refused!.stdout, '', 'and prints no token');

  // While it runs, an operator makes the token through the node: its operator
  // credential is in the data directory, and the CLI sends it.
  let carolStatus = 0;
  const viaNode = await startAndStop(cwd, {}, async (stdout) => {
    const api = /API: +(http:\/\/\S+?)\/v1/.exec(stdout)![1]!;
    t.match(stdout, `operator:       ${join(dataDir, 'operator-token')}`);
    const operator = (await readFile(join(dataDir, 'operator-token'), 'utf8')).trim();
    const made = await finished(
      spawn(process.execPath, [cliMain, 'tokens', 'create', 'carol'], {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', MEMQL_URL: api, MEMQL_TOKEN: operator },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    t.equal(made.code, 0, made.stderr);
    const res = await fetch(`${api}/v1/runs`, {
      headers: { authorization: `Bearer ${made.stdout.trim()}` },
    });
    carolStatus = res.status;
  });
  t.equal(viaNode.code, 0);
  t.equal(carolStatus, 200, 'a token made through the running node is accepted at once');

  // Once the node has stopped, the token is made in the same database the node opens.
  const made = await createToken(cwd, dataDir, 'bob');
  t.equal(made.code, 0, made.stderr);
  const bobToken = made.stdout.trim();
  let whoami = 0;
  const second = await startAndStop(cwd, {}, async (stdout) => {
    const api = /API: +(http:\/\/\S+?)\/v1/.exec(stdout)![1]!;
    const res = await fetch(`${api}/v1/runs`, { headers: { authorization: `Bearer ${bobToken}` } });
    whoami = res.status;
  });
  t.equal(second.code, 0);
  t.equal(whoami, 200, "bob's token is accepted by the restarted node");
});

t.test('a lock left by a killed process is taken over', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'memql-lock-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const gone = spawn(process.execPath, ['-e', '0']);
  await new Promise((r) => gone.on('exit', r));
  await mkdir(join(dir, 'pglite'), { recursive: true });
  await writeFile(join(dir, 'pglite', LOCK_FILE), `${gone.pid}\n`);
  const db = await openDb({ kind: 'pglite', dataDir: join(dir, 'pglite') });
  t.equal(
    (await readFile(join(dir, 'pglite', LOCK_FILE), 'utf8')).trim(),
    String(process.pid),
    'this process holds it now',
  );
  await t.rejects(openDb({ kind: 'pglite', dataDir: join(dir, 'pglite') }), {
    name: 'DataDirLockedError',
    holderPid: process.pid,
  });
  await db.close();
  t.notOk(existsSync(join(dir, 'pglite', LOCK_FILE)), 'closing removes the lock');
  const again = await openDb({ kind: 'pglite', dataDir: join(dir, 'pglite') });
  await again.close();
});
