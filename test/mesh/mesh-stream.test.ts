import pino from 'pino';
import t from 'tap';
import type { Toolchain } from '../../src/contract/index.js';
import { MAX_FRAME_BYTES } from '../../src/mesh/limits.js';
import { MeshServer } from '../../src/mesh/mesh-server.js';
import { PEER_LIFECYCLE, PeerConnection, type PeerState } from '../../src/mesh/peer-connection.js';
import type { RequestHandler } from '../../src/mesh/server-session.js';
import { PeerUnavailableError } from '../../src/mesh/stream-caller.js';
import type { HandlerAnswer } from '../../src/mesh/wire-errors.js';
import type { Logger } from '../../src/telemetry/logger.js';
import { canMove } from '../../src/telemetry/state-machine.js';
import { captureLog } from '../queue/queue-support.js';
import { eventually, openRawStream } from '../support/mesh.js';

/** NodeService.Stream end to end in one process: a real server on port 0, real clients. */

const TOKEN = 'test-token-0123456789abcdef';
const log = pino({ level: 'silent' });
const json = (v: unknown) => Buffer.from(JSON.stringify(v));

/** Calls parked in the `hold` op, each released by the test (or by its abort). */
const holds: (() => void)[] = [];

const handler: RequestHandler = async (req, ctx): Promise<HandlerAnswer> => {
  const body = JSON.parse(req.payload.toString()) as { op: string; ms?: number };
  if (body.op === 'echo') {
    return {
      ok: true,
      payload: json({ authority: req.authority, authenticated: req.authenticated }),
    };
  }
  if (body.op === 'output') {
    ctx.output('stdout', Buffer.from('one '));
    ctx.output('stderr', Buffer.from('two '));
    ctx.output('stdout', Buffer.alloc(200_000, 'x'));
    return { ok: true, payload: json('done') };
  }
  if (body.op === 'wait') {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, body.ms ?? 60_000);
      ctx.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return ctx.signal.aborted
      ? { ok: false, errorCode: 'unavailable', message: 'aborted' }
      : { ok: true, payload: json('waited') };
  }
  if (body.op === 'hold') {
    await new Promise<void>((resolve) => {
      holds.push(resolve);
      ctx.signal.addEventListener('abort', () => resolve());
    });
    return ctx.signal.aborted
      ? { ok: false, errorCode: 'unavailable', message: 'aborted' }
      : { ok: true, payload: json('released') };
  }
  throw new Error('boom');
};

async function startServer(
  options: {
    token?: string | null;
    healthIntervalMs?: number;
    log?: Logger;
    toolchain?: () => Toolchain | null;
  } = {},
) {
  const server = new MeshServer({
    nodeId: 'wb-1',
    nodeType: 'workbench',
    version: '1.2.3',
    token: options.token === undefined ? TOKEN : options.token,
    tls: null,
    log: options.log ?? log,
    handler,
    capacity: 2,
    healthIntervalMs: options.healthIntervalMs ?? 100,
    ...(options.toolchain ? { toolchain: options.toolchain } : {}),
  });
  const address = await server.start({ host: '127.0.0.1', port: 0 });
  return { server, target: `127.0.0.1:${address.port}`, port: address.port };
}

function connect(
  port: number,
  token: string | null = TOKEN,
  onChange?: () => void,
  peerLog: Logger = log,
) {
  const peer = new PeerConnection({
    endpoint: { host: '127.0.0.1', port, serverName: '127.0.0.1' },
    self: { nodeId: 'agent-1', nodeType: 'agent', version: '1.2.3' },
    token,
    tls: null,
    log: peerLog,
    backoff: { initialMs: 50, maxMs: 200, multiplier: 2 },
    ...(onChange ? { onChange } : {}),
  });
  peer.start();
  return peer;
}

t.test('hello, health, a request and its answer', async (t) => {
  const { server, port } = await startServer();
  t.teardown(() => server.close());
  const peer = connect(port);
  t.teardown(() => peer.close());
  await eventually('peer healthy', () => peer.view().healthy);
  t.equal(peer.nodeId, 'wb-1');
  t.match(peer.view(), { connected: true, healthy: true, running: 0, capacity: 2 });

  const r = await peer.request('m', { class: 'user', subject: 'user:a' }, json({ op: 'echo' }));
  t.equal(r.ok, true);
  t.same(JSON.parse(r.payload.toString()), {
    authority: { class: 'user', subject: 'user:a' },
    authenticated: true,
  });

  const failed = await peer.request('m', null, json({ op: 'throw' }));
  t.match(
    failed,
    { ok: false, errorCode: 'internal' },
    'a handler that throws is answered internal',
  );
});

