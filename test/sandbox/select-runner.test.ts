import t from 'tap';
import type { Runner, RunnerKind, RunnerProbe } from '../../src/sandbox/runner.js';
import { type RunnerChoice, selectRunner } from '../../src/sandbox/select-runner.js';

/** The selection rule as a table: choices × probe outcomes. Pure: runners are stand-ins. */

function runner(kind: RunnerKind, probe: RunnerProbe): Runner & { probes: number } {
  const r = {
    kind,
    probes: 0,
    async probe() {
      r.probes++;
      return probe;
    },
    async run(): Promise<never> {
      throw new Error('selection never runs a command');
    },
  };
  return r;
}

const ok: RunnerProbe = { ok: true };
const bwrapMissing: RunnerProbe = { ok: false, reason: 'bubblewrap (bwrap) not found' };
const dockerDown: RunnerProbe = { ok: false, reason: 'Docker daemon unreachable' };

type Expect = RunnerKind | { noSandbox: RegExp[] };

const cases: {
  name: string;
  choice: RunnerChoice;
  bwrap?: RunnerProbe;
  docker?: RunnerProbe;
  process?: boolean;
  platform?: NodeJS.Platform;
  expect: Expect;
}[] = [
  {
    name: 'auto, bwrap works',
    choice: { kind: 'auto', explicit: false },
    bwrap: ok,
    docker: ok,
    process: true,
    expect: 'bwrap',
  },
  {
    name: 'auto, bwrap broken: refused, never the process runner, not silently docker',
    choice: { kind: 'auto', explicit: false },
    bwrap: bwrapMissing,
    docker: ok,
    process: true,
    expect: {
      noSandbox: [
        /bwrap\) not found/,
        /apt-get install bubblewrap/,
        /MEMQL_RUNNER=docker/,
        /MEMQL_RUNNER=process/,
      ],
    },
  },
  {
    name: 'auto, no bwrap candidate',
    choice: { kind: 'auto', explicit: false },
    process: true,
    expect: { noSandbox: [/apt-get install bubblewrap/, /MEMQL_RUNNER=process/] },
  },
  {
    name: 'auto, not Linux',
    choice: { kind: 'auto', explicit: false },
    bwrap: ok,
    process: true,
    platform: 'darwin',
    expect: { noSandbox: [/darwin/, /MEMQL_RUNNER=docker/] },
  },
  {
    name: 'explicit bwrap, works',
    choice: { kind: 'bwrap', explicit: true },
    bwrap: ok,
    expect: 'bwrap',
  },
  {
    name: 'explicit bwrap, broken: the probe reason',
    choice: { kind: 'bwrap', explicit: true },
    bwrap: bwrapMissing,
    docker: ok,
    process: true,
    expect: { noSandbox: [/MEMQL_RUNNER=bwrap/, /bwrap\) not found/] },
  },
  {
    name: 'explicit docker, works',
    choice: { kind: 'docker', explicit: true },
    bwrap: bwrapMissing,
    docker: ok,
    expect: 'docker',
  },
  {
    name: 'explicit docker, daemon down: the probe reason',
    choice: { kind: 'docker', explicit: true },
    bwrap: ok,
    docker: dockerDown,
    process: true,
    expect: { noSandbox: [/Docker daemon unreachable/] },
  },
  {
    name: 'explicit docker, no docker runner built',
    choice: { kind: 'docker', explicit: true },
    bwrap: ok,
    expect: { noSandbox: [/no docker runner/] },
  },
  {
    name: 'explicit process',
    choice: { kind: 'process', explicit: true },
    bwrap: bwrapMissing,
    process: true,
    expect: 'process',
  },
  {
    name: 'process without explicit: refused',
    choice: { kind: 'process', explicit: false },
    process: true,
    expect: { noSandbox: [/MEMQL_RUNNER=process/] },
  },
];

for (const c of cases) {
  t.test(c.name, async (t) => {
    const candidates = {
      bwrap: c.bwrap && runner('bwrap', c.bwrap),
      docker: c.docker && runner('docker', c.docker),
      process: c.process ? runner('process', ok) : undefined,
    };
    const got = await selectRunner(c.choice, candidates, c.platform ?? 'linux');
    if (typeof c.expect === 'string') {
      t.ok('runner' in got, JSON.stringify(got));
      if ('runner' in got) t.equal(got.runner.kind, c.expect);
    } else {
      t.ok('error' in got, 'refused');
      if ('error' in got) {
        t.equal(got.error.code, 'no_sandbox');
        for (const re of c.expect.noSandbox) t.match(got.error.message, re);
      }
    }
    t.equal(candidates.process?.probes ?? 0, 0, 'the process runner is never probed as a fallback');
  });
}

t.test('warnings of a passing probe are passed on', async (t) => {
  const got = await selectRunner(
    { kind: 'auto', explicit: false },
    { bwrap: runner('bwrap', { ok: true, warnings: ['no cgroups'] }) },
    'linux',
  );
  t.same('runner' in got ? got.warnings : null, ['no cgroups']);
  const proc = await selectRunner(
    { kind: 'process', explicit: true },
    { process: runner('process', ok) },
  );
  t.match('runner' in proc ? proc.warnings.join() : '', 'WITHOUT a sandbox');
});
