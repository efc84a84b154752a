import t from 'tap';
import {
  admitEnvelope,
  type Envelope,
  parseEnvelope,
  systemAuthority,
  userAuthority,
  WORKBENCH_OS,
} from '../../src/contract/index.js';

const BASE = { runId: 'run-1', agentId: 'a', taskId: 't' };

function envelope(action: string, extra: Record<string, unknown> = {}): Envelope {
  const parsed = parseEnvelope({
    ...BASE,
    action,
    args: action === 'fs_read' ? { path: 'a' } : {},
    ...extra,
  });
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.envelope;
}

const user = userAuthority('user:alice');
const system = systemAuthority('system:deploy');

t.test('admission: the hint first, then the build gate, one answer for both sides', async (t) => {
  const cases: [string, Envelope, Parameters<typeof admitEnvelope>[1], string | null][] = [
    ['no hint', envelope('fs_read'), user, null],
    ['the workbench os', envelope('fs_read', { environment: { os: WORKBENCH_OS } }), user, null],
    [
      'another os',
      envelope('fs_read', { environment: { os: 'darwin' } }),
      user,
      'environment_mismatch',
    ],
    [
      'a need',
      envelope('fs_read', { environment: { needs: ['display'] } }),
      user,
      'environment_mismatch',
    ],
    [
      'a typo',
      envelope('fs_read', { environment: { needs: ['macos-tooling'] } }),
      user,
      'invalid_environment_hint',
    ],
    ['build as a user', envelope('build'), user, 'build_not_permitted'],
    ['build with no authority', envelope('build'), undefined, 'build_not_permitted'],
    ['build as system', envelope('build'), system, null],
    // A bad hint is answered before the gate: the caller fixes the call first.
    ['build, bad hint', envelope('build', { environment: null }), user, 'invalid_environment_hint'],
  ];
  for (const [name, e, authority, want] of cases) {
    const refused = admitEnvelope(e, authority);
    t.equal(refused === null ? null : refused.errorCode, want, name);
  }
});

t.test('a workbench is Linux', async (t) => {
  t.equal(WORKBENCH_OS, 'linux');
});
