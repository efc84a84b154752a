import t from 'tap';
import { createOperatorCredential } from '../../src/store/index.js';
import { type DispatchAnswer, type Json, startApiHarness } from './api-support.js';

/**
 * The build entry through the API on a real bwrap host: an operator credential builds
 * in a user's run (the node mints the system authority), user tokens and models are
 * refused by name before anything runs, and the credential opens nothing else.
 */

const h = await startApiHarness(t);
const operator = (await createOperatorCredential(h.db, { label: 'deploy pipeline' })).token;

const PACKAGE = JSON.stringify({
  name: 'demo',
  version: '1.0.0',
  private: true,
  scripts: { build: 'node build.js', other: 'node -e "console.log(\'other script\')"' },
});
const LOCK = JSON.stringify({
  name: 'demo',
  version: '1.0.0',
  lockfileVersion: 3,
  requires: true,
  packages: { '': { name: 'demo', version: '1.0.0' } },
});
const buildScript = (label: string) =>
  `const fs = require('fs');
fs.mkdirSync('dist', { recursive: true });
fs.writeFileSync('dist/out.txt', '${label}');
console.log('built ${label}');
`;

/** A run of alice's holding the package. */
async function packageRun(label = 'v1'): Promise<string> {
  const runId = await h.newRun(h.alice);
  for (const [path, content] of [
    ['package.json', PACKAGE],
    ['package-lock.json', LOCK],
    ['build.js', buildScript(label)],
  ] as const) {
    const wrote = await h.dispatch(h.alice, runId, 'fs_write', { path, content });
    if (!wrote.ok) throw new Error(`fs_write ${path}: ${wrote.message}`);
  }
  return runId;
}

/** `POST /v1/admin/runs/:runId/build/stream`: the output lines and the result. */
async function buildStream(token: string, runId: string, body: object = {}) {
  const res = await h.call(token, `/v1/admin/runs/${runId}/build/stream`, {
    method: 'POST',
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200) return { status: res.status, body: JSON.parse(text) as Json };
  const lines = text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Json);
  const output = lines
    .filter((l) => l.type === 'output')
    .map((l) => Buffer.from(l.data, 'base64').toString())
    .join('');
  const results = lines.filter((l) => l.type === 'result');
  return { status: 200, output, results, result: results[0]?.result as DispatchAnswer };
}

async function commandCount(runId: string): Promise<number> {
  const [row] = await h.db.query<{ n: string }>(
    'select count(*)::text as n from workspace_command where run_id = $1',
    [runId],
  );
  return Number(row!.n);
}

t.test('an operator builds in a user run; the outputs are workspace files', async (t) => {
  const runId = await packageRun();
  const built = await buildStream(operator, runId);
  t.equal(built.status, 200);
  t.equal(built.results?.length, 1, 'exactly one result line');
  t.match(built.result, { ok: true, payload: { exitCode: 0 } });
  t.match(built.output, /built v1/, 'the script output streamed live');
  const read = await h.dispatch(h.alice, runId, 'fs_read', { path: 'dist/out.txt' });
  t.match(read, { ok: true, payload: { content: 'v1' } }, 'the user reads what the build made');
  const [manifest] = await h.db.query<{ path: string }>(
    'select path from workspace_file where run_id = $1 and path = $2',
    [runId, 'dist/out.txt'],
  );
  t.ok(manifest, 'the output is in the durable manifest');

  const events = await h.db.query<{ event_type: string; metadata: Json }>(
    'select event_type, metadata from audit_event where run_id = $1 order by id',
    [runId],
  );
  const requested = events.find((e) => e.event_type === 'build.requested');
  t.ok(requested, 'the request is audited');
  t.match(requested?.metadata, { operatorId: String });
  const text = JSON.stringify(events);
  t.notMatch(text, 'npm', 'no command text in the audit log');
  t.notMatch(text, 'built v1', 'no output in the audit log');
});

