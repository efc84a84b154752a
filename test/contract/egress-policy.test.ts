import t from 'tap';
import {
  allowingRule,
  type EgressPolicy,
  formatHostRule,
  type HostRule,
  normalizeHostName,
  parseHostRule,
  ruleCovers,
  withinCeiling,
} from '../../src/contract/index.js';

const rule = (text: string): HostRule => {
  const parsed = parseHostRule(text);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.rule;
};

t.test('rules parse from their written form and print back', async (t) => {
  for (const [text, host, port] of [
    ['pypi.org', 'pypi.org', null],
    ['PyPI.org.', 'pypi.org', null],
    ['*.pythonhosted.org', '*.pythonhosted.org', null],
    ['github.com:443', 'github.com', 443],
    ['*.npmjs.org:443', '*.npmjs.org', 443],
    ['xn--bcher-kva.example', 'xn--bcher-kva.example', null],
  ] as const) {
    const parsed = parseHostRule(text);
    t.same(parsed, { ok: true, rule: { host, port } }, text);
  }
  t.equal(formatHostRule(rule('github.com:443')), 'github.com:443');
  t.equal(formatHostRule(rule('*.npmjs.org')), '*.npmjs.org');
});

t.test('what is not a host rule is refused, saying why', async (t) => {
  for (const text of [
    '',
    '127.0.0.1',
    '10.0.0.1:443',
    '[::1]',
    '::1',
    '169.254.169.254',
    '0x7f000001',
    '2130706433',
    'a..b',
    '-a.com',
    'a-.com',
    '*.com',
    '*',
    'a.*.com',
    '**.a.com',
    'x.com:0',
    'x.com:65536',
    'x.com:',
    'http://x.com',
    'x.com/path',
    'bücher.example',
    `${'a'.repeat(64)}.com`,
    `${'a.'.repeat(127)}com`,
  ]) {
    const parsed = parseHostRule(text);
    t.equal(parsed.ok, false, JSON.stringify(text));
    if (!parsed.ok) t.match(parsed.problem, /./);
  }
});

t.test('names are normalized; addresses are not names', async (t) => {
  t.equal(normalizeHostName('Registry.NPMJS.org.'), 'registry.npmjs.org');
  t.equal(normalizeHostName('127.0.0.1'), null);
  t.equal(normalizeHostName('1.2.3'), null);
  t.equal(normalizeHostName('localhost'), 'localhost');
});

t.test('a policy allows what one of its rules matches, on its port', async (t) => {
  const policy: EgressPolicy = {
    allow: [rule('pypi.org'), rule('*.pythonhosted.org'), rule('github.com:443')],
    secrets: [],
  };
  const cases: [string, number, string | null][] = [
    ['pypi.org', 443, 'pypi.org'],
    ['PYPI.ORG.', 80, 'pypi.org'],
    ['files.pythonhosted.org', 443, '*.pythonhosted.org'],
    ['a.b.pythonhosted.org', 443, '*.pythonhosted.org'],
    ['pythonhosted.org', 443, null],
    ['evilpythonhosted.org', 443, null],
    ['pypi.org.evil.com', 443, null],
    ['github.com', 443, 'github.com:443'],
    ['github.com', 22, null],
    ['api.github.com', 443, null],
    ['127.0.0.1', 443, null],
  ];
  for (const [host, port, by] of cases) {
    const found = allowingRule(policy, host, port);
    t.equal(found === null ? null : formatHostRule(found), by, `${host}:${port}`);
  }
  t.equal(allowingRule({ allow: [], secrets: [] }, 'pypi.org', 443), null, 'no rules: no network');
});

t.test('a run can only narrow the ceiling', async (t) => {
  const ceiling = [rule('*.npmjs.org'), rule('pypi.org'), rule('github.com:443')];
  for (const [inner, covered] of [
    ['registry.npmjs.org', true],
    ['registry.npmjs.org:443', true],
    ['*.npmjs.org', true],
    ['*.x.npmjs.org', true],
    ['npmjs.org', false],
    ['pypi.org:443', true],
    ['pypi.org', true],
    ['*.pypi.org', false],
    ['github.com:443', true],
    ['github.com', false],
    ['github.com:22', false],
    ['example.com', false],
  ] as const) {
    t.equal(
      ceiling.some((c) => ruleCovers(c, rule(inner))),
      covered,
      inner,
    );
  }
  const split = withinCeiling(ceiling, [rule('registry.npmjs.org'), rule('example.com')]);
  t.same(split.within.map(formatHostRule), ['registry.npmjs.org']);
  t.same(split.outside.map(formatHostRule), ['example.com']);
});
