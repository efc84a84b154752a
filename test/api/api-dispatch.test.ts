import { createHash, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { WorkbenchClient } from '../../src/client/index.js';
import { getCommand } from '../../src/store/index.js';
import { eventually } from '../support/mesh.js';
import { type DispatchAnswer, envelope, type Json, startApiHarness } from './api-support.js';

const h = await startApiHarness(t);

const newRun = (token: string) => h.newRun(token);
const dispatch = (token: string, runId: string, action: string, args: object) =>
  h.dispatch(token, runId, action, args);

/** Reads an NDJSON answer line by line, stamping when each line arrived. */
async function readLines(res: Response) {
  const lines: { at: number; value: Json }[] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let nl = buffer.indexOf('\n');
    while (nl >= 0) {
      lines.push({ at: Date.now(), value: JSON.parse(buffer.slice(0, nl)) });
      buffer = buffer.slice(nl + 1);
      nl = buffer.indexOf('\n');
    }
  }
  return lines;
}

t.test('dispatch: the contract envelope in, the DispatchResult out', async (t) => {
  const runId = await newRun(h.alice);
  const w = await dispatch(h.alice, runId, 'fs_write', { path: 'a/b.txt', content: 'hello\n' });
  t.same(w, { ok: true, payload: { path: 'a/b.txt', bytesWritten: 6, size: 6, version: 1 } });
  const r = await dispatch(h.alice, runId, 'fs_read', { path: 'a/b.txt' });
  t.equal(r.payload.content, 'hello\n');
  const l = await dispatch(h.alice, runId, 'fs_list', { recursive: true });
  t.same(
    l.payload.entries.map((e: { path: string }) => e.path),
    ['a', 'a/b.txt'],
  );

  const x = await dispatch(h.alice, runId, 'exec', {
    command: 'cat a/b.txt; echo oops >&2; exit 3',
  });
  t.equal(x.ok, true);
  t.equal(x.payload.exitCode, 3);
  t.equal(x.payload.stdout, 'hello\n');
  const commandId = String(x.payload.commandId);

  const cmd = await h.json<{ command: Record<string, unknown> }>(
    h.alice,
    'GET',
    `/v1/commands/${commandId}`,
  );
  t.equal(cmd.status, 200);
  t.match(cmd.body.command, {
    id: commandId,
    runId,
    status: 'completed',
    exitCode: 3,
    signal: null,
    timedOut: false,
    cancelled: false,
    stdout: 'hello\n',
    stderr: 'oops\n',
    stdoutTruncated: false,
    stderrTruncated: false,
    errorCode: null,
    errorCategory: null,
  });
  t.type(cmd.body.command.durationMs, 'number');
  const notBobs = await h.json<{ errorCode: string }>(h.bob, 'GET', `/v1/commands/${commandId}`);
  t.equal(notBobs.status, 404, "another user's command is not_found");
  t.equal(notBobs.body.errorCode, 'not_found');
  t.equal((await h.json(h.alice, 'GET', '/v1/commands/no-such-command')).status, 404);

  const del = await dispatch(h.alice, runId, 'fs_delete', { path: 'a', recursive: true });
  t.equal(del.ok, true);
});

