import { randomBytes } from 'node:crypto';
import { access, chmod, mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { BwrapRunner } from '../../src/sandbox/bwrap/index.js';
import { type RunSpec, SANDBOX_UID } from '../../src/sandbox/runner.js';
import { makeWorkspace } from './sandbox-support.js';

/**
 * What a command inside the bwrap sandbox can see and do, with real bubblewrap. A
 * missing or broken bwrap fails these tests (run scripts/setup/install-sandbox.sh); never a skip.
 */

const INSTALL = 'bubblewrap must work here: run scripts/setup/install-sandbox.sh (as root)';
const runner = new BwrapRunner();

// A secret in the node's environment, as a real node would hold database passwords.
const canary = `canary-${randomBytes(12).toString('hex')}`;
process.env.MEMQL_TEST_CANARY = canary;

async function run(workspaceDir: string, command: string, extra: Partial<RunSpec> = {}) {
  return runner.run({
    workspaceDir,
    command,
    timeoutMs: 20_000,
    outputLimitBytes: 1 << 20,
    ...extra,
  });
}

t.test('probe: bwrap is present and a trivial sandbox runs', async (t) => {
  const probe = await runner.probe();
  t.same(probe.ok ? { ok: true } : probe, { ok: true }, INSTALL);
});

t.test('probe without bwrap says what to install or set', async (t) => {
  const probe = await new BwrapRunner({ bwrapPath: '/nonexistent/bwrap' }).probe();
  t.equal(probe.ok, false);
  if (!probe.ok) {
    t.match(probe.reason, 'apt-get install bubblewrap');
    t.match(probe.reason, 'MEMQL_RUNNER=docker');
    t.match(probe.reason, 'MEMQL_RUNNER=process');
  }
});

t.test("the node's environment is unreachable from the command", async (t) => {
  const ws = await makeWorkspace(t);
  const r = await run(
    ws,
    [
      'env',
      'cat /proc/1/environ /proc/self/environ',
      'cat /proc/[0-9]*/environ /proc/[0-9]*/task/[0-9]*/environ; echo',
      // Any file the sandbox can see that holds the value (the pattern comes on stdin,
      // so it is in no command line); /usr is the host's read-only system files.
      'grep -rlF -D skip -f - / --exclude-dir=proc --exclude-dir=usr --exclude=tty',
      'echo "grep-exit=$?"',
      'for p in /root /home /var/lib /var/log /var/cache /run /sys /work /var/lib/postgresql /etc/shadow; do test -e $p && echo "VIS""IBLE $p"; done',
      // /var holds only the sandbox's own empty /var/tmp.
      'test "$(ls -A /var)" = tmp || echo "VIS""IBLE /var: $(ls -A /var)"',
      'echo done',
    ].join('; '),
    { stdin: `${canary}\n` },
  );
  const out = r.stdout.toString() + r.stderr.toString();
  t.equal(r.exitCode, 0, out);
  t.match(r.stdout.toString(), /^PATH=\/usr\/local\/bin:\/usr\/bin:\/bin$/m, 'the env was read');
  t.match(r.stdout.toString(), /^grep-exit=1$/m, 'grep searched and found nothing');
  t.equal(r.stderr.toString(), '', 'every file was readable or skipped');
  t.notMatch(out, canary, 'the canary appears nowhere');
  t.notMatch(out, 'MEMQL_TEST_CANARY');
  t.notMatch(out, 'VISIBLE', 'host directories are not mounted');
  t.match(r.stdout.toString(), /done\n$/);
});

t.test('every process in the sandbox has only the command environment', async (t) => {
  const ws = await makeWorkspace(t);
  // pid 1 is bwrap's init, which inherits what bwrap was started with.
  const r = await run(
    ws,
    'cat /proc/1/environ | wc -c; cat /proc/[0-9]*/environ | tr "\\0" "\\n" | cut -d= -f1 | sort -u | tr "\\n" " "',
    {
      env: { FOO: 'x' },
    },
  );
  t.equal(r.stdout.toString(), '0\nFOO HOME LANG PATH PWD ', r.stderr.toString());
});

t.test('the environment is the base plus the agent entries', async (t) => {
  const ws = await makeWorkspace(t);
  const r = await run(ws, 'echo "$FOO|$HOME|$LANG"; env | cut -d= -f1 | sort | tr "\\n" " "', {
    env: { FOO: 'bar baz' },
  });
  t.equal(r.stdout.toString(), 'bar baz|/tmp|C.UTF-8\nFOO HOME LANG PATH PWD ');
  await t.rejects(
    run(ws, 'true', { env: { 'A=B': 'x' } }),
    { code: 'invalid_arguments' },
    'a name with = is refused',
  );
  await t.rejects(
    run(ws, 'true', { env: { 'A\0': 'x' } }),
    { code: 'invalid_arguments' },
    'a name with NUL is refused',
  );
});

t.test('no network: not Postgres, not a port of the node, no interface but loopback', async (t) => {
  const ws = await makeWorkspace(t);
  let accepted = 0;
  const server: Server = createServer((s) => {
    accepted++;
    s.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as { port: number }).port;
  const script = [
    'import socket, sys',
    `for port in (5432, ${port}):`,
    '    s = socket.socket()',
    '    s.settimeout(3)',
    '    try:',
    "        s.connect(('127.0.0.1', port)); print(port, 'connected')",
    '    except OSError as e:',
    "        print(port, 'failed', e.errno)",
    // /proc/net/dev, not if_nameindex(): the seccomp filter refuses netlink sockets.
    "lines = open('/proc/net/dev').read().splitlines()[2:]",
    "print('ifaces', ' '.join(sorted(l.split(':')[0].strip() for l in lines)))",
  ].join('\n');
  const r = await run(ws, 'python3 -c "$PY"', { env: { PY: script } });
  t.equal(r.exitCode, 0, r.stderr.toString());
  t.match(r.stdout.toString(), /^5432 failed/m);
  t.match(r.stdout.toString(), new RegExp(`^${port} failed`, 'm'));
  t.match(r.stdout.toString(), /^ifaces lo$/m, 'only the private loopback');
  t.equal(accepted, 0, 'the node-side server saw no connection');

  // The same script reaches the server from outside the sandbox: the test can see a leak.
  const { spawnSync } = await import('node:child_process');
  const host = spawnSync('/usr/bin/python3', ['-c', script], { encoding: 'utf8' });
  t.match(host.stdout, new RegExp(`^${port} connected`, 'm'), 'control: reachable from the host');
});

t.test('commands run as uid 10001 and their files belong to 10001 on the host', async (t) => {
  const ws = await makeWorkspace(t);
  const r = await run(ws, 'id -u; id -g; touch made; mkdir dir; echo x > dir/f');
  t.equal(r.exitCode, 0, r.stderr.toString());
  t.equal(r.stdout.toString(), `${SANDBOX_UID}\n${SANDBOX_UID}\n`);
  for (const path of ['made', 'dir', 'dir/f']) {
    const st = await stat(join(ws, path));
    t.same([st.uid, st.gid], [SANDBOX_UID, SANDBOX_UID], `${path} owned by ${SANDBOX_UID}`);
  }
});

t.test('the workspace root is handed to the sandbox uid (lchown, only the root)', async (t) => {
  const ws = await makeWorkspace(t);
  const { chown } = await import('node:fs/promises');
  await chown(ws, 0, 0);
  const r = await run(ws, 'touch ok');
  t.equal(r.exitCode, 0, r.stderr.toString());
  t.equal((await stat(ws)).uid, SANDBOX_UID);
});

t.test('nothing outside /workspace is writable; /tmp is private', async (t) => {
  const ws = await makeWorkspace(t);
  const name = `memql-private-${randomBytes(6).toString('hex')}`;
  const r = await run(
    ws,
    `for p in /usr/x /etc/x /x /bin/x /dev/x /proc/x; do touch $p 2>/dev/null && echo "wrote $p"; done; echo hi > /tmp/${name} && cat /tmp/${name}`,
  );
  t.equal(r.stdout.toString(), 'hi\n', 'only /tmp was written');
  await t.rejects(access(join('/tmp', name)), 'the sandbox /tmp is not the host /tmp');
  await t.rejects(access('/usr/x'));
});

t.test('stdin is delivered, and closed when absent', async (t) => {
  const ws = await makeWorkspace(t);
  t.equal((await run(ws, 'cat', { stdin: 'hello\nworld' })).stdout.toString(), 'hello\nworld');
  t.equal((await run(ws, 'cat', { stdin: Buffer.from([1, 2, 3]) })).stdout.length, 3);
  const r = await run(ws, 'cat; echo end', { timeoutMs: 5000 });
  t.equal(r.stdout.toString(), 'end\n');
  t.equal(r.timedOut, false);
});

t.test('a non-zero exit is a result, with both streams', async (t) => {
  const ws = await makeWorkspace(t);
  const r = await run(ws, 'echo out; echo err >&2; exit 7');
  t.same(
    [r.exitCode, r.signal, r.timedOut, r.cancelled, r.oomKilled],
    [7, null, false, false, false],
  );
  t.equal(r.stdout.toString(), 'out\n');
  t.equal(r.stderr.toString(), 'err\n');
});

t.test('cwd is a directory of the workspace', async (t) => {
  const ws = await makeWorkspace(t, ['a/b']);
  const r = await run(ws, 'pwd; touch here', { cwd: 'a/b' });
  t.equal(r.stdout.toString(), '/workspace/a/b\n');
  await stat(join(ws, 'a/b/here'));
  t.equal((await run(ws, 'pwd', { cwd: './a/' })).stdout.toString(), '/workspace/a\n');
  await t.rejects(run(ws, 'pwd', { cwd: '../x' }), { code: 'invalid_path' });
  await t.rejects(run(ws, 'pwd', { cwd: '/etc' }), { code: 'invalid_path' });
  await t.rejects(run(ws, 'pwd', { cwd: 'missing' }), { code: 'path_not_found' });
});

t.test('a sandbox that cannot start rejects instead of reporting an exit', async (t) => {
  // The workspace sits in a directory uid 10001 cannot enter, so bwrap cannot bind it.
  const locked = await mkdtemp(join(tmpdir(), 'memql-locked-'));
  t.teardown(() => rm(locked, { recursive: true, force: true }));
  await chmod(locked, 0o700);
  const ws = join(locked, 'ws');
  const { mkdir } = await import('node:fs/promises');
  await mkdir(ws);
  await t.rejects(run(ws, 'echo should-not-run'), {
    code: 'no_sandbox',
    message: /the bwrap sandbox did not start.*Can't find source path/,
  });

  const missing = new BwrapRunner({ bwrapPath: '/nonexistent/bwrap' });
  const ok = await makeWorkspace(t);
  await t.rejects(
    missing.run({ workspaceDir: ok, command: 'true', timeoutMs: 5000, outputLimitBytes: 100 }),
    { code: 'no_sandbox', message: /did not start/ },
  );
});
