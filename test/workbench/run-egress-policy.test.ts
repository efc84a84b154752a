import pino from 'pino';
import t from 'tap';
import {
  type EgressBounds,
  formatHostRule,
  type HostRule,
  parseHostRule,
} from '../../src/contract/index.js';
import { createRun, finishRun, openDb, setRunNetwork } from '../../src/store/index.js';
import { RunEgressPolicies, readRunEgressPolicy } from '../../src/workbench/egress/index.js';
import { eventually } from '../support/mesh.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * The workbench's read of a run's network policy against real Postgres: a change made
 * by another node's API reaches a node listening at its next connection (the notice),
 * and one not listening within the cache's age bound; what the row holds is narrowed by
 * the node's own ceiling; a run that ended reaches nothing; and when the database is
 * away, a cached policy lasts no longer than the staleness bound.
 */

const database = await createTestDatabase();
t.teardown(() => database.drop());
const db = await openDb({ kind: 'postgres', url: database.url });
t.teardown(() => db.close());
const log = pino({ level: 'silent' });

const rule = (text: string): HostRule => {
  const parsed = parseHostRule(text);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.rule;
};
const bounds: EgressBounds = {
  ceiling: ['pypi.org', '*.pythonhosted.org', 'registry.npmjs.org'].map(rule),
  secretNames: ['npm-token'],
};
const hosts = (p: { allow: readonly HostRule[] }) => p.allow.map(formatHostRule);

let runs = 0;
async function newRun(allow: string[], secrets: string[] = []): Promise<string> {
  runs += 1;
  const run = await createRun(db, {
    id: `run-egress-${runs}`,
    ownerUserId: 'alice',
    network: { allow, secrets },
  });
  return run.id;
}

/** A change as another node's API makes it: in a transaction, which sends the notice at commit. */
async function changeElsewhere(runId: string, allow: string[], secrets: string[] = []) {
  await db.transaction((tx) => setRunNetwork(tx, runId, 'alice', { allow, secrets }));
}

t.test("the row, narrowed by this node's bounds; nothing for ended or absent runs", async (t) => {
  const runId = await newRun(
    ['pypi.org', 'evil.example', 'registry.npmjs.org'],
    ['npm-token', 'x'],
  );
  t.same(await readRunEgressPolicy(db, runId, bounds), {
    allow: [rule('pypi.org'), rule('registry.npmjs.org')],
    secrets: ['npm-token'],
  });
  const lowered = { ceiling: [rule('pypi.org')], secretNames: [] };
  t.same(
    hosts(await readRunEgressPolicy(db, runId, lowered)),
    ['pypi.org'],
    'a lowered ceiling holds',
  );
  t.same(await readRunEgressPolicy(db, 'run-never-made', bounds), { allow: [], secrets: [] });
  await finishRun(db, runId, 'cancelled');
  t.same(await readRunEgressPolicy(db, runId, bounds), { allow: [], secrets: [] });
});

t.test('a run never read has no network until its first read lands', async (t) => {
  const runId = await newRun(['pypi.org']);
  const policies = new RunEgressPolicies({ db, bounds, log });
  t.teardown(() => policies.close());
  t.same(policies.current(runId), { allow: [], secrets: [] }, 'not read yet: nothing');
  await eventually('the first read', () => hosts(policies.current(runId)).length === 1);
  t.same(hosts(policies.current(runId)), ['pypi.org']);
});

t.test('a change made on another node reaches a listening node at its next call', async (t) => {
  const runId = await newRun(['pypi.org']);
  const policies = new RunEgressPolicies({
    db,
    bounds,
    // Long enough that only the notice can explain what the test sees.
    maxAgeMs: 3_600_000,
    maxStaleMs: 3_600_000,
    log,
  });
  t.teardown(() => policies.close());
  await policies.listen();
  t.same(hosts(await policies.read(runId)), ['pypi.org'], 'when the command starts');

  await changeElsewhere(runId, ['registry.npmjs.org'], ['npm-token']);
  await eventually('the notice', () => hosts(policies.current(runId))[0] === 'registry.npmjs.org');
  t.same(policies.current(runId).secrets, ['npm-token']);

  await changeElsewhere(runId, []);
  await eventually('the second notice', () => policies.current(runId).allow.length === 0);
});

t.test(
  'without the notice, a change is seen once the cached policy is older than its bound',
  async (t) => {
    const runId = await newRun(['pypi.org']);
    let clock = 0;
    const policies = new RunEgressPolicies({
      db,
      bounds,
      maxAgeMs: 1_000,
      maxStaleMs: 60_000,
      now: () => clock,
      log,
    });
    t.teardown(() => policies.close());
    await policies.read(runId);
    await changeElsewhere(runId, ['files.pythonhosted.org']);
    t.same(hosts(policies.current(runId)), ['pypi.org'], 'within its age: the cached policy');
    clock += 1_000;
    await eventually('the read the age bound starts', () =>
      hosts(policies.current(runId)).includes('files.pythonhosted.org'),
    );
  },
);

t.test('a change this node tells it is in force from the next call', async (t) => {
  const runId = await newRun(['pypi.org']);
  const policies = new RunEgressPolicies({ db, bounds, maxAgeMs: 3_600_000, log });
  t.teardown(() => policies.close());
  await policies.read(runId);
  const next = policies.policyOf(runId);
  policies.changed(runId, { allow: [rule('registry.npmjs.org')], secrets: [] });
  t.same(hosts(next()), ['registry.npmjs.org']);
  policies.forget(runId);
  t.same(next(), { allow: [], secrets: [] }, 'forgotten: nothing until read again');
});

t.test(
  'while the database is away, a cached policy lasts no longer than the staleness bound',
  async (t) => {
    const runId = await newRun(['pypi.org']);
    const own = await openDb({ kind: 'postgres', url: database.url });
    let clock = 0;
    const policies = new RunEgressPolicies({
      db: own,
      bounds,
      maxAgeMs: 1_000,
      maxStaleMs: 10_000,
      now: () => clock,
      log,
    });
    t.teardown(() => policies.close());
    await policies.read(runId);
    await own.close();
    await t.rejects(policies.read(runId), 'a read fails');
    clock += 5_000;
    t.same(
      hosts(policies.current(runId)),
      ['pypi.org'],
      'older than its age, within staleness: kept',
    );
    clock += 5_000;
    t.same(policies.current(runId), { allow: [], secrets: [] }, 'past the bound: no network');
  },
);
