import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import type { Frame, HelloFrame } from '../../src/mesh/frames.js';
import { resultFromResponse } from '../../src/mesh/index.js';
import { canMove } from '../../src/telemetry/state-machine.js';
import {
  refusedTokenMessage,
  startWorkerNode,
  WORKER_LINK_LIFECYCLE,
  type WorkerLinkState,
} from '../../src/worker/index.js';
import { killAll, leftovers, markedSleep, sleepStarted } from '../sandbox/sandbox-support.js';
import { startFakeAgent } from '../support/fake-agent.js';

/** The worker's link in process, against an agent played by the test: its moves and its stop. */

const TOKEN = 'mqt_link-test-token';
const isHello = (f: Frame): f is HelloFrame => f.kind === 'hello';

t.test('the refusal says what happened and what to do', async (t) => {
  const message = refusedTokenMessage('agent:50060', 'unauthenticated: revoked');
  t.match(message, /agent:50060/);
  t.match(message, /MEMQL_WORKER_TOKEN/);
  t.match(message, /memql tokens create/);
  t.ok(canMove(WORKER_LINK_LIFECYCLE.moves, 'refused', 'closed'));
  t.notOk(
    canMove(WORKER_LINK_LIFECYCLE.moves, 'refused', 'connecting'),
    'a refusal is never redialled',
  );
});

t.test(
  'a stop answers no new calls, aborts what runs after the grace, and ends the stream',
  async (t) => {
    const agent = await startFakeAgent(TOKEN);
    t.teardown(() => agent.close());
    const root = await mkdtemp(join(tmpdir(), 'memql-worker-root-'));
    t.teardown(() => rm(root, { recursive: true, force: true }));
    const moves: WorkerLinkState[] = [];
    const node = startWorkerNode({
      nodeId: 'worker-test',
      version: '0.0.0',
      agent: { host: '127.0.0.1', port: agent.port },
      token: TOKEN,
      tls: null,
      root,
      provides: ['user_files'],
      capacity: 2,
      platform: process.platform,
      sessionEnv: { PATH: process.env.PATH },
      exec: { defaultTimeoutMs: 60_000, maxTimeoutMs: 60_000, outputLimitBytes: 1 << 20 },
      log: pino({ level: 'silent' }),
      onMove: (_from, to) => moves.push(to),
    });
    t.teardown(() => node.stop(0));
    const stream = await agent.waitForStream(1);
    t.match(await stream.waitFor(isHello), { nodeId: 'worker-test', nodeType: 'worker' });
    stream.send({ kind: 'hello', nodeId: 'agent-1', nodeType: 'agent', version: '0.0.0' });
    const s = markedSleep(60);
    const running = stream.dispatch('x1', {
      action: 'exec',
      args: { command: `sleep ${s}` },
      runId: 'run-1',
      agentId: 'a',
      taskId: 't',
    });
    await sleepStarted(s);
    t.equal(node.link.state, 'ready');
    t.equal(node.slots.running, 1);

    const stopped = node.stop(0);
    t.match(resultFromResponse((await running).response), {
      ok: true,
      payload: { status: 'cancelled' },
    });
    t.same(await stopped, { finished: 0, aborted: 1 });
    await stream.waitForEnd();
    t.equal(node.link.state, 'closed');
    t.same(moves, ['ready', 'closed']);
    const left = await leftovers(s);
    killAll(left);
    t.same(left, [], 'the aborted command is gone');
  },
);

t.test(
  'during a stop, new calls are refused unavailable and running ones may finish',
  async (t) => {
    const agent = await startFakeAgent(TOKEN);
    t.teardown(() => agent.close());
    const root = await mkdtemp(join(tmpdir(), 'memql-worker-root-'));
    t.teardown(() => rm(root, { recursive: true, force: true }));
    const node = startWorkerNode({
      nodeId: 'worker-test',
      version: '0.0.0',
      agent: { host: '127.0.0.1', port: agent.port },
      token: TOKEN,
      tls: null,
      root,
      provides: ['user_files'],
      capacity: 1,
      platform: process.platform,
      sessionEnv: { PATH: process.env.PATH },
      exec: { defaultTimeoutMs: 60_000, maxTimeoutMs: 60_000, outputLimitBytes: 1 << 20 },
      log: pino({ level: 'silent' }),
      healthIntervalMs: 50,
    });
    t.teardown(() => node.stop(0));
    const stream = await agent.waitForStream(1);
    stream.send({ kind: 'hello', nodeId: 'agent-1', nodeType: 'agent', version: '0.0.0' });
    const call = (id: string, action: string, args: object) =>
      stream.dispatch(id, { action, args, runId: 'run-1', agentId: 'a', taskId: 't' });
    const s = markedSleep(60);
    const running = call('x1', 'exec', { command: `sleep ${s}` });
    await sleepStarted(s);

    const stopped = node.stop(60_000);
    await stream.waitFor((f): f is Frame => f.kind === 'health' && !f.healthy);
    t.match(resultFromResponse((await call('l1', 'fs_list', { path: '.' })).response), {
      ok: false,
      errorCode: 'unavailable',
    });
    stream.send({ kind: 'cancel', id: 'x1' });
    t.match(resultFromResponse((await running).response), { payload: { status: 'cancelled' } });
    t.same(await stopped, { finished: 1, aborted: 0 });
    await stream.waitForEnd();
    const left = await leftovers(s);
    killAll(left);
    t.same(left, []);
  },
);
