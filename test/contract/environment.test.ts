import t from 'tap';
import {
  type EnvironmentProvides,
  environmentFailure,
  environmentMismatchFromPayload,
  environmentMismatchPayload,
  evaluateEnvironment,
  goosFromNodePlatform,
  NEEDS,
  type Need,
  parseEnvironmentHint,
  WORKBENCH_PROVIDES,
  WorkbenchError,
} from '../../src/contract/index.js';

/**
 * A hint as a process boundary meets it: parsed into its type (by the envelope parse),
 * then evaluated on this node.
 */
function evaluateRaw(hint: unknown, provides: EnvironmentProvides, nodeOs: string) {
  const parsed = parseEnvironmentHint(hint);
  return parsed.kind === 'invalid' ? parsed : evaluateEnvironment(parsed.hint, provides, nodeOs);
}

type Expect =
  | { kind: 'none' }
  | { kind: 'ok' }
  | { kind: 'mismatch'; unmetNeeds: string[] }
  | { kind: 'invalid'; field: string };

const TABLE: [label: string, hint: unknown, expect: Expect][] = [
  ['no hint', undefined, { kind: 'none' }],
  ['empty object', {}, { kind: 'ok' }],
  ['empty needs, no os', { needs: [] }, { kind: 'ok' }],
  ['empty needs, matching os', { os: 'linux', needs: [] }, { kind: 'ok' }],
  ['matching os only', { os: 'linux' }, { kind: 'ok' }],
  ['os mismatch only', { os: 'darwin' }, { kind: 'mismatch', unmetNeeds: ['os'] }],
  ['os mismatch, windows', { os: 'windows', needs: [] }, { kind: 'mismatch', unmetNeeds: ['os'] }],
  [
    'macOS tooling on darwin',
    { os: 'darwin', needs: ['macos_tooling'] },
    { kind: 'mismatch', unmetNeeds: ['macos_tooling', 'os'] },
  ],
  ['display', { needs: ['display'] }, { kind: 'mismatch', unmetNeeds: ['display'] }],
  ['gpu on linux', { os: 'linux', needs: ['gpu'] }, { kind: 'mismatch', unmetNeeds: ['gpu'] }],
  ['user files', { needs: ['user_files'] }, { kind: 'mismatch', unmetNeeds: ['user_files'] }],
  [
    'all four, canonical order, duplicates collapsed',
    { needs: ['user_files', 'gpu', 'display', 'macos_tooling', 'gpu'] },
    { kind: 'mismatch', unmetNeeds: ['display', 'gpu', 'macos_tooling', 'user_files'] },
  ],
  ['null', null, { kind: 'invalid', field: 'environment' }],
  ['array', [], { kind: 'invalid', field: 'environment' }],
  ['string', 'darwin', { kind: 'invalid', field: 'environment' }],
  ['number', 1, { kind: 'invalid', field: 'environment' }],
  ['needs a string', { needs: 'gpu' }, { kind: 'invalid', field: 'environment.needs' }],
  ['needs an object', { needs: { gpu: true } }, { kind: 'invalid', field: 'environment.needs' }],
  ['needs null', { needs: null }, { kind: 'invalid', field: 'environment.needs' }],
  ['non-string need', { needs: ['gpu', 1] }, { kind: 'invalid', field: 'environment.needs[1]' }],
  [
    'hyphenated need is a typo, not a mismatch',
    { needs: ['macos-tooling'] },
    { kind: 'invalid', field: 'environment.needs[0]' },
  ],
  ['unknown need', { needs: ['network'] }, { kind: 'invalid', field: 'environment.needs[0]' }],
  [
    'os is output-only, not a need',
    { needs: ['os'] },
    { kind: 'invalid', field: 'environment.needs[0]' },
  ],
  ['upper-case need', { needs: ['GPU'] }, { kind: 'invalid', field: 'environment.needs[0]' }],
  ['os not a string', { os: 1 }, { kind: 'invalid', field: 'environment.os' }],
  ['os in Node spelling', { os: 'win32' }, { kind: 'invalid', field: 'environment.os' }],
  [
    'os misspelt',
    { os: 'macos', needs: ['macos_tooling'] },
    { kind: 'invalid', field: 'environment.os' },
  ],
  ['unknown key', { need: ['gpu'] }, { kind: 'invalid', field: 'environment.need' }],
  [
    'too many needs',
    { needs: Array(17).fill('gpu') },
    { kind: 'invalid', field: 'environment.needs' },
  ],
];

