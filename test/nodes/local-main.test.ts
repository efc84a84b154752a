import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { LOCK_FILE, openDb } from '../../src/store/index.js';

const main = resolve(dirname(fileURLToPath(import.meta.url)), '../../nodes/local/main.js');
const agentMain = resolve(dirname(fileURLToPath(import.meta.url)), '../../nodes/agent/main.js');

/** Starts the local node in `cwd`, waits for "ready", stops it with SIGINT. */
async function startAndStop(
  cwd: string,
  env: Record<string, string> = {},
  whileUp: (stdout: string, pid: number) => Promise<void> = async () => {},
) {
  const child = spawn(process.execPath, [main], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', MEMQL_HTTP_LISTEN: '127.0.0.1:0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const deadline = Date.now() + 60_000;
  while (!stdout.includes('ready.') && child.exitCode === null && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const ready = stdout.includes('ready.');
  if (ready) await whileUp(stdout, child.pid!);
  child.kill('SIGINT');
  const code = await exited;
  return { ready, code, stdout, stderr };
}

t.test('npm start runs on the embedded defaults and reuses its data', async (t) => {
  const cwd = await mkdtemp(join(tmpdir(), 'memql-local-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));

  const first = await startAndStop(cwd);
  t.equal(first.ready, true, `prints ready (stderr: ${first.stderr.slice(-500)})`);
  t.equal(first.code, 0, 'Ctrl-C stops it cleanly');
  t.match(first.stdout, 'embedded PGlite');
  t.match(first.stdout, /API: +http:\/\/127\.0\.0\.1:\d+\/v1/, 'prints the API address');
  t.match(first.stdout, /console: +http:\/\/127\.0\.0\.1:\d+\/console/, 'prints the console');
  const token = /token: +(\S+)/.exec(first.stdout)?.[1];
  t.ok(token, 'prints a development token');
  const entries = await readdir(join(cwd, '.data'));
  for (const name of ['dev-token', 'objects', 'pglite']) t.ok(entries.includes(name), name);
  const tokenFile = join(cwd, '.data', 'dev-token');
  t.equal((await stat(tokenFile)).mode & 0o777, 0o600, 'the token file is private to its owner');
  t.equal((await readFile(tokenFile, 'utf8')).trim(), token);

  const second = await startAndStop(cwd);
  t.equal(second.ready, true, 'a second start reuses the same data directory');
  t.equal(second.code, 0);
  t.equal(/token: +(\S+)/.exec(second.stdout)?.[1], token, 'and the same development token');
});

/** Runs `agent/main.js create-token <user>` on the embedded database in `dataDir`. */
function createToken(cwd: string, dataDir: string, user: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
    const child = spawn(process.execPath, [agentMain, 'create-token', user], {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', MEMQL_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('exit', (code) => done({ code, stdout, stderr }));
  });
}

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

t.test(
  'MEMQL_DATA_DIR holds the warm workspaces and the node id, one id a directory',
  async (t) => {
    const cwd = await mkdtemp(join(tmpdir(), 'memql-local-'));
    t.teardown(() => rm(cwd, { recursive: true, force: true }));
    // Searchable by the sandbox uid, so the warm copies stay in the data directory.
    await chmod(cwd, 0o755);
    const fleetNodeId = async (stdout: string) => {
      const api = /API: +(http:\/\/\S+?)\/v1/.exec(stdout)![1]!;
      const token = /token: +(\S+)/.exec(stdout)![1]!;
      const run = await fetch(`${api}/v1/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{}',
      });
      const runId = ((await run.json()) as { run: { id: string } }).run.id;
      await fetch(`${api}/v1/dispatch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          action: 'fs_write',
          args: { path: 'a.txt', content: 'a' },
          runId,
          agentId: 'a',
          taskId: 't',
        }),
      });
      const fleet = await fetch(`${api}/v1/fleet/workbenches`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return {
        runId,
        nodeId: ((await fleet.json()) as { replicas: { nodeId: string }[] }).replicas[0]!.nodeId,
      };
    };
    const seen: { runId: string; nodeId: string }[] = [];
    for (const dir of ['one', 'two', 'one']) {
      const run = await startAndStop(cwd, { MEMQL_DATA_DIR: join(cwd, dir) }, async (stdout) => {
        seen.push(await fleetNodeId(stdout));
      });
      t.equal(run.code, 0, run.stderr.slice(-500));
    }
    const [one, two, oneAgain] = seen;
    t.match(one!.nodeId, /^local-[0-9a-f]{12}$/);
    t.not(one!.nodeId, two!.nodeId, 'two data directories, two node ids');
    t.equal(oneAgain!.nodeId, one!.nodeId, 'a restart on the same data directory keeps its id');
    t.equal(
      (await readFile(join(cwd, 'one', 'node-id'), 'utf8')).trim(),
      one!.nodeId,
      'kept in <dataDir>/node-id',
    );
    t.ok(
      existsSync(join(cwd, 'two', 'workbenches', two!.runId, 'a.txt')),
      "the run's warm copy is under the data directory",
    );
    t.notOk(existsSync(join(cwd, '.data')), 'nothing is written beside it');
  },
);

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

t.test(
  'MEMQL_LOG_FORMAT=pretty writes short lines for people, json one object a line',
  async (t) => {
    const cwd = await mkdtemp(join(tmpdir(), 'memql-local-'));
    t.teardown(() => rm(cwd, { recursive: true, force: true }));
    const pretty = await startAndStop(cwd, { MEMQL_LOG_FORMAT: 'pretty' });
    t.equal(pretty.code, 0);
    t.match(pretty.stdout, /^\d\d:\d\d:\d\d\.\d{3} INFO {2}store ready database=pglite/m);
    t.notMatch(pretty.stdout, /^\{/m, 'no JSON line');
    const json = await startAndStop(cwd, {});
    t.equal(json.code, 0);
    t.match(
      json.stdout,
      /^\{"level":30,.*"msg":"store ready"/m,
      'JSON when stdout is not a terminal',
    );
  },
);

t.test('a bad variable stops the node with a message naming it', async (t) => {
  const cwd = await mkdtemp(join(tmpdir(), 'memql-local-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  const run = await startAndStop(cwd, { MEMQL_WORKER_CONCURRENCY: 'lots' });
  t.equal(run.ready, false);
  t.equal(run.code, 2);
  t.match(run.stderr, 'MEMQL_WORKER_CONCURRENCY');
});

t.test('with MEMQL_METRICS_LISTEN the queue metrics are served', async (t) => {
  const cwd = await mkdtemp(join(tmpdir(), 'memql-local-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  let body = '';
  const run = await startAndStop(cwd, { MEMQL_METRICS_LISTEN: '127.0.0.1:0' }, async (stdout) => {
    const line = stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg?: string; url?: string })
      .find((l) => l.msg === 'metrics served');
    if (line?.url) body = await (await fetch(new URL('/metrics', line.url))).text();
  });
  t.equal(run.code, 0);
  t.match(body, 'memql_workspace_command_queue_depth');
});

t.test('Ctrl-C with a command still streaming stops the node promptly and cleanly', async (t) => {
  const cwd = await mkdtemp(join(tmpdir(), 'memql-local-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  let streamed = '';
  const run = await startAndStop(cwd, {}, async (stdout) => {
    const api = /API: +(\S+)/.exec(stdout)?.[1];
    const token = /token: +(\S+)/.exec(stdout)?.[1];
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const created = (await (
      await fetch(`${api}/runs`, { method: 'POST', headers, body: '{}' })
    ).json()) as { run: { id: string } };
    const res = await fetch(`${api}/dispatch/stream`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        action: 'exec',
        args: { command: 'echo started; sleep 60' },
        runId: created.run.id,
        agentId: 'agent-local',
        taskId: 'task-local',
      }),
    });
    const reader = res.body!.getReader();
    streamed = new TextDecoder().decode((await reader.read()).value);
    // Keep reading in the background; the node cuts the stream when it stops.
    void (async () => {
      for (;;) if ((await reader.read().catch(() => ({ done: true }))).done) return;
    })();
  });
  t.match(streamed, '"type":"output"', 'the command was running');
  t.equal(run.code, 0, `exit 0 (stderr: ${run.stderr.slice(-500)})`);
  // The node's own record: the stop cut the command short (left to run, it would have
  // completed after its 60 s sleep). Closing the API drops the stream, which cancels
  // it; a command the grace then cuts ends node_stopping. Which comes first may vary.
  const db = await openDb({ kind: 'pglite', dataDir: join(cwd, '.data', 'pglite') });
  t.teardown(() => db.close());
  const rows = await db.query<{ status: string; error_code: string | null }>(
    'select status, error_code from workspace_command',
  );
  const ended = rows.map((r) => `${r.status}/${r.error_code}`);
  t.equal(ended.length, 1);
  t.ok(
    ended[0] === 'cancelled/cancelled' || ended[0] === 'failed/node_stopping',
    `the stop ended the command (${ended[0]})`,
  );
});
