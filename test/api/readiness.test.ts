import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import {
  type FleetSource,
  localFleet,
  type Readiness,
  remoteFleet,
  startApiServer,
} from '../../src/api/index.js';
import type { FleetPeerView } from '../../src/mesh/peer-registry.js';
import { FsObjectStore } from '../../src/objects/index.js';
import { countLiveCommands, createApiToken, openDb } from '../../src/store/index.js';
import { createTestDatabase } from '../support/postgres.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

/**
 * `/readyz` against a real Postgres reached through a TCP proxy the test can cut, so
 * the database goes away for this node only. Liveness (`/healthz`) stays 200 all along.
 */

const database = await createTestDatabase();
t.teardown(() => database.drop());
const direct = new URL(database.url);
const proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
t.teardown(() => proxy.close());
const proxied = new URL(database.url);
proxied.hostname = '127.0.0.1';
proxied.port = String(proxy.port);

const db = await openDb({ kind: 'postgres', url: proxied.toString() });
t.teardown(() => db.close());
const base = await mkdtemp(join(tmpdir(), 'memql-readyz-'));
t.teardown(() => rm(base, { recursive: true, force: true }));

let workerRunning = true;
const local = localFleet({
  nodeId: 'node-readyz',
  capacity: 2,
  since: new Date(),
  healthy: () => workerRunning,
  running: () => 0,
  queued: async () => (await countLiveCommands(db)).queued,
  toolchain: () => null,
});
let fleet: FleetSource = local;
const api = await startApiServer(
  {
    db,
    objects: new FsObjectStore({ baseDir: join(base, 'objects') }),
    dispatcher: {
      dispatch: async () => {
        throw new Error('no call is dispatched in this test');
      },
    },
    fleet: () => fleet(),
    log: pino({ level: 'silent' }),
  },
  { host: '127.0.0.1', port: 0 },
);
t.teardown(() => api.close());
const token = (await createApiToken(db, 'ruth')).token;

async function readyz(): Promise<{ status: number; body: Readiness; text: string }> {
  const res = await fetch(`${api.url}/readyz`);
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Readiness, text };
}

/** Polls `/readyz` until `done` holds (the condition, not a duration, ends the wait). */
async function readyzUntil(
  done: (answer: Awaited<ReturnType<typeof readyz>>) => boolean,
  what: string,
) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answer = await readyz();
    if (done(answer)) return answer;
    if (Date.now() > deadline) throw new Error(`/readyz never ${what}: ${answer.text}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function healthz(): Promise<number> {
  return (await fetch(`${api.url}/healthz`)).status;
}

t.test('ready: the database answers and the in-process workbench runs', async (t) => {
  const answer = await readyz();
  t.equal(answer.status, 200);
  t.same(answer.body, {
    ready: true,
    checks: {
      database: { ok: true, detail: 'select 1 answered' },
      workbench: { ok: true, detail: 'the in-process workbench is running' },
    },
  });
  const noToken = await fetch(`${api.url}/readyz`, { headers: { authorization: 'Bearer x' } });
  t.equal(noToken.status, 200, 'no token is needed, and a bad one is ignored');
  await noToken.body?.cancel();
});

t.test('a database outage makes the node unready, not dead, until it is back', async (t) => {
  proxy.cut();
  const down = await readyzUntil((a) => a.status === 503, 'went 503 after the cut');
  t.equal(down.body.ready, false);
  t.equal(down.body.checks.database.ok, false);
  // Refused at once, or still waiting out the driver's reconnect backoff: either way
  // the check names the database and says what to look at.
  t.match(
    down.body.checks.database.detail,
    /^database (unreachable \([A-Z_0-9]+\)|did not answer select 1 within \d+ ms); check/,
  );
  for (const leak of [String(proxy.port), 'postgres://', database.name, '127.0.0.1']) {
    t.notOk(down.text.includes(leak), `the answer does not name ${leak}`);
  }
  t.equal(await healthz(), 200, 'liveness stays 200 while the database is away');
  const v1 = await fetch(`${api.url}/v1/workspaces`, {
    headers: { authorization: `Bearer ${token}` },
  });
  t.equal(v1.status, 503, 'the /v1 calls readiness stands for do fail meanwhile');
  t.equal(((await v1.json()) as { errorCode: string }).errorCode, 'unavailable');

  proxy.restore();
  const up = await readyzUntil((a) => a.status === 200, 'came back after the restore');
  t.equal(up.body.ready, true);
  t.equal(up.body.checks.database.ok, true);
  const again = await fetch(`${api.url}/v1/workspaces`, {
    headers: { authorization: `Bearer ${token}` },
  });
  t.equal(again.status, 200, '/v1 serves again');
  await again.body?.cancel();
});

t.test('a database that never answers is unready after the probe timeout', async (t) => {
  proxy.hang();
  const silent = await readyzUntil(
    (a) => a.status === 503 && a.body.checks.database.detail.includes('did not answer'),
    'reported the silent database',
  );
  t.match(silent.body.checks.database.detail, /database did not answer select 1 within \d+ ms/);
  t.equal(await healthz(), 200);
  proxy.restore();
  await readyzUntil((a) => a.status === 200, 'came back after the restore');
  t.pass('ready again');
});

t.test('a stopped in-process workbench is not ready', async (t) => {
  workerRunning = false;
  t.teardown(() => {
    workerRunning = true;
  });
  const answer = await readyz();
  t.equal(answer.status, 503);
  t.same(answer.body.checks.workbench, {
    ok: false,
    detail: 'the in-process workbench is not running (starting or stopping)',
  });
  t.equal(answer.body.checks.database.ok, true);
});

t.test('in remote mode, readiness needs one healthy workbench peer', async (t) => {
  let views: FleetPeerView[] = [];
  fleet = remoteFleet({ fleetViews: () => views });
  t.teardown(() => {
    fleet = local;
  });
  const peer = (key: string, healthy: boolean): FleetPeerView => ({
    key,
    nodeId: key,
    connected: healthy,
    healthy,
    running: 0,
    queued: 0,
    capacity: 4,
    connectedSince: healthy ? Date.now() : null,
  });

  const none = await readyz();
  t.equal(none.status, 503, 'no peer known');
  t.equal(none.body.checks.workbench.ok, false);
  t.match(none.body.checks.workbench.detail, /0 of 0 known.*no_workbench_peer.*MEMQL_WORKER_PEERS/);

  views = [peer('10.0.0.7:50060', false)];
  const sick = await readyz();
  t.equal(sick.status, 503, 'a known but unhealthy peer is not enough');
  t.notOk(sick.text.includes('10.0.0.7'), 'peer addresses are not shown without a token');

  views = [peer('10.0.0.7:50060', false), peer('10.0.0.8:50060', true)];
  const one = await readyz();
  t.equal(one.status, 200);
  t.same(one.body.checks.workbench, { ok: true, detail: '1 of 2 workbench peers healthy' });
});
