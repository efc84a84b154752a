import t from 'tap';
import {
  bwrapArgs,
  bwrapArgv,
  bwrapCommandLine,
  encodeBwrapOptions,
  SANDBOX_EGRESS_PRELUDE,
  SANDBOX_PRELUDE,
} from '../../src/sandbox/bwrap/index.js';

const base = {
  workspaceDir: '/data/ws/1',
  cwd: '.',
  env: { PATH: '/usr/bin', FOO: 'a b' },
  command: 'echo hi',
  systemDirs: [
    { path: '/bin', kind: 'symlink', target: 'usr/bin' },
    { path: '/lib64', kind: 'dir' },
  ] as const,
  tmpSizeBytes: 1000,
  shmSizeBytes: 500,
};

/** Pairs of (option, value) present in argv. */
function pairs(args: string[], option: string): string[][] {
  const out: string[][] = [];
  args.forEach((a, i) => {
    if (a === option) out.push(args.slice(i + 1, i + 3));
  });
  return out;
}

t.test('every namespace is new and the network is not shared', async (t) => {
  const args = bwrapArgs(base);
  for (const flag of [
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
  ]) {
    t.ok(args.includes(flag), flag);
  }
  t.notOk(args.includes('--share-net'));
  t.notOk(args.includes('--uid'), 'no uid mapping when privileges were dropped before bwrap');
  t.same(bwrapArgs({ ...base, mapToUid: 10001 }).slice(9, 13), [
    '--uid',
    '10001',
    '--gid',
    '10001',
  ]);
});

t.test('only system directories, read-only; the workspace read-write', async (t) => {
  const args = bwrapArgs(base);
  const sources = [
    ...pairs(args, '--ro-bind'),
    ...pairs(args, '--ro-bind-try'),
    ...pairs(args, '--bind'),
  ].map(([src]) => src!);
  for (const src of sources) {
    t.match(src, /^(\/usr|\/lib64|\/etc\/[a-z.]+[a-z.d]*|\/data\/ws\/1)$/, `${src} may be bound`);
  }
  t.same(pairs(args, '--bind'), [['/data/ws/1', '/workspace']]);
  t.same(pairs(args, '--symlink'), [['usr/bin', '/bin']]);
  t.equal(args[args.indexOf('--proc') + 1], '/proc', 'a fresh /proc');
  t.equal(args[args.indexOf('--dev') + 1], '/dev', 'a minimal /dev');
  t.same(
    pairs(args, '--remount-ro').map(([p]) => p),
    ['/dev', '/'],
  );
  t.same(
    pairs(args, '--size').map(([n]) => n),
    ['500', '1000', '1000'],
  );
  t.same(
    pairs(args, '--tmpfs').map(([p]) => p),
    ['/dev/shm', '/tmp', '/var/tmp'],
    'empty /tmp and /var/tmp of its own',
  );
  t.notOk(args.includes('/run/memql'), 'no egress: nothing of the network is there');
});

t.test(
  'with egress: the proxy socket and the CA bundle, and the bridge before the command',
  async (t) => {
    const args = bwrapArgs({
      ...base,
      egress: { socketPath: '/node/egress/run-1.sock', caBundlePath: '/node/egress/ca.pem' },
    });
    t.same(pairs(args, '--bind'), [
      ['/data/ws/1', '/workspace'],
      ['/node/egress/run-1.sock', '/run/memql/egress.sock'],
    ]);
    t.ok(
      pairs(args, '--ro-bind').some(
        ([a, b]) => a === '/node/egress/ca.pem' && b === '/run/memql/ca-bundle.pem',
      ),
    );
    t.ok(
      args.indexOf('/run/memql/egress.sock') < args.lastIndexOf('--remount-ro'),
      'bound before the root is made read-only',
    );
    const program = args.slice(args.indexOf('--') + 1);
    t.equal(program[2], SANDBOX_EGRESS_PRELUDE);
    t.equal(program[4], 'echo hi');
    t.match(program[5], /memql-egress-bridge/);
    t.match(SANDBOX_EGRESS_PRELUDE, /exit 125; exec \/bin\/sh -c "\$1"$/);
  },
);

t.test('environment cleared then set; cwd; the command after the prelude', async (t) => {
  const args = bwrapArgs({ ...base, cwd: 'a/b' });
  const clear = args.indexOf('--clearenv');
  t.ok(clear > 0);
  t.same(
    pairs(args, '--setenv').map((p) => p.join('=')),
    ['PATH=/usr/bin', 'FOO=a b'],
  );
  t.ok(args.indexOf('--setenv') > clear);
  t.equal(args[args.indexOf('--chdir') + 1], '/workspace/a/b');
  t.equal(bwrapArgs(base)[bwrapArgs(base).indexOf('--chdir') + 1], '/workspace');
  t.same(args.slice(-6), ['--', '/bin/sh', '-c', SANDBOX_PRELUDE, 'memql-sandbox', 'echo hi']);
  t.match(SANDBOX_PRELUDE, /^printf \. >&3 \|\| exit 125; /, 'no command once the node is gone');
  t.match(SANDBOX_PRELUDE, /exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-; exec \/bin\/sh -c "\$1"$/);
});

t.test('bwrap reads its options from a descriptor: its argv names no host path', async (t) => {
  const line = bwrapCommandLine(base);
  const argv = bwrapArgv(line);
  t.same(argv, ['--args', '9', '--', '/bin/sh', '-c', SANDBOX_PRELUDE, 'memql-sandbox', 'echo hi']);
  t.notOk(argv.join('\0').includes(base.workspaceDir), 'the bind of the workspace is not on argv');
  t.notOk(argv.includes('--setenv'), 'nor the environment');
  t.same([...line.options, '--', ...line.program], bwrapArgs(base), 'the same command line');
  t.equal(
    encodeBwrapOptions(['--bind', '/a b', '/workspace']).toString(),
    '--bind\0/a b\0/workspace\0',
    'each option NUL-terminated',
  );
  // A NUL in a value would end it there, and the rest would be read as options.
  t.throws(() => encodeBwrapOptions(['--setenv', 'X', 'a\0--bind\0/\0/host']), TypeError);
});

t.test('the seccomp filter comes from its descriptor when asked for', async (t) => {
  const args = bwrapArgs({ ...base, seccomp: true });
  t.equal(args[args.indexOf('--seccomp') + 1], '8');
  t.ok(args.indexOf('--seccomp') < args.indexOf('--'), 'a bwrap option, not part of the command');
  t.notOk(bwrapArgs(base).includes('--seccomp'));
});
