import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parseCgroupMembership } from '../../src/sandbox/cgroups/index.js';
import { createRun, openDb } from '../../src/store/index.js';
import { eventually, openRawStream } from '../support/mesh.js';
import { type MeshTestEnv, startWorkbench } from '../support/mesh-harness.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * A workbench node on the bwrap runner, SIGKILLed while a command runs, leaves that
 * command's cgroups behind; started again, it removes them before it serves, and its
 * cleanup sweep keeps removing such leftovers while it runs. Real node processes, real
 * bwrap, real cgroups, a real kill.
 */

const database = await createTestDatabase();
t.teardown(() => database.drop());
const db = await openDb({ kind: 'postgres', url: database.url });
t.teardown(() => db.close());
await createRun(db, { id: 'run-kill', ownerUserId: 'alice' });
const baseDir = await mkdtemp(join(tmpdir(), 'memql-wbcg-'));
// The sandbox uid must reach the workspaces under it.
await chmod(baseDir, 0o755);
t.teardown(() => rm(baseDir, { recursive: true, force: true }));
await mkdir(join(baseDir, 'objects'));
const env: MeshTestEnv = {
  databaseUrl: database.url,
  token: 'workbench-cgroups-token-0123456789',
  baseDir,
  objectsDir: join(baseDir, 'objects'),
};

// The node is this process's child, so its cgroups are this process's; commands go
// under `memql` there (the runner's default), which other test files may share: only
// groups named after the node's pid are its own.
const membership = parseCgroupMembership(await readFile('/proc/self/cgroup', 'utf8'));
const parents = ['pids', 'memory', 'cpu'].map((c) =>
  join('/sys/fs/cgroup', c, membership.get(c) ?? '/', 'memql'),
);

/** Group directories of commands made by process `pid`, under every controller. */
async function groupsOf(pid: number): Promise<string[]> {
  const found: string[] = [];
  for (const parent of parents) {
    const entries = await readdir(parent, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (e.isDirectory() && e.name.startsWith(`${pid}-`)) found.push(join(parent, e.name));
    }
  }
  return found;
}

/** Processes in any of `dirs` (a group that is gone holds none). */
async function processesIn(dirs: readonly string[]): Promise<number> {
  let n = 0;
  for (const dir of dirs) {
    const text = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
    n += text.split('\n').filter((l) => l.trim() !== '').length;
  }
  return n;
}

t.test('groups left by a killed node are removed when it starts again', async (t) => {
  const nodeEnv = { MEMQL_RUNNER: 'bwrap' };
  const first = await startWorkbench(t, env, 'wb-cg', { host: '127.0.0.1', port: 0 }, nodeEnv);
  const firstPid = first.proc.child.pid!;
  const raw = openRawStream(`127.0.0.1:${first.port}`, env.token);
  t.teardown(() => raw.close());
  raw.send({
    kind: 'request',
    id: 'sleep',
    method: 'workbench.dispatch',
    authority: { class: 'user', subject: 'user:alice' },
    payload: Buffer.from(
      JSON.stringify({
        action: 'exec',
        args: { command: 'sleep 600' },
        runId: 'run-kill',
        agentId: 'a',
        taskId: 't',
      }),
    ),
  });
  await eventually(
    'the command runs in its groups',
    async () => (await processesIn(await groupsOf(firstPid))) > 0,
    60_000,
  );

  await first.proc.stop('SIGKILL');
  const left = await groupsOf(firstPid);
  // Its command's groups, and those of the warm pool's sandboxes, one under each controller.
  for (const parent of parents) {
    t.ok(
      left.some((dir) => dir.startsWith(`${parent}/`)),
      `the killed node left groups of its own under ${parent}`,
    );
  }
  // bwrap dies with its parent (--die-with-parent), and the sandbox with it; an empty
  // group stays until someone removes it.
  await eventually('the processes of the killed command are gone', async () => {
    return (await processesIn(left)) === 0;
  });

  const second = await startWorkbench(
    t,
    env,
    'wb-cg',
    { host: '127.0.0.1', port: 0 },
    { ...nodeEnv, MEMQL_CLEANUP_INTERVAL_MS: '200' },
  );
  t.same(await groupsOf(firstPid), [], 'none left once the node serves again');

  // While it runs, its cleanup sweep takes what other killed processes leave.
  const gone = spawn('/bin/true');
  await once(gone, 'exit');
  const leftover = parents.map((p) => join(p, `${gone.pid}-feed`));
  for (const dir of leftover) await mkdir(dir, { recursive: true });
  t.teardown(async () => {
    for (const dir of leftover) await rmdir(dir).catch(() => {});
  });
  await eventually('the periodic sweep removes a leftover group', async () => {
    return (await groupsOf(gone.pid!)).length === 0;
  });
  // Other test files' runners sweep the same parent, so which process removed it is not
  // the point; that this node's sweep runs the sandbox runner's is.
  const line = await second.proc.waitForLog(
    (l) => l.msg === 'workspace_command.temp_cleanup' && typeof l.sandboxLeftovers === 'number',
  );
  t.ok(line, 'the cleanup sweep sweeps the sandbox runner');
  await second.proc.stop('SIGTERM');
});
