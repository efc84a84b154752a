import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { BwrapRunner } from '../../src/sandbox/bwrap/index.js';
import { SANDBOX_UID } from '../../src/sandbox/runner.js';

/**
 * Nothing a command can read of the processes it sees names a host path: not the
 * command line of the sandbox's process 1 (a copy of bwrap, whose options bind the
 * workspace's host path), nor any other process's command line, environment, working
 * directory or root, nor the mount table. Real bwrap, one-shot and warm sandboxes.
 */

async function workbench(t: Test): Promise<{ root: string; ws: string }> {
  const root = await mkdtemp(join(tmpdir(), 'memql-hostpaths-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  await chmod(root, 0o755);
  const ws = join(root, `run-${randomBytes(4).toString('hex')}`);
  await mkdir(ws);
  await chown(ws, SANDBOX_UID, SANDBOX_UID);
  return { root, ws };
}

/** Every process's command line, environment and links, then the mount tables. */
const READ_PROCESSES = [
  'for p in /proc/[0-9]*; do',
  '  echo "== $p"; tr "\\0" " " < "$p/cmdline"; echo;',
  '  tr "\\0" "\\n" < "$p/environ";',
  '  readlink "$p/cwd" "$p/root" "$p/exe";',
  'done',
  'echo "== mounts"; cat /proc/self/mountinfo /proc/1/mountinfo',
].join('\n');

async function read(runner: BwrapRunner, ws: string, reuse?: string): Promise<string> {
  const r = await runner.run({
    workspaceDir: ws,
    command: READ_PROCESSES,
    timeoutMs: 30_000,
    outputLimitBytes: 1 << 20,
    ...(reuse ? { reuse } : {}),
  });
  if (r.exitCode !== 0) throw new Error(`exit ${r.exitCode}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

t.test('the processes a command sees show no host path, one-shot and warm', async (t) => {
  const { root, ws } = await workbench(t);
  const runner = new BwrapRunner({ warmIdleMs: 60_000 });
  t.teardown(() => runner.close());
  const oneShot = await read(runner, ws);
  // Twice warm: the second command runs in the sandbox the first one started.
  await read(runner, ws, 'copy-1');
  const warm = await read(runner, ws, 'copy-1');
  for (const [what, out] of [
    ['one-shot', oneShot],
    ['warm', warm],
  ] as const) {
    t.match(out, /== \/proc\/1\n\/usr\/bin\/bwrap --args 9 -- /, `${what}: process 1 is bwrap`);
    t.match(out, /== mounts\n/, `${what}: everything was read`);
    t.notOk(out.includes(ws), `${what}: no workspace path`);
    t.notOk(out.includes(root), `${what}: no workbench root`);
  }
  t.match(warm, /== \/proc\/2\n\/usr\/bin\/perl -e /, 'warm: process 2 is the session agent');
});

t.test('without the staging overlay only the mount table names the workspace', async (t) => {
  const { ws } = await workbench(t);
  const runner = new BwrapRunner({ stageWorkspace: false, warmIdleMs: 0 });
  const out = await read(runner, ws);
  const [processes, mounts] = out.split('== mounts\n');
  t.notOk(processes?.includes(ws), 'no process shows the workspace path');
  t.ok(mounts?.includes(ws), 'the plain bind shows it in mountinfo (see workspace-staging.ts)');
});
