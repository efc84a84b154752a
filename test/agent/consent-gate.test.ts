import t from 'tap';
import { decideReroute, type GateConsent, type GateWorker } from '../../src/agent/consent-gate.js';
import { NEED_ROUTES, workerRequirement } from '../../src/agent/worker-scope.js';
import { NEEDS, type Scope } from '../../src/contract/index.js';

/** The consent gate and the needs table beside it: pure decisions, table-driven. */

const linuxDesktop: GateWorker = {
  workerId: 'desk',
  os: 'linux',
  provides: ['display', 'user_files'],
  connected: true,
  inFlight: 0,
};
const mac: GateWorker = {
  workerId: 'mac',
  os: 'darwin',
  provides: ['display', 'macos_tooling', 'user_files'],
  connected: true,
  inFlight: 0,
};

function consent(
  workers: Record<string, { scope?: Scope; killSwitch?: boolean }> = {},
  allKilled = false,
): GateConsent {
  return {
    allKilled,
    workers: new Map(
      Object.entries(workers).map(([id, c]) => [
        id,
        { scope: c.scope ?? 'none', killSwitch: c.killSwitch ?? false },
      ]),
    ),
  };
}

t.test('the table covers every need of the contract', async (t) => {
  for (const need of NEEDS) t.ok(NEED_ROUTES[need], `${need} has a scope and labels`);
});

t.test('required scope: the action and every need, the highest', async (t) => {
  const cases: [Parameters<typeof workerRequirement>, Scope, string[]][] = [
    [['fs_read', ['user_files'], undefined], 'observe', ['user_files']],
    [['fs_list', ['user_files'], undefined], 'observe', ['user_files']],
    [['fs_write', ['user_files'], undefined], 'full', ['user_files']],
    [['exec', ['user_files'], undefined], 'full', ['user_files']],
    [['fs_read', ['display'], undefined], 'full', ['display']],
    [['fs_read', ['user_files', 'os'], 'darwin'], 'observe', ['os:darwin', 'user_files']],
    [['exec', ['macos_tooling', 'os'], 'darwin'], 'full', ['macos_tooling', 'os:darwin']],
  ];
  for (const [args, scope, labels] of cases) {
    t.same(workerRequirement(...args), { scope, labels }, JSON.stringify(args));
  }
});

t.test('a need the table does not know takes full', async (t) => {
  const unknown = 'hologram' as never;
  t.same(workerRequirement('fs_read', ['user_files', unknown], undefined), {
    scope: 'full',
    labels: ['hologram', 'user_files'],
  });
});

t.test('consent held: runs on a worker providing the needs', async (t) => {
  const d = decideReroute(
    { action: 'exec', unmetNeeds: ['display'] },
    consent({ desk: { scope: 'full' } }),
    [linuxDesktop],
  );
  t.same(d, { kind: 'run', workerId: 'desk', requiredScope: 'full', scope: 'full' });
});

t.test('observe never runs exec, and asks for full', async (t) => {
  const d = decideReroute(
    { action: 'exec', unmetNeeds: ['user_files'] },
    consent({ desk: { scope: 'observe' } }),
    [linuxDesktop],
  );
  t.same(d, {
    kind: 'consent_required',
    workerId: 'desk',
    requiredScope: 'full',
    heldScope: 'observe',
  });
  t.equal(
    decideReroute(
      { action: 'fs_read', unmetNeeds: ['user_files'] },
      consent({ desk: { scope: 'observe' } }),
      [linuxDesktop],
    ).kind,
    'run',
    'observe runs a read',
  );
});

t.test('no consent: consent_required for the worker holding the most', async (t) => {
  const d = decideReroute(
    { action: 'exec', unmetNeeds: ['display'] },
    consent({ mac: { scope: 'observe' } }),
    [linuxDesktop, mac],
  );
  t.same(d, {
    kind: 'consent_required',
    workerId: 'mac',
    requiredScope: 'full',
    heldScope: 'observe',
  });
});

t.test('the user-wide kill switch wins over everything, even with no worker', async (t) => {
  t.same(decideReroute({ action: 'exec', unmetNeeds: ['display'] }, consent({}, true), []), {
    kind: 'kill_switch',
    workerIds: [],
  });
  t.same(
    decideReroute(
      { action: 'exec', unmetNeeds: ['display'] },
      consent({ desk: { scope: 'full' } }, true),
      [linuxDesktop],
    ).kind,
    'kill_switch',
  );
});

t.test(
  'a worker kill switch: another capable worker runs it; none left is the switch',
  async (t) => {
    t.same(
      decideReroute(
        { action: 'exec', unmetNeeds: ['display'] },
        consent({ desk: { scope: 'full', killSwitch: true }, mac: { scope: 'full' } }),
        [linuxDesktop, mac],
      ),
      { kind: 'run', workerId: 'mac', requiredScope: 'full', scope: 'full' },
    );
    t.same(
      decideReroute(
        { action: 'exec', unmetNeeds: ['display'] },
        consent({ desk: { scope: 'full', killSwitch: true } }),
        [linuxDesktop],
      ),
      { kind: 'kill_switch', workerIds: ['desk'] },
    );
  },
);

t.test('no worker provides the needs: names what each lacks', async (t) => {
  const gone: GateWorker = { ...mac, connected: false };
  const d = decideReroute(
    { action: 'exec', unmetNeeds: ['gpu'] },
    consent({ desk: { scope: 'full' } }),
    [linuxDesktop, gone],
  );
  t.same(d, {
    kind: 'no_worker',
    requiredScope: 'full',
    labels: ['gpu'],
    workers: [
      { workerId: 'desk', connected: true, missing: ['gpu'] },
      { workerId: 'mac', connected: false, missing: ['gpu'] },
    ],
  });
  const disconnected = decideReroute(
    { action: 'exec', unmetNeeds: ['macos_tooling'] },
    consent({ mac: { scope: 'full' } }),
    [gone],
  );
  t.equal(disconnected.kind, 'no_worker', 'a disconnected worker is never chosen');
});

t.test('the hint os must match the worker os', async (t) => {
  const d = decideReroute(
    { action: 'fs_read', unmetNeeds: ['user_files', 'os'], hintOs: 'darwin' },
    consent({ desk: { scope: 'full' }, mac: { scope: 'observe' } }),
    [linuxDesktop, mac],
  );
  t.same(d, { kind: 'run', workerId: 'mac', requiredScope: 'observe', scope: 'observe' });
});

t.test('actions worker hosts do not serve are not rerouted', async (t) => {
  for (const action of ['fetch', 'promote_artifact', 'build'] as const) {
    t.same(
      decideReroute({ action, unmetNeeds: ['display'] }, consent({ desk: { scope: 'full' } }), [
        linuxDesktop,
      ]),
      { kind: 'not_reroutable' },
      action,
    );
  }
});

t.test('among covered workers the least loaded runs it', async (t) => {
  const busy = { ...linuxDesktop, inFlight: 3 };
  const idle = { ...linuxDesktop, workerId: 'desk2', inFlight: 0 };
  const d = decideReroute(
    { action: 'exec', unmetNeeds: ['display'] },
    consent({ desk: { scope: 'full' }, desk2: { scope: 'full' } }),
    [busy, idle],
  );
  t.equal(d.kind === 'run' && d.workerId, 'desk2');
});