t.test('refusals are 200 with ok:false and a code', async (t) => {
  const runId = await newRun(h.alice);
  const bad = await dispatch(h.alice, runId, 'fs_move', { path: 'x' });
  t.equal(bad.errorCode, 'invalid_arguments');
  t.match(bad.message, 'action');
  const build = await dispatch(h.alice, runId, 'build', {});
  t.equal(build.errorCode, 'build_not_permitted', 'build is refused for every API caller');
  const smuggled = await h.json<DispatchAnswer>(h.alice, 'POST', '/v1/dispatch', {
    ...envelope(runId, 'build', {}),
    authority: { class: 'system', subject: 'system:deploy' },
  });
  t.equal(smuggled.status, 200);
  t.equal(smuggled.body.errorCode, 'invalid_arguments', 'an authority in the body is refused');
  t.match(smuggled.body.message, 'authority');
  const climbing = await dispatch(h.alice, runId, 'fs_read', { path: '../../etc/passwd' });
  t.equal(climbing.errorCode, 'invalid_path');
  const missing = await dispatch(h.alice, 'run-that-does-not-exist', 'fs_list', {});
  t.equal(missing.errorCode, 'not_found');
  const bobs = await dispatch(h.bob, runId, 'fs_write', { path: 'b.txt', content: 'B' });
  t.equal(bobs.errorCode, 'not_found', "bob cannot call into alice's run");
  const list = await dispatch(h.alice, runId, 'fs_list', {});
  t.same(list.payload.entries, [], 'and nothing was written by his call');
  // A bad cwd says what is wrong and what to do, and runs nothing.
  const noDir = await dispatch(h.alice, runId, 'exec', { command: 'touch ran', cwd: 'src/lib' });
  t.equal(noDir.errorCode, 'path_not_found');
  t.match(
    noDir.message,
    /^path_not_found: cwd "src\/lib" does not exist in the workspace, so command \S+ did not run; give a directory that exists \(relative to the workspace root\), or create it first with mkdir -p$/,
  );
  await dispatch(h.alice, runId, 'fs_write', { path: 'notes.txt', content: 'n' });
  const fileDir = await dispatch(h.alice, runId, 'exec', {
    command: 'touch ran',
    cwd: 'notes.txt',
  });
  t.equal(fileDir.errorCode, 'invalid_path');
  t.match(
    fileDir.message,
    /^invalid_path: cwd "notes.txt" is not a directory inside the workspace \(a file, or a link out of it\)/,
  );
  const after = await dispatch(h.alice, runId, 'fs_list', { recursive: true });
  t.same(
    after.payload.entries.map((e: { path: string }) => e.path),
    ['notes.txt'],
    'neither command ran',
  );
});

t.test('the stream form delivers output as it happens, then one result', async (t) => {
  const runId = await newRun(h.alice);
  const res = await h.call(h.alice, '/v1/dispatch/stream', {
    method: 'POST',
    body: JSON.stringify(
      envelope(runId, 'exec', { command: 'echo first; sleep 2; echo second >&2; echo third' }),
    ),
  });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), 'application/x-ndjson');
  const lines = await readLines(res);
  const outputs = lines.filter((l) => l.value.type === 'output');
  const results = lines.filter((l) => l.value.type === 'result');
  t.equal(results.length, 1, 'exactly one result line');
  t.equal(lines.at(-1)?.value.type, 'result', 'and it is the last line');
  const text = (stream: string) =>
    outputs
      .filter((l) => l.value.stream === stream)
      .map((l) => Buffer.from(l.value.data, 'base64').toString('utf8'))
      .join('');
  t.equal(text('stdout'), 'first\nthird\n');
  t.equal(text('stderr'), 'second\n');
  const first = outputs[0]!;
  t.ok(
    results[0]!.at - first.at >= 1500,
    `the first output arrived while the command still ran (${results[0]!.at - first.at} ms early)`,
  );
  t.equal(results[0]!.value.result.ok, true);
  t.equal(results[0]!.value.result.payload.exitCode, 0);

  const refused = await h.call(h.bob, '/v1/dispatch/stream', {
    method: 'POST',
    body: JSON.stringify(envelope(runId, 'exec', { command: 'echo no' })),
  });
  const refusedLines = await readLines(refused);
  t.same(
    refusedLines.map((l) => [l.value.type, l.value.result?.errorCode]),
    [['result', 'not_found']],
    'a refusal is a single result line',
  );
});

/** Reads a command's row until it has ended; its id and status. */
async function commandOfCall(runId: string, callId: string, ended: boolean) {
  let row: { id: string; status: string } | undefined;
  await eventually(
    ended ? 'the command ended' : 'the command is queued',
    async () => {
      const rows = await h.db.query<{ id: string; status: string }>(
        'select id, status from workspace_command where run_id = $1 and call_id = $2',
        [runId, callId],
      );
      row = rows[0];
      return row !== undefined && (!ended || (row.status !== 'running' && row.status !== 'queued'));
    },
    60_000,
    50,
  );
  return row!;
}

/**
 * A command that runs until the test writes `go` into its workspace's `gate` file (an
 * existing file: the sandbox's view of the workspace shows a file's new content at once).
 */
