import t from 'tap';
import {
  ACTION_NAMES,
  type Authority,
  checkActionAuthority,
  isSystemAuthority,
  isUserSubject,
  systemAuthority,
  TOOL_ACTION_NAMES,
  userAuthority,
  WorkbenchError,
} from '../../src/contract/index.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof WorkbenchError ? err.code : 'not a WorkbenchError';
  }
  return undefined;
}

t.test('user authority', async (t) => {
  const user = userAuthority('user:alice@example.com');
  t.strictSame({ ...user }, { class: 'user', subject: 'user:alice@example.com' });
  t.ok(Object.isFrozen(user));
  t.notOk(isSystemAuthority(user));
  for (const subject of [
    'alice',
    'system:deploy',
    'user:',
    'user:has space',
    '',
    `user:${'a'.repeat(300)}`,
  ]) {
    t.equal(
      codeOf(() => userAuthority(subject)),
      'invalid_arguments',
      JSON.stringify(subject),
    );
  }
});

t.test('the system constructor refuses a user subject', async (t) => {
  t.equal(
    codeOf(() => systemAuthority('user:alice')),
    'forbidden',
  );
  t.equal(
    codeOf(() => systemAuthority('user:')),
    'forbidden',
  );
  for (const subject of [
    'deploy',
    'system:',
    'system:Deploy',
    'system:de ploy',
    'admin:root',
    '',
  ]) {
    t.equal(
      codeOf(() => systemAuthority(subject)),
      'invalid_arguments',
      JSON.stringify(subject),
    );
  }
  t.ok(isUserSubject('user:x'));
  t.notOk(isUserSubject('system:deploy'));
});

t.test('a system authority is recognised only when minted', async (t) => {
  const minted = systemAuthority('system:deploy');
  t.equal(minted.class, 'system');
  t.equal(minted.subject, 'system:deploy');
  t.ok(isSystemAuthority(minted));
  t.ok(Object.isFrozen(minted));
  t.throws(() => {
    (minted as { subject: string }).subject = 'user:alice';
  }, TypeError);

  const forgeries: unknown[] = [
    { class: 'system', subject: 'system:deploy' },
    { ...minted },
    Object.assign(Object.create(Object.getPrototypeOf(minted)), minted),
    JSON.parse(JSON.stringify(minted)),
    structuredClone(minted),
    null,
    undefined,
    'system:deploy',
  ];
  for (const forged of forgeries)
    t.notOk(isSystemAuthority(forged), JSON.stringify(forged) ?? 'undefined');
});

t.test('build is refused for anything but a minted system authority', async (t) => {
  const forged = { class: 'system', subject: 'system:deploy' } as Authority;
  const refusedFor: [string, Authority | undefined][] = [
    ['no authority', undefined],
    ['a user', userAuthority('user:alice')],
    ['a forged system literal', forged],
  ];
  for (const [label, authority] of refusedFor) {
    const failure = checkActionAuthority('build', authority);
    t.equal(failure?.errorCode, 'build_not_permitted', label);
    t.equal(failure?.ok, false);
    t.match(failure?.message ?? '', /^build_not_permitted: /);
  }
  t.equal(checkActionAuthority('build', systemAuthority('system:deploy')), null);
});

t.test('every tool action is open to users and to callers without authority', async (t) => {
  t.strictSame(
    [...TOOL_ACTION_NAMES],
    ACTION_NAMES.filter((a) => a !== 'build' && a !== 'process_shell'),
  );
  for (const action of TOOL_ACTION_NAMES) {
    t.equal(checkActionAuthority(action, userAuthority('user:alice')), null, action);
    t.equal(checkActionAuthority(action, undefined), null, action);
    t.equal(checkActionAuthority(action, systemAuthority('system:deploy')), null, action);
  }
});
