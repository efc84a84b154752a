import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { ResponseFrame } from '../../src/mesh/frames.js';
import { MAX_FRAME_BYTES } from '../../src/mesh/limits.js';
import { createRun, openDb } from '../../src/store/index.js';
import { openRawStream, pythonHealthCheck, type RawStream } from '../support/mesh.js';
import { type MeshTestEnv, startWorkbench } from '../support/mesh-harness.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * The workbench binary on its own, driven by raw streams: what it refuses (bad
 * token, oversized and malformed frames) does not stop it serving; forwarded calls
 * get the same answers as local ones; SIGTERM drains gracefully.
 */

const database = await createTestDatabase();
t.teardown(() => database.drop());
const db = await openDb({ kind: 'postgres', url: database.url });
t.teardown(() => db.close());
await createRun(db, { id: 'run-w', ownerUserId: 'alice' });
const baseDir = await mkdtemp(join(tmpdir(), 'memql-wbnode-'));
await chmod(baseDir, 0o755);
t.teardown(() => rm(baseDir, { recursive: true, force: true }));
await mkdir(join(baseDir, 'objects'));
const env: MeshTestEnv = {
  databaseUrl: database.url,
  token: 'workbench-test-token-0123456789',
  baseDir,
  objectsDir: join(baseDir, 'objects'),
};

const json = (v: unknown) => Buffer.from(JSON.stringify(v));
let n = 0;
function dispatch(
  raw: RawStream,
  action: string,
  args: Record<string, unknown>,
  opts: { runId?: string; authority?: { class: 'user' | 'system'; subject: string } | null } = {},
): Promise<ResponseFrame> {
  n += 1;
  const id = `r${n}`;
  raw.send({
    kind: 'request',
    id,
    method: 'workbench.dispatch',
    authority:
      opts.authority === undefined ? { class: 'user', subject: 'user:alice' } : opts.authority,
    payload: json({ action, args, runId: opts.runId ?? 'run-w', agentId: 'a', taskId: id }),
  });
  return raw.waitFor((f): f is ResponseFrame => f.kind === 'response' && f.id === id, 20_000);
}
const body = (r: ResponseFrame) => (r.payload.length ? JSON.parse(r.payload.toString()) : null);

