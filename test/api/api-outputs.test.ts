import { createHash } from 'node:crypto';
import t from 'tap';
import { type Json, startApiHarness } from './api-support.js';

/**
 * Expected outputs of `exec`, through the API on real Postgres and real bubblewrap: a
 * command that succeeds promotes the files it names, with its result; what is missing
 * is said, not skipped; a command that fails promotes nothing.
 */

const h = await startApiHarness(t);

const newRun = (token: string) => h.newRun(token);
const exec = (runId: string, args: object) => h.dispatch(h.alice, runId, 'exec', args);

async function artifactIds(runId: string): Promise<string[]> {
  const rows = await h.db.query<{ id: string }>(
    'select id from artifact where run_id = $1 order by id',
    [runId],
  );
  return rows.map((r) => r.id);
}

async function commandById(id: string) {
  const res = await h.json<{ command: Json }>(h.alice, 'GET', `/v1/commands/${id}`);
  t.equal(res.status, 200);
  return res.body.command;
}

t.test('a command that succeeds promotes its outputs with its result', async (t) => {
  const runId = await newRun(h.alice);
  const text = 'quarterly report\n';
  const res = await exec(runId, {
    command: `mkdir -p out && printf '${text.replace('\n', '\\n')}' > out/report.txt && printf '{}' > out/data`,
    outputs: [
      { path: 'out/report.txt' },
      { path: 'out/data', name: 'data.json', contentType: 'application/json' },
      { path: 'out/missing.txt' },
      { path: 'out' },
    ],
  });
  t.equal(res.ok, true, res.message ?? 'exec answered');
  const payload = res.payload;
  t.equal(payload.status, 'completed', 'missing outputs do not fail the command');
  t.equal(payload.exitCode, 0);
  const sha256 = createHash('sha256').update(text).digest('hex');
  t.match(payload.outputs, [
    {
      path: 'out/report.txt',
      artifact: {
        name: 'report.txt',
        contentType: 'text/plain; charset=utf-8',
        size: Buffer.byteLength(text),
        sha256,
        path: 'out/report.txt',
        runId,
      },
    },
    { path: 'out/data', artifact: { name: 'data.json', contentType: 'application/json', size: 2 } },
    { path: 'out/missing.txt', error: { code: 'path_not_found' } },
    { path: 'out', error: { code: 'invalid_path' } },
  ]);
  t.equal(payload.outputs.length, 4, 'one entry per named output, in order');
  const reportId = payload.outputs[0].artifact.artifactId;
  const dataId = payload.outputs[1].artifact.artifactId;

  const content = await h.call(h.alice, `/v1/artifacts/${reportId}/content`);
  t.equal(content.status, 200);
  t.equal(await content.text(), text, 'the artifact serves the bytes the command wrote');
  t.same(await artifactIds(runId), [reportId, dataId].sort(), 'one row per promoted output');
  const bob = await h.call(h.bob, `/v1/artifacts/${reportId}/content`);
  t.equal(bob.status, 404, "another user cannot reach the run owner's artifact");
  await bob.text();

  const row = await h.db.query<{ finished: Date; created: Date }>(
    `select c.finished_at as finished, a.created_at as created from workspace_command c
     join artifact a on a.run_id = c.run_id where c.id = $1 and a.id = $2`,
    [payload.commandId, reportId],
  );
  t.equal(
    row[0]?.created.getTime(),
    row[0]?.finished.getTime(),
    'the artifact was recorded in the transaction that recorded the result',
  );
  const events = await h.db.query<{ command_id: string; metadata: Record<string, unknown> }>(
    `select command_id, metadata from audit_event
     where run_id = $1 and event_type = 'artifact.promoted' order by id`,
    [runId],
  );
  t.same(
    events.map((e) => [e.command_id, e.metadata.artifactId]),
    [
      [payload.commandId, reportId],
      [payload.commandId, dataId],
    ],
    'each promotion is audited, with the command',
  );
  t.notMatch(JSON.stringify(events), 'report', 'no names, paths or contents in the audit');

  const command = await commandById(payload.commandId);
  t.same(command.outputs, payload.outputs, 'the command read by id says the same');
  const list = await h.json<{ commands: Json[] }>(h.alice, 'GET', `/v1/runs/${runId}/commands`);
  t.notOk('outputs' in list.body.commands[0], 'the list leaves outputs out');
});