t.test('output frames arrive in order, before the response', async (t) => {
  const { server, port } = await startServer();
  t.teardown(() => server.close());
  const peer = connect(port);
  t.teardown(() => peer.close());
  await eventually('peer ready', () => peer.view().connected);
  const seen: string[] = [];
  let bytes = 0;
  const r = await peer.request('m', null, json({ op: 'output' }), {
    onOutput: (stream, chunk) => {
      if (bytes === 0 || chunk.length < 20) seen.push(`${stream}:${chunk.toString()}`);
      bytes += chunk.length;
    },
  });
  t.equal(r.ok, true);
  t.same(seen.slice(0, 2), ['stdout:one ', 'stderr:two ']);
  t.equal(bytes, 8 + 200_000, 'large chunks are split and all delivered');
});

t.test('a cancel frame aborts the running request through its signal', async (t) => {
  const { server, port } = await startServer();
  t.teardown(() => server.close());
  const peer = connect(port);
  t.teardown(() => peer.close());
  await eventually('peer ready', () => peer.view().connected);
  const ac = new AbortController();
  const pending = peer.request('m', null, json({ op: 'wait' }), { signal: ac.signal });
  await eventually('request running', () => server.inFlight === 1);
  await eventually('health reports it', () => peer.view().running === 1);
  ac.abort();
  // Only the abort ends the handler's wait early ('waited' would come after 60 s).
  const r = await pending;
  t.match(r, { ok: false, message: 'aborted' });
});

t.test('a change of load is reported once it holds; a short call sends no frame', async (t) => {
  // Without the period getting in the way: every frame after the first is a change.
  const { server, port } = await startServer({ healthIntervalMs: 600_000 });
  t.teardown(() => server.close());
  const reported: number[] = [];
  const peer: PeerConnection = connect(port, TOKEN, () => {
    const running = peer.view().running;
    if (reported.at(-1) !== running) reported.push(running);
  });
  t.teardown(() => peer.close());
  await eventually('peer ready', () => peer.view().connected);
  t.same((await peer.request('m', null, json({ op: 'echo' }))).ok, true, 'a short call');
  const held = peer.request('m', null, json({ op: 'hold' }));
  await eventually('the held call is reported', () => peer.view().running === 1);
  holds.shift()?.();
  t.same((await held).ok, true);
  await eventually('its end is reported', () => peer.view().running === 0);
  t.same(reported, [0, 1, 0], 'the short call neither raised nor lowered the load seen');
});

t.test(
  'the build toolchain reaches the peer view once known, without waiting for the period',
  async (t) => {
    let toolchain: Toolchain | null = null;
    const { server, port } = await startServer({
      healthIntervalMs: 600_000,
      toolchain: () => toolchain,
    });
    t.teardown(() => server.close());
    const peer = connect(port);
    t.teardown(() => peer.close());
    await eventually('peer healthy', () => peer.view().healthy);
    t.notOk('toolchain' in peer.view(), 'not known yet: no toolchain, which cannot build');
    toolchain = { status: 'probed', missing: ['git'] };
    server.healthChanged();
    await eventually('the toolchain is reported', () => peer.view().toolchain !== undefined);
    t.same(peer.view().toolchain, { status: 'probed', missing: ['git'] });
  },
);

