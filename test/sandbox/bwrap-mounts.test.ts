import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmod,
  chown,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { BwrapRunner, STAGE_PREFIX } from '../../src/sandbox/bwrap/index.js';
import { SANDBOX_UID } from '../../src/sandbox/runner.js';

/**
 * The sandbox's mount table reveals no host path: the workspace is staged through an
 * overlay of its own (src/sandbox/workspace-staging.ts), real bwrap, real mounts. The
 * control runs the same command with staging off and finds the path, so a leak shows.
 */

/** A workbench root as a node has one (`MEMQL_WORKBENCH_ROOT`), and a run's workspace in it. */
async function workbench(t: Test): Promise<{ root: string; ws: string }> {
  const root = await mkdtemp(join(tmpdir(), 'memql-wbroot-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  await chmod(root, 0o755); // searchable by the sandbox uid, as the workbench root is
  const ws = join(root, `run-${randomBytes(4).toString('hex')}`);
  await mkdir(ws);
  await chown(ws, SANDBOX_UID, SANDBOX_UID);
  return { root, ws };
}

/** Everything that could name a mount's source, then how often /workspace is mounted. */
const READ_MOUNTS = [
  'cat /proc/self/mountinfo /proc/mounts /proc/1/mountinfo /proc/self/mountstats',
  'tr "\\0" "\\n" < /proc/1/environ',
  'grep -c " /workspace " /proc/self/mountinfo',
].join('; ');

async function run(runner: BwrapRunner, ws: string, command: string) {
  return runner.run({ workspaceDir: ws, command, timeoutMs: 30_000, outputLimitBytes: 1 << 20 });
}

t.test(
  'mountinfo and /proc/mounts name neither the workspace nor the workbench root',
  async (t) => {
    const { root, ws } = await workbench(t);
    const r = await run(new BwrapRunner(), ws, READ_MOUNTS);
    t.equal(r.exitCode, 0, r.stderr.toString());
    const out = r.stdout.toString();
    t.match(out, /\n1\n$/, 'the workspace is mounted, once');
    t.match(
      out,
      / \/ \/workspace rw,.* - overlay memql-workspace rw,lowerdir=lower,upperdir=upper,/,
    );
    t.notOk(out.includes(ws), 'no workspace path');
    t.notOk(out.includes(root), 'no workbench root');

    const control = await run(new BwrapRunner({ stageWorkspace: false }), ws, READ_MOUNTS);
    t.ok(control.stdout.toString().includes(ws), 'control: a plain bind shows the host path');
  },
);

t.test('the staged workspace behaves as the directory itself', async (t) => {
  const { root, ws } = await workbench(t);
  await writeFile(join(ws, 'from-host.txt'), 'host\n');
  await chown(join(ws, 'from-host.txt'), SANDBOX_UID, SANDBOX_UID);
  const r = await run(
    new BwrapRunner(),
    ws,
    [
      'set -e',
      'cat from-host.txt',
      'echo one > a.txt && mkdir -p d/e && echo two > d/e/f',
      'mv d moved && ln a.txt hard && ln -s a.txt soft && mkfifo pipe',
      'echo gone > tmp && rm tmp && chmod 600 a.txt && rm from-host.txt',
      'ls -A | sort | tr "\\n" " "',
    ].join('\n'),
  );
  t.equal(r.exitCode, 0, r.stderr.toString());
  t.equal(r.stdout.toString(), 'host\na.txt hard moved pipe soft ');
  t.same((await readdir(ws)).sort(), ['a.txt', 'hard', 'moved', 'pipe', 'soft']);
  t.equal(await readFile(join(ws, 'moved/e/f'), 'utf8'), 'two\n');
  const a = await lstat(join(ws, 'a.txt'));
  t.same([a.uid, a.nlink, a.mode & 0o777], [SANDBOX_UID, 2, 0o600]);
  t.equal(await readlink(join(ws, 'soft')), 'a.txt');
  t.ok((await lstat(join(ws, 'pipe'))).isFIFO());
  t.same(
    (await readdir(root)).filter((n) => n.startsWith(STAGE_PREFIX)),
    [],
    'no scratch directory is left beside the workspace',
  );
});

t.test('scratch directories of a killed node are swept, never what they link to', async (t) => {
  const { root, ws } = await workbench(t);
  const deadPid = spawnSync('/bin/true').pid;
  const stale = join(root, `${STAGE_PREFIX}${deadPid}-0123456789ab`);
  await mkdir(join(stale, 'work/work'), { recursive: true });
  await symlink(ws, join(stale, 'upper'));
  await writeFile(join(ws, 'keep.txt'), 'kept');
  const other = join(root, `${STAGE_PREFIX}Operator-Notes`);
  await mkdir(other);

  const runner = new BwrapRunner();
  const r = await run(runner, ws, 'cat keep.txt');
  t.equal(r.stdout.toString(), 'kept');
  t.same(
    (await readdir(root)).sort(),
    [`${STAGE_PREFIX}Operator-Notes`, ws.slice(root.length + 1)].sort(),
    'the stale scratch directory is gone; a name not of our form is left alone',
  );
  t.equal(await readFile(join(ws, 'keep.txt'), 'utf8'), 'kept', 'its link was not followed');
});

t.test('a workspace that is a mount point of its own runs with the plain bind', async (t) => {
  const { ws } = await workbench(t);
  await promisify(execFile)('/usr/bin/mount', [
    '-t',
    'tmpfs',
    '-o',
    'size=1m,mode=0755',
    'memql-test',
    ws,
  ]);
  t.teardown(() => promisify(execFile)('/usr/bin/umount', [ws]));
  const r = await run(
    new BwrapRunner(),
    ws,
    'echo ok > f && cat f && grep -c " /workspace " /proc/self/mountinfo',
  );
  t.equal(r.exitCode, 0, r.stderr.toString());
  t.equal(r.stdout.toString(), 'ok\n1\n');
  t.equal(await readFile(join(ws, 'f'), 'utf8'), 'ok\n');
});

t.test('the probe says when the mount table shows the host path', async (t) => {
  t.same(await new BwrapRunner().probe(), { ok: true }, 'staged: nothing to say');
  const off = await new BwrapRunner({ stageWorkspace: false }).probe();
  t.match(off, {
    ok: true,
    warnings: [
      /disabled by configuration: the sandbox's mount table shows the workspace's host path/,
    ],
  });
});
