import t from 'tap';
import {
  type DatabaseProbe,
  decideReadiness,
  type FleetProbe,
  type FleetReplica,
  probeDatabase,
} from '../../src/api/index.js';
import { type Queryable, StoreError, translateDbError } from '../../src/store/index.js';

/** The readiness decision as a table, and how probe failures are named. No I/O. */

const replica = (healthy: boolean): FleetReplica => ({
  nodeId: 'n',
  address: 'a',
  healthy,
  running: 0,
  queued: 0,
  capacity: 1,
  connectedSince: null,
  build: { canBuild: false, missing: ['node', 'npm', 'git'], problem: 'not_reported' },
});
const up: DatabaseProbe = { ok: true };
const down: DatabaseProbe = { ok: false, reason: 'database unreachable (ECONNREFUSED)' };
const local = (healthy: boolean): FleetProbe => ({
  ok: true,
  view: { mode: 'local', replicas: [replica(healthy)] },
});
const remote = (...healthy: boolean[]): FleetProbe => ({
  ok: true,
  view: { mode: 'remote', replicas: healthy.map(replica) },
});

t.test('ready only when the database answers and calls have somewhere to run', async (t) => {
  const cases: [string, DatabaseProbe, FleetProbe, boolean, boolean, boolean, boolean][] = [
    // name, database, fleet, localFallback, ready, database ok, workbench ok
    ['local, all well', up, local(true), false, true, true, true],
    ['local, database down', down, local(true), false, false, false, true],
    ['local, worker stopped', up, local(false), false, false, true, false],
    ['remote, one of two healthy', up, remote(false, true), false, true, true, true],
    ['remote, none healthy', up, remote(false, false), false, false, true, false],
    ['remote, no peer known', up, remote(), false, false, true, false],
    ['remote, none healthy, fallback', up, remote(false), true, true, true, true],
    ['remote, database down, fallback', down, remote(), true, false, false, true],
    ['fleet unreadable', up, { ok: false, reason: 'x' }, false, false, true, false],
  ];
  for (const [name, database, fleet, localFallback, ready, dbOk, wbOk] of cases) {
    const r = decideReadiness({ database, fleet, localFallback });
    t.same(
      { ready: r.ready, database: r.checks.database.ok, workbench: r.checks.workbench.ok },
      { ready, database: dbOk, workbench: wbOk },
      name,
    );
  }
});

t.test('failing checks say what to look at', async (t) => {
  const r = decideReadiness({ database: down, fleet: remote(false), localFallback: false });
  t.equal(
    r.checks.database.detail,
    'database unreachable (ECONNREFUSED); check that the database is up and reachable from this node',
  );
  t.equal(
    r.checks.workbench.detail,
    'no healthy workbench peer (0 of 1 known); calls are refused with no_workbench_peer until one connects; check the workbench replicas and MEMQL_WORKER_PEERS',
  );
  const fallback = decideReadiness({ database: up, fleet: remote(), localFallback: true });
  t.match(fallback.checks.workbench.detail, 'MEMQL_WORKBENCH_LOCAL_FALLBACK=1');
});

const failing = (err: unknown): Queryable => ({
  query: async () => {
    throw err;
  },
  execute: async () => 0,
  script: async () => {},
});

t.test('a failed select 1 is named by its code, never by the driver message', async (t) => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 10.1.2.3:5432 password=hunter2'), {
    code: 'ECONNREFUSED',
  });
  const probe = await probeDatabase(failing(translateDbError(refused)), 1_000);
  t.same(
    { ok: probe.ok, reason: probe.ok ? null : probe.reason },
    { ok: false, reason: 'database unreachable (ECONNREFUSED)' },
  );
  const shutdown = Object.assign(new Error('terminating connection'), { code: '57P01' });
  const s = await probeDatabase(failing(translateDbError(shutdown)), 1_000);
  t.equal(s.ok ? null : s.reason, 'database unreachable (57P01)');
  const missing = await probeDatabase(
    failing(new StoreError('internal', 'no such db', '3D000')),
    1_000,
  );
  t.equal(missing.ok ? null : missing.reason, 'database failing (3D000)');
  const odd = await probeDatabase(failing(new Error('boom')), 1_000);
  t.equal(odd.ok ? null : odd.reason, 'database failing (internal)');
});

t.test('a select 1 that never answers is reported after the timeout', async (t) => {
  const silent: Queryable = {
    query: () => new Promise(() => {}),
    execute: async () => 0,
    script: async () => {},
  };
  const probe = await probeDatabase(silent, 20);
  t.same(probe, { ok: false, reason: 'database did not answer select 1 within 20 ms' });
});