t.test('the hint table, evaluated on linux with the workbench table', async (t) => {
  for (const [label, hint, expect] of TABLE) {
    const got = evaluateRaw(hint, WORKBENCH_PROVIDES, 'linux');
    t.equal(got.kind, expect.kind, `${label}: kind`);
    if (expect.kind === 'mismatch' && got.kind === 'mismatch') {
      t.strictSame([...got.unmetNeeds], expect.unmetNeeds, `${label}: unmetNeeds`);
      t.match(got.message, /^environment_mismatch: /);
    }
    if (expect.kind === 'invalid' && got.kind === 'invalid') {
      t.ok(
        got.message.startsWith(`invalid_environment_hint: ${expect.field}: `),
        `${label}: names ${expect.field}: ${got.message}`,
      );
    }
  }
});

t.test('the typo names the bad value', async (t) => {
  const got = evaluateRaw({ needs: ['macos-tooling'] }, WORKBENCH_PROVIDES, 'linux');
  t.equal(got.kind, 'invalid');
  if (got.kind === 'invalid') t.match(got.message, /"macos-tooling"/);
});

t.test('the os is compared with the node the hint is evaluated on', async (t) => {
  t.equal(evaluateRaw({ os: 'darwin' }, WORKBENCH_PROVIDES, 'darwin').kind, 'ok');
  t.equal(evaluateRaw({ os: 'linux' }, WORKBENCH_PROVIDES, 'darwin').kind, 'mismatch');
  // A platform Go has no name for never matches a (valid) os hint.
  t.equal(evaluateRaw({ os: 'linux' }, WORKBENCH_PROVIDES, 'haiku').kind, 'mismatch');
  t.equal(evaluateRaw({ needs: [] }, WORKBENCH_PROVIDES, 'haiku').kind, 'ok');
});

t.test('the provides table is the mechanism', async (t) => {
  t.strictSame(
    { ...WORKBENCH_PROVIDES },
    { display: false, gpu: false, macos_tooling: false, user_files: false },
  );
  t.ok(Object.isFrozen(WORKBENCH_PROVIDES));
  for (const need of NEEDS) {
    const provides: EnvironmentProvides = { ...WORKBENCH_PROVIDES, [need]: true };
    t.equal(evaluateRaw({ needs: [need] }, provides, 'linux').kind, 'ok', `${need} provided`);
    const others = NEEDS.filter((n) => n !== need);
    const got = evaluateRaw({ needs: [...NEEDS] }, provides, 'linux');
    t.equal(got.kind, 'mismatch');
    if (got.kind === 'mismatch') t.strictSame([...got.unmetNeeds], others, `only ${need} is met`);
    const withOs = evaluateRaw({ os: 'darwin', needs: [need] }, provides, 'linux');
    if (withOs.kind === 'mismatch') t.strictSame([...withOs.unmetNeeds], ['os']);
    else t.fail('os still mismatches');
  }
});

