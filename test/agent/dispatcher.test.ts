import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import { startAgentNode } from '../../src/agent/agent-node.js';
import { AgentDispatcher, type AgentDispatcherOptions } from '../../src/agent/dispatcher.js';
import type { WorkbenchRouter } from '../../src/agent/router.js';
import { loadConfig } from '../../src/config/index.js';
import {
  type Authority,
  type DispatchResult,
  type Envelope,
  errorResult,
  NODE_DRAINING,
  okResult,
  systemAuthority,
  userAuthority,
  WORKSPACE_MOVED,
} from '../../src/contract/index.js';
import type { DispatchTarget } from '../../src/mesh/dispatch-target.js';
import type { PeerView } from '../../src/mesh/peer-picker.js';
import { PeerUnavailableError } from '../../src/mesh/stream-caller.js';
import { createRun, getLiveWorkspace, openDb } from '../../src/store/index.js';
import { createWorkbenchHost } from '../../src/workbench/host-factory.js';
import { parsedEnvelope } from '../support/envelope.js';
import { createTestDatabase } from '../support/postgres.js';

/** dispatchHost: the agent side of the pipeline, with a scripted router and with real sockets. */

const user = userAuthority('user:alice');
const call = (action: string, args: Record<string, unknown> = {}, extra = {}) =>
  parsedEnvelope({ action, args, runId: 'run-1', agentId: 'a', taskId: 't', ...extra });

function capture() {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'debug' }, { write: (s: string) => lines.push(JSON.parse(s)) });
  return { log, lines };
}

function peer(key: string, nodeId: string, healthy = true): PeerView {
  return { key, nodeId, connected: true, healthy, running: 0, queued: 0, capacity: 4 };
}

/** A replica whose Health frames reported its build toolchain, lacking `missing`. */
function withTools(key: string, nodeId: string, missing: ('node' | 'npm' | 'git')[] = []) {
  return { ...peer(key, nodeId), toolchain: { status: 'probed', missing } } as PeerView;
}

/** A router over fixed views that records what it was asked to send. */
function scriptedRouter(
  views: PeerView[],
  answer: (peer: string) => DispatchResult | Error = () => okResult('remote'),
) {
  const sent: { peer: string; authority: unknown; request: unknown }[] = [];
  /** How long the dispatcher asked to wait for a change, each time. */
  const waits: number[] = [];
  const router: WorkbenchRouter = {
    views: () => views,
    waitForChange: (ms) => {
      waits.push(ms);
      return new Promise((r) => setTimeout(r, Math.min(ms, 20)));
    },
    async send(peerKey, authority, request) {
      sent.push({ peer: peerKey, authority, request: JSON.parse(request.toString()) });
      const a = answer(peerKey);
      if (a instanceof Error) throw a;
      return a;
    },
  };
  return { router, sent, waits };
}

function localTarget() {
  const calls: { request: unknown; authority: Authority | undefined }[] = [];
  const target: DispatchTarget = {
    async handleDispatch(request, authority) {
      calls.push({ request, authority });
      return okResult('local');
    },
  };
  return { target, calls };
}

function dispatcher(over: Partial<AgentDispatcherOptions> & { log: pino.Logger }) {
  return new AgentDispatcher({
    remote: true,
    localFallback: false,
    local: null,
    router: null,
    readAffinity: async () => null,
    peersRaw: 'workbench=workbench:50060',
    peerWaitMs: 100,
    ...over,
  });
}

t.test('refusals before routing: nothing is forwarded or run', async (t) => {
  const { log } = capture();
  const { router, sent } = scriptedRouter([peer('p:1', 'wb-a')]);
  const local = localTarget();
  const d = dispatcher({ log, router, local: local.target, localFallback: true });
  t.match(await d.dispatchHost({ action: 'fs_read' }, user), {
    ok: false,
    errorCode: 'invalid_arguments',
  });
  // The envelope parse reads the hint into its type: a typo is refused there.
  t.match(
    await d.dispatchHost(
      {
        action: 'fs_read',
        args: { path: 'a' },
        runId: 'run-1',
        agentId: 'a',
        taskId: 't',
        environment: { needs: ['gpus'] },
      },
      user,
    ),
    { ok: false, errorCode: 'invalid_environment_hint' },
  );
  const cases: [Envelope, Authority, string][] = [
    [
      call('fs_read', { path: 'a' }, { environment: { needs: ['gpu'] } }),
      user,
      'environment_mismatch',
    ],
    [
      call('fs_read', { path: 'a' }, { environment: { os: 'darwin' } }),
      user,
      'environment_mismatch',
    ],
    [call('build', {}), user, 'build_not_permitted'],
    [call('build', {}), { class: 'system', subject: 'system:deploy' }, 'build_not_permitted'],
    [call('fs_read', { path: 'a' }), { class: 'system', subject: 'system:deploy' }, 'forbidden'],
  ];
  for (const [request, authority, code] of cases) {
    const out = await d.dispatch(request, authority);
    t.match(out, { result: { ok: false, errorCode: code }, route: { kind: 'refused' } }, code);
  }
  t.same(sent, [], 'nothing forwarded');
  t.same(local.calls, [], 'nothing run locally');
});