t.test('a wrong or missing token is refused; the node keeps serving', async (t) => {
  const { server, target, port } = await startServer();
  t.teardown(() => server.close());
  for (const token of ['wrong-token-0123456789', null]) {
    const raw = openRawStream(target, token);
    const end = await raw.ended;
    t.equal(end.code, 16, `UNAUTHENTICATED for ${token === null ? 'no' : 'a wrong'} token`);
    t.same(raw.frames, [], 'no hello for a refused stream');
    raw.close();
  }
  // Follow the client's state moves through three refused dials.
  let ended = 0;
  let ready = false;
  let last: string | undefined;
  const peer: PeerConnection = connect(port, 'wrong-token-0123456789', () => {
    const state = peer.currentState;
    if (state === last) return;
    last = state;
    if (state === 'ready') ready = true;
    if (state === 'backoff') ended += 1;
  });
  t.teardown(() => peer.close());
  await eventually('three dial attempts ended', () => ended >= 3);
  t.equal(ready, false, 'a client with a wrong token never becomes ready');
  const good = connect(port);
  t.teardown(() => good.close());
  await eventually('good peer healthy', () => good.view().healthy);
});

t.test('malformed frames are answered with an error and the stream carries on', async (t) => {
  const { server, target } = await startServer();
  t.teardown(() => server.close());
  const raw = openRawStream(target, TOKEN);
  t.teardown(() => raw.close());
  await raw.waitFor((f) => f.kind === 'hello');
  raw.send(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x01])); // not protobuf
  raw.send(Buffer.alloc(0)); // a Frame with no kind
  raw.send({ kind: 'request', id: '', method: 'm', authority: null, payload: json({}) });
  raw.send({
    kind: 'request',
    id: 'r1',
    method: 'm',
    authority: null,
    payload: json({ op: 'echo' }),
  });
  const answer = await raw.waitFor((f) => f.kind === 'response' && f.id === 'r1');
  t.match(answer, { ok: true });
  const errors = raw.frames.filter((f) => f.kind === 'response' && !f.ok);
  t.equal(errors.length, 3, 'each malformed frame is answered');
  t.ok(errors.every((f) => f.kind === 'response' && f.errorCode === 'invalid_arguments'));
});

t.test('an oversized frame ends only its own stream', async (t) => {
  const { server, target, port } = await startServer();
  t.teardown(() => server.close());
  const bystander = connect(port);
  t.teardown(() => bystander.close());
  await eventually('bystander ready', () => bystander.view().connected);
  const raw = openRawStream(target, TOKEN);
  t.teardown(() => raw.close());
  await raw.waitFor((f) => f.kind === 'hello');
  raw.send({
    kind: 'request',
    id: 'big',
    method: 'm',
    authority: null,
    payload: Buffer.alloc(MAX_FRAME_BYTES + 1, 'a'),
  });
  const end = await raw.ended;
  t.equal(end.code, 8, 'RESOURCE_EXHAUSTED');
  const r = await bystander.request('m', null, json({ op: 'echo' }));
  t.equal(r.ok, true, 'other streams are unharmed');
  const fresh = openRawStream(target, TOKEN);
  t.teardown(() => fresh.close());
  await fresh.waitFor((f) => f.kind === 'hello');
});

t.test('the client refuses to send an oversized call', async (t) => {
  const { server, port } = await startServer();
  t.teardown(() => server.close());
  const peer = connect(port);
  t.teardown(() => peer.close());
  await eventually('peer ready', () => peer.view().connected);
  const r = await peer.request('m', null, Buffer.alloc(MAX_FRAME_BYTES));
  t.match(r, { ok: false, errorCode: 'payload_too_large' });
  t.equal(peer.view().connected, true, 'the stream is still up');
});

t.test(
  'a server going away fails in-flight calls as sent, and the client reconnects',
  async (t) => {
    const first = await startServer();
    const peer = connect(first.port);
    t.teardown(() => peer.close());
    await eventually('peer ready', () => peer.view().connected);
    const pending = peer.request('m', null, json({ op: 'wait' })).then(
      () => null,
      (e: unknown) => e,
    );
    await eventually('running', () => first.server.inFlight === 1);
    await first.server.close();
    const err = await pending;
    t.ok(err instanceof PeerUnavailableError, 'PeerUnavailableError');
    t.equal((err as PeerUnavailableError).sent, true, 'the call had been sent');
    await eventually('peer down', () => !peer.view().connected);
    const unsent = await peer.request('m', null, json({ op: 'echo' })).catch((e: unknown) => e);
    t.equal((unsent as PeerUnavailableError).sent, false, 'nothing is sent while down');

    const second = new MeshServer({
      nodeId: 'wb-1b',
      nodeType: 'workbench',
      version: '1',
      token: TOKEN,
      tls: null,
      log,
      handler,
      healthIntervalMs: 100,
    });
    await second.start({ host: '127.0.0.1', port: first.port });
    t.teardown(() => second.close());
    await eventually('reconnected', () => peer.view().healthy && peer.nodeId === 'wb-1b');
  },
);

