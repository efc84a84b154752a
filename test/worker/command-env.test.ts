import t from 'tap';
import { commandBaseEnv } from '../../src/worker/index.js';

/** The base environment of a worker's commands: an allowlist, never the worker's environment. */

const WORKER_ENV = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HOME: '/home/me',
  USER: 'me',
  LANG: 'en_GB.UTF-8',
  LC_ALL: '',
  TZ: 'Europe/London',
  TMPDIR: '/tmp',
  DISPLAY: ':0',
  XAUTHORITY: '/home/me/.Xauthority',
  WAYLAND_DISPLAY: 'wayland-0',
  MEMQL_WORKER_TOKEN: 'mqt_secret',
  MEMQL_WORKER_AGENT: 'agent:50060',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  SSH_AUTH_SOCK: '/run/ssh.sock',
  LD_PRELOAD: '/evil.so',
  SHELL: '/bin/zsh',
  NUL: 'a\0b',
};

t.test('without display: the session variables only, unset and empty ones left out', async (t) => {
  t.strictSame(commandBaseEnv(WORKER_ENV, ['user_files']), {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: '/home/me',
    USER: 'me',
    LANG: 'en_GB.UTF-8',
    TZ: 'Europe/London',
    TMPDIR: '/tmp',
  });
});

t.test('with display: the display variables too', async (t) => {
  const env = commandBaseEnv(WORKER_ENV, ['display', 'user_files']);
  t.equal(env.DISPLAY, ':0');
  t.equal(env.XAUTHORITY, '/home/me/.Xauthority');
  t.equal(env.WAYLAND_DISPLAY, 'wayland-0');
});

t.test('nothing else of the worker environment, whatever it holds', async (t) => {
  for (const provides of [[], ['display', 'gpu', 'macos_tooling', 'user_files']] as const) {
    const env = commandBaseEnv(WORKER_ENV, provides);
    const names = Object.keys(env);
    t.notOk(
      names.some((n) => n.startsWith('MEMQL_')),
      'no MEMQL_* variable',
    );
    t.notOk(Object.values(env).includes('mqt_secret'), 'not the token');
    for (const name of ['AWS_SECRET_ACCESS_KEY', 'SSH_AUTH_SOCK', 'LD_PRELOAD', 'SHELL', 'NUL']) {
      t.notOk(name in env, `${name} is not passed`);
    }
  }
  t.strictSame(commandBaseEnv({}, ['display']), {});
});
