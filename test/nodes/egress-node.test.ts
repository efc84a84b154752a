import { chmod, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import t from 'tap';
import { startTestInternet } from '../support/internet.js';
import { nodeMain, spawnNode } from '../support/node-process.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * A command's network end to end, on a real local node (its own process, Postgres, the
 * bwrap sandbox) through real HTTP, with loopback servers standing in for the internet
 * (the node's resolver map points their names at 127.0.0.1, and the operator allows
 * loopback for the test): a run given hosts within the operator's ceiling installs with
 * pip and npm, clones with git and downloads with curl; what it was not given is
 * refused, named in the command's `egress.refused` and in `workspace_egress.refused`
 * audit rows; a change to the run's network applies to its next connection; a secret
 * reaches its host and nothing else: not the sandbox's environment, files or `/proc`,
 * the command's output, the node's log or the audit rows; package caches stay out of
 * the workspace; a run without network reaches nothing; a run's end closes its socket.
 */

t.setTimeout(600_000);

const CANARY = 'ghp_egressCanary7f3e9a1b5c';
const internet = await startTestInternet({ blobBytes: 256 * 1024 });
t.teardown(() => internet.close());
const database = await createTestDatabase();
t.teardown(() => database.drop());
const sql = postgres(database.url, { max: 1, onnotice: () => {} });
t.teardown(() => sql.end({ timeout: 1 }));
const cwd = await mkdtemp(join(tmpdir(), 'memql-egress-node-'));
t.teardown(() => rm(cwd, { recursive: true, force: true }));
await chmod(cwd, 0o755);

const NAMES = ['pypi.test', 'registry.test', 'git.test', 'blobs.test'];
const proc = spawnNode(t, 'local', nodeMain('local'), {
  MEMQL_DATABASE_URL: database.url,
  MEMQL_DATA_DIR: join(cwd, 'data'),
  MEMQL_HTTP_LISTEN: '127.0.0.1:0',
  MEMQL_GRPC_LISTEN: '127.0.0.1:0',
  MEMQL_LOG_FORMAT: 'json',
  MEMQL_LOG_LEVEL: 'debug',
  MEMQL_EGRESS_CEILING: [...NAMES, 'metadata.test', 'private.test', 'example.com'].join(','),
  MEMQL_EGRESS_RESOLVE: [
    ...NAMES.map((n) => `${n}=127.0.0.1`),
    'metadata.test=169.254.169.254',
    'private.test=10.1.2.3',
  ].join(','),
  MEMQL_FETCH_ALLOW_PRIVATE: '127.0.0.0/8',
  MEMQL_EGRESS_CA_FILE: internet.caPath,
  MEMQL_EGRESS_SECRETS: JSON.stringify({
    gitauth: {
      hosts: ['git.test'],
      header: 'Authorization',
      prefix: 'Bearer ',
      env: 'EGRESS_TEST_GIT_TOKEN',
    },
  }),
  EGRESS_TEST_GIT_TOKEN: CANARY,
  // npm runs package scripts through sh: left off the default allowlist, an operator's to add.
  MEMQL_EXEC_ALLOWLIST_EXTRA: 'npm',
});
const banner = await proc.waitFor(
  () => (proc.other.some((l) => l.startsWith('ready.')) ? proc.other.join('\n') : undefined),
  'the ready banner',
  120_000,
);
const url = /API: +(http:\/\/\S+?)\/v1/.exec(banner)![1]!;
const token = /token: +(\S+)/.exec(banner)![1]!;
const root = /workspaces: +(\S+)/.exec(banner)![1]!;
t.teardown(() => proc.stop('SIGINT'));

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field
type Json = any;

async function json(method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

async function exec(runId: string, command: string, extra: object = {}) {
  const answer = (
    await json('POST', '/v1/dispatch', {
      action: 'exec',
      args: { command, timeoutMs: 120_000, ...extra },
      runId,
      agentId: 'agent',
      taskId: 'task',
    })
  ).body;
  if (!answer.ok) {
    const warnings = proc.lines.filter((l) => l.level >= 40).slice(-5);
    throw new Error(`exec failed: ${answer.message}; node warnings: ${JSON.stringify(warnings)}`);
  }
  return answer.payload as Json;
}

const at = (host: string, path: string) => `https://${host}:${internet.port}${path}`;

const made = await json('POST', '/v1/runs', {
  network: { allow: [...NAMES, 'metadata.test', 'private.test'], secrets: ['gitauth'] },
});
t.equal(made.status, 201, JSON.stringify(made.body));
const runId = made.body.run.id as string;

t.test('pip, npm, git and curl reach what the run was given', async (t) => {
  const pip = await exec(
    runId,
    `python3 -m pip install --disable-pip-version-check --target lib --index-url ${at('pypi.test', '/simple')} memql-probe && cd lib && python3 -c "import memql_probe; print(memql_probe.GREETING)"`,
  );
  t.equal(pip.exitCode, 0, pip.stderr);
  t.match(pip.stdout, 'hello from the test index');
  t.same(pip.egress, { refused: [] }, 'a command with network says what was refused: nothing');

  const npm = await exec(
    runId,
    `npm install --no-audit --no-fund --registry ${at('registry.test', '/')} memql-probe >/dev/null && node -e "console.log(require('memql-probe'))"`,
  );
  t.equal(npm.exitCode, 0, npm.stderr);
  t.match(npm.stdout, 'hello from the test registry');

  const git = await exec(
    runId,
    `git clone -q ${at('git.test', '/probe.git')} probe && cat probe/README*`,
  );
  t.equal(git.exitCode, 0, git.stderr);
  const gitRequests = internet.requests.filter((r) => r.host === 'git.test');
  t.ok(gitRequests.length > 0, 'the clone reached the git host');
  t.ok(
    gitRequests.every((r) => r.authorization === `Bearer ${CANARY}`),
    'every request to the git host carried the secret the proxy added',
  );
  t.ok(
    internet.requests.filter((r) => r.host !== 'git.test').every((r) => !r.authorization),
    'no other host was sent it',
  );

  const curl = await exec(runId, `curl -sS -o blob ${at('blobs.test', '/blob')} && wc -c < blob`);
  t.equal(curl.exitCode, 0, curl.stderr);
  t.equal(curl.stdout.trim(), String(internet.blob.length));
});

t.test('what the run was not given is refused, named in the result and the audit', async (t) => {
  const refused = await exec(
    runId,
    [
      'curl -sS -i https://example.com/ ; echo',
      `curl -sS -i ${at('metadata.test', '/')} ; echo`,
      `curl -sS -i ${at('private.test', '/')} ; echo`,
      `curl -sS -i --noproxy '' -x "$HTTPS_PROXY" https://127.0.0.1:${internet.port}/ ; true`,
    ].join('\n'),
  );
  t.match(refused.stdout + refused.stderr, /example\.com/);
  t.match(refused.stdout + refused.stderr, /403/);
  t.match(refused.egress.refused, [
    { host: 'example.com', port: 443, reason: 'not_allowed' },
    { host: 'metadata.test', reason: 'address_blocked' },
    { host: 'private.test', reason: 'address_blocked' },
    { host: '127.0.0.1', reason: 'ip_literal' },
  ]);
  t.equal(refused.egress.refused.length, 4, 'each once');

  // The same answer read back by id: it is kept with the command.
  const again = await json('GET', `/v1/commands/${refused.commandId}`);
  t.same(again.body.command.egress, refused.egress);

  const rows = await sql<{ event_type: string; command_id: string | null; metadata: Json }[]>`
    select event_type, command_id, metadata from audit_event
    where run_id = ${runId} and event_type like 'workspace_egress.%' order by id`;
  const blocked = rows.filter(
    (r) => r.event_type === 'workspace_egress.refused' && r.metadata.host === 'metadata.test',
  );
  t.equal(blocked.length, 1, 'the refusal is an audit row');
  t.equal(blocked[0]?.metadata.reason, 'address_blocked');
  t.equal(blocked[0]?.command_id, refused.commandId, 'of its command');
  const pypi = rows.find(
    (r) => r.event_type === 'workspace_egress.allowed' && r.metadata.host === 'pypi.test',
  );
  t.ok(pypi, 'an allowed connection is an audit row');
  t.equal(pypi?.metadata.port, internet.port);
  t.ok(pypi?.metadata.bytesDown > 0, 'with its bytes');
  t.type(pypi?.metadata.durationMs, 'number');
  const git = rows.find((r) => r.metadata.host === 'git.test');
  t.equal(git?.metadata.secret, 'gitauth', 'the secret is named, never its value');
  for (const r of rows) {
    t.notMatch(JSON.stringify(r.metadata), /\/simple|\/blob|probe\.git|authorization/i);
  }
  t.equal((await fetch(`${url}/healthz`)).status, 200, 'the node is well');
});

t.test('a change to the run network applies to its next connection', async (t) => {
  const narrowed = await json('PUT', `/v1/runs/${runId}/network`, {
    allow: ['pypi.test'],
    secrets: [],
  });
  t.equal(narrowed.status, 200, JSON.stringify(narrowed.body));
  const after = await exec(
    runId,
    `curl -sS -o /dev/null -w '%{http_code}' ${at('blobs.test', '/blob')}; true`,
  );
  t.match(after.egress.refused, [{ host: 'blobs.test', reason: 'not_allowed' }]);
  const widened = await json('PUT', `/v1/runs/${runId}/network`, {
    allow: NAMES,
    secrets: ['gitauth'],
  });
  t.equal(widened.status, 200);
  const back = await exec(
    runId,
    `curl -sS -o /dev/null -w '%{http_code}' ${at('blobs.test', '/blob')}`,
  );
  t.equal(back.stdout, '200');
  t.same(back.egress, { refused: [] });
});

t.test('the secret is nowhere a command or a reader can see', async (t) => {
  const look = await exec(
    runId,
    [
      'env',
      'cat /proc/self/environ | tr "\\0" "\\n"',
      'for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f"; echo; done 2>/dev/null',
      // The value split in two, so the command's own text (in /proc) does not hold it.
      `grep -r -l -s -e "${CANARY.slice(0, 8)}""${CANARY.slice(8)}" /run /tmp /var/tmp /workspace /etc || true`,
      `curl -sS ${at('git.test', '/probe.git/info/refs')} >/dev/null`,
    ].join('\n'),
  );
  t.equal(look.exitCode, 0, look.stderr);
  t.match(look.stdout, 'HTTPS_PROXY=http://127.0.0.1:3128', 'the command saw its environment');
  t.notOk((look.stdout + look.stderr).includes(CANARY), 'not in the environment, files or /proc');
  const rows = await sql<{ blob: string }[]>`
    select coalesce(encode(stdout, 'escape'), '') || coalesce(encode(stderr, 'escape'), '') ||
      request::text || coalesce(egress::text, '') as blob
    from workspace_command where run_id = ${runId}`;
  t.ok(rows.length > 0);
  t.notOk(
    rows.some((r) => r.blob.includes(CANARY)),
    'not in any command row',
  );
  const audit = await sql<{ blob: string }[]>`select metadata::text as blob from audit_event`;
  t.notOk(
    audit.some((r) => r.blob.includes(CANARY)),
    'not in any audit row',
  );
  const logged = JSON.stringify(proc.lines) + proc.other.join('\n') + proc.stderr;
  t.notOk(logged.includes(CANARY), 'not in the node log');
});

t.test('package caches stay out of the workspace and warm between commands', async (t) => {
  const first = await exec(
    runId,
    `npm install --no-audit --no-fund --registry ${at('registry.test', '/')} memql-probe >/dev/null && ls /run/memql/cache/npm && python3 -m pip cache dir`,
  );
  t.equal(first.exitCode, 0, first.stderr);
  t.match(first.stdout, /_cacache/, "npm's cache is the run's");
  t.match(first.stdout, '/run/memql/cache/pip', "and pip's");
  const second = await exec(
    runId,
    'du -s /run/memql/cache/npm/_cacache | cut -f1; ls -a /workspace',
  );
  t.not(second.stdout.split('\n')[0], '0', 'the next command finds it');
  t.notMatch(second.stdout, /\.cache|_cacache/, 'nothing of it in the workspace');
  const files = await sql<{ path: string }[]>`
    select path from workspace_file where run_id = ${runId}`;
  t.ok(
    files.some((f) => f.path.startsWith('node_modules/memql-probe/')),
    'the durable copy holds what npm installed',
  );
  t.notOk(
    files.some((f) => f.path.includes('_cacache') || f.path.includes('.cache/')),
    'and no cache file',
  );
});

t.test('a run without network reaches nothing, and says nothing of egress', async (t) => {
  const plain = (await json('POST', '/v1/runs', {})).body.run.id as string;
  const ran = await exec(plain, `curl -sS -m 5 ${at('blobs.test', '/blob')} -o /dev/null`);
  t.not(ran.exitCode, 0);
  t.equal(ran.egress, undefined);
  t.equal(internet.requests.filter((r) => r.path === '/blob').length, 2, 'no request got out');
});

t.test("a run's end closes its socket and drops its caches", async (t) => {
  const dir = join(root, '.egress');
  const sockets = async () => (await readdir(join(dir, 's')).catch(() => [])).length;
  t.equal(await sockets(), 1, 'one run with network, one socket');
  const ended = await json('POST', `/v1/runs/${runId}/end`, { status: 'succeeded' });
  t.equal(ended.status, 200, JSON.stringify(ended.body));
  t.equal(await sockets(), 0, 'gone when the end answers');
  t.same(await readdir(join(dir, 'caches')), []);
  t.ok((await stat(join(dir, 'ca', 'egress-ca-key.pem'))).mode & 0o600, 'the CA stays');
});