t.test('unmetNeeds is never empty on a mismatch, for every combination', async (t) => {
  const subsets = (1 << NEEDS.length) - 1;
  let mismatches = 0;
  for (let declaredBits = 0; declaredBits <= subsets; declaredBits++) {
    for (let providedBits = 0; providedBits <= subsets; providedBits++) {
      for (const os of [undefined, 'linux', 'darwin']) {
        const needs = NEEDS.filter((_, i) => declaredBits & (1 << i));
        const provides = Object.fromEntries(
          NEEDS.map((n, i) => [n, Boolean(providedBits & (1 << i))]),
        ) as Record<Need, boolean>;
        const hint = os === undefined ? { needs } : { os, needs };
        const got = evaluateRaw(hint, provides, 'linux');
        const expected = [...needs.filter((n) => !provides[n]), ...(os === 'darwin' ? ['os'] : [])];
        if (expected.length === 0) {
          if (got.kind !== 'ok') t.fail(`expected ok for ${JSON.stringify({ hint, provides })}`);
        } else if (got.kind !== 'mismatch' || got.unmetNeeds.length === 0) {
          t.fail(`expected non-empty mismatch for ${JSON.stringify({ hint, provides })}`);
        } else {
          mismatches++;
          if (JSON.stringify(got.unmetNeeds) !== JSON.stringify(expected))
            t.fail(`unmetNeeds for ${JSON.stringify(hint)}`);
        }
      }
    }
  }
  t.ok(mismatches > 0);
});

t.test('results: mismatch carries a readable payload, invalid does not', async (t) => {
  t.equal(environmentFailure({ kind: 'none' }), null);
  t.equal(environmentFailure({ kind: 'ok' }), null);

  const mismatch = environmentFailure(
    evaluateRaw({ os: 'darwin', needs: ['macos_tooling'] }, WORKBENCH_PROVIDES, 'linux'),
  );
  t.equal(mismatch?.errorCode, 'environment_mismatch');
  // Read as a consumer on the far side of the wire would.
  const wire = JSON.parse(JSON.stringify(mismatch)) as { payload: unknown };
  t.strictSame(environmentMismatchFromPayload(wire.payload), {
    unmetNeeds: ['macos_tooling', 'os'],
  });

  const invalid = environmentFailure(
    evaluateRaw({ needs: ['macos-tooling'] }, WORKBENCH_PROVIDES, 'linux'),
  );
  t.equal(invalid?.errorCode, 'invalid_environment_hint');
  t.notOk(invalid && 'payload' in invalid);
  t.equal(environmentMismatchFromPayload(invalid?.payload), null);
});

t.test('mismatch payload builder and reader', async (t) => {
  const payload = environmentMismatchPayload(['gpu', 'os']);
  t.strictSame(payload, { unmetNeeds: ['gpu', 'os'] });
  t.strictSame(environmentMismatchFromPayload(payload), { unmetNeeds: ['gpu', 'os'] });
  t.strictSame(environmentMismatchFromPayload({ unmetNeeds: ['display'], future: 1 }), {
    unmetNeeds: ['display'],
  });
  t.throws(() => environmentMismatchPayload([]), WorkbenchError);

  const garbage: unknown[] = [
    undefined,
    null,
    'gpu',
    42,
    ['gpu'],
    {},
    { unmetNeeds: [] },
    { unmetNeeds: 'gpu' },
    { unmetNeeds: [1] },
    { unmetNeeds: ['gpu', 'macos-tooling'] },
    { unmetNeeds: [null] },
    { unmet_needs: ['gpu'] },
  ];
  for (const value of garbage) {
    t.equal(environmentMismatchFromPayload(value), null, JSON.stringify(value) ?? 'undefined');
  }
});

t.test('Node platform names map to Go names', async (t) => {
  const table: [string, string][] = [
    ['linux', 'linux'],
    ['darwin', 'darwin'],
    ['win32', 'windows'],
    ['cygwin', 'windows'],
    ['sunos', 'solaris'],
    ['freebsd', 'freebsd'],
    ['openbsd', 'openbsd'],
    ['netbsd', 'netbsd'],
    ['aix', 'aix'],
    ['android', 'android'],
    ['haiku', 'haiku'],
  ];
  for (const [node, go] of table) t.equal(goosFromNodePlatform(node), go, node);
  t.equal(
    evaluateRaw({ os: 'windows' }, WORKBENCH_PROVIDES, goosFromNodePlatform('win32')).kind,
    'ok',
  );
});
