import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import type { BwrapSession } from '../../src/sandbox/bwrap/bwrap-session.js';
import { BwrapRunner, POOL_PREFIX } from '../../src/sandbox/bwrap/index.js';
import { WarmPool } from '../../src/sandbox/bwrap/warm-pool.js';
import { parseCgroupMembership } from '../../src/sandbox/cgroups/index.js';
import { type RunSpec, SANDBOX_UID } from '../../src/sandbox/runner.js';
import { leftovers, processesMatching } from './sandbox-support.js';

/**
 * The bwrap runner's warm pool (`warm-pool.ts`) with real bubblewrap, cgroups and the
 * real agent: a run's first command is served by a pooled sandbox (the pool's counter
 * says so), whose view is the run's workspace after the pooled directory is renamed
 * into place; the pool refills; two runs never share a pooled sandbox or see each
 * other's files; a command whose sandbox would differ from the pool's (other limits,
 * network), a workspace that is not empty or lives elsewhere starts its own; and close
 * leaves no process, cgroup or directory. A claim that fails while the pool refills
 * does not make it outgrow its size (a pool of stand-in sandboxes, to hold the refill
 * at that moment). A missing bwrap or perl fails; never a skip.
 */

const MiB = 1024 * 1024;
const GROUP = `memql-pool-test-${process.pid}`;
const root = await mkdtemp(join(tmpdir(), 'memql-pool-'));
await chmod(root, 0o755);
t.teardown(() => rm(root, { recursive: true, force: true }));
const asRoot = process.getuid?.() === 0;

const POOL = { size: 2, dir: root, memoryLimitBytes: 256 * MiB, pidsLimit: 64 };
const runner = new BwrapRunner({ cgroups: { groupName: GROUP }, warmPool: POOL });
t.teardown(() => runner.close());
const pool = runner.pooled!;

async function workspace(name: string, parent = root): Promise<string> {
  const dir = join(parent, name);
  await mkdir(dir, { mode: 0o755 });
  if (asRoot) await chown(dir, SANDBOX_UID, SANDBOX_UID);
  return dir;
}

function spec(workspaceDir: string, command: string, extra: Partial<RunSpec> = {}): RunSpec {
  return {
    workspaceDir,
    command,
    timeoutMs: 20_000,
    outputLimitBytes: MiB,
    memoryLimitBytes: POOL.memoryLimitBytes,
    pidsLimit: POOL.pidsLimit,
    reuse: 'copy-1',
    ...extra,
  };
}