const WAITING = 'echo started; until grep -q go gate; do sleep 0.05; done; echo finished';

/** Starts a streamed {@link WAITING} exec, and reads its first line. */
async function startWaitingExec(runId: string, callId: string, query = '') {
  await dispatch(h.alice, runId, 'fs_write', { path: 'gate', content: 'wait\n' });
  const controller = new AbortController();
  const res = await h.call(h.alice, `/v1/dispatch/stream${query}`, {
    method: 'POST',
    body: JSON.stringify({
      ...envelope(runId, 'exec', { command: WAITING }),
      callId,
    }),
    signal: controller.signal,
  });
  const reader = res.body!.getReader();
  const first = await reader.read();
  return { controller, first: new TextDecoder().decode(first.value) };
}

t.test(
  'a client that disconnects leaves its command to run; the callId gets the outcome',
  async (t) => {
    const runId = await newRun(h.alice);
    const callId = 'detach-1';
    const { controller, first } = await startWaitingExec(runId, callId);
    t.match(first, '"type":"output"', 'the command is running');
    controller.abort();
    // The host has let go of the call (its caller is gone) before the command may end.
    await eventually('the node let go of the call', () => h.answered.has(callId));
    t.match(h.answered.get(callId), { ok: false, errorCode: 'unavailable' });
    t.equal((await commandOfCall(runId, callId, false)).status, 'running', 'still running');
    await writeFile(join(h.root, runId, 'gate'), 'go\n');
    const { id, status } = await commandOfCall(runId, callId, true);
    t.equal(status, 'completed', 'the disconnect did not cancel it');
    t.equal((await getCommand(h.db, id))?.cancelRequested, false);
    // The caller comes back with the same call and key: the recorded outcome, not a new run.
    const again = await h.json<Json>(h.alice, 'POST', '/v1/dispatch', {
      ...envelope(runId, 'exec', { command: WAITING }),
      callId,
    });
    t.equal(again.body.ok, true);
    t.equal(again.body.payload.commandId, id);
    t.equal(again.body.payload.stdout, 'started\nfinished\n');
    const count = await h.db.query('select 1 from workspace_command where run_id = $1', [runId]);
    t.equal(count.length, 1, 'nothing ran twice');
    // The same key with anything else is another call: refused, and nothing runs.
    const other = await h.json<Json>(h.alice, 'POST', '/v1/dispatch', {
      ...envelope(runId, 'exec', { command: 'echo other' }),
      callId,
    });
    t.match(other.body, {
      ok: false,
      errorCode: 'call_id_conflict',
      payload: { callId, recordedAction: 'exec', commandId: id },
    });
    const after = await h.db.query('select 1 from workspace_command where run_id = $1', [runId]);
    t.equal(after.length, 1, 'the conflicting call did not run');
  },
);

t.test('cancelOnDisconnect=true: a client that disconnects cancels its command', async (t) => {
  const runId = await newRun(h.alice);
  const { controller } = await startWaitingExec(runId, 'cancel-1', '?cancelOnDisconnect=true');
  controller.abort();
  const { id, status } = await commandOfCall(runId, 'cancel-1', true);
  t.equal(status, 'cancelled', 'the disconnect cancelled the command');
  const cmd = await h.json<{ command: { cancelled: boolean } }>(
    h.alice,
    'GET',
    `/v1/commands/${id}`,
  );
  t.equal(cmd.body.command.cancelled, true);
  const bad = await h.call(h.alice, '/v1/dispatch?cancelOnDisconnect=yes', {
    method: 'POST',
    body: JSON.stringify(envelope(runId, 'fs_list', {})),
  });
  t.equal(bad.status, 400);
  t.match(await bad.json(), { errorCode: 'invalid_arguments' });
});

