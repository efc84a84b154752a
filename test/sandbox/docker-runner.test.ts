import { randomBytes } from 'node:crypto';
import { chown, mkdir, readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import Dockerode from 'dockerode';
import t from 'tap';
import { WorkbenchError } from '../../src/contract/errors.js';
import { SANDBOX_PATH } from '../../src/sandbox/command-env.js';
import { containerEnv, DockerRunner } from '../../src/sandbox/docker/index.js';
import type { RunSpec } from '../../src/sandbox/runner.js';
import {
  connectTestDocker,
  containersLabelled,
  makeSandboxWorkspace,
  removeContainersLabelled,
  TEST_RUNNER_IMAGE,
} from '../support/docker.js';

/**
 * The docker runner against the real daemon and the busybox test image built by
 * `scripts/setup/install-docker.sh`. Every container carries a label unique to this file, so the
 * tests can assert that none is left behind.
 */

const docker = await connectTestDocker();
const TEST_LABEL = 'memql.test';
const testRun = randomBytes(6).toString('hex');
const runner = new DockerRunner({
  docker,
  image: TEST_RUNNER_IMAGE,
  labels: { [TEST_LABEL]: testRun },
});
const workspace = await makeSandboxWorkspace();

// A secret in the node's environment that must never reach a command.
const canary = `canary-${randomBytes(16).toString('hex')}`;
process.env.MEMQL_TEST_CANARY = canary;

t.teardown(async () => {
  delete process.env.MEMQL_TEST_CANARY;
  await removeContainersLabelled(docker, TEST_LABEL, testRun);
  await workspace.remove();
});

function spec(command: string, extra: Partial<RunSpec> = {}): RunSpec {
  return {
    workspaceDir: workspace.dir,
    command,
    timeoutMs: 20_000,
    outputLimitBytes: 1024 * 1024,
    ...extra,
  };
}

/** Shell text printing a cgroup file, v1 path first, then v2. */
function cgroupRead(v1: string, v2: string): string {
  return `(cat /sys/fs/cgroup/${v1} 2>/dev/null || cat /sys/fs/cgroup/${v2})`;
}

async function leftovers(): Promise<string[]> {
  return (await containersLabelled(docker, TEST_LABEL, testRun)).map((c) => c.Id);
}

t.test('probe: the daemon answers and the image exists', async (t) => {
  t.same(await runner.probe(), { ok: true });
});

t.test('probe and run: a missing image is named, with what to set', async (t) => {
  const image = `memql/test-runner:no-such-${testRun}`;
  const missing = new DockerRunner({ docker, image, labels: { [TEST_LABEL]: testRun } });
  const probe = await missing.probe();
  t.equal(probe.ok, false);
  if (!probe.ok) {
    t.match(probe.reason, `runner image ${image} not found`);
    t.match(probe.reason, 'MEMQL_RUNNER_IMAGE');
  }
  const err = await missing.run(spec('true')).catch((e: unknown) => e);
  t.ok(err instanceof WorkbenchError);
  t.equal((err as WorkbenchError).code, 'no_sandbox');
  t.same(await leftovers(), []);
});

t.test('probe and run: a dead socket reports the daemon unreachable', async (t) => {
  const socketPath = join(workspace.dir, 'no-daemon.sock');
  const dead = new DockerRunner({
    docker: new Dockerode({ socketPath }),
    image: TEST_RUNNER_IMAGE,
  });
  const probe = await dead.probe();
  t.equal(probe.ok, false);
  if (!probe.ok) {
    t.match(probe.reason, `Docker daemon not reachable at ${socketPath}`);
    t.match(probe.reason, 'MEMQL_RUNNER=bwrap');
  }
  const err = await dead.run(spec('true')).catch((e: unknown) => e);
  t.ok(err instanceof WorkbenchError);
  t.equal((err as WorkbenchError).code, 'no_sandbox');
});

t.test('identity and environment: uid 10001, no capabilities, only the agent env', async (t) => {
  const result = await runner.run(
    spec(
      [
        'id -u; id -g',
        "grep -E '^(CapEff|CapBnd|NoNewPrivs):' /proc/self/status",
        'echo ---ENV; env',
        "echo ---PID1; tr '\\0' '\\n' < /proc/1/environ",
        "echo ---ALL; cat /proc/*/environ | tr '\\0' '\\n'",
      ].join('\n'),
      { env: { AGENT_GREETING: 'hello agent' } },
    ),
  );
  const out = result.stdout.toString();
  t.equal(result.exitCode, 0, result.stderr.toString());
  t.notMatch(out, canary, 'the canary is nowhere: not in env, not in any /proc/*/environ');
  const [ids, rest] = out.split('---ENV\n') as [string, string];
  t.match(ids, /^10001\n10001\n/);
  t.match(ids, /CapEff:\s+0000000000000000/);
  t.match(
    ids,
    /CapBnd:\s+0000000000000000/,
    'every capability dropped, even from the bounding set',
  );
  t.match(ids, /NoNewPrivs:\s+1/);
  const [env, procs] = rest.split('---PID1\n') as [string, string];
  const names = env
    .trim()
    .split('\n')
    .map((line) => line.slice(0, line.indexOf('=')));
  // The agent's entries, the fixed base, and what the shell and Docker always set: nothing else.
  const allowed = ['AGENT_GREETING', 'PATH', 'HOME', 'LANG', 'HOSTNAME', 'PWD', 'SHLVL'];
  t.same(
    names.filter((n) => !allowed.includes(n)),
    [],
  );
  t.match(env, 'AGENT_GREETING=hello agent\n');
  t.match(env, `PATH=${SANDBOX_PATH}\n`);
  t.match(env, 'HOME=/tmp\n');
  // Process 1 is the image's init, which the command cannot read; every other
  // /proc/*/environ is read for real (the shell's own shows the agent's entry), so the
  // canary check means something.
  t.match(result.stderr.toString(), /\/proc\/1\/environ: Permission denied/);
  t.match(procs, /---ALL\n[\s\S]*AGENT_GREETING=hello agent/);
});

t.test('network: only loopback, and the host loopback is not reachable', async (t) => {
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    socket.end('HTTP/1.0 200 OK\r\n\r\nhost-reached');
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  t.teardown(() => new Promise<void>((ok) => server.close(() => ok())));
  const { port } = server.address() as { port: number };
  const result = await runner.run(
    spec(
      [
        "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '",
        'echo ---',
        `wget -q -T 3 -O - http://127.0.0.1:${port}/ 2>&1 && echo REACHED || echo unreachable`,
      ].join('\n'),
    ),
  );
  const [ifaces, rest] = result.stdout.toString().split('---\n') as [string, string];
  t.same(ifaces.trim().split('\n'), ['lo'], 'no interface but loopback');
  t.match(rest, /unreachable\n$/);
  t.notMatch(rest, 'REACHED');
  t.equal(connections, 0, 'the server on the host loopback saw no connection');
});

t.test(
  'filesystem: workspace writable as 10001, root read-only, /tmp and /var/tmp writable',
  async (t) => {
    const result = await runner.run(
      spec(
        [
          'echo data > made.txt && mkdir -p sub && touch sub/inner',
          // uid 10001 cannot write to a root-owned / anyway: check the mount itself.
          "grep -E '^[^ ]+ / ' /proc/mounts | cut -d' ' -f4 | cut -d, -f1",
          'if touch /not-allowed 2>/dev/null; then echo ROOT-WRITABLE; else echo root-read-only; fi',
          'echo tmp-works > /tmp/t && cat /tmp/t',
          'echo var-tmp-works > /var/tmp/x && cat /var/tmp/x',
        ].join('\n'),
      ),
    );
    t.equal(result.exitCode, 0, result.stderr.toString());
    t.equal(result.stdout.toString(), 'ro\nroot-read-only\ntmp-works\nvar-tmp-works\n');
    const next = await runner.run(spec('ls -A /tmp /var/tmp'));
    t.equal(next.stdout.toString(), '/tmp:\n\n/var/tmp:\n', 'the next command’s are empty');
    const made = await stat(join(workspace.dir, 'made.txt'));
    t.equal(made.uid, 10001);
    t.equal(made.gid, 10001);
    t.equal(await readFile(join(workspace.dir, 'made.txt'), 'utf8'), 'data\n');
    t.equal((await stat(join(workspace.dir, 'sub', 'inner'))).uid, 10001);
  },
);

t.test('cwd: runs in the workspace subdirectory; a missing one is refused', async (t) => {
  await mkdir(join(workspace.dir, 'cwd-test'), { recursive: true });
  await chown(join(workspace.dir, 'cwd-test'), 10001, 10001);
  const result = await runner.run(spec('pwd; touch here', { cwd: 'cwd-test' }));
  t.equal(result.stdout.toString(), '/workspace/cwd-test\n');
  t.ok((await stat(join(workspace.dir, 'cwd-test', 'here'))).isFile());
  const err = await runner.run(spec('pwd', { cwd: 'absent' })).catch((e: unknown) => e);
  t.equal((err as WorkbenchError).code, 'path_not_found');
  const outside = await runner.run(spec('pwd', { cwd: '../..' })).catch((e: unknown) => e);
  t.equal((outside as WorkbenchError).code, 'invalid_path');
});

t.test('exit code and both streams are preserved', async (t) => {
  const seen: string[] = [];
  const result = await runner.run(
    spec('echo out; echo err >&2; exit 7', { onOutput: (s, c) => seen.push(`${s}:${c}`) }),
  );
  t.equal(result.exitCode, 7);
  t.equal(result.signal, null);
  t.equal(result.timedOut, false);
  t.equal(result.cancelled, false);
  t.equal(result.stdout.toString(), 'out\n');
  t.equal(result.stderr.toString(), 'err\n');
  t.same(seen.sort(), ['stderr:err\n', 'stdout:out\n']);
});

t.test('stdin: delivered byte for byte, then closed', async (t) => {
  const bytes = new Uint8Array(256 * 1024).map((_, i) => i % 256);
  const result = await runner.run(spec('cat; echo -n END', { stdin: bytes }));
  t.equal(result.exitCode, 0);
  t.ok(result.stdout.equals(Buffer.concat([Buffer.from(bytes), Buffer.from('END')])));
});

t.test('stdin: absent means end of input at once', async (t) => {
  const result = await runner.run(spec('cat; echo eof', { timeoutMs: 5000 }));
  t.equal(result.timedOut, false);
  t.equal(result.stdout.toString(), 'eof\n');
});

t.test('output cap: a 100 MB flood on each stream keeps exactly 1 MiB each', async (t) => {
  let delivered = 0;
  let peakBuffers = 0;
  const sampler = setInterval(() => {
    peakBuffers = Math.max(peakBuffers, process.memoryUsage().arrayBuffers);
  }, 5);
  const before = process.memoryUsage().arrayBuffers;
  const result = await runner.run(
    spec('head -c 100000000 /dev/zero & head -c 100000000 /dev/zero >&2; wait; exit 3', {
      onOutput: (_s, c) => {
        delivered += c.length;
      },
    }),
  );
  clearInterval(sampler);
  t.equal(result.exitCode, 3, 'the command ran to its end: output past the cap was drained');
  t.equal(result.stdout.length, 1024 * 1024);
  t.equal(result.stderr.length, 1024 * 1024);
  t.equal(result.stdoutTruncated, true);
  t.equal(result.stderrTruncated, true);
  t.equal(delivered, 2 * 1024 * 1024, 'onOutput sees the kept bytes only');
  t.ok(
    // Keeping the flood would hold 200 MB. Transient socket chunks peak near 40 MB on a
    // quiet machine and higher on a busy one, where the collector runs later.
    peakBuffers - before < 140 * 1024 * 1024,
    `buffers stayed bounded (grew ${peakBuffers - before} bytes for 200 MB of output)`,
  );
});

t.test('timeout: the container is killed and removed', async (t) => {
  const result = await runner.run(spec('echo started; sleep 30', { timeoutMs: 1500 }));
  t.equal(result.timedOut, true);
  t.equal(result.cancelled, false);
  t.equal(result.exitCode, null);
  t.equal(result.signal, 'SIGKILL');
  t.equal(result.stdout.toString(), 'started\n', 'output before the kill is kept');
  // timedOut and SIGKILL: the limit, not the end of the 30 s sleep, ended it. How long
  // that took depends on the daemon's pace, so only its presence is checked.
  t.type(result.durationMs, 'number', `ran ${result.durationMs} ms`);
  t.same(await leftovers(), [], 'no container left behind');
});

t.test('cancel: aborting kills and removes the container', async (t) => {
  const controller = new AbortController();
  let running: () => void = () => {};
  const isRunning = new Promise<void>((ok) => {
    running = ok;
  });
  const pending = runner.run(
    spec('echo running; sleep 30', { signal: controller.signal, onOutput: () => running() }),
  );
  // Abort once the command is known to run (its first output), whatever the daemon's pace;
  // meanwhile, check the settings that no command can observe from inside.
  await isRunning;
  const [listed] = await containersLabelled(docker, TEST_LABEL, testRun);
  const info = await docker.getContainer(listed!.Id).inspect();
  t.match(info.Config.Labels, { 'memql.sandbox': 'docker', 'memql.command': /^[0-9a-f-]{36}$/ });
  t.match(info.HostConfig, {
    NetworkMode: 'none',
    CapDrop: ['ALL'],
    SecurityOpt: ['no-new-privileges'],
    ReadonlyRootfs: true,
    NanoCpus: 1_000_000_000,
    AutoRemove: false,
    LogConfig: { Type: 'none' },
    Tmpfs: { '/tmp': 'rw,nosuid,nodev,size=67108864' },
  });
  controller.abort();
  const result = await pending;
  t.equal(result.cancelled, true);
  t.equal(result.timedOut, false);
  t.equal(result.exitCode, null);
  t.equal(result.signal, 'SIGKILL');
  t.equal(result.stdout.toString(), 'running\n');
  t.same(await leftovers(), []);

  const already = await runner.run(spec('echo never', { signal: AbortSignal.abort() }));
  t.equal(already.cancelled, true);
  t.equal(already.stdout.length, 0, 'an already aborted command does not run');
  t.same(await leftovers(), []);
});

t.test('fork bomb: contained by the pids limit while another command completes', async (t) => {
  const stopBomb = new AbortController();
  let saturated: () => void = () => {};
  const bombSaturated = new Promise<void>((ok) => {
    saturated = ok;
  });
  const bomb = runner.run(
    // The waiting sleep is forked before the bomb fills the pids limit and `wait` is a
    // builtin, so the main shell outlives the bomb however slow the neighbour is.
    spec(
      `${cgroupRead('pids/pids.max', 'pids.max')}; sleep 60 & s=$!; f() { f | f & }; f; wait $s`,
      {
        pidsLimit: 32,
        timeoutMs: 60_000,
        outputLimitBytes: 4096,
        signal: stopBomb.signal,
        // The first "can't fork" means the bomb has reached its limit.
        onOutput: (stream) => {
          if (stream === 'stderr') saturated();
        },
      },
    ),
  );
  await bombSaturated;
  const neighbour = await runner.run(spec('echo neighbour-ok', { timeoutMs: 20_000 }));
  t.equal(neighbour.exitCode, 0);
  t.equal(neighbour.stdout.toString(), 'neighbour-ok\n');
  stopBomb.abort();
  const result = await bomb;
  // Containment is what matters: the neighbour above completed while the bomb was
  // saturated. The bomb then ends by our cancel, or, under heavy host load, the
  // command's shell can itself fail a fork and exit 2 first.
  t.ok(
    result.cancelled ||
      (result.exitCode === 2 && /Cannot fork|can't fork/.test(result.stderr.toString())),
    `the bomb ended contained (exit ${result.exitCode}, signal ${result.signal}, timedOut ${result.timedOut})`,
  );
  t.equal(result.timedOut, false, 'it did not run into its time limit');
  t.equal(result.stdout.toString(), '32\n', 'the cgroup holds the pids limit');
  t.match(result.stderr.toString(), /Cannot fork|can't fork|Resource temporarily unavailable/);
  t.same(await leftovers(), []);
});

t.test('memory: a growing shell variable is killed at a 32 MiB limit', async (t) => {
  const result = await runner.run(
    spec(
      `${cgroupRead('memory/memory.limit_in_bytes', 'memory.max')}; x=a; while :; do x="$x$x"; done`,
      { memoryLimitBytes: 32 * 1024 * 1024 },
    ),
  );
  t.equal(result.timedOut, false);
  t.equal(result.stdout.toString(), `${32 * 1024 * 1024}\n`, 'the cgroup holds the limit');
  t.equal(result.oomKilled, true, 'the daemon reports the OOM kill');
  t.equal(result.exitCode, null);
  t.equal(result.signal, 'SIGKILL');
});

t.test('agent env: entries override the base; unusable names are refused', async (t) => {
  t.same(containerEnv({ A: '1' }), [`PATH=${SANDBOX_PATH}`, 'HOME=/tmp', 'LANG=C.UTF-8', 'A=1']);
  t.match(containerEnv({ PATH: '/bin' }), ['PATH=/bin']);
  for (const bad of [{ 'A=B': '1' }, { '': '1' }, { A: 'x\0y' }] as Record<string, string>[]) {
    t.throws(() => containerEnv(bad), { code: 'invalid_arguments' });
  }
  const err = await runner.run(spec('true', { env: { 'A=B': '1' } })).catch((e: unknown) => e);
  t.equal((err as WorkbenchError).code, 'invalid_arguments', 'refused before any container');
  t.same(await leftovers(), []);
});

t.test('nothing is left behind', async (t) => {
  t.same(await leftovers(), []);
});