t.test('build with a minted system authority is forwarded as system', async (t) => {
  const { log } = capture();
  const { router, sent } = scriptedRouter([withTools('p:1', 'wb-a')]);
  const out = await dispatcher({ log, router }).dispatch(
    call('build', {}),
    systemAuthority('system:deploy'),
  );
  t.equal(out.result.ok, true);
  t.same(sent[0]?.authority, { class: 'system', subject: 'system:deploy' });
});

t.test('a build goes to a replica that can build; none can: build_unavailable', async (t) => {
  const system = systemAuthority('system:deploy');
  const { log, lines } = capture();
  const able = withTools('p:1', 'wb-a');
  const noNpm = withTools('p:2', 'wb-b', ['npm']);
  let pinned: string | null = 'wb-b';
  const views = [noNpm, able];
  const { router, sent } = scriptedRouter(views);
  const d = dispatcher({ log, router, readAffinity: async () => pinned });

  // The run's replica lacks npm: the capable one takes the workspace over.
  t.match(await d.dispatch(call('build', { ref: 'main' }), system), {
    result: { ok: true },
    route: { kind: 'remote', nodeId: 'wb-a', pick: 'substitute', previousNodeId: 'wb-b' },
  });
  t.ok(
    lines.some((l) => l.level === 40 && String(l.msg).includes('cannot build')),
    'a WARNING says why the workspace moves',
  );
  // The workspace is on the capable replica now: the run's next call goes there.
  t.match(await d.dispatch(call('fs_list'), user), { route: { nodeId: 'wb-a', pick: 'pinned' } });
  pinned = 'wb-a';
  t.match(await d.dispatch(call('build', {}), system), {
    route: { nodeId: 'wb-a', pick: 'pinned' },
  });
  t.equal(sent.length, 3);

  // Only replicas without npm (one probed, one silent): refused, nothing forwarded.
  views.splice(0, views.length, noNpm, peer('p:3', 'wb-c'));
  const started = Date.now();
  const refused = await d.dispatch(call('build', {}), system);
  t.match(refused, {
    result: { ok: false, errorCode: 'build_unavailable' },
    route: { kind: 'refused' },
  });
  t.ok(Date.now() - started >= 100, 'it waited for the silent replica to report, boundedly');
  if (!refused.result.ok) {
    t.same(refused.result.payload, {
      replicas: [
        { nodeId: 'wb-b', missing: ['npm'], problem: 'missing_tools' },
        { nodeId: 'wb-c', missing: ['node', 'npm', 'git'], problem: 'not_reported' },
      ],
    });
    t.match(refused.result.message, 'wb-b lacks npm');
    t.match(refused.result.message, 'workbench-runtime image');
  }
  t.equal(sent.length, 3, 'nothing more forwarded');

  // Every replica reported, none can build: refused at once, no wait.
  views.splice(0, views.length, noNpm);
  const { router: quick } = scriptedRouter(views);
  const waited: number[] = [];
  const q = dispatcher({
    log,
    router: { ...quick, waitForChange: async (ms) => void waited.push(ms) },
    peerWaitMs: 60_000,
  });
  t.match(await q.dispatch(call('build', {}), system), {
    result: { errorCode: 'build_unavailable' },
  });
  t.same(waited, [], 'no wait when every replica has reported');

  // No healthy replica at all stays no_workbench_peer.
  views.splice(0, views.length, peer('p:4', 'wb-d', false));
  t.match(await d.dispatch(call('build', {}), system), {
    result: { errorCode: 'no_workbench_peer' },
  });
});

t.test('not remote: the in-process workbench, with the caller authority', async (t) => {
  const { log } = capture();
  const local = localTarget();
  const out = await dispatcher({ log, remote: false, local: local.target }).dispatch(
    call('fs_list'),
    user,
  );
  t.match(out, {
    result: { ok: true, payload: 'local' },
    route: { kind: 'local', reason: 'not_remote' },
  });
  t.equal(local.calls[0]?.authority, user);
});