t.test('the cancel routes: by command id and by callId; only the owner', async (t) => {
  const runId = await newRun(h.alice);
  await startWaitingExec(runId, 'cancel-by-call');
  const viaCall = await h.json<Json>(
    h.alice,
    'POST',
    `/v1/runs/${runId}/calls/cancel-by-call/cancel`,
    {},
  );
  t.equal(viaCall.status, 200);
  t.equal(viaCall.body.effect, 'cancelling');
  t.equal((await commandOfCall(runId, 'cancel-by-call', true)).status, 'cancelled');
  const ended = await h.json<Json>(
    h.alice,
    'POST',
    `/v1/commands/${viaCall.body.command.id}/cancel`,
    {},
  );
  t.equal(ended.status, 200);
  t.equal(ended.body.effect, 'ended', 'a second cancel changes nothing');

  const started = await startWaitingExec(runId, 'cancel-by-id');
  t.match(started.first, '"type":"output"');
  const { id } = await commandOfCall(runId, 'cancel-by-id', false);
  const bob = await h.json<Json>(h.bob, 'POST', `/v1/commands/${id}/cancel`, {});
  t.equal(bob.status, 404, "another user's command reads as absent");
  const bobCall = await h.json<Json>(
    h.bob,
    'POST',
    `/v1/runs/${runId}/calls/cancel-by-id/cancel`,
    {},
  );
  t.equal(bobCall.status, 404);
  const viaId = await h.json<Json>(h.alice, 'POST', `/v1/commands/${id}/cancel`, {});
  t.equal(viaId.body.effect, 'cancelling');
  t.equal((await commandOfCall(runId, 'cancel-by-id', true)).status, 'cancelled');
  const none = await h.json<Json>(
    h.alice,
    'POST',
    `/v1/runs/${runId}/calls/no-such-call/cancel`,
    {},
  );
  t.equal(none.status, 404);
  t.match(none.body, { errorCode: 'not_found' });
});

t.test('a command is read by the callId of the call that queued it; only the owner', async (t) => {
  const runId = await newRun(h.alice);
  const ran = await h.json<Json>(h.alice, 'POST', '/v1/dispatch', {
    ...envelope(runId, 'exec', { command: 'echo by-call' }),
    callId: 'read-by-call',
  });
  t.equal(ran.body.ok, true, JSON.stringify(ran.body));
  const read = await h.json<Json>(h.alice, 'GET', `/v1/runs/${runId}/calls/read-by-call`);
  t.equal(read.status, 200);
  t.match(read.body.command, {
    id: ran.body.payload.commandId,
    runId,
    callId: 'read-by-call',
    status: 'completed',
    exitCode: 0,
    stdout: 'by-call\n',
  });
  const bob = await h.json<Json>(h.bob, 'GET', `/v1/runs/${runId}/calls/read-by-call`);
  t.equal(bob.status, 404, "another user's run reads as absent");
  const none = await h.json<Json>(h.alice, 'GET', `/v1/runs/${runId}/calls/never-sent`);
  t.equal(none.status, 404);
  t.match(none.body, { errorCode: 'not_found', message: /callId "never-sent"/ });

  const client = new WorkbenchClient({ baseUrl: h.url, token: h.alice });
  t.same(
    await client.getCallCommand(runId, 'read-by-call'),
    read.body.command,
    'the client reads it',
  );
  await t.rejects(client.getCallCommand(runId, 'never-sent'), {
    name: 'ClientError',
    code: 'not_found',
  });
});

