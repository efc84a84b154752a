import t from 'tap';
import {
  admitEnvelope,
  parseEnvelope,
  systemAuthority,
  userAuthority,
  WORKBENCH_OS,
} from '../../src/contract/index.js';

const BASE = { runId: 'run-1', agentId: 'a', taskId: 't' };

/** A call as a process boundary meets it. */
function raw(action: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...BASE, action, args: action === 'fs_read' ? { path: 'a' } : {}, ...extra };
}

/**
 * What a process boundary answers a call with before it goes on: the envelope parse
 * (which reads the hint into its type), then admission on the typed envelope.
 */
function boundary(call: unknown, authority: Parameters<typeof admitEnvelope>[1]): string | null {
  const parsed = parseEnvelope(call);
  if (!parsed.ok) return parsed.errorCode;
  const refused = admitEnvelope(parsed.envelope, authority);
  return refused === null ? null : refused.errorCode;
}

const user = userAuthority('user:alice');
const system = systemAuthority('system:deploy');

t.test('admission: the hint first, then the build gate, one answer for both sides', async (t) => {
  const cases: [string, unknown, Parameters<typeof admitEnvelope>[1], string | null][] = [
    ['no hint', raw('fs_read'), user, null],
    ['the workbench os', raw('fs_read', { environment: { os: WORKBENCH_OS } }), user, null],
    ['another os', raw('fs_read', { environment: { os: 'darwin' } }), user, 'environment_mismatch'],
    [
      'a need',
      raw('fs_read', { environment: { needs: ['display'] } }),
      user,
      'environment_mismatch',
    ],
    [
      'a typo',
      raw('fs_read', { environment: { needs: ['macos-tooling'] } }),
      user,
      'invalid_environment_hint',
    ],
    ['build as a user', raw('build'), user, 'build_not_permitted'],
    ['build with no authority', raw('build'), undefined, 'build_not_permitted'],
    ['build as system', raw('build'), system, null],
    // A bad hint is answered before the gate: the caller fixes the call first.
    ['build, bad hint', raw('build', { environment: null }), user, 'invalid_environment_hint'],
  ];
  for (const [name, call, authority, want] of cases) {
    t.equal(boundary(call, authority), want, name);
  }
});

t.test('a workbench is Linux', async (t) => {
  t.equal(WORKBENCH_OS, 'linux');
});