t.test('affinity: the pinned replica, else a substitute with a WARNING', async (t) => {
  const { log, lines } = capture();
  const { router, sent } = scriptedRouter([peer('p:1', 'wb-a'), peer('p:2', 'wb-b')]);
  let pinned = 'wb-b';
  const d = dispatcher({ log, router, readAffinity: async () => pinned });
  t.match(await d.dispatch(call('fs_list'), user), {
    route: { kind: 'remote', nodeId: 'wb-b', pick: 'pinned' },
  });
  t.same(sent[0]?.request, call('fs_list'), 'the call is forwarded as given');
  // A dispatcher that has not served the run yet reads the row, which names a gone node.
  pinned = 'wb-gone';
  const fresh = dispatcher({ log, router, readAffinity: async () => pinned });
  t.match(await fresh.dispatch(call('fs_list'), user), {
    route: { kind: 'remote', nodeId: 'wb-a', pick: 'substitute', previousNodeId: 'wb-gone' },
  });
  t.ok(
    lines.some(
      (l) =>
        l.level === 40 &&
        l.previousNodeId === 'wb-gone' &&
        l.nodeId === 'wb-a' &&
        l.runId === 'run-1',
    ),
    'a WARNING names both nodes and the run',
  );
});

t.test('the replica that served a run pins its next call, without a read', async (t) => {
  const { log } = capture();
  const views = [peer('p:1', 'wb-a'), peer('p:2', 'wb-b')];
  let holder = 'wb-b';
  const { router, sent } = scriptedRouter(views, (p) =>
    p === 'p:2' && holder !== 'wb-b'
      ? errorResult('unavailable', 'unavailable: moved', { reason: WORKSPACE_MOVED })
      : okResult(`from ${p}`),
  );
  let reads = 0;
  const d = dispatcher({
    log,
    router,
    readAffinity: async () => {
      reads += 1;
      return holder;
    },
  });
  const route = async () => (await d.dispatch(call('fs_list'), user)).route;
  t.match(await route(), { kind: 'remote', nodeId: 'wb-b', pick: 'pinned' });
  t.equal(reads, 1, 'the first call reads the row');
  t.match(await route(), { kind: 'remote', nodeId: 'wb-b', pick: 'pinned' });
  t.match(await route(), { kind: 'remote', nodeId: 'wb-b', pick: 'pinned' });
  t.equal(reads, 1, 'the next ones go where the last one went, with no read');

  // The workspace moved: the old replica refuses before running, the row is read again.
  holder = 'wb-a';
  t.match(await route(), { kind: 'remote', nodeId: 'wb-a', pick: 'pinned' });
  t.equal(reads, 2, 'the refusal makes it read the row');
  t.same(
    sent.slice(-2).map((x) => x.peer),
    ['p:2', 'p:1'],
    'refused by the old replica, served by the holder',
  );
  t.match(await route(), { nodeId: 'wb-a' });
  t.equal(reads, 2, 'and the holder is the pin from then on');

  // A replica that is not healthy is no pin: the row is read.
  views[0] = peer('p:1', 'wb-a', false);
  holder = 'wb-b';
  t.match(await route(), { nodeId: 'wb-b', pick: 'pinned' });
  t.equal(reads, 3, 'the last replica unhealthy: the row is read');

  // A replica lost mid-call is no pin either.
  views[0] = peer('p:1', 'wb-a');
  const lost = scriptedRouter(views, (p) =>
    p === 'p:2' ? new PeerUnavailableError('gone', true) : okResult('from a'),
  );
  let lostReads = 0;
  const d2 = dispatcher({
    log,
    router: lost.router,
    readAffinity: async () => {
      lostReads += 1;
      return 'wb-b';
    },
  });
  t.match(await d2.dispatch(call('fs_list'), user), { result: { errorCode: 'unavailable' } });
  await d2.dispatch(call('fs_list'), user);
  t.equal(lostReads, 2, 'after a replica went away mid-call the row is read again');
});

t.test('a failed affinity read picks unpinned with a WARNING', async (t) => {
  const { log, lines } = capture();
  const { router } = scriptedRouter([peer('p:1', 'wb-a')]);
  const d = dispatcher({
    log,
    router,
    readAffinity: async () => {
      throw new Error('connection refused');
    },
  });
  t.match(await d.dispatch(call('fs_list'), user), { route: { kind: 'remote', pick: 'unpinned' } });
  t.ok(lines.some((l) => l.level === 40 && String(l.msg).includes('affinity read failed')));
});

