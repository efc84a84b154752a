import pino from 'pino';
import t from 'tap';
import { loadConfig } from '../../src/config/index.js';
import { formatHostRule } from '../../src/contract/index.js';
import { finishRun, listAuditEvents } from '../../src/store/index.js';
import { RunEgressPolicies } from '../../src/workbench/egress/index.js';
import { type Json, startApiHarness } from './api-support.js';

/**
 * A run's network over real HTTP on Postgres: set at creation, replaced with
 * `PUT /v1/runs/:runId/network`, shown with the run; refused with a typed code outside
 * the operator's ceiling, for an unknown secret and for a malformed rule; each change
 * an audit event with the rules and secret names and never a secret's value; another
 * user's run absent; the same node's workbench sees a change at its next call.
 */

const GITHUB_VALUE = 'ghp_apicanary5d4c3b2a';
const config = loadConfig({
  MEMQL_EGRESS_CEILING: 'pypi.org,*.pythonhosted.org,registry.npmjs.org,github.com:443',
  MEMQL_EGRESS_SECRETS: JSON.stringify({
    github: { hosts: ['github.com'], header: 'Authorization', env: 'GH_TOKEN' },
  }),
  GH_TOKEN: GITHUB_VALUE,
});
t.equal(config.egress.secrets[0]?.value, GITHUB_VALUE, 'the node holds the value');

let policies: RunEgressPolicies | null = null;
const h = await startApiHarness(t, {
  api: {
    // As the agent node passes it: the whole egress config, values included; the API
    // reads the ceiling and the names.
    egress: config.egress,
    onRunNetworkChanged: (runId, policy) => policies?.changed(runId, policy),
  },
});
policies = new RunEgressPolicies({
  db: h.db,
  bounds: config.egress,
  // So long that only the API's own call can explain a change seen at once.
  maxAgeMs: 3_600_000,
  maxStaleMs: 3_600_000,
  log: pino({ level: 'silent' }),
});
t.teardown(() => policies?.close());

async function runCount(token: string): Promise<number> {
  return (await h.json<Json>(token, 'GET', '/v1/runs?limit=500')).body.runs.length;
}

async function networkEvents(runId: string) {
  return (await listAuditEvents(h.db, { runId })).filter((e) => e.eventType === 'run_network.set');
}

t.test('a run made with a network shows it; one made without has none', async (t) => {
  const plain = await h.json<Json>(h.alice, 'POST', '/v1/runs', {});
  t.equal(plain.status, 201);
  t.same(plain.body.run.network, { allow: [], secrets: [] });
  t.same(await networkEvents(plain.body.run.id), [], 'no network given, no event');

  const made = await h.json<Json>(h.alice, 'POST', '/v1/runs', {
    network: { allow: ['PyPI.org', 'files.pythonhosted.org', 'pypi.org'], secrets: ['github'] },
  });
  t.equal(made.status, 201, JSON.stringify(made.body));
  const run = made.body.run;
  t.same(run.network, { allow: ['pypi.org', 'files.pythonhosted.org'], secrets: ['github'] });
  const read = await h.json<Json>(h.alice, 'GET', `/v1/runs/${run.id}`);
  t.same(read.body.run, run);
  const listed = await h.json<Json>(h.alice, 'GET', '/v1/runs');
  t.same(listed.body.runs.find((r: Json) => r.id === run.id)?.network, run.network);

  const events = await networkEvents(run.id);
  t.equal(events.length, 1);
  t.same(events[0]!.metadata, {
    change: 'created',
    allow: 'pypi.org,files.pythonhosted.org',
    rules: 2,
    secrets: 'github',
    tokenKind: 'agent',
    tokenId: events[0]!.metadata.tokenId,
  });
  t.equal(events[0]!.ownerUserId, 'alice');
  t.notMatch(JSON.stringify(events), GITHUB_VALUE);
  t.notMatch(JSON.stringify(made.body), GITHUB_VALUE);

  const policy = await policies!.read(run.id);
  t.same(policy.allow.map(formatHostRule), ['pypi.org', 'files.pythonhosted.org']);
  t.same(policy.secrets, ['github']);
});

t.test('outside the ceiling, an unknown secret or a malformed rule: refused, no run', async (t) => {
  const before = await runCount(h.alice);
  const outside = await h.json<Json>(h.alice, 'POST', '/v1/runs', {
    network: { allow: ['pypi.org', 'evil.example', 'github.com'] },
  });
  t.equal(outside.status, 403);
  t.equal(outside.body.errorCode, 'egress_not_allowed');
  t.match(outside.body.message, '"evil.example", "github.com" are outside');
  t.match(outside.body.message, 'MEMQL_EGRESS_CEILING');
  t.match(
    outside.body.message,
    '"pypi.org", "*.pythonhosted.org", "registry.npmjs.org", "github.com:443"',
  );
  t.same(outside.body.payload, {
    outside: ['evil.example', 'github.com'],
    unknownSecrets: [],
    ceiling: ['pypi.org', '*.pythonhosted.org', 'registry.npmjs.org', 'github.com:443'],
    secrets: ['github'],
  });

  const secret = await h.json<Json>(h.alice, 'POST', '/v1/runs', {
    network: { allow: ['pypi.org'], secrets: ['aws'] },
  });
  t.equal(secret.status, 403);
  t.equal(secret.body.errorCode, 'egress_not_allowed');
  t.match(secret.body.message, 'secret "aws" is not defined by the operator');
  t.match(secret.body.message, 'MEMQL_EGRESS_SECRETS defines "github"');

  for (const [network, field] of [
    [{ allow: ['169.254.169.254'] }, 'network.allow[0]'],
    [{ allow: ['pypi.org', 'a b'] }, 'network.allow[1]'],
    [{ allow: 'pypi.org' }, 'network.allow'],
    [['pypi.org'], 'network'],
  ] as const) {
    const bad = await h.json<Json>(h.alice, 'POST', '/v1/runs', { network });
    t.equal(bad.status, 400, JSON.stringify(network));
    t.equal(bad.body.errorCode, 'invalid_arguments');
    t.match(bad.body.message, `invalid_arguments: ${field}: `);
  }
  t.equal(await runCount(h.alice), before, 'no run was made');
});

