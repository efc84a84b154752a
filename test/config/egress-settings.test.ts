import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import {
  CONFIG_VARIABLES,
  configLogView,
  loadConfig,
  REDACTED,
  redactConfig,
} from '../../src/config/index.js';
import { configErrorOf, issuesOf } from './fixtures/config-test-helpers.js';

/**
 * `MEMQL_EGRESS_CEILING` and `MEMQL_EGRESS_SECRETS`: parsed once, every problem naming
 * the variable and the secret, and no secret value in an error, a warning or the
 * logged configuration. Files are real files read with `readFileSync`, as the binaries
 * read them.
 */

const dir = await mkdtemp(join(tmpdir(), 'memql-egress-config-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const GITHUB_VALUE = 'ghp_canary0a1b2c3d4e5f';
const PYPI_VALUE = 'pypi-canary-9f8e7d';
const tokenFile = join(dir, 'github-token');
await writeFile(tokenFile, `${GITHUB_VALUE}\n`);
const readFile = (path: string) => readFileSync(path, 'utf8');

const SECRETS = JSON.stringify({
  github: {
    hosts: ['github.com', '*.githubusercontent.com'],
    header: 'Authorization',
    prefix: 'Bearer ',
    file: tokenFile,
  },
  pypi: { hosts: ['pypi.org'], header: 'X-Api-Key', env: 'PYPI_TOKEN' },
});
const env = {
  MEMQL_EGRESS_CEILING: 'pypi.org, *.pythonhosted.org,github.com,*.githubusercontent.com,pypi.org',
  MEMQL_EGRESS_SECRETS: SECRETS,
  PYPI_TOKEN: PYPI_VALUE,
};

t.test('the default: no ceiling, no secrets, so no run may have network', async (t) => {
  const config = loadConfig({});
  t.same(config.egress, { ceiling: [], secretNames: [], secrets: [], resolve: [], caPem: null });
  const names = CONFIG_VARIABLES.map((v) => v.name);
  t.ok(names.includes('MEMQL_EGRESS_CEILING') && names.includes('MEMQL_EGRESS_SECRETS'));
});

t.test('the ceiling and the secrets, their values from a file and a variable', async (t) => {
  const config = loadConfig(env, { readFile });
  t.same(
    config.egress.ceiling,
    [
      { host: 'pypi.org', port: null },
      { host: '*.pythonhosted.org', port: null },
      { host: 'github.com', port: null },
      { host: '*.githubusercontent.com', port: null },
    ],
    'parsed once, duplicates dropped',
  );
  t.same(config.egress.secretNames, ['github', 'pypi']);
  t.same(config.egress.secrets, [
    {
      name: 'github',
      hosts: [
        { host: 'github.com', port: null },
        { host: '*.githubusercontent.com', port: null },
      ],
      header: 'Authorization',
      value: `Bearer ${GITHUB_VALUE}`,
    },
    {
      name: 'pypi',
      hosts: [{ host: 'pypi.org', port: null }],
      header: 'X-Api-Key',
      value: PYPI_VALUE,
    },
  ]);
  t.same(config.warnings, [], 'every secret host is within the ceiling');
});

t.test('a node that checks names only reads no value', async (t) => {
  const names = loadConfig(env, { egressSecretValues: false });
  t.same(names.egress.secretNames, ['github', 'pypi']);
  t.same(names.egress.secrets, [], 'no file read, no value kept');
  const remote = { ...env, MEMQL_WORKBENCH_REMOTE: '1', MEMQL_WORKER_PEERS: 'workbench=wb:50060' };
  t.same(loadConfig(remote, { egressSecretValues: 'unless-remote' }).egress.secrets, []);
  const local = loadConfig(env, { egressSecretValues: 'unless-remote', readFile });
  t.equal(local.egress.secrets.length, 2, 'an agent that runs commands in-process reads them');
  const fallback = loadConfig(
    { ...remote, MEMQL_WORKBENCH_LOCAL_FALLBACK: '1' },
    { egressSecretValues: 'unless-remote', readFile },
  );
  t.equal(fallback.egress.secrets.length, 2, 'so does one with the local fallback');
});

t.test('a bad ceiling entry names the variable and the entry', async (t) => {
  const issues = issuesOf(() => loadConfig({ MEMQL_EGRESS_CEILING: 'pypi.org,10.0.0.1,*.org' }));
  t.same(
    issues.map((i) => [i.variable, i.entry]),
    [
      ['MEMQL_EGRESS_CEILING', '10.0.0.1'],
      ['MEMQL_EGRESS_CEILING', '*.org'],
    ],
  );
  t.match(issues[0]!.message, /^MEMQL_EGRESS_CEILING=.*entry "10\.0\.0\.1": expected a host rule/);
});

t.test('a bad secret names the variable and the secret, never a value', async (t) => {
  const cases: [unknown, RegExp][] = [
    ['not json', /a JSON object of secrets/],
    [['github'], /a JSON object of secrets/],
  ];
  for (const [value, expected] of cases) {
    const issue = issuesOf(() => loadConfig({ MEMQL_EGRESS_SECRETS: JSON.stringify(value) }))[0]!;
    t.equal(issue.variable, 'MEMQL_EGRESS_SECRETS');
    t.match(issue.expected, expected);
  }
  const secret = (spec: unknown, extra: Record<string, string> = {}) =>
    issuesOf(() =>
      loadConfig({ MEMQL_EGRESS_SECRETS: JSON.stringify({ gh: spec }), ...extra }, { readFile }),
    );
  const base = { hosts: ['github.com'], header: 'Authorization', env: 'GH_TOKEN' };
  for (const [spec, expected, extra] of [
    [{ ...base, hosts: [] }, /"hosts": a non-empty array/],
    [{ ...base, hosts: ['10.0.0.1'] }, /"hosts": host rules/],
    [{ ...base, header: 'Bad Header' }, /"header": an HTTP header name/],
    [{ ...base, header: 'Host' }, /a header other than Host/],
    [{ ...base, header: 'Proxy-Authorization' }, /which the proxy sets itself/],
    [{ ...base, prefix: 'Bearer\n' }, /"prefix": printable text/],
    [{ hosts: ['github.com'], header: 'Authorization' }, /exactly one of "file"/],
    [{ ...base, file: tokenFile }, /exactly one of "file"/],
    [{ ...base, value: GITHUB_VALUE }, /a value is never written in this setting/],
    [{ ...base, env: 'MEMQL_MESH_TOKEN' }, /a variable outside MEMQL_\*/],
    [base, /the environment variable GH_TOKEN to be set/],
    [{ ...base }, /the environment variable GH_TOKEN to hold one line/, { GH_TOKEN: 'a\nb' }],
    [{ ...base }, /GH_TOKEN is empty/, { GH_TOKEN: '\n' }],
    [{ hosts: ['github.com'], header: 'A', file: 'relative/path' }, /"file": an absolute path/],
    [{ hosts: ['github.com'], header: 'A', file: join(dir, 'none') }, /reading it failed: ENOENT/],
  ] as [unknown, RegExp, Record<string, string>?][]) {
    const issues = secret(spec, extra);
    t.equal(issues.length, 1, JSON.stringify(spec));
    t.equal(issues[0]!.variable, 'MEMQL_EGRESS_SECRETS');
    t.equal(issues[0]!.entry, 'gh', 'names the secret');
    t.match(issues[0]!.expected, expected);
    t.notMatch(issues[0]!.message, GITHUB_VALUE, 'never the value');
    t.equal(issues[0]!.value, REDACTED, 'nor the setting as written');
  }
  const bad = issuesOf(() =>
    loadConfig({ MEMQL_EGRESS_SECRETS: JSON.stringify({ 'Bad Name': base }), GH_TOKEN: 'x' }),
  );
  t.match(bad[0]!.expected, /a secret name of lower-case letters/);

  const noReader = configErrorOf(() =>
    loadConfig({
      MEMQL_EGRESS_SECRETS: JSON.stringify({ gh: { ...base, env: undefined, file: tokenFile } }),
    }),
  );
  t.match(noReader.message, /this binary reads no files/);
  t.notMatch(noReader.message, GITHUB_VALUE);
});

t.test('a secret sent to hosts outside the ceiling is a warning', async (t) => {
  const config = loadConfig(
    {
      MEMQL_EGRESS_CEILING: 'pypi.org',
      MEMQL_EGRESS_SECRETS: JSON.stringify({
        gh: { hosts: ['github.com', 'pypi.org'], header: 'Authorization', env: 'GH_TOKEN' },
      }),
      GH_TOKEN: GITHUB_VALUE,
    },
    { readFile },
  );
  t.equal(config.warnings.length, 1);
  t.equal(config.warnings[0]!.variable, 'MEMQL_EGRESS_SECRETS');
  t.match(config.warnings[0]!.message, /secret "gh": github\.com is outside MEMQL_EGRESS_CEILING/);
  t.notMatch(config.warnings[0]!.message, GITHUB_VALUE);
});

t.test('redaction hides every secret value and keeps the references', async (t) => {
  const config = loadConfig(env, { readFile });
  const redacted = JSON.stringify(redactConfig(config));
  const logged = JSON.stringify(configLogView(config));
  for (const text of [redacted, logged]) {
    t.notMatch(text, GITHUB_VALUE);
    t.notMatch(text, PYPI_VALUE);
  }
  t.ok(JSON.stringify(config).includes(GITHUB_VALUE), 'the original keeps it');
  t.same((configLogView(config) as { egress: unknown }).egress, {
    ceiling: ['pypi.org', '*.pythonhosted.org', 'github.com', '*.githubusercontent.com'],
    secrets: [
      {
        name: 'github',
        hosts: ['github.com', '*.githubusercontent.com'],
        header: 'Authorization',
        value: REDACTED,
      },
      { name: 'pypi', hosts: ['pypi.org'], header: 'X-Api-Key', value: REDACTED },
    ],
  });
  const names = configLogView(loadConfig(env, { egressSecretValues: false })) as {
    egress: { secrets: unknown };
  };
  t.same(names.egress.secrets, [{ name: 'github' }, { name: 'pypi' }]);
});

t.test('MEMQL_EGRESS_RESOLVE maps names to addresses, in plain notation only', async (t) => {
  const config = loadConfig({
    MEMQL_EGRESS_RESOLVE: 'PyPI.internal.=10.0.0.7, pypi.internal=10.0.0.8,mirror.test=::1',
  });
  t.same(config.egress.resolve, [
    { host: 'pypi.internal', address: '10.0.0.7' },
    { host: 'pypi.internal', address: '10.0.0.8' },
    { host: 'mirror.test', address: '::1' },
  ]);
  t.same(loadConfig({}).egress.resolve, [], 'default: DNS');
  const issues = issuesOf(() =>
    loadConfig({ MEMQL_EGRESS_RESOLVE: 'a.test=010.0.0.1,10.0.0.1,=10.0.0.1,b.test=0x7f000001' }),
  );
  t.same(
    issues.map((i) => i.entry),
    ['a.test=010.0.0.1', '10.0.0.1', '=10.0.0.1', 'b.test=0x7f000001'],
    'an address in another notation, or no name, is refused',
  );
  t.match(issues[0]!.message, /^MEMQL_EGRESS_RESOLVE=.*expected host=address/);
});

t.test(
  'MEMQL_EGRESS_CA_FILE: its certificates, read at start; a bad file stops the node',
  async (t) => {
    const cert = `-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----`;
    const caFile = join(dir, 'extra-ca.pem');
    await writeFile(caFile, `a comment\n${cert}\ntrailing text\n`);
    const read = loadConfig({ MEMQL_EGRESS_CA_FILE: caFile }, { readFile });
    t.equal(read.egress.caPem, `${cert}\n`, 'the certificates only');
    t.equal(loadConfig({}).egress.caPem, null, 'default: none');
    t.equal(
      loadConfig({ MEMQL_EGRESS_CA_FILE: caFile }, { readFile, egressSecretValues: false }).egress
        .caPem,
      null,
      'a node that reads no values reads no file',
    );
    const missing = issuesOf(() =>
      loadConfig({ MEMQL_EGRESS_CA_FILE: join(dir, 'absent.pem') }, { readFile }),
    );
    t.match(missing[0]!.message, /MEMQL_EGRESS_CA_FILE=.*reading it failed: ENOENT/);
    const notPem = join(dir, 'not-pem.txt');
    await writeFile(notPem, 'hello\n');
    const empty = issuesOf(() => loadConfig({ MEMQL_EGRESS_CA_FILE: notPem }, { readFile }));
    t.match(empty[0]!.message, /MEMQL_EGRESS_CA_FILE=.*certificates/);
  },
);