t.test('a stream found down before sending: the next replica is tried', async (t) => {
  const { log } = capture();
  const { router, sent } = scriptedRouter([peer('p:1', 'wb-a'), peer('p:2', 'wb-b')], (p) =>
    p === 'p:1' ? new PeerUnavailableError('down', false) : okResult('from b'),
  );
  const out = await dispatcher({ log, router }).dispatch(call('fs_list'), user);
  t.match(out, { result: { ok: true, payload: 'from b' }, route: { nodeId: 'wb-b' } });
  t.same(
    sent.map((s) => s.peer),
    ['p:1', 'p:2'],
  );
});

t.test('a refusal given before anything ran sends the call where it belongs', async (t) => {
  const { log } = capture();
  // wb-a drains: nothing ran there, so another replica takes the call.
  const draining = scriptedRouter([peer('p:1', 'wb-a'), peer('p:2', 'wb-b')], (p) =>
    p === 'p:1'
      ? errorResult('unavailable', 'unavailable: draining', { reason: NODE_DRAINING })
      : okResult('from b'),
  );
  const d1 = dispatcher({ log, router: draining.router, readAffinity: async () => 'wb-a' });
  const out1 = await d1.dispatch(call('fs_write', { path: 'a', content: '' }), user);
  t.match(out1, { result: { ok: true, payload: 'from b' }, route: { nodeId: 'wb-b' } });
  t.same(
    draining.sent.map((s) => s.peer),
    ['p:1', 'p:2'],
  );

  // The workspace moved to wb-b after the affinity read: read it again, go there.
  let holder = 'wb-a';
  const moved = scriptedRouter([peer('p:1', 'wb-a'), peer('p:2', 'wb-b')], (p) => {
    if (p === 'p:1') {
      holder = 'wb-b';
      return errorResult('unavailable', 'unavailable: moved', { reason: WORKSPACE_MOVED });
    }
    return okResult('from the holder');
  });
  const d2 = dispatcher({ log, router: moved.router, readAffinity: async () => holder });
  const out2 = await d2.dispatch(call('fs_list'), user);
  t.match(out2, { result: { ok: true, payload: 'from the holder' }, route: { pick: 'pinned' } });

  // Any other refusal is the answer: nothing is sent twice.
  const other = scriptedRouter([peer('p:1', 'wb-a'), peer('p:2', 'wb-b')], () =>
    errorResult('unavailable', 'unavailable: the database is unreachable'),
  );
  const out3 = await dispatcher({ log, router: other.router }).dispatch(call('fs_list'), user);
  t.match(out3.result, { ok: false, errorCode: 'unavailable' });
  t.equal(other.sent.length, 1);
});

t.test('a replica lost mid-call: unavailable, not retried', async (t) => {
  const { log } = capture();
  const { router, sent } = scriptedRouter(
    [peer('p:1', 'wb-a'), peer('p:2', 'wb-b')],
    () => new PeerUnavailableError('gone', true),
  );
  const out = await dispatcher({ log, router }).dispatch(
    call('fs_write', { path: 'a', content: '' }),
    user,
  );
  t.match(out.result, { ok: false, errorCode: 'unavailable' });
  t.equal(sent.length, 1);
});

t.test('no healthy peer: refused by name, promptly; the fallback only when set', async (t) => {
  const { log, lines } = capture();
  const { router, waits } = scriptedRouter([peer('p:1', 'wb-a', false)]);
  const out = await dispatcher({ log, router }).dispatch(call('fs_list'), user);
  t.ok(waits.length > 0, 'it waited for a peer to become healthy');
  t.ok(
    waits.every((ms) => ms <= 100),
    `never for longer than its peer wait of 100 ms (${waits.join(', ')})`,
  );
  t.match(out, {
    result: { ok: false, errorCode: 'no_workbench_peer' },
    route: { kind: 'refused' },
  });
  const message = out.result.ok ? '' : out.result.message;
  for (const part of [
    '"workbench"',
    'MEMQL_WORKER_PEERS=workbench=workbench:50060',
    'MEMQL_WORKBENCH_LOCAL_FALLBACK',
  ]) {
    t.match(message, part);
  }
  const local = localTarget();
  const fallback = await dispatcher({
    log,
    router,
    local: local.target,
    localFallback: true,
  }).dispatch(call('fs_list'), user);
  t.match(fallback, {
    result: { ok: true, payload: 'local' },
    route: { kind: 'local', reason: 'fallback' },
  });
  t.ok(
    lines.some((l) => l.level === 40 && String(l.msg).includes('MEMQL_WORKBENCH_LOCAL_FALLBACK=1')),
  );
});