t.test('promote, list, download byte for byte; only promoted files are served', async (t) => {
  const runId = await newRun(h.alice);
  const bytes = randomBytes(300_000);
  t.equal(
    (
      await dispatch(h.alice, runId, 'fs_write', {
        path: 'out/data.bin',
        content: bytes.toString('base64'),
        encoding: 'base64',
      })
    ).ok,
    true,
  );
  t.equal(
    (await dispatch(h.alice, runId, 'fs_write', { path: 'secret-notes.txt', content: 'INTERNAL' }))
      .ok,
    true,
  );
  const promoted = await dispatch(h.alice, runId, 'promote_artifact', {
    path: 'out/data.bin',
    name: 'résumé data.bin',
  });
  t.equal(promoted.ok, true, promoted.message ?? 'promoted');
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  t.match(promoted.payload, {
    name: 'résumé data.bin',
    contentType: 'application/octet-stream',
    size: bytes.length,
    sha256,
  });
  const artifactId = String(promoted.payload.artifactId);
  const md = await dispatch(h.alice, runId, 'exec', { command: 'printf "# Report\\n" > r.md' });
  t.equal(md.payload.exitCode, 0);
  const report = await dispatch(h.alice, runId, 'promote_artifact', { path: 'r.md' });
  t.equal(
    report.payload.contentType,
    'text/markdown; charset=utf-8',
    'made by exec, typed by name',
  );
  t.equal(report.payload.name, 'r.md');

  t.ok(await h.objects.head(`artifacts/${artifactId}`), 'bytes under artifacts/<id>');
  const audit = await h.db.query<{ metadata: Record<string, unknown>; owner_user_id: string }>(
    `select metadata, owner_user_id from audit_event where event_type = 'artifact.promoted'
     and run_id = $1 order by id`,
    [runId],
  );
  t.equal(audit.length, 2, 'each promotion is audited');
  t.same(audit[0]?.metadata, {
    artifactId,
    size: bytes.length,
    contentType: 'application/octet-stream',
  });
  t.equal(audit[0]?.owner_user_id, 'alice');

  const list = await h.json<{ artifacts: Record<string, unknown>[] }>(
    h.alice,
    'GET',
    `/v1/artifacts?runId=${runId}`,
  );
  t.equal(list.status, 200);
  t.same(list.body.artifacts.map((a) => a.name).sort(), ['r.md', 'résumé data.bin']);
  const entry = list.body.artifacts.find((a) => a.id === artifactId)!;
  t.same(Object.keys(entry).sort(), [
    'contentType',
    'createdAt',
    'id',
    'name',
    'runId',
    'sha256',
    'size',
  ]);
  t.match(entry, { runId, size: bytes.length, sha256 });
  const everything = await h.json<{ artifacts: unknown[] }>(h.alice, 'GET', '/v1/artifacts');
  t.equal(everything.body.artifacts.length, 2);

  const download = await h.call(h.alice, `/v1/artifacts/${artifactId}/content`);
  t.equal(download.status, 200);
  t.equal(download.headers.get('content-type'), 'application/octet-stream');
  t.equal(download.headers.get('content-length'), String(bytes.length));
  t.match(download.headers.get('content-disposition'), /^attachment; filename="r_sum_ data.bin"/);
  t.match(
    download.headers.get('content-disposition'),
    "filename*=UTF-8''r%C3%A9sum%C3%A9%20data.bin",
  );
  const got = Buffer.from(await download.arrayBuffer());
  t.ok(got.equals(bytes), 'byte for byte');

  const part = await h.call(h.alice, `/v1/artifacts/${artifactId}/content`, {
    headers: { range: 'bytes=1000-1999' },
  });
  t.equal(part.status, 206, 'a byte range resumes a download');
  t.equal(part.headers.get('content-range'), `bytes 1000-1999/${bytes.length}`);
  t.ok(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(1000, 2000)));
  const tail = await h.call(h.alice, `/v1/artifacts/${artifactId}/content`, {
    headers: { range: 'bytes=-10' },
  });
  t.ok(Buffer.from(await tail.arrayBuffer()).equals(bytes.subarray(bytes.length - 10)));
  const beyond = await h.call(h.alice, `/v1/artifacts/${artifactId}/content`, {
    headers: { range: `bytes=${bytes.length}-` },
  });
  t.equal(beyond.status, 416);
  t.equal(beyond.headers.get('content-range'), `bytes */${bytes.length}`);
  await beyond.arrayBuffer();

  // Bob sees none of it.
  t.same(
    (await h.json<{ artifacts: unknown[] }>(h.bob, 'GET', '/v1/artifacts')).body.artifacts,
    [],
  );
  t.equal((await h.call(h.bob, `/v1/artifacts/${artifactId}`)).status, 404);
  t.equal((await h.call(h.bob, `/v1/artifacts/${artifactId}/content`)).status, 404);

  // No route serves a workspace file that was not promoted, nor command logs.
  const command = md.payload.commandId as string;
  const probes = [
    `/v1/runs/${runId}/files/secret-notes.txt`,
    `/v1/runs/${runId}/secret-notes.txt`,
    `/v1/workspaces/${runId}/files/secret-notes.txt`,
    `/v1/workspaces/secret-notes.txt`,
    `/v1/artifacts/${runId}/content`,
    '/v1/artifacts/secret-notes.txt/content',
    `/v1/artifacts/..%2Fruns%2F${runId}/content`,
    `/v1/artifacts/${artifactId}/..%2F..%2Fsecret-notes.txt`,
    `/v1/commands/${command}/logs`,
    `/v1/commands/${command}/stdout`,
    '/console/../secret-notes.txt',
    `/files/${runId}/secret-notes.txt`,
  ];
  for (const path of probes) {
    const res = await h.call(h.alice, path);
    const body = await res.text();
    t.equal(res.status, 404, path);
    t.notMatch(body, 'INTERNAL', `${path} does not leak the file`);
  }

  const gone = await dispatch(h.alice, runId, 'promote_artifact', { path: 'nope.txt' });
  t.equal(gone.errorCode, 'path_not_found');
  const dir = await dispatch(h.alice, runId, 'promote_artifact', { path: 'out' });
  t.equal(dir.errorCode, 'invalid_path');
  const out = await dispatch(h.alice, runId, 'promote_artifact', { path: '../x' });
  t.equal(out.errorCode, 'invalid_path');
  const link = await dispatch(h.alice, runId, 'exec', { command: 'ln -s /etc/passwd pw' });
  t.equal(link.payload.exitCode, 0);
  const viaLink = await dispatch(h.alice, runId, 'promote_artifact', { path: 'pw' });
  t.equal(viaLink.errorCode, 'invalid_path', 'a link out of the workspace is not promoted');
});

