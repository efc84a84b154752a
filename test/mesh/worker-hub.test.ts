import { status } from '@grpc/grpc-js';
import pino from 'pino';
import t, { type Test } from 'tap';
import type { Frame, RequestFrame } from '../../src/mesh/frames.js';
import { MeshServer } from '../../src/mesh/mesh-server.js';
import { PeerUnavailableError } from '../../src/mesh/stream-caller.js';
import { WorkerHub, type WorkerStreamInfo } from '../../src/mesh/worker-hub.js';
import { WORKER_DISPATCH_METHOD } from '../../src/mesh/worker-method.js';
import { eventually, openRawStream, type RawStream } from '../support/mesh.js';

/**
 * The agent's worker hub over real gRPC: worker streams authenticated by their users'
 * tokens, the worker's offer from its hello, calls down the worker's own stream,
 * output and cancels, a stream that ends, and a worker connecting again. The worker
 * side is a raw stream here (the worker binary has its own tests).
 */

const log = pino({ level: 'silent' });
const TOKENS: Record<string, string> = { 'tok-alice': 'alice', 'tok-bob': 'bob' };

/** A hub on a real server; raw workers send no Health, so staleness is off unless asked. */
async function startHub(t: Test, staleMs = 3_600_000) {
  const events: { kind: 'connected' | 'disconnected'; link: WorkerStreamInfo }[] = [];
  const hub = new WorkerHub({
    self: { nodeId: 'agent-1', nodeType: 'agent', version: 'test' },
    authenticate: async (token) => TOKENS[token] ?? null,
    onConnected: (link) => events.push({ kind: 'connected', link }),
    onDisconnected: (link) => events.push({ kind: 'disconnected', link }),
    log,
    staleMs,
  });
  const server = new MeshServer({
    nodeId: 'agent-1',
    nodeType: 'agent',
    version: 'test',
    token: 'mesh-token-not-for-workers',
    tls: null,
    log,
    handler: null,
    acceptStream: hub.accept,
  });
  const address = await server.start({ host: '127.0.0.1', port: 0 });
  t.teardown(async () => {
    hub.close();
    await server.close();
  });
  return { hub, target: `127.0.0.1:${address.port}`, events };
}

function workerHello(stream: RawStream, workerId: string, provides = ['display', 'user_files']) {
  stream.send({
    kind: 'hello',
    nodeId: workerId,
    nodeType: 'worker',
    version: 'w1',
    worker: { os: 'linux', provides: provides as never, capacity: 2 },
  });
}

const isRequest = (f: Frame): f is RequestFrame => f.kind === 'request';

t.test(
  'a wrong or missing token is refused UNAUTHENTICATED; the mesh token is not a user token',
  async (t) => {
    const { target } = await startHub(t);
    for (const token of ['tok-nobody', null, 'mesh-token-not-for-workers']) {
      const stream = openRawStream(target, token);
      t.teardown(() => stream.close());
      workerHello(stream, 'w');
      const end = await stream.ended;
      t.equal(end.code, status.UNAUTHENTICATED, `token ${token}`);
      t.match(end.details, /^unauthenticated: .*MEMQL_WORKER_TOKEN/);
    }
  },
);

t.test('a worker says hello with its offer and is listed under its owner only', async (t) => {
  const { hub, target, events } = await startHub(t);
  const stream = openRawStream(target, 'tok-alice');
  t.teardown(() => stream.close());
  workerHello(stream, 'laptop');
  const hello = await stream.waitFor((f) => f.kind === 'hello');
  t.match(hello, { nodeId: 'agent-1', nodeType: 'agent' });
  await eventually('alice sees her worker', () => hub.connected('alice').length === 1);
  t.match(hub.connected('alice')[0], {
    workerId: 'laptop',
    os: 'linux',
    provides: ['display', 'user_files'],
    capacity: 2,
    inFlight: 0,
  });
  t.same(hub.connected('bob'), [], "bob never sees alice's worker");
  await t.rejects(
    hub.send(
      'bob',
      'laptop',
      WORKER_DISPATCH_METHOD,
      { class: 'user', subject: 'user:bob' },
      Buffer.from('{}'),
    ),
    PeerUnavailableError,
    "a call for bob cannot reach alice's worker",
  );
  t.same(
    events.map((e) => [e.kind, e.link.userId, e.link.workerId]),
    [['connected', 'alice', 'laptop']],
  );
});