t.test(
  'PUT replaces the network: with an agent token, audited, seen at the next call',
  async (t) => {
    const run = (
      await h.json<Json>(h.alice, 'POST', '/v1/runs', { network: { allow: ['pypi.org'] } })
    ).body.run;
    t.same((await policies!.read(run.id)).allow.map(formatHostRule), ['pypi.org']);

    const put = await h.json<Json>(h.alice, 'PUT', `/v1/runs/${run.id}/network`, {
      allow: ['registry.npmjs.org', 'github.com:443'],
      secrets: ['github'],
    });
    t.equal(put.status, 200, JSON.stringify(put.body));
    t.same(put.body.run.network, {
      allow: ['registry.npmjs.org', 'github.com:443'],
      secrets: ['github'],
    });
    t.same(
      policies!.current(run.id).allow.map(formatHostRule),
      ['registry.npmjs.org', 'github.com:443'],
      'the very next call on this node sees it (the cache would keep the old for an hour)',
    );
    t.same(policies!.current(run.id).secrets, ['github']);
    t.same(
      (await h.json<Json>(h.alice, 'GET', `/v1/runs/${run.id}`)).body.run.network,
      put.body.run.network,
    );

    const refused = await h.json<Json>(h.alice, 'PUT', `/v1/runs/${run.id}/network`, {
      allow: ['pypi.org', '*.example.com'],
    });
    t.equal(refused.status, 403);
    t.equal(refused.body.errorCode, 'egress_not_allowed');
    t.same(refused.body.payload.outside, ['*.example.com']);
    const malformed = await h.json<Json>(h.alice, 'PUT', `/v1/runs/${run.id}/network`, {
      allow: ['[::1]'],
    });
    t.equal(malformed.status, 400);
    t.match(malformed.body.message, 'invalid_arguments: body.allow[0]: ');
    t.same(
      (await h.json<Json>(h.alice, 'GET', `/v1/runs/${run.id}`)).body.run.network,
      put.body.run.network,
      'a refused change changes nothing',
    );

    const cleared = await h.json<Json>(h.alice, 'PUT', `/v1/runs/${run.id}/network`, { allow: [] });
    t.same(cleared.body.run.network, { allow: [], secrets: [] });
    t.same(policies!.current(run.id), { allow: [], secrets: [] });

    const events = await networkEvents(run.id);
    t.same(
      events.map((e) => [e.metadata.change, e.metadata.allow, e.metadata.secrets]),
      [
        ['created', 'pypi.org', ''],
        ['replaced', 'registry.npmjs.org,github.com:443', 'github'],
        ['replaced', '', ''],
      ],
      'one event per change, none for the refusals',
    );
    t.notMatch(JSON.stringify(events), GITHUB_VALUE);
  },
);

t.test("another user's run reads as absent, and an ended run cannot change", async (t) => {
  const run = (
    await h.json<Json>(h.alice, 'POST', '/v1/runs', { network: { allow: ['pypi.org'] } })
  ).body.run;
  for (const token of [h.bob, h.bobPerson]) {
    const put = await h.json<Json>(token, 'PUT', `/v1/runs/${run.id}/network`, {
      allow: ['registry.npmjs.org'],
    });
    t.equal(put.status, 404);
    t.equal(put.body.errorCode, 'not_found');
    // Not even the shape or the ceiling is judged on another user's run.
    const bad = await h.json<Json>(token, 'PUT', `/v1/runs/${run.id}/network`, {
      allow: ['evil.example'],
    });
    t.equal(bad.status, 404);
  }
  const absent = await h.json<Json>(h.alice, 'PUT', '/v1/runs/run-never-made/network', {
    allow: [],
  });
  t.equal(absent.status, 404);
  t.same((await h.json<Json>(h.alice, 'GET', `/v1/runs/${run.id}`)).body.run.network.allow, [
    'pypi.org',
  ]);

  await finishRun(h.db, run.id, 'succeeded');
  const ended = await h.json<Json>(h.alice, 'PUT', `/v1/runs/${run.id}/network`, {
    allow: ['registry.npmjs.org'],
  });
  t.equal(ended.status, 409);
  t.equal(ended.body.errorCode, 'run_ended');
  t.same(await policies!.read(run.id), { allow: [], secrets: [] }, 'an ended run reaches nothing');
});
