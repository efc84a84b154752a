import t from 'tap';
import {
  checkRunNetwork,
  type EgressBounds,
  effectivePolicy,
  type HostRule,
  type ParsedRunNetwork,
  parseHostRule,
  parseRunNetwork,
} from '../../src/contract/index.js';

const rule = (text: string): HostRule => {
  const parsed = parseHostRule(text);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.rule;
};

const bounds: EgressBounds = {
  ceiling: ['pypi.org', '*.pythonhosted.org', 'registry.npmjs.org', 'github.com:443'].map(rule),
  secretNames: ['github', 'npm-token'],
};

function parsed(value: unknown): ParsedRunNetwork {
  const result = parseRunNetwork(value);
  if (!result.ok) throw new Error(`${result.field}: ${result.problem}`);
  return result.value;
}

t.test('a request in the right shape parses into its canonical form', async (t) => {
  t.same(parsed({ allow: [] }).network, { allow: [], secrets: [] });
  const request = parsed({
    allow: ['PyPI.org', 'files.pythonhosted.org', 'pypi.org', 'github.com:443'],
    secrets: ['github', 'github'],
  });
  t.same(request.network, {
    allow: ['pypi.org', 'files.pythonhosted.org', 'github.com:443'],
    secrets: ['github'],
  });
  t.same(request.rules, [
    { host: 'pypi.org', port: null },
    { host: 'files.pythonhosted.org', port: null },
    { host: 'github.com', port: 443 },
  ]);
});

t.test('a request in the wrong shape is refused, naming the field', async (t) => {
  for (const [value, field, problem] of [
    [null, 'network', /expected an object/],
    [['pypi.org'], 'network', /expected an object/],
    [{}, 'network.allow', /array of host rules/],
    [{ allow: 'pypi.org' }, 'network.allow', /array of host rules/],
    [{ allow: ['pypi.org', 7] }, 'network.allow[1]', /expected a string/],
    [{ allow: ['127.0.0.1'] }, 'network.allow[0]', /not an address/],
    [{ allow: ['pypi.org:99999'] }, 'network.allow[0]', /port must be 1 to 65535/],
    [{ allow: ['*.org'] }, 'network.allow[0]', /two labels/],
    [{ allow: [], secrets: 'github' }, 'network.secrets', /array of secret names/],
    [{ allow: [], secrets: ['GitHub'] }, 'network.secrets[0]', /secret name/],
    [{ allow: [], hosts: [] }, 'network.hosts', /unknown field/],
    [{ allow: Array.from({ length: 257 }, (_, i) => `h${i}.example`) }, 'network.allow', /256/],
  ] as const) {
    const result = parseRunNetwork(value);
    t.equal(result.ok, false, JSON.stringify(value));
    if (!result.ok) {
      t.equal(result.field, field);
      t.match(result.problem, problem);
    }
  }
  const body = parseRunNetwork({ allow: ['10.0.0.1'] }, 'body');
  t.equal(!body.ok && body.field, 'body.allow[0]', 'the field is named as the route has it');
});

t.test('within the ceiling and naming defined secrets: no refusal', async (t) => {
  for (const value of [
    { allow: [] },
    { allow: ['pypi.org', 'files.pythonhosted.org', 'a.b.pythonhosted.org'] },
    { allow: ['*.pythonhosted.org', 'github.com:443'], secrets: ['github'] },
    { allow: ['registry.npmjs.org:443'], secrets: ['npm-token'] },
  ]) {
    t.equal(checkRunNetwork(parsed(value), bounds), null, JSON.stringify(value));
  }
});

t.test(
  'outside the ceiling or an unknown secret: egress_not_allowed, saying what is allowed',
  async (t) => {
    const outside = checkRunNetwork(
      parsed({ allow: ['pypi.org', 'evil.example', 'github.com'] }),
      bounds,
    );
    t.ok(outside);
    t.match(outside!.message, /^egress_not_allowed: /);
    t.match(outside!.message, '"evil.example", "github.com" are outside');
    t.match(outside!.message, 'MEMQL_EGRESS_CEILING');
    t.match(
      outside!.message,
      '"pypi.org", "*.pythonhosted.org", "registry.npmjs.org", "github.com:443"',
    );
    t.match(outside!.message, 'only the operator');
    t.same(outside!.payload.outside, ['evil.example', 'github.com'], 'any port is wider than :443');
    t.same(outside!.payload.unknownSecrets, []);
    t.same(outside!.payload.ceiling, [
      'pypi.org',
      '*.pythonhosted.org',
      'registry.npmjs.org',
      'github.com:443',
    ]);

    const wildcard = checkRunNetwork(parsed({ allow: ['*.pypi.org', '*.org.example'] }), bounds);
    t.same(
      wildcard?.payload.outside,
      ['*.pypi.org', '*.org.example'],
      'a wildcard is not an exact name',
    );

    const secret = checkRunNetwork(parsed({ allow: ['pypi.org'], secrets: ['aws'] }), bounds);
    t.match(secret!.message, 'secret "aws" is not defined by the operator');
    t.match(secret!.message, 'MEMQL_EGRESS_SECRETS defines "github", "npm-token"');
    t.same(secret!.payload.unknownSecrets, ['aws']);
    t.same(secret!.payload.secrets, ['github', 'npm-token']);

    const none = checkRunNetwork(parsed({ allow: ['pypi.org'], secrets: ['x'] }), {
      ceiling: [],
      secretNames: [],
    });
    t.match(none!.message, 'is empty on this deployment: no run may have network');
    t.match(none!.message, 'MEMQL_EGRESS_SECRETS defines none');
  },
);

t.test('the policy in force is what is stored, narrowed by the bounds now', async (t) => {
  const stored = {
    allow: ['pypi.org', 'files.pythonhosted.org', 'evil.example', 'not a rule'],
    secrets: ['github', 'gone'],
  };
  t.same(effectivePolicy(stored, bounds), {
    allow: [
      { host: 'pypi.org', port: null },
      { host: 'files.pythonhosted.org', port: null },
    ],
    secrets: ['github'],
  });
  t.same(effectivePolicy(stored, { ceiling: [], secretNames: [] }), { allow: [], secrets: [] });
});
