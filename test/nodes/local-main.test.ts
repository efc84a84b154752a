import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openDb } from '../../src/store/index.js';
import { startAndStop } from '../support/local-node.js';

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
  t.match(token, /^mqt_/, 'the token for tool loops is an agent token');
  const person = /console#token=(\S+)/.exec(first.stdout)?.[1];
  t.match(person, /^mqp_/, 'a sign-in link carries the person token');
  t.match(first.stdout, `MEMQL_TOKEN=${person}`, 'and so does the CLI line');
  const personFile = join(cwd, '.data', 'person-token');
  t.equal((await stat(personFile)).mode & 0o777, 0o600, 'kept private too');
  t.equal((await readFile(personFile, 'utf8')).trim(), person);

  const second = await startAndStop(cwd);
  t.equal(second.ready, true, 'a second start reuses the same data directory');
  t.equal(second.code, 0);
  t.equal(/token: +(\S+)/.exec(second.stdout)?.[1], token, 'and the same development token');
  t.equal(/console#token=(\S+)/.exec(second.stdout)?.[1], person, 'and the same person token');
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
  const run = await startAndStop(cwd, { MEMQL_COMMAND_CONCURRENCY: 'lots' });
  t.equal(run.ready, false);
  t.equal(run.code, 2);
  t.match(run.stderr, 'MEMQL_COMMAND_CONCURRENCY');
});

t.test('with MEMQL_METRICS_LISTEN the queue metrics are served', async (t) => {
  const cwd = await mkdtemp(join(tmpdir(), 'memql-local-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  let body = '';
  const served = (stdout: string) =>
    stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg?: string; url?: string })
      .find((l) => l.msg === 'metrics served');
  const run = await startAndStop(
    cwd,
    { MEMQL_METRICS_LISTEN: '127.0.0.1:0' },
    async (stdout, _pid, more) => {
      // The log line may come just after the banner: wait for it, as output arrives.
      let line = served(stdout);
      while (line === undefined) line = served(await more());
      if (line.url) body = await (await fetch(new URL('/metrics', line.url))).text();
    },
  );
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
