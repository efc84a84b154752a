import t from 'tap';
import { formatHostPort, parseHostPort } from '../../src/config/index.js';

t.test('valid host:port forms', async (t) => {
  const cases: Array<[string, { host: string; port: number }]> = [
    ['workbench:50060', { host: 'workbench', port: 50060 }],
    ['10.0.0.1:1', { host: '10.0.0.1', port: 1 }],
    ['[::1]:65535', { host: '::1', port: 65535 }],
    ['[2001:db8::1]:443', { host: '2001:db8::1', port: 443 }],
    ['a-b.c_d.example:80', { host: 'a-b.c_d.example', port: 80 }],
  ];
  for (const [text, expected] of cases) {
    t.strictSame(parseHostPort(text), { ok: true, value: expected }, text);
    t.equal(formatHostPort(expected), text, `${text} renders back`);
  }
  t.strictSame(parseHostPort('0.0.0.0:0', { allowPortZero: true }), {
    ok: true,
    value: { host: '0.0.0.0', port: 0 },
  });
});

t.test('each malformed form says what is wrong', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['workbench', /":port" is missing/],
    [':50060', /host is missing/],
    ['::1:5', /brackets/],
    ['[::1:5', /"]" closing/],
    ['[::1]5', /":port" after "]"/],
    ['[zz]:5', /"zz" is not a valid IPv6/],
    ['256.0.0.1:5', /not a valid IPv4/],
    ['a b:5', /not a valid DNS name/],
    ['-a:5', /not a valid DNS name/],
    [`${'a'.repeat(64)}:5`, /not a valid DNS name/],
    ['a:0', /port must be 1 to 65535, not "0"/],
    ['a:65536', /port must be 1 to 65535/],
    ['a:', /port must be/],
    ['a:5x', /port must be/],
  ];
  for (const [text, reason] of cases) {
    const parsed = parseHostPort(text);
    t.equal(parsed.ok, false, text);
    if (!parsed.ok) t.match(parsed.expected, reason, text);
  }
});
