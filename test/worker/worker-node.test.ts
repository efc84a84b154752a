import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { Frame, HealthFrame, HelloFrame } from '../../src/mesh/frames.js';
import { resultFromResponse } from '../../src/mesh/index.js';
import type { WorkerExecPayload } from '../../src/worker/index.js';
import { killAll, leftovers, markedSleep, sleepStarted } from '../sandbox/sandbox-support.js';
import { startFakeAgent } from '../support/fake-agent.js';
import { nodeMain, spawnNode } from '../support/node-process.js';

/**
 * The worker binary against an agent played by the test (a real gRPC server on port
 * 0): it dials out with its user's token, says hello with its offer, serves the calls
 * that come down its own stream, redials when the stream ends, and stops for good,
 * exit code 2, when the agent refuses its token.
 */

const TOKEN = `mqt_${randomBytes(16).toString('hex')}`;

async function tempDir(t: { teardown(fn: () => unknown): void }, prefix: string) {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const isHello = (f: Frame): f is HelloFrame => f.kind === 'hello';
const isHealth = (f: Frame): f is HealthFrame => f.kind === 'health';

const envelope = (action: string, args: object) => ({
  action,
  args,
  runId: 'run-1',
  agentId: 'agent-1',
  taskId: 'task-1',
});

/** Starts the worker binary against `agent`; `extra` adds or overrides variables. */
async function startWorker(t: Test, agentTarget: string, extra: Record<string, string> = {}) {
  const root = await tempDir(t, 'memql-worker-root-');
  const dataDir = await tempDir(t, 'memql-worker-data-');
  const worker = spawnNode(t, 'worker', nodeMain('worker'), {
    MEMQL_WORKER_AGENT: agentTarget,
    MEMQL_WORKER_TOKEN: TOKEN,
    MEMQL_WORKER_ROOT: root,
    MEMQL_DATA_DIR: dataDir,
    MEMQL_LOG_FORMAT: 'json',
    MEMQL_LOG_LEVEL: 'debug',
    ...extra,
  });
  return { worker, root, dataDir };
}

t.test("hello with the offer, health, and calls served down the worker's own stream", async (t) => {
  const agent = await startFakeAgent(TOKEN);
  t.teardown(() => agent.close());
  const { worker, root, dataDir } = await startWorker(t, agent.target, {
    MEMQL_WORKER_PROVIDES: 'user_files',
    MEMQL_WORKER_CAPACITY: '3',
    // The worker's session has a display it does not offer, and secrets of its own.
    DISPLAY: ':7',
    MEMQL_SOMETHING_ELSE: 'memql-secret-value',
  });
  const stream = await agent.waitForStream(1);
  t.equal(stream.authorization, `Bearer ${TOKEN}`, 'the token as a bearer');
  const hello = await stream.waitFor(isHello);
  t.match(hello, {
    nodeType: 'worker',
    nodeId: /^worker-[0-9a-f]{12}$/,
    worker: { os: 'linux', provides: ['user_files'], capacity: 3 },
  });
  t.equal((await readFile(join(dataDir, 'worker-id'), 'utf8')).trim(), hello.nodeId, 'kept');
  t.match(await stream.waitFor(isHealth), { healthy: true, capacity: 3, running: 0 });
  await stream.waitFor(
    (f): f is HealthFrame => isHealth(f) && stream.frames.filter(isHealth).length >= 2,
  );
  t.pass('Health frames keep coming, period after period');

  stream.send({ kind: 'hello', nodeId: 'agent-1', nodeType: 'agent', version: '0.0.0' });
  await worker.waitForLog((l) => l.msg === 'worker-link ready');

  const written = await stream.dispatch(
    'w1',
    envelope('fs_write', { path: 'docs/note.txt', content: 'from the agent' }),
  );
  t.match(resultFromResponse(written.response), { ok: true, payload: { path: 'docs/note.txt' } });
  t.equal(await readFile(join(root, 'docs/note.txt'), 'utf8'), 'from the agent');
  const read = await stream.dispatch('r1', envelope('fs_read', { path: 'docs/note.txt' }));
  t.match(resultFromResponse(read.response), { ok: true, payload: { content: 'from the agent' } });

  const exec = await stream.dispatch(
    'x1',
    envelope('exec', { command: 'echo out; echo err >&2; env', cwd: 'docs' }),
  );
  const result = resultFromResponse(exec.response);
  t.match(result, { ok: true, payload: { status: 'completed', exitCode: 0, stderr: 'err\n' } });
  const payload = (result.ok ? result.payload : {}) as WorkerExecPayload;
  t.match(payload.stdout, /^out\n/);
  t.ok(
    exec.outputs.some((o) => o.stream === 'stdout' && o.chunk.toString().includes('out')),
    'stdout streamed as Output frames before the Response',
  );
  t.ok(
    exec.outputs.some((o) => o.stream === 'stderr'),
    'stderr too',
  );
  t.notMatch(payload.stdout, /^MEMQL_/m, 'no MEMQL_* variable reaches a command');
  t.notOk(payload.stdout.includes(TOKEN), 'nor the token');
  t.notOk(payload.stdout.includes('memql-secret-value'));
  t.notMatch(payload.stdout, /^DISPLAY=/m, 'no display the worker does not offer');
  t.match(payload.stdout, /^PWD=.*\/docs$/m, 'in the root, at its cwd');

  const refused = await stream.dispatch(
    'f1',
    envelope('fetch', { url: 'https://x.test/', path: 'a' }),
  );
  t.match(resultFromResponse(refused.response), { ok: false, errorCode: 'invalid_arguments' });

  // A Cancel frame kills a running command's process tree.
  const s = markedSleep(60);
  const cancelled = stream.dispatch('c1', envelope('exec', { command: `sleep ${s} & wait` }));
  await sleepStarted(s);
  stream.send({ kind: 'cancel', id: 'c1' });
  t.match(resultFromResponse((await cancelled).response), {
    ok: true,
    payload: { status: 'cancelled', cancelled: true },
  });
  const left = await leftovers(s);
  killAll(left);
  t.same(left, [], 'nothing of the cancelled command is left');

  // SIGTERM: the worker ends its side of the stream and exits 0.
  const exit = await worker.stop('SIGTERM');
  t.same(exit, { code: 0, signal: null });
  await stream.waitForEnd();
});

t.test('a refused token stops the worker with exit code 2 and says what to do', async (t) => {
  const agent = await startFakeAgent('the-right-token');
  t.teardown(() => agent.close());
  const { worker } = await startWorker(t, agent.target);
  const exit = await worker.exited;
  t.same(exit, { code: 2, signal: null });
  t.match(worker.stderr, /refused/);
  t.match(worker.stderr, /MEMQL_WORKER_TOKEN/);
  t.match(worker.stderr, /memql tokens create/);
  t.notOk(worker.stderr.includes(TOKEN), 'the token itself is never printed');
  t.equal(agent.refusals, 1, 'asked once, not again and again');
  t.equal(agent.streams.length, 0);
  t.ok(
    worker.lines.some((l) => l.msg === 'worker-link refused'),
    'the move to refused is logged',
  );
});

t.test('the agent ending the stream makes the worker redial', async (t) => {
  const agent = await startFakeAgent(TOKEN);
  t.teardown(() => agent.close());
  const { worker } = await startWorker(t, agent.target);
  const first = await agent.waitForStream(1);
  const hello = await first.waitFor(isHello);
  first.send({ kind: 'hello', nodeId: 'agent-1', nodeType: 'agent', version: '0.0.0' });
  await worker.waitForLog((l) => l.msg === 'worker-link ready');
  first.end();

  const second = await agent.waitForStream(2);
  t.equal((await second.waitFor(isHello)).nodeId, hello.nodeId, 'the same worker');
  await worker.waitForLog((l) => l.msg === 'worker-link backoff');
  second.send({ kind: 'hello', nodeId: 'agent-1', nodeType: 'agent', version: '0.0.0' });
  const read = await second.dispatch('l1', envelope('fs_list', { path: '.' }));
  t.match(resultFromResponse(read.response), { ok: true, payload: { entries: [] } });
  t.same(await worker.stop('SIGTERM'), { code: 0, signal: null });
});

t.test('a root that is not a directory stops the worker with exit code 2', async (t) => {
  const agent = await startFakeAgent(TOKEN);
  t.teardown(() => agent.close());
  const missing = join(await tempDir(t, 'memql-worker-none-'), 'nowhere');
  const { worker } = await startWorker(t, agent.target, { MEMQL_WORKER_ROOT: missing });
  t.same(await worker.exited, { code: 2, signal: null });
  t.match(worker.stderr, /MEMQL_WORKER_ROOT=.*does not exist/);
  t.equal(agent.streams.length + agent.refusals, 0, 'nothing dialled');
});