t.test('a command that fails promotes nothing, and each output says so', async (t) => {
  const runId = await newRun(h.alice);
  const res = await exec(runId, {
    command: 'printf x > made.txt; exit 3',
    outputs: [{ path: 'made.txt' }, { path: 'never.txt' }],
  });
  t.equal(res.ok, true, res.message ?? 'exec answered');
  t.equal(res.payload.exitCode, 3);
  t.match(res.payload.outputs, [
    { path: 'made.txt', error: { code: 'command_failed', message: /exited with code 3/ } },
    { path: 'never.txt', error: { code: 'command_failed' } },
  ]);
  t.notOk(res.payload.outputs[0].artifact);
  t.same(await artifactIds(runId), [], 'no artifact row');
  const command = await commandById(res.payload.commandId);
  t.same(command.outputs, res.payload.outputs, 'the command read by id says the same');
  const plain = await exec(runId, { command: 'true' });
  t.notOk('outputs' in plain.payload, 'a command that names no outputs has none');
});

t.test('a link out of the workspace is refused, not promoted', async (t) => {
  const runId = await newRun(h.alice);
  const res = await exec(runId, {
    command: 'mkdir -p out && ln -s /etc/passwd out/pw && ln -s ../../etc/hostname out/up',
    outputs: [{ path: 'out/pw' }, { path: 'out/up' }, { path: 'out/../out/up' }],
  });
  t.equal(res.ok, true, res.message ?? 'exec answered');
  t.equal(res.payload.status, 'completed');
  t.match(res.payload.outputs, [
    { path: 'out/pw', error: { code: 'invalid_path' } },
    { path: 'out/up', error: { code: 'invalid_path' } },
    { path: 'out/../out/up', error: { code: 'invalid_path' } },
  ]);
  t.same(await artifactIds(runId), [], 'nothing promoted');
});

t.test('outputs that can never be workspace files are refused before anything runs', async (t) => {
  const runId = await newRun(h.alice);
  const absolute = await exec(runId, {
    command: 'true',
    outputs: [{ path: '/etc/passwd' }],
  });
  t.equal(absolute.errorCode, 'invalid_path');
  // Climbing out by ".." is refused as an absolute path is: before the command runs.
  for (const path of ['../x', 'a/../../x', 'a/..', '.']) {
    const climbing = await exec(runId, { command: 'touch ran', outputs: [{ path }] });
    t.equal(climbing.errorCode, 'invalid_path', `${path}: ${climbing.message}`);
  }
  const ran = await h.dispatch(h.alice, runId, 'fs_list', {});
  t.same(ran.payload?.entries ?? [], [], 'no command ran');
  const nul = await exec(runId, { command: 'true', env: { X: 'a\u0000--bind' } });
  t.equal(nul.errorCode, 'invalid_arguments', 'a NUL byte in an environment value');
  const many = await exec(runId, {
    command: 'true',
    outputs: Array.from({ length: 33 }, (_, i) => ({ path: `f${i}` })),
  });
  t.equal(many.errorCode, 'invalid_arguments', 'at most 32');
  const twice = await exec(runId, {
    command: 'true',
    outputs: [{ path: 'a' }, { path: 'a' }],
  });
  t.equal(twice.errorCode, 'invalid_arguments', 'each path once');
  const badName = await exec(runId, { command: 'true', outputs: [{ path: 'a', name: 'x/y' }] });
  t.equal(badName.errorCode, 'invalid_arguments', 'names as promote_artifact takes them');
  const rows = await h.db.query('select id from workspace_command where run_id = $1', [runId]);
  t.equal(rows.length, 0, 'no command was queued');
});