async function run(s: RunSpec): Promise<string> {
  const r = await runner.run(s);
  if (r.exitCode !== 0) throw new Error(`exit ${r.exitCode}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

/** Fills the pool and returns its counters then. */
async function full() {
  runner.warm();
  await pool.filled();
  const stats = pool.stats();
  if (stats.ready !== stats.size)
    throw new Error(`the pool did not fill: ${JSON.stringify(stats)}`);
  return stats;
}

async function poolDirs(): Promise<string[]> {
  return (await readdir(root)).filter((n) => n.startsWith(POOL_PREFIX));
}

t.test('a run’s first command is served by the pool, in its own workspace', async (t) => {
  const before = await full();
  t.equal((await poolDirs()).length, 2, 'one empty directory per pooled sandbox');
  const ws = await workspace('run-a');
  const out = await run(
    spec(
      ws,
      'echo from-a > /workspace/a.txt; echo x > /var/tmp/x; cat /var/tmp/x; ls -A /tmp /var/tmp; id -u; pwd',
    ),
  );
  t.equal(pool.stats().served, before.served + 1, 'the pool served it');
  t.equal(out, 'x\n/tmp:\n\n/var/tmp:\nx\n10001\n/workspace\n');
  t.equal(
    await readFile(join(ws, 'a.txt'), 'utf8'),
    'from-a\n',
    'its writes are in the run’s directory',
  );
  t.equal(
    await run(spec(ws, 'cat a.txt; ls -A /var/tmp; echo .')),
    'from-a\n.\n',
    'the next command: the same files, /var/tmp emptied like /tmp',
  );
  t.equal(pool.stats().served, before.served + 1, 'the next command ran in the run’s own sandbox');
  await pool.filled();
  t.equal(pool.stats().ready, 2, 'the pool refilled');
  t.equal(pool.stats().started, before.started + 1);
});

t.test('two runs: two pooled sandboxes, neither sees the other', async (t) => {
  const before = await full();
  const a = await workspace('run-b1');
  const b = await workspace('run-b2');
  await run(spec(a, 'echo secret > mine.txt; echo left > /var/tmp/left; echo left > /tmp/left'));
  const seen = await run(spec(b, 'ls -A /workspace /var/tmp /tmp'));
  t.equal(seen, '/tmp:\n\n/var/tmp:\n\n/workspace:\n', 'nothing of the other run');
  t.equal(pool.stats().served, before.served + 2, 'each run had a pooled sandbox');
  t.same((await readdir(b)).sort(), [], 'the second run’s directory holds only its own');
  t.same((await readdir(a)).sort(), ['mine.txt']);
});

t.test('a sandbox unlike the pool’s, or a directory it cannot replace: a fresh one', async (t) => {
  const before = await full();
  const limits = await workspace('run-c1');
  await run(spec(limits, 'true', { pidsLimit: 65 }));
  t.equal(pool.stats().served, before.served, 'other limits');

  const notEmpty = await workspace('run-c2');
  await writeFile(join(notEmpty, 'kept.txt'), 'kept');
  t.equal(await run(spec(notEmpty, 'cat kept.txt')), 'kept', 'its file is there');
  t.equal(pool.stats().served, before.served, 'a workspace with files');
  t.equal(pool.stats().ready, 2, 'and the pool keeps its sandbox');

  const elsewhere = await mkdtemp(join(tmpdir(), 'memql-pool-other-'));
  t.teardown(() => rm(elsewhere, { recursive: true, force: true }));
  await chmod(elsewhere, 0o755);
  await run(spec(await workspace('run-c3', elsewhere), 'true'));
  t.equal(pool.stats().served, before.served, 'a workspace in another directory');

  await run(spec(await workspace('run-c4'), 'true', { reuse: undefined }));
  t.equal(pool.stats().served, before.served, 'a command with no reuse key');

  // A run with network: its commands run in a sandbox with the proxy socket, never a warm one.
  const sock = join(root, 'egress.sock');
  const server = createServer((c) => c.destroy());
  server.listen(sock);
  await once(server, 'listening');
  t.teardown(() => server.close());
  await chmod(sock, 0o777);
  const bundle = join(root, 'bundle.pem');
  await writeFile(bundle, '');
  const egress = await workspace('run-c5');
  t.equal(
    await run(
      spec(egress, 'echo "$HTTPS_PROXY"', { egress: { socketPath: sock, caBundlePath: bundle } }),
    ),
    'http://127.0.0.1:3128\n',
  );
  t.equal(pool.stats().served, before.served, 'a command with network');
});

t.test('close ends the pool: no process, cgroup or directory left', async (t) => {
  await full();
  const marker = `${POOL_PREFIX}${process.pid}-`;
  t.ok((await processesMatching(marker)).length > 0, 'pooled sandboxes run');
  await runner.close();
  t.same(await processesMatching(marker), [], 'no pooled sandbox is left');
  t.same(await poolDirs(), [], 'no pooled directory is left');
  const membership = parseCgroupMembership(await readFile('/proc/self/cgroup', 'utf8'));
  for (const controller of ['pids', 'memory']) {
    const own = membership.get(controller) ?? '/';
    const parent = `/sys/fs/cgroup/${controller}${own === '/' ? '' : own}/${GROUP}`;
    const entries = await readdir(parent, { withFileTypes: true }).catch(() => []);
    t.same(
      entries.filter((e) => e.isDirectory()).map((e) => e.name),
      [],
      `no ${controller} cgroup is left`,
    );
  }
  runner.warm();
  t.equal(pool.stats().ready, 0, 'a closed pool starts nothing');
});

t.test('pool size 0: no pool, commands run as before', async (t) => {
  const none = new BwrapRunner({ warmPool: { ...POOL, size: 0 } });
  t.teardown(() => none.close());
  t.equal(none.pooled, null);
  none.warm();
  const ws = await workspace('run-e');
  const r = await none.run(spec(ws, 'echo ok > /var/tmp/f; cat /var/tmp/f'));
  t.equal(r.stdout.toString(), 'ok\n');
  t.same(await poolDirs(), [], 'no pooled directory');
});

t.test('a full pool does not keep the process alive, and goes with it', async (t) => {
  const fixture = new URL('./fixtures/warm-pool-exit.js', import.meta.url).pathname;
  const child = spawn(process.execPath, [fixture, root], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const [code] = await once(child, 'exit');
  t.equal(out, 'ready=1\n', 'its pool was full');
  t.equal(code, 0, 'it exited on its own');
  t.same(await leftovers(`${POOL_PREFIX}${child.pid}-`, 10_000), [], 'its pooled sandbox is gone');
  for (const name of await poolDirs()) await rm(join(root, name), { recursive: true, force: true });
});

t.test('a claim that fails while the pool refills does not grow it past its size', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'memql-pool-claims-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  // Stand-in sandboxes whose starts finish when the test says so.
  const starts: (() => void)[] = [];
  const session = {
    usable: true,
    adopt: () => {},
    keepAlive: () => {},
    end: async () => {},
  } as unknown as BwrapSession;
  const claims = new WarmPool({
    size: 2,
    dir,
    limitsKey: 'limits',
    owner: null,
    log: pino({ level: 'silent' }),
    start: () => new Promise((done) => starts.push(() => done(session))),
  });
  const tick = () => new Promise((r) => setImmediate(r));
  /** Ends the `i`th start once it was asked for. */
  const finishStart = async (i: number) => {
    while (starts.length <= i) await tick();
    starts[i]!();
  };
  claims.fill();
  await finishStart(0);
  await finishStart(1);
  await claims.filled();

  t.equal(await claims.claim(await workspace('run-empty', dir), 'key', 'limits'), session);
  const withFiles = await workspace('run-files', dir);
  await writeFile(join(withFiles, 'a.txt'), 'a');
  // The refill's start ends while a claim on a workspace with files holds a sandbox.
  while (starts.length < 3) await tick();
  const refused = claims.claim(withFiles, 'key', 'limits');
  await finishStart(2);
  t.equal(await refused, null, 'a workspace with files is not served');
  await claims.filled();
  for (let i = 0; i < 10; i++) await tick();
  t.equal(starts.length, 3, 'no start beyond the one that replaced the served sandbox');
  t.equal(claims.stats().ready, 2, 'the pool holds its size');
  t.equal((await readdir(dir)).filter((n) => n.startsWith(POOL_PREFIX)).length, 2);
  for (const done of starts) done();
  await claims.close();
});