t.test('the workbench node', async (t) => {
  const wb = await startWorkbench(t, env, 'wb-solo', { host: '127.0.0.1', port: 0 });
  const target = `127.0.0.1:${wb.port}`;

  await t.test('grpc.health.v1 Check from python3-grpcio: SERVING', async (t) => {
    t.equal(await pythonHealthCheck(target), 'SERVING');
    t.equal(await pythonHealthCheck(target, 'memql.node.v1.NodeService'), 'SERVING');
    t.equal(await pythonHealthCheck(target, 'no.such.Service'), 'ERROR NOT_FOUND');
  });

  await t.test('hello and health frames, then forwarded calls', async (t) => {
    const raw = openRawStream(target, env.token);
    t.teardown(() => raw.close());
    t.match(await raw.waitFor((f) => f.kind === 'hello'), {
      nodeId: 'wb-solo',
      nodeType: 'workbench',
    });
    t.match(await raw.waitFor((f) => f.kind === 'health'), { healthy: true, capacity: 4 });
    const w = await dispatch(raw, 'fs_write', { path: 'x.txt', content: 'over the wire' });
    t.equal(w.ok, true, w.message);
    t.match(body(await dispatch(raw, 'fs_read', { path: 'x.txt' })), { content: 'over the wire' });
    t.match(await dispatch(raw, 'fs_read', { path: '../x' }), {
      ok: false,
      errorCode: 'invalid_path',
    });
    t.match(await dispatch(raw, 'fs_list', {}, { runId: 'run-nobody' }), {
      ok: false,
      errorCode: 'workspace_owner_unresolved',
    });
    t.match(await dispatch(raw, 'build', {}), { ok: false, errorCode: 'build_not_permitted' });
    const system = await dispatch(
      raw,
      'build',
      {},
      { authority: { class: 'system', subject: 'system:deploy' } },
    );
    t.not(
      system.errorCode,
      'build_not_permitted',
      'system authority from a token-authenticated peer is honoured',
    );
    t.match(await dispatch(raw, 'fs_list', {}, { authority: null }), {
      ok: false,
      errorCode: 'invalid_arguments',
    });
  });

  await t.test('a bad token is refused and logged; the node keeps serving', async (t) => {
    const before = wb.proc.lines.length;
    const raw = openRawStream(target, 'not-the-token-0123456789');
    t.equal((await raw.ended).code, 16, 'UNAUTHENTICATED');
    raw.close();
    const none = openRawStream(target, null);
    t.equal((await none.ended).code, 16);
    none.close();
    await wb.proc.waitForLog(
      (l) => l.msg === 'stream refused: mesh token missing or wrong',
      5_000,
      before,
    );
    t.notOk(
      JSON.stringify(wb.proc.lines.slice(before)).includes('not-the-token'),
      'the token is not logged',
    );
    const good = openRawStream(target, env.token);
    t.teardown(() => good.close());
    t.match(await dispatch(good, 'fs_list', {}), { ok: true });
  });

  await t.test('oversized and malformed frames are refused; the node keeps serving', async (t) => {
    const raw = openRawStream(target, env.token);
    t.teardown(() => raw.close());
    await raw.waitFor((f) => f.kind === 'hello');
    raw.send(Buffer.from('this is not a protobuf frame \xff\xff\xff'));
    raw.send({
      kind: 'request',
      id: 'm1',
      method: 'workbench.dispatch',
      authority: null,
      payload: json({}),
    });
    raw.send({
      kind: 'request',
      id: 'm2',
      method: 'no.such.method',
      authority: null,
      payload: json({}),
    });
    raw.send({
      kind: 'request',
      id: 'm3',
      method: 'workbench.dispatch',
      authority: { class: 'user', subject: 'user:alice' },
      payload: Buffer.from('{not json'),
    });
    for (const id of ['m1', 'm2', 'm3']) {
      t.match(await raw.waitFor((f) => f.kind === 'response' && f.id === id), {
        ok: false,
        errorCode: 'invalid_arguments',
      });
    }
    t.ok(
      raw.frames.some((f) => f.kind === 'response' && f.id === '' && !f.ok),
      'undecodable bytes answered',
    );
    t.match(await dispatch(raw, 'fs_list', {}), { ok: true }, 'the same stream carries on');

    const big = openRawStream(target, env.token);
    t.teardown(() => big.close());
    await big.waitFor((f) => f.kind === 'hello');
    big.send({
      kind: 'request',
      id: 'big',
      method: 'workbench.dispatch',
      authority: null,
      payload: Buffer.alloc(MAX_FRAME_BYTES + 1024, 'a'),
    });
    t.equal((await big.ended).code, 8, 'RESOURCE_EXHAUSTED ends that stream only');
    t.match(await dispatch(raw, 'fs_list', {}), { ok: true }, 'other streams are unharmed');
    t.equal(await pythonHealthCheck(target), 'SERVING');
  });

  await t.test('exec output streams, cancel stops a command', async (t) => {
    const raw = openRawStream(target, env.token);
    t.teardown(() => raw.close());
    const r = await dispatch(raw, 'exec', { command: 'echo out; echo err 1>&2' });
    t.equal(r.ok, true, r.message);
    const chunks = raw.frames.filter((f) => f.kind === 'output');
    t.match(
      chunks.map((f) => (f.kind === 'output' ? `${f.stream}:${f.chunk}` : '')).join(''),
      /stdout:out/,
    );
    raw.send({
      kind: 'request',
      id: 'sleeper',
      method: 'workbench.dispatch',
      authority: { class: 'user', subject: 'user:alice' },
      payload: json({
        action: 'exec',
        args: { command: 'echo started; sleep 30' },
        runId: 'run-w',
        agentId: 'a',
        taskId: 's',
      }),
    });
    // Cancel once the command is known to run: its first output has arrived.
    await raw.waitFor(
      (f) => f.kind === 'output' && f.id === 'sleeper' && String(f.chunk).includes('started'),
      20_000,
    );
    raw.send({ kind: 'cancel', id: 'sleeper' });
    // Left alone the command would answer after its 30 s sleep, not cancelled.
    const answer = await raw.waitFor((f) => f.kind === 'response' && f.id === 'sleeper', 60_000);
    t.match(body(answer as ResponseFrame), { cancelled: true, stdout: 'started\n' });
  });

  await t.test('SIGTERM: unhealthy, running calls finish, clean exit', async (t) => {
    const raw = openRawStream(target, env.token);
    t.teardown(() => raw.close());
    await raw.waitFor((f) => f.kind === 'health');
    // The command runs until the test creates the gate file in its workspace.
    const gate = join(baseDir, 'wb-solo', 'workbenches', 'run-w', 'drain-gate');
    const running = dispatch(raw, 'exec', {
      command: 'echo started; until [ -e drain-gate ]; do sleep 0.05; done; echo finished',
    });
    await raw.waitFor((f) => f.kind === 'output' && String(f.chunk).includes('started'), 20_000);
    wb.proc.child.kill('SIGTERM');
    await raw.waitFor((f) => f.kind === 'health' && !f.healthy, 20_000);
    const refused = await dispatch(raw, 'fs_list', {});
    t.match(refused, { ok: false, errorCode: 'unavailable' }, 'no new calls while draining');
    await writeFile(gate, '');
    const done = await running;
    t.equal(done.ok, true, done.message);
    t.match(body(done), { stdout: 'started\nfinished\n' });
    const exit = await wb.proc.exited;
    t.equal(exit.code, 0, 'exits 0');
    t.match(await wb.proc.waitForLog((l) => l.msg === 'stopped'), { finished: 1, aborted: 0 });
  });
});