t.test('a hello that is not a worker offer is refused', async (t) => {
  const { hub, target } = await startHub(t);
  const stream = openRawStream(target, 'tok-alice');
  t.teardown(() => stream.close());
  stream.send({ kind: 'hello', nodeId: 'wb', nodeType: 'workbench', version: '1' });
  const end = await stream.ended;
  t.equal(end.code, status.INVALID_ARGUMENT);
  t.same(hub.connected('alice'), []);
});

t.test('calls go down the worker stream; output, answer, cancel', async (t) => {
  const { hub, target } = await startHub(t);
  const stream = openRawStream(target, 'tok-alice');
  t.teardown(() => stream.close());
  workerHello(stream, 'laptop');
  await eventually('connected', () => hub.connected('alice').length === 1);
  const chunks: string[] = [];
  const controller = new AbortController();
  const answer = hub.send(
    'alice',
    'laptop',
    WORKER_DISPATCH_METHOD,
    { class: 'user', subject: 'user:alice' },
    Buffer.from('{"action":"exec"}'),
    { onOutput: (_s, c) => chunks.push(Buffer.from(c).toString()), signal: controller.signal },
  );
  const request = await stream.waitFor(isRequest);
  t.equal(request.method, WORKER_DISPATCH_METHOD);
  t.same(request.authority, { class: 'user', subject: 'user:alice' });
  t.equal(request.payload.toString(), '{"action":"exec"}');
  t.equal(hub.connected('alice')[0]?.inFlight, 1);
  stream.send({ kind: 'output', id: request.id, stream: 'stdout', chunk: Buffer.from('hi ') });
  controller.abort();
  await stream.waitFor((f) => f.kind === 'cancel' && f.id === request.id);
  stream.send({
    kind: 'response',
    id: request.id,
    ok: true,
    errorCode: '',
    message: '',
    payload: Buffer.from('{"done":true}'),
  });
  const response = await answer;
  t.equal(response.ok, true);
  t.equal(response.payload.toString(), '{"done":true}');
  t.same(chunks, ['hi ']);
});

t.test('a worker that goes away fails its calls as sent, and is reported gone', async (t) => {
  const { hub, target, events } = await startHub(t);
  const stream = openRawStream(target, 'tok-alice');
  workerHello(stream, 'laptop');
  await eventually('connected', () => hub.connected('alice').length === 1);
  const answer = hub.send(
    'alice',
    'laptop',
    WORKER_DISPATCH_METHOD,
    { class: 'user', subject: 'user:alice' },
    Buffer.from('{}'),
  );
  await stream.waitFor(isRequest);
  stream.close();
  const err = await answer.then(
    () => null,
    (e: unknown) => e,
  );
  t.ok(err instanceof PeerUnavailableError && err.sent, 'rejected as sent');
  await eventually('gone', () => hub.connected('alice').length === 0);
  await eventually('reported', () => events.some((e) => e.kind === 'disconnected'));
});

t.test(
  'a worker connecting again replaces its older stream, which is not reported gone',
  async (t) => {
    const { hub, target, events } = await startHub(t);
    const first = openRawStream(target, 'tok-alice');
    t.teardown(() => first.close());
    workerHello(first, 'laptop');
    await eventually('first connected', () => hub.connected('alice').length === 1);
    const second = openRawStream(target, 'tok-alice');
    t.teardown(() => second.close());
    workerHello(second, 'laptop', ['user_files']);
    await eventually(
      'second replaced the first',
      () => hub.connected('alice')[0]?.provides.length === 1,
    );
    await first.ended;
    t.equal(hub.connected('alice').length, 1);
    t.same(
      events.map((e) => e.kind),
      ['connected', 'connected'],
    );
    const answer = hub.send(
      'alice',
      'laptop',
      WORKER_DISPATCH_METHOD,
      { class: 'user', subject: 'user:alice' },
      Buffer.from('{}'),
    );
    const request = await second.waitFor(isRequest);
    second.send({
      kind: 'response',
      id: request.id,
      ok: false,
      errorCode: 'invalid_arguments',
      message: 'no',
      payload: Buffer.alloc(0),
    });
    t.equal((await answer).errorCode, 'invalid_arguments');
  },
);

t.test('a worker gone silent is not offered, and is again once it speaks', async (t) => {
  const { hub, target } = await startHub(t, 300);
  const stream = openRawStream(target, 'tok-alice');
  t.teardown(() => stream.close());
  workerHello(stream, 'laptop');
  await eventually('connected', () => hub.connected('alice').length === 1);
  // The raw worker sends no Health frames: past the stale window it is not offered.
  await eventually('stale', () => hub.connected('alice').length === 0);
  stream.send({ kind: 'health', healthy: true, running: 0, queued: 0, capacity: 2 });
  await eventually('fresh again', () => hub.connected('alice').length === 1);
});