t.test('a ref is checked out first; another script runs by name', async (t) => {
  const runId = await packageRun('first');
  // The identity commits need, in the repository's own config (exec refuses git -c).
  const init = await h.dispatch(h.alice, runId, 'exec', { command: 'git init -q' });
  t.match(init, { ok: true, payload: { exitCode: 0 } });
  await h.dispatch(h.alice, runId, 'fs_write', {
    path: '.git/config',
    content: '[user]\n\tname = a\n\temail = a@example.com\n',
    append: true,
  });
  const commit = await h.dispatch(h.alice, runId, 'exec', {
    command: 'git add -A && git commit -qm one && git tag v1',
  });
  t.match(
    commit,
    { ok: true, payload: { exitCode: 0 } },
    `a tagged commit: ${JSON.stringify(commit).slice(0, 400)}`,
  );
  await h.dispatch(h.alice, runId, 'fs_write', {
    path: 'build.js',
    content: buildScript('second'),
  });
  const commit2 = await h.dispatch(h.alice, runId, 'exec', {
    command: 'git commit -qam two',
  });
  t.match(commit2, { ok: true, payload: { exitCode: 0 } });

  const atTag = await buildStream(operator, runId, { ref: 'v1' });
  t.match(atTag.result, { ok: true, payload: { exitCode: 0 } });
  t.match(atTag.output, /built first/, 'the tagged build.js ran');
  const read = await h.dispatch(h.alice, runId, 'fs_read', { path: 'dist/out.txt' });
  t.match(read, { ok: true, payload: { content: 'first' } });

  const other = await buildStream(operator, runId, { script: 'other' });
  t.match(other.result, { ok: true, payload: { exitCode: 0 } });
  t.match(other.output, /other script/);

  const missing = await buildStream(operator, runId, { script: 'nope' });
  t.equal(missing.result?.ok, true);
  t.not(missing.result?.payload?.exitCode, 0, 'the failing step is the exit code');
  t.match(missing.output, /Missing script/i, 'npm says which script is missing');
});

t.test('user tokens and models are refused by name; nothing runs', async (t) => {
  const runId = await packageRun();
  const before = await commandCount(runId);

  const user = await buildStream(h.alice, runId);
  t.equal(user.status, 403);
  t.match(user.body, { ok: false, errorCode: 'build_not_permitted' });

  const model = await h.dispatch(h.alice, runId, 'build', {});
  t.match(model, { ok: false, errorCode: 'build_not_permitted' });

  t.equal(await commandCount(runId), before, 'no command was queued');
  const dist = await h.dispatch(h.alice, runId, 'fs_list', { path: '.' });
  t.notMatch(JSON.stringify(dist), 'dist', 'nothing was built');
});

t.test('the operator credential drives no ordinary action', async (t) => {
  const runId = await packageRun();
  const res = await h.call(operator, '/v1/dispatch', {
    method: 'POST',
    body: JSON.stringify({
      action: 'exec',
      args: { command: 'true' },
      runId,
      agentId: 'a',
      taskId: 't',
    }),
  });
  t.equal(res.status, 401, 'the operator credential is not a user token');
  const read = await h.call(operator, `/v1/runs/${runId}`);
  t.equal(read.status, 401);
});

t.test('bad requests say what to do', async (t) => {
  const runId = await packageRun();
  const nope = await buildStream(operator, 'run_does_not_exist');
  t.match(nope.result, { ok: false, errorCode: 'not_found' });
  const badRef = await buildStream(operator, runId, { ref: 'main; rm -rf /' });
  t.match(badRef.result, { ok: false, errorCode: 'invalid_arguments' });
  const unknown = await buildStream(operator, runId, { branch: 'main' });
  t.equal(unknown.status, 400);
  t.match(unknown.body, { ok: false, errorCode: 'invalid_arguments' });

  const plain = await h.json<DispatchAnswer>(operator, 'POST', `/v1/admin/runs/${runId}/build`, {});
  t.equal(plain.status, 200);
  t.match(plain.body, { ok: true, payload: { exitCode: 0 } }, 'the plain form answers one result');
});
