import t from 'tap';
import { type PeerSeed, parsePeerSeeds } from '../../src/config/index.js';
import { configErrorOf, prng } from './fixtures/config-test-helpers.js';

/** The parts of a seed that the mesh dials, without `raw`. */
const parts = (seeds: readonly PeerSeed[]) =>
  seeds.map(({ type, host, port }) => ({ type, host, port }));

t.test('the runbook seed parses to exactly its parts', async (t) => {
  t.strictSame(parsePeerSeeds('workbench=workbench:50060'), {
    seeds: [
      { type: 'workbench', host: 'workbench', port: 50060, raw: 'workbench=workbench:50060' },
    ],
  });
});

t.test('valid values', async (t) => {
  const cases: Array<[string, PeerSeed[]]> = [
    ['', []],
    ['   ', []],
    [' , ,, ', []],
    [
      'workbench=a:1, worker = b:2 ,workbench=[::1]:50060,',
      [
        { type: 'workbench', host: 'a', port: 1, raw: 'workbench=a:1' },
        { type: 'worker', host: 'b', port: 2, raw: 'worker = b:2' },
        { type: 'workbench', host: '::1', port: 50060, raw: 'workbench=[::1]:50060' },
      ],
    ],
    [
      '\tworkbench\t=\tworkbench.memql.svc.cluster.local:65535\t',
      [
        {
          type: 'workbench',
          host: 'workbench.memql.svc.cluster.local',
          port: 65535,
          raw: 'workbench\t=\tworkbench.memql.svc.cluster.local:65535',
        },
      ],
    ],
    [
      'worker=10.0.0.7:50061',
      [{ type: 'worker', host: '10.0.0.7', port: 50061, raw: 'worker=10.0.0.7:50061' }],
    ],
    [
      'gpu_worker-2=[2001:db8::1]:443',
      [
        {
          type: 'gpu_worker-2',
          host: '2001:db8::1',
          port: 443,
          raw: 'gpu_worker-2=[2001:db8::1]:443',
        },
      ],
    ],
    [
      'workbench=memql_workbench_1:50060',
      [
        {
          type: 'workbench',
          host: 'memql_workbench_1',
          port: 50060,
          raw: 'workbench=memql_workbench_1:50060',
        },
      ],
    ],
    // Duplicates are kept: no seed is dropped, not even a repeated one.
    [
      'workbench=a:1,workbench=a:1',
      [
        { type: 'workbench', host: 'a', port: 1, raw: 'workbench=a:1' },
        { type: 'workbench', host: 'a', port: 1, raw: 'workbench=a:1' },
      ],
    ],
  ];
  for (const [value, seeds] of cases) {
    t.strictSame(parsePeerSeeds(value).seeds, seeds, JSON.stringify(value));
  }
});

t.test('each malformed entry is an error naming that entry', async (t) => {
  const malformed = [
    'workbench',
    '=a:1',
    'workbench=a',
    'workbench=a:',
    'workbench=:1',
    'workbench=a:0',
    'workbench=a:99999',
    'workbench=a:-1',
    'workbench=a:+5',
    'workbench=a:5x',
    'workbench=::1:5',
    'workbench=a:1:2',
    'workbench=[::1:5',
    'workbench=[::1]',
    'workbench=[::1]5',
    'workbench=[zz]:5',
    'workbench=256.1.1.1:5',
    'workbench=1.2.3:5',
    'workbench=a b:5',
    'workbench=-a:5',
    'Work bench=a:1',
    'Workbench=a:1',
    '1workbench=a:1',
    'work.bench=a:1',
  ];
  for (const entry of malformed) {
    const value = `worker=ok:1, ${entry} ,`;
    const error = configErrorOf(() => parsePeerSeeds(value));
    t.equal(error.issues.length, 1, entry);
    const issue = error.issues[0]!;
    t.equal(issue.variable, 'MEMQL_WORKER_PEERS', entry);
    t.equal(issue.entry, entry, entry);
    t.equal(issue.value, value.trim(), entry);
    t.ok(issue.message.includes(JSON.stringify(entry)), `message names ${entry}: ${issue.message}`);
    t.ok(issue.message.startsWith('MEMQL_WORKER_PEERS='), issue.message);
  }
});

t.test('every malformed entry of a list is reported, in order', async (t) => {
  const error = configErrorOf(() =>
    parsePeerSeeds('workbench=a:1,workbench,worker=b:2,=c:3,worker=d'),
  );
  t.strictSame(
    error.issues.map((issue) => issue.entry),
    ['workbench', '=c:3', 'worker=d'],
  );
  t.equal(error.variable, 'MEMQL_WORKER_PEERS');
});

t.test('the variable named in issues can be chosen', async (t) => {
  const error = configErrorOf(() => parsePeerSeeds('nope', 'MY_PEERS'));
  t.equal(error.issues[0]?.variable, 'MY_PEERS');
});

t.test('property: no valid seed is ever dropped, however the list is joined', async (t) => {
  const random = prng(4354);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const space = () => pick(['', '', ' ', '  ', '\t', ' \t ']);
  const types = ['workbench', 'worker', 'gpu-worker', 'x', 'w_2'];
  const hosts = [
    () => pick(['workbench', 'a', 'wb-0.workbench', 'memql.example.com', 'x1']),
    () => [0, 0, 0, 0].map(() => Math.floor(random() * 256)).join('.'),
    () => pick(['::1', '::', '2001:db8::7', 'fe80::1:2:3', '::ffff:10.0.0.1']),
  ];
  for (let round = 0; round < 300; round++) {
    const count = 1 + Math.floor(random() * 12);
    const expected = Array.from({ length: count }, () => ({
      type: pick(types),
      host: pick(hosts)(),
      port: 1 + Math.floor(random() * 65535),
    }));
    const entries = expected.map(({ type, host, port }) => {
      const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
      return `${space()}${type}${space()}=${space()}${address}${space()}`;
    });
    // Sprinkle empty entries anywhere, including a leading and a trailing comma.
    const joined = entries.flatMap((entry) => (random() < 0.2 ? [entry, space()] : [entry]));
    if (random() < 0.3) joined.unshift(space());
    if (random() < 0.5) joined.push(space());
    const value = joined.join(',');
    const { seeds } = parsePeerSeeds(value);
    if (JSON.stringify(parts(seeds)) !== JSON.stringify(expected)) {
      t.strictSame(parts(seeds), expected, JSON.stringify(value));
      return;
    }
    t.strictSame(
      seeds.map((seed) => seed.raw),
      entries.map((entry) => entry.trim()),
    );
  }
  t.pass('300 generated lists round-tripped');
});