t.test('remote with no router: every call refuses', async (t) => {
  const { log } = capture();
  const d = dispatcher({ log, router: null, unwiredReason: 'no seed', peersRaw: '' });
  const out = await d.dispatch(call('fs_list'), user);
  t.match(out.result, {
    ok: false,
    errorCode: 'no_workbench_peer',
    message: /no seed.*MEMQL_WORKER_PEERS=\(empty\)/,
  });
});

t.test('real sockets: no peer reachable, then the explicit fallback', async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const db = await openDb({ kind: 'postgres', url: database.url });
  t.teardown(() => db.close());
  await createRun(db, { id: 'run-1', ownerUserId: 'alice' });
  const base = await mkdtemp(join(tmpdir(), 'memql-agent-'));
  await chmod(base, 0o755);
  t.teardown(() => rm(base, { recursive: true, force: true }));

  // A port with nothing listening: bind one, then close it.
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const deadPort = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));

  const start = async (env: Record<string, string>) => {
    const { log, lines } = capture();
    const config = loadConfig({
      MEMQL_NODE_ID: 'agent-1',
      MEMQL_DATABASE_URL: database.url,
      MEMQL_WORKBENCH_ROOT: join(base, 'wb'),
      MEMQL_DATA_DIR: join(base, 'data'),
      MEMQL_GRPC_LISTEN: '127.0.0.1:0',
      MEMQL_WORKBENCH_REMOTE: '1',
      MEMQL_WORKER_PEERS: 'workbench=workbench:50060',
      MEMQL_RUNNER: 'process',
      ...env,
    });
    const local = config.workbenchLocalFallback
      ? (await createWorkbenchHost(config, { db, log, platform: 'linux', runsAsRoot: false })).host
      : null;
    if (local) t.teardown(() => local.stop());
    const node = await startAgentNode({
      config,
      log,
      local,
      readAffinity: async (runId) => (await getLiveWorkspace(db, runId))?.nodeId ?? null,
      version: 'test',
      resolver: async () => [{ host: '127.0.0.1', port: deadPort, serverName: 'workbench' }],
      peerWaitMs: 1_000,
    });
    t.teardown(() => node.close());
    return { node, lines };
  };

  const refused = await start({});
  const started = Date.now();
  const r = await refused.node.dispatcher.dispatch(
    call('fs_write', { path: 'a.txt', content: 'a' }),
    user,
  );
  const took = Date.now() - started;
  t.match(r.result, {
    ok: false,
    errorCode: 'no_workbench_peer',
    message: /1 workbench replica known/,
  });
  t.ok(took >= 900, `it waited out its 1 s peer wait before refusing (${took} ms)`);
  t.equal(await getLiveWorkspace(db, 'run-1'), null, 'nothing was written');

  const fallback = await start({ MEMQL_WORKBENCH_LOCAL_FALLBACK: '1' });
  const f = await fallback.node.dispatcher.dispatch(
    call('fs_write', { path: 'a.txt', content: 'a' }),
    user,
  );
  t.match(f, { result: { ok: true }, route: { kind: 'local', reason: 'fallback' } });
  t.equal(
    (await getLiveWorkspace(db, 'run-1'))?.nodeId,
    'agent-1',
    'it ran on the agent node itself',
  );
});

t.test('remote with no workbench seed: an ERROR at boot, and calls refuse', async (t) => {
  // loadConfig already refuses this combination at startup; a Config built in code
  // (an embedding tool loop) can still reach it, and then the node must be loud.
  const { log, lines } = capture();
  const base = loadConfig({
    MEMQL_NODE_ID: 'agent-1',
    MEMQL_GRPC_LISTEN: '127.0.0.1:0',
    MEMQL_WORKER_PEERS: 'worker=host:1',
  });
  const config = { ...base, workbenchRemote: true };
  const node = await startAgentNode({
    config,
    log,
    local: null,
    readAffinity: async () => null,
    version: 'test',
  });
  t.teardown(() => node.close());
  t.ok(
    lines.some((l) => l.level === 50 && l.workerPeers === 'worker=host:1'),
    'ERROR at boot',
  );
  const r = await node.dispatcher.dispatch(call('fs_list'), user);
  t.match(r.result, {
    ok: false,
    errorCode: 'no_workbench_peer',
    message: /MEMQL_WORKER_PEERS=worker=host:1/,
  });
});
