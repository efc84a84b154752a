import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { WorkbenchClient } from '../../src/client/index.js';
import type { DispatchResult } from '../../src/contract/index.js';
import { createApiToken, openDb } from '../../src/store/index.js';
import { eventually } from '../support/mesh.js';
import { type NodeProcess, nodeMain, spawnNode } from '../support/node-process.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * The whole reroute with real processes: an agent node (in-process workbench), a
 * worker host process on this machine under Xvfb declaring `display` and `user_files`
 * (detected, not configured), and the HTTP API a tool loop and its user call. A call
 * needing a display is refused by the workbench, the gate asks for consent, the user
 * approves through the API, and the same call runs on the worker's display.
 */

const workerMain = nodeMain('worker');

const database = await createTestDatabase();
t.teardown(() => database.drop());
const db = await openDb({ kind: 'postgres', url: database.url, maxConnections: 2 });
t.teardown(() => db.close());
const base = await mkdtemp(join(tmpdir(), 'memql-worker-host-'));
t.teardown(() => rm(base, { recursive: true, force: true }));

/** Starts Xvfb on a free display number; resolves once its socket is there. */
async function startXvfb(): Promise<string> {
  let n = 300 + Math.floor(Math.random() * 600);
  while (existsSync(`/tmp/.X11-unix/X${n}`) || existsSync(`/tmp/.X${n}-lock`)) n += 1;
  const xvfb = spawn('Xvfb', [`:${n}`, '-screen', '0', '640x480x24', '-nolisten', 'tcp'], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((r) => xvfb.on('exit', () => r()));
  t.teardown(async () => {
    xvfb.kill('SIGTERM');
    await exited;
  });
  await eventually('Xvfb listens', () => existsSync(`/tmp/.X11-unix/X${n}`), 30_000);
  return `:${n}`;
}

const display = await startXvfb();
const alice = (await createApiToken(db, 'alice')).token;
const bob = (await createApiToken(db, 'bob')).token;
// What alice herself signs in with: the only token that decides her consent.
const alicePerson = (await createApiToken(db, 'alice', { kind: 'person' })).token;
const bobPerson = (await createApiToken(db, 'bob', { kind: 'person' })).token;

const agent = spawnNode(t, 'agent', nodeMain('agent'), {
  MEMQL_NODE_ID: 'agent-workers',
  MEMQL_DATABASE_URL: database.url,
  MEMQL_GRPC_LISTEN: '127.0.0.1:0',
  MEMQL_HTTP_LISTEN: '127.0.0.1:0',
  MEMQL_WORKBENCH_ROOT: join(base, 'workbenches'),
  MEMQL_DATA_DIR: join(base, 'agent-data'),
});
t.teardown(() => agent.stop());
const ready = await agent.waitForLog((l) => l.msg === 'agent node ready', 60_000);
const agentAddress = `127.0.0.1:${ready.grpcPort}`;
const api = (token: string) => new WorkbenchClient({ baseUrl: String(ready.apiUrl), token });

/** A worker process; `viaCli`: started as `memql worker`. */
function startWorker(token: string, viaCli = false): NodeProcess {
  const worker = spawnNode(
    t,
    'worker',
    viaCli ? nodeMain('cli') : workerMain,
    {
      MEMQL_NODE_ID: 'desk',
      MEMQL_WORKER_AGENT: agentAddress,
      MEMQL_WORKER_TOKEN: token,
      MEMQL_WORKER_ROOT: userRoot,
      MEMQL_DATA_DIR: join(base, 'worker-data'),
      MEMQL_LOG_FORMAT: 'json',
      DISPLAY: display,
      HOME: base,
    },
    viaCli ? ['worker'] : [],
  );
  return worker;
}

const userRoot = join(base, 'home-files');
await import('node:fs/promises').then((fs) => fs.mkdir(userRoot, { recursive: true }));
await writeFile(join(userRoot, 'notes.txt'), 'my own notes\n');

t.test(
  'a wrong token: the agent refuses the worker (memql worker), which exits saying so',
  async (t) => {
    const worker = startWorker('mqt_not-a-real-token', true);
    const exit = await worker.exited;
    t.equal(exit.code, 2);
    t.match(worker.stderr + JSON.stringify(worker.lines), /token/i);
  },
);

t.test(
  "a person token: the agent refuses it as a worker's token, and the worker exits saying so",
  async (t) => {
    const worker = startWorker(alicePerson, true);
    const exit = await worker.exited;
    t.equal(exit.code, 2);
    t.match(worker.stderr + JSON.stringify(worker.lines), /person token/);
  },
);

t.test('the reroute, end to end', async (t) => {
  const worker = startWorker(alice);
  t.teardown(() => worker.stop());
  const run = await api(alice).createRun();
  const call = (action: string, args: Record<string, unknown>, environment: unknown) => ({
    action,
    args,
    runId: run.id,
    agentId: 'agent',
    taskId: 'task',
    environment,
  });
  const needsDisplay = call(
    'exec',
    { command: 'xdpyinfo | grep "name of display"; echo "DISPLAY=$DISPLAY"' },
    { needs: ['display'] },
  );

  // A process start on a loaded machine: the bound is generous, the wait is on the event.
  await eventually(
    'the worker is listed',
    async () => {
      const w = (await api(alice).workers.list()).workers[0];
      return w?.workerId === 'desk' && w.connected;
    },
    120_000,
  );
  const listed = (await api(alice).workers.list()).workers;
  t.match(
    listed[0],
    { workerId: 'desk', os: 'linux', provides: ['display', 'user_files'] },
    'what it offers was detected, not configured',
  );
  t.same((await api(bob).workers.list()).workers, [], "bob does not see alice's worker");
  t.match(
    (await api(alice).fleet()) as unknown,
    { workers: [{ workerId: 'desk', connected: true }] },
    "the fleet shows the caller's workers next to the replicas",
  );

  await t.test('the typo macos-tooling is invalid_environment_hint, never a reroute', async (t) => {
    const result = await api(alice).dispatch(
      call('exec', { command: 'true' }, { needs: ['macos-tooling'] }),
    );
    t.equal(result.ok === false && result.errorCode, 'invalid_environment_hint');
    t.same(await api(alice).workers.listConsentRequests(), []);
  });

  let cardId = '';
  await t.test('no consent: consent_required with a card', async (t) => {
    const result = await api(alice).dispatch(needsDisplay);
    t.equal(result.ok === false && result.errorCode, 'consent_required');
    const card = (result as { payload: { consentRequest: Record<string, unknown> } }).payload
      .consentRequest;
    t.match(card, {
      workerId: 'desk',
      needs: ['display'],
      requiredScope: 'full',
      status: 'pending',
    });
    t.notMatch(String(card.summary), /xdpyinfo/);
    cardId = String(card.id);
    t.same(
      (await api(alice).workers.listConsentRequests()).map((r) => r.id),
      [cardId],
    );
    await t.rejects(api(bobPerson).workers.approveConsentRequest(cardId), { code: 'not_found' });
    await t.rejects(api(alice).workers.approveConsentRequest(cardId), { code: 'person_required' });
  });

  await t.test('approved at observe: exec still does not run', async (t) => {
    const approved = await api(alicePerson).workers.approveConsentRequest(cardId, {
      scope: 'observe',
    });
    t.match(approved, { covers: false });
    const result = await api(alice).dispatch(needsDisplay);
    t.equal(result.ok === false && result.errorCode, 'consent_required');
    cardId = String(
      (result as { payload: { consentRequest: { id: string } } }).payload.consentRequest.id,
    );
    const read = await api(alice).dispatch(
      call('fs_read', { path: 'notes.txt' }, { needs: ['user_files'] }),
    );
    t.match(read, {
      ok: true,
      payload: { content: 'my own notes\n' },
      routing: { reroutedFrom: 'workbench', workerId: 'desk', scope: 'observe' },
    });
  });

  let invocationId = '';
  await t.test('approved at full: the same call runs on the worker display', async (t) => {
    const approved = await api(alicePerson).workers.approveConsentRequest(cardId);
    t.match(approved, { covers: true });
    const result = await api(alice).dispatch(needsDisplay);
    t.equal(result.ok, true, JSON.stringify(result));
    const payload = (result as { payload: { exitCode: number; stdout: string } }).payload;
    t.equal(payload.exitCode, 0);
    t.match(payload.stdout, `name of display:    ${display}`);
    t.match(payload.stdout, `DISPLAY=${display}`);
    const routing = (result as { routing: { reroutedFrom: string; invocationId: string } }).routing;
    t.match(routing, {
      target: 'worker',
      reroutedFrom: 'workbench',
      workerId: 'desk',
      scope: 'full',
    });
    invocationId = routing.invocationId;
    const record = await api(alice).workers.getInvocation(invocationId);
    t.match(record, {
      workerId: 'desk',
      reroutedFrom: 'workbench',
      needs: ['display'],
      scope: 'full',
      status: 'succeeded',
    });
    await t.rejects(api(bob).workers.getInvocation(invocationId), { code: 'not_found' });
    t.match(await api(alice).workers.listInvocations({ runId: run.id }), [{ id: invocationId }]);
  });

  await t.test('the streaming transport takes the same path, output live', async (t) => {
    const chunks: string[] = [];
    const result: DispatchResult = await api(alice).dispatchStream(
      call('exec', { command: 'echo streamed-from-the-worker' }, { needs: ['display'] }),
      { onOutput: (_s, c) => chunks.push(Buffer.from(c).toString()) },
    );
    t.equal(result.ok, true);
    t.match(result, { routing: { reroutedFrom: 'workbench', workerId: 'desk' } });
    t.match(chunks.join(''), 'streamed-from-the-worker');
  });

  await t.test("files land in the user's chosen root", async (t) => {
    const write = await api(alice).dispatch(
      call(
        'fs_write',
        { path: 'from-agent.txt', content: 'hello laptop' },
        { needs: ['user_files'] },
      ),
    );
    t.equal(write.ok, true);
    t.equal(await readFile(join(userRoot, 'from-agent.txt'), 'utf8'), 'hello laptop');
  });

  await t.test('kill switch: kill_switch_engaged and no card', async (t) => {
    const cards = (await api(alice).workers.listConsentRequests()).length;
    await api(alice).workers.setKillSwitch(true);
    const result = await api(alice).dispatch(needsDisplay);
    t.equal(result.ok === false && result.errorCode, 'kill_switch_engaged');
    t.equal((await api(alice).workers.listConsentRequests()).length, cards, 'no card raised');
    await api(alicePerson).workers.setKillSwitch(false);
    t.equal((await api(alice).dispatch(needsDisplay)).ok, true, 'off again: it runs');
  });

  await t.test("another user's worker is never chosen", async (t) => {
    const bobRun = await api(bob).createRun();
    const result = await api(bob).dispatch({ ...needsDisplay, runId: bobRun.id });
    t.equal(result.ok === false && result.errorCode, 'worker_unavailable');
  });

  await t.test('a disconnected worker: the typed refusal, promptly', async (t) => {
    await worker.stop('SIGKILL');
    await eventually(
      'the agent saw it go',
      async () => (await api(alice).workers.list()).workers[0]?.connected === false,
      60_000,
    );
    const result = await api(alice).dispatch(needsDisplay);
    t.equal(result.ok === false && result.errorCode, 'worker_unavailable');
    t.match((result as { payload: unknown }).payload, {
      workers: [{ workerId: 'desk', connected: false }],
    });
    t.match(result.ok === false && result.message, /memql worker/);
  });
});
