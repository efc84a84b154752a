import t from 'tap';
import { loadConfig } from '../../src/config/index.js';
import { startApiHarness } from '../api/api-support.js';
import { memqlAs } from '../support/local-node.js';

/**
 * `memql` as a real process against a live API on Postgres: `runs create --allow
 * --secret` makes a run with a network, `network show|allow|set|clear` read and change
 * it, and a host outside the operator's ceiling is refused with `egress_not_allowed`
 * (exit 1), the message naming what the ceiling allows.
 */

const config = loadConfig({
  MEMQL_EGRESS_CEILING: 'pypi.org,*.pythonhosted.org,registry.npmjs.org,github.com:443',
  MEMQL_EGRESS_SECRETS: JSON.stringify({
    github: { hosts: ['github.com'], header: 'Authorization', env: 'GH_TOKEN' },
  }),
  GH_TOKEN: 'ghp_clicanary',
});
const h = await startApiHarness(t, { api: { egress: config.egress } });
const memql = (...argv: string[]) => memqlAs(h.url, h.alice, ...argv);

t.test('runs create --allow --secret, then network show, allow, set and clear', async (t) => {
  const created = await memql(
    'runs',
    'create',
    '--allow',
    'pypi.org,files.pythonhosted.org',
    '--allow',
    'PyPI.org',
    '--secret',
    'github',
  );
  t.equal(created.code, 0, created.stderr);
  const runId = created.stdout.trim();
  t.match(runId, /^run-/);

  const shown = await memql('network', 'show', runId);
  t.equal(shown.code, 0, shown.stderr);
  t.match(shown.stdout, `run:      ${runId}`);
  t.match(shown.stdout, 'allow:    pypi.org, files.pythonhosted.org');
  t.match(shown.stdout, 'secrets:  github');

  const added = await memql('network', 'allow', runId, 'registry.npmjs.org', 'pypi.org');
  t.equal(added.code, 0, added.stderr);
  t.match(added.stdout, 'allow:    pypi.org, files.pythonhosted.org, registry.npmjs.org');
  t.match(added.stdout, 'secrets:  github', 'allow keeps what the run had');

  const set = await memql('network', 'set', runId, 'github.com:443', '--json');
  t.equal(set.code, 0, set.stderr);
  t.same(JSON.parse(set.stdout), {
    runId,
    network: { allow: ['github.com:443'], secrets: [] },
  });

  const got = await memql('runs', 'get', runId);
  t.match(got.stdout, 'network:        github.com:443');

  const cleared = await memql('network', 'clear', runId);
  t.equal(cleared.code, 0, cleared.stderr);
  t.match(cleared.stdout, 'allow:    none (its commands reach no network)');
  const run = await h.json<{ run: { network: unknown } }>(h.alice, 'GET', `/v1/runs/${runId}`);
  t.same(run.body.run.network, { allow: [], secrets: [] });
});

t.test('outside the ceiling: egress_not_allowed, exit 1, nothing changed', async (t) => {
  const refused = await memql('runs', 'create', '--allow', 'evil.example');
  t.equal(refused.code, 1);
  t.equal(refused.stdout, '', 'no run id printed');
  t.match(refused.stderr, /^error: egress_not_allowed: "evil\.example" is outside/);
  t.match(refused.stderr, 'MEMQL_EGRESS_CEILING');
  t.match(
    refused.stderr,
    '"pypi.org", "*.pythonhosted.org", "registry.npmjs.org", "github.com:443"',
  );
  t.match(refused.stderr, /hint: /);

  const runId = (await memql('runs', 'create', '--allow', 'pypi.org')).stdout.trim();
  const allow = await memql('network', 'allow', runId, 'github.com');
  t.equal(allow.code, 1);
  t.match(allow.stderr, /^error: egress_not_allowed: "github\.com" is outside/);
  const secret = await memql('network', 'allow', runId, '--secret', 'aws');
  t.equal(secret.code, 1);
  t.match(secret.stderr, /secret "aws" is not defined by the operator/);
  const shown = await memql('network', 'show', runId, '--json');
  t.same(JSON.parse(shown.stdout).network, { allow: ['pypi.org'], secrets: [] });

  const usage = await memql('network', 'allow', runId);
  t.equal(usage.code, 2);
  t.match(usage.stderr, /network allow: name the hosts to add/);
});