t.test('drain: unhealthy at once, new calls refused, running ones finish', async (t) => {
  const { server, port } = await startServer();
  t.teardown(() => server.close());
  const peer = connect(port);
  t.teardown(() => peer.close());
  await eventually('peer healthy', () => peer.view().healthy);
  const running = peer.request('m', null, json({ op: 'hold' }));
  await eventually('running', () => server.inFlight === 1);
  // The grace is far longer than the test: the drain ends when the running call does.
  const draining = server.drain(120_000);
  await eventually('reported unhealthy', () => !peer.view().healthy);
  const refused = await peer.request('m', null, json({ op: 'echo' }));
  t.match(refused, { ok: false, errorCode: 'unavailable' });
  t.equal(holds.length, 1, 'the running call is still held');
  holds.shift()?.();
  t.match(await running, { ok: true });
  t.same(await draining, { finished: 1, aborted: 0 });
});

t.test('drain: calls still running when the grace period ends are aborted', async (t) => {
  const { server, port } = await startServer();
  t.teardown(() => server.close());
  const peer = connect(port);
  t.teardown(() => peer.close());
  await eventually('peer healthy', () => peer.view().healthy);
  const running = peer.request('m', null, json({ op: 'wait' }));
  await eventually('running', () => server.inFlight === 1);
  t.same(await server.drain(100), { finished: 0, aborted: 1 });
  t.match(await running, { ok: false, message: 'aborted' });
});

t.test('without a configured token streams are accepted but not authenticated', async (t) => {
  const { server, port } = await startServer({ token: null });
  t.teardown(() => server.close());
  const peer = connect(port, null);
  t.teardown(() => peer.close());
  await eventually('peer ready', () => peer.view().connected);
  const r = await peer.request('m', null, json({ op: 'echo' }));
  t.same(JSON.parse(r.payload.toString()).authenticated, false);
});

/** The `from -> to` of each move line `machine` wrote. */
function movesOf(lines: Record<string, unknown>[], machine: string): string[] {
  return lines.filter((l) => l.machine === machine).map((l) => `${l.from} -> ${l.to}`);
}

t.test('a closed peer stays closed: it does not redial and reports no change', async (t) => {
  const { server, port } = await startServer();
  t.teardown(() => server.close());
  const captured = captureLog();
  let changes = 0;
  const peer = connect(port, TOKEN, () => (changes += 1), captured.log);
  t.teardown(() => peer.close());
  await eventually('peer ready', () => peer.view().connected);
  peer.close();
  t.equal(peer.currentState, 'closed');
  const seen = changes;
  peer.close();
  peer.start();
  t.equal(peer.currentState, 'closed', 'neither a second close nor a start moves it');
  t.equal(peer.view().connected, false);
  t.equal(changes, seen, 'and onChange is not called');
  t.same(movesOf(captured.lines(), 'peer'), ['connecting -> ready', 'ready -> closed']);
  const states: PeerState[] = ['connecting', 'ready', 'backoff', 'closed'];
  t.same(
    states.filter((to) => canMove(PEER_LIFECYCLE.moves, 'closed', to)),
    [],
    'closed is final: not even a late hello makes it ready',
  );
});

t.test('a mesh server moves new -> serving -> draining -> closed, never back', async (t) => {
  const captured = captureLog();
  const { server } = await startServer({ log: captured.log });
  t.teardown(() => server.close());
  t.equal(server.state, 'serving');
  t.same(await server.drain(0), { finished: 0, aborted: 0 });
  t.equal(server.state, 'draining');
  await server.close();
  t.equal(server.state, 'closed');
  await server.drain(0);
  t.equal(server.state, 'closed', 'a closed server does not go back to draining');
  t.equal(server.healthFrame().healthy, false);
  t.same(movesOf(captured.lines(), 'mesh-server'), [
    'new -> serving',
    'serving -> draining',
    'draining -> closed',
  ]);
});