t.test('the fleet in local mode is the in-process host', async (t) => {
  const fleet = await h.json<{ mode: string; replicas: Record<string, unknown>[] }>(
    h.alice,
    'GET',
    '/v1/fleet/workbenches',
  );
  t.equal(fleet.status, 200);
  t.equal(fleet.body.mode, 'local');
  t.equal(fleet.body.replicas.length, 1);
  t.match(fleet.body.replicas[0], {
    nodeId: 'node-api',
    address: 'in-process',
    healthy: true,
    running: 0,
    queued: 0,
    capacity: 4,
  });
  t.ok(Date.parse(String(fleet.body.replicas[0]!.connectedSince)) > 0);
});

t.test('bytes that are not UTF-8 come back as base64, flagged, never mangled', async (t) => {
  const runId = await newRun(h.alice);
  const bytes = Buffer.from([0xff, 0xfe, 0x00, 0x61, 0xc3]);
  await dispatch(h.alice, runId, 'fs_write', {
    path: 'blob.bin',
    content: bytes.toString('base64'),
    encoding: 'base64',
  });
  const read = await dispatch(h.alice, runId, 'fs_read', { path: 'blob.bin' });
  t.equal(read.payload.encoding, 'base64', 'a default (utf8) read of binary bytes answers base64');
  t.equal(read.payload.binary, true, 'and says so');
  t.same(Buffer.from(read.payload.content, 'base64'), bytes);
  await dispatch(h.alice, runId, 'fs_write', { path: 'text.txt', content: 'héllo' });
  const text = await dispatch(h.alice, runId, 'fs_read', { path: 'text.txt' });
  t.same(
    [text.payload.encoding, text.payload.binary, text.payload.content],
    ['utf8', undefined, 'héllo'],
  );
  const cut = await dispatch(h.alice, runId, 'fs_read', { path: 'text.txt', length: 2 });
  t.equal(cut.payload.encoding, 'base64', 'a range that cuts a character is not text');
  t.same(Buffer.from(cut.payload.content, 'base64'), Buffer.from('héllo').subarray(0, 2));

  const ran = await dispatch(h.alice, runId, 'exec', {
    command: "cat blob.bin; printf 'plain' >&2",
  });
  t.equal(ran.payload.stdoutEncoding, 'base64');
  t.same(Buffer.from(ran.payload.stdout, 'base64'), bytes, 'exec stdout byte for byte');
  t.equal(ran.payload.stderr, 'plain');
  t.equal(ran.payload.stderrEncoding, undefined, 'text output stays text');
  const record = await h.json<{ command: Record<string, unknown> }>(
    h.alice,
    'GET',
    `/v1/commands/${ran.payload.commandId}`,
  );
  t.equal(record.body.command.stdoutEncoding, 'base64');
  t.same(Buffer.from(record.body.command.stdout as string, 'base64'), bytes);
});
