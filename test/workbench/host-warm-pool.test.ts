import { readdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import t from 'tap';
import { userAuthority } from '../../src/contract/index.js';
import { POOL_PREFIX } from '../../src/sandbox/bwrap/index.js';
import { createRun } from '../../src/store/index.js';
import { processesMatching } from '../sandbox/sandbox-support.js';
import { bwrapHost } from '../support/bwrap-host.js';
import { parsedEnvelope } from '../support/envelope.js';

/**
 * The warm pool through a real host (real Postgres, the fs store, real bwrap): each new
 * run's first `exec` is served by a pooled sandbox (the pool's counter, not timing),
 * sees a usual `/var/tmp`, finds no marker any earlier run left (an identity probe of
 * the kind sandbox benchmarks run exits 0 on every fresh run), and its files are the
 * run's, synced as any command's; a stopped host leaves no pooled sandbox.
 */

/** An identity probe: fails (exit 3) when a marker of an earlier sandbox is there. */
const MARKER = '.tti_probe_marker';
const PROBE = [
  `for f in /tmp/${MARKER} /var/tmp/${MARKER}; do if [ -e "$f" ]; then echo "reused: $f"; exit 3; fi; done`,
  'm=$(readlink /proc/self/ns/mnt); p=$(readlink /proc/self/ns/pid); u=$(readlink /proc/self/ns/uts)',
  'g=$(cat /proc/self/cgroup | sha256sum | cut -d" " -f1); b=$(cat /proc/sys/kernel/random/boot_id)',
  `i=$(tr -d '\\0' < /proc/1/cmdline | head -c 40); up=$(cut -d' ' -f1 /proc/uptime)`,
  `printf 'mnt=%s\\npid=%s\\nuts=%s\\ncgroup=%s\\nboot=%s\\ninit=%s\\nuptime=%s\\n' "$m" "$p" "$u" "$g" "$b" "$i" "$up"`,
  `printf '%s' token > /tmp/${MARKER}`,
  `printf '%s' token > /var/tmp/${MARKER}`,
].join('; ');

t.test('each new run’s first command: a pooled sandbox, fresh and its own', async (t) => {
  const { host, db, dir, runner } = await bwrapHost(t, {
    nodeId: 'node-p',
    runId: 'run-p1',
    warmPool: 2,
  });
  const pool = runner.pooled!;
  let n = 0;
  const call = async (runId: string, action: string, args: Record<string, unknown>) => {
    n += 1;
    const r = await host.handleDispatch(
      parsedEnvelope({ action, args, runId, agentId: 'a', taskId: `t${n}` }),
      userAuthority('user:alice'),
    );
    if (!r.ok) throw new Error(`${action}: ${r.errorCode}: ${r.message}`);
    return r.payload as { stdout: string; stderr: string; exitCode: number; content?: string };
  };
  await pool.filled();
  t.equal(pool.stats().ready, 2, 'the pool filled when the host started');

  for (const runId of ['run-p1', 'run-p2', 'run-p3']) {
    if (runId !== 'run-p1') await createRun(db, { id: runId, ownerUserId: 'alice' });
    const served = pool.stats().served;
    const probe = await call(runId, 'exec', { command: PROBE });
    t.equal(probe.exitCode, 0, `${runId}: the probe passes ${probe.stderr}`);
    t.match(
      probe.stdout,
      /^mnt=mnt:\[\d+\]\npid=pid:\[\d+\]\nuts=uts:\[\d+\]\ncgroup=[0-9a-f]{64}\n/,
    );
    t.equal(pool.stats().served, served + 1, `${runId}: its first command had a pooled sandbox`);
    const tmp = await call(runId, 'exec', {
      command: `ls -A /var/tmp; echo ${runId} > /var/tmp/x; cat /var/tmp/x; echo ${runId} > made.txt`,
    });
    t.equal(
      tmp.stdout,
      `${runId}\n`,
      `${runId}: /var/tmp is writable, and emptied between commands`,
    );
    t.equal(pool.stats().served, served + 1, `${runId}: its next command, its own sandbox`);
    const read = await call(runId, 'fs_read', { path: 'made.txt' });
    t.equal(read.content, `${runId}\n`, `${runId}: a file its command made is the run’s`);
    await pool.filled();
  }
  const files = await call('run-p3', 'exec', { command: 'ls -A' });
  t.equal(files.stdout, 'made.txt\n', 'a run sees only its own files');
  t.equal(pool.stats().ready, 2, 'the pool refilled');

  await host.stop();
  t.same(
    await processesMatching(`${POOL_PREFIX}${process.pid}-`),
    [],
    'a stopped host leaves no pooled sandbox',
  );
  const left = (await readdir(dirname(dir))).filter((name) => name.startsWith(POOL_PREFIX));
  t.same(left, [], 'nor a pooled directory');
});
