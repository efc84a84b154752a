import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ProcessRunner } from '../../src/sandbox/process-runner.js';
import type { RunSpec } from '../../src/sandbox/runner.js';
import { killAll, leftovers, markedSleep, sleepStarted } from './sandbox-support.js';

/** The process runner: no isolation, but the env rule, the limits and the group kill hold. */

const runner = new ProcessRunner();
const canary = `canary-${randomBytes(12).toString('hex')}`;
process.env.MEMQL_TEST_CANARY = canary;

async function workspace(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'memql-process-test-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function spec(workspaceDir: string, command: string, extra: Partial<RunSpec> = {}): RunSpec {
  return { workspaceDir, command, timeoutMs: 10_000, outputLimitBytes: 1 << 20, ...extra };
}

t.test('probe passes where /bin/sh exists', async (t) => {
  t.same(await runner.probe(), { ok: true });
  t.equal((await new ProcessRunner({ shellPath: '/nonexistent/sh' }).probe()).ok, false);
});

t.test("the command's environment is PATH and the agent entries only", async (t) => {
  const ws = await workspace(t);
  const r = await runner.run(spec(ws, 'env', { env: { FOO: 'bar' } }));
  const names = r.stdout
    .toString()
    .trim()
    .split('\n')
    .map((line) => line.split('=')[0])
    .filter((name) => name !== 'PWD') // set by the shell itself
    .sort();
  t.same(names, ['FOO', 'PATH']);
  t.match(r.stdout.toString(), /^FOO=bar$/m);
  t.notMatch(r.stdout.toString(), canary);
  await t.rejects(runner.run(spec(ws, 'true', { env: { 'A=B': 'x' } })), {
    code: 'invalid_arguments',
  });
});

t.test('timeout kills the process group', async (t) => {
  const ws = await workspace(t);
  const s = markedSleep(60);
  const r = await runner.run(spec(ws, `sleep ${s} & sleep 30`, { timeoutMs: 300 }));
  t.same([r.timedOut, r.exitCode, r.signal], [true, null, 'SIGKILL']);
  const left = await leftovers(s);
  killAll(left);
  t.same(left, [], 'the background sleep is gone too');
});

t.test('cancel kills the process group; an exit ends background jobs', async (t) => {
  const ws = await workspace(t);
  const s = markedSleep(60);
  const ac = new AbortController();
  const running = runner.run(spec(ws, `sleep ${s} & sleep 30`, { signal: ac.signal }));
  // Cancel once the background sleep runs, so the group kill has something to find.
  await sleepStarted(s);
  ac.abort();
  const r = await running;
  t.same([r.cancelled, r.timedOut], [true, false]);
  let left = await leftovers(s);
  killAll(left);
  t.same(left, []);

  const s2 = markedSleep(60);
  const done = await runner.run(spec(ws, `sleep ${s2} & echo ok`));
  t.equal(done.stdout.toString(), 'ok\n');
  left = await leftovers(s2);
  killAll(left);
  t.same(left, []);
});

t.test('output caps, stdin, exit code and cwd', async (t) => {
  const ws = await workspace(t);
  await mkdir(join(ws, 'sub'));
  const big = await runner.run(spec(ws, 'head -c 5000000 /dev/zero', { outputLimitBytes: 1000 }));
  t.same([big.stdout.length, big.stdoutTruncated, big.exitCode], [1000, true, 0]);
  t.equal((await runner.run(spec(ws, 'cat', { stdin: 'in' }))).stdout.toString(), 'in');
  const failed = await runner.run(spec(ws, 'echo e >&2; exit 4'));
  t.same([failed.exitCode, failed.stderr.toString()], [4, 'e\n']);
  t.equal((await runner.run(spec(ws, 'pwd', { cwd: 'sub' }))).stdout.toString(), `${ws}/sub\n`);
  await t.rejects(runner.run(spec(ws, 'pwd', { cwd: '../..' })), { code: 'invalid_path' });
});
