import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { Test } from 'tap';
import { AgentDispatcher } from '../../src/agent/dispatcher.js';
import {
  type DispatchResult,
  type ExecPayload,
  systemAuthority,
  userAuthority,
} from '../../src/contract/index.js';
import { FsObjectStore } from '../../src/objects/index.js';
import { type Runner, SANDBOX_UID } from '../../src/sandbox/runner.js';
import {
  createRun,
  type Db,
  getCommand,
  getManifest,
  listAuditEvents,
  openDb,
} from '../../src/store/index.js';
import { createCommandChecker } from '../../src/workbench/allowlist/index.js';
import { WorkbenchHost } from '../../src/workbench/host.js';
import { parsedEnvelope, serveCall } from '../support/envelope.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * The `build` action end to end on one workbench host, on a real Postgres and a real
 * sandbox runner: run once per backend (bwrap, docker) by the test files beside it.
 * The package is small and has no dependencies, so nothing needs a registry.
 */

/** The longest exec timeout of the hosts here: a build's time limit. */
const MAX_TIMEOUT_MS = 240_000;

/** A package whose `build` script writes dist/out.txt with `text`. */
export function packageJson(text: string, scripts: Record<string, string> = {}): string {
  const write = `node -e "require('fs').mkdirSync('dist',{recursive:true});require('fs').writeFileSync('dist/out.txt','${text}')"`;
  return `${JSON.stringify(
    { name: 'pkg', version: '1.0.0', private: true, scripts: { build: write, ...scripts } },
    null,
    2,
  )}\n`;
}

/** Its lockfile: version 3, no dependencies. */
export const PACKAGE_LOCK = `${JSON.stringify(
  {
    name: 'pkg',
    version: '1.0.0',
    lockfileVersion: 3,
    requires: true,
    packages: { '': { name: 'pkg', version: '1.0.0' } },
  },
  null,
  2,
)}\n`;

/**
 * Reads the environment of process 1 and of every other process the build can see,
 * with a line per process, so the test sees they were read (or refused).
 */
const ENVIRON_PROBE = [
  'echo "== pid1"',
  'cat /proc/1/environ; echo " pid1-exit=$?"',
  'for p in /proc/[0-9]*; do',
  '  [ "$p" = /proc/1 ] && continue',
  '  echo "== $p"; tr "\\000" "\\n" < "$p/environ"',
  'done',
  'exit 0',
  '',
].join('\n');

/** How process 1's environment looks from a build: refused, or readable and empty. */
export type Pid1Environ = 'denied' | 'empty';

export async function buildSuite(t: Test, runner: Runner, pid1: Pid1Environ): Promise<void> {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const db: Db = await openDb({ kind: 'postgres', url: database.url });
  t.teardown(() => db.close());
  const base = await mkdtemp(join(tmpdir(), 'memql-build-'));
  await chmod(base, 0o755);
  t.teardown(() => rm(base, { recursive: true, force: true }));
  const root = join(base, 'workbenches');

  // A secret in the node's environment, as a real node holds database passwords.
  const canary = `canary-${randomBytes(12).toString('hex')}`;
  process.env.MEMQL_BUILD_CANARY = canary;
  t.teardown(() => {
    delete process.env.MEMQL_BUILD_CANARY;
  });

  const probe = await runner.probe();
  if (!probe.ok) throw new Error(`${runner.kind} runner unusable: ${probe.reason}`);
  const host = new WorkbenchHost({
    db,
    nodeId: 'node-build',
    workbenchRoot: root,
    ...(process.getuid?.() === 0 ? { fileOwner: { uid: SANDBOX_UID, gid: SANDBOX_UID } } : {}),
    files: { maxReadBytes: 1 << 20, maxWriteBytes: 4 << 20 },
    objects: new FsObjectStore({ baseDir: join(base, 'objects') }),
    queue: { concurrency: 2, leaseMs: 30_000, pollIntervalMs: 200 },
    idleTtlMs: 600_000,
    cleanupIntervalMs: 3_600_000,
    exec: {
      checker: await createCommandChecker(),
      runner: { runner, warnings: [] },
      limits: {
        defaultTimeoutMs: 60_000,
        maxTimeoutMs: MAX_TIMEOUT_MS,
        outputLimitBytes: 1 << 20,
        memoryLimitBytes: 1 << 30,
        pidsLimit: 256,
      },
    },
    fetch: { maxBytes: 1 << 20, timeoutMs: 5_000, allowPrivate: [] },
    log: pino({ level: 'silent' }),
  });
  host.start();
  t.teardown(() => host.stop());

  const alice = userAuthority('user:alice');
  const system = systemAuthority('system:deploy');
  let calls = 0;
  const envelope = (runId: string, action: string, args: Record<string, unknown>) => {
    calls += 1;
    return { action, args, runId, agentId: 'deploy', taskId: `task-${calls}` };
  };
  /** A call of the run's owner, through the workbench's process boundary. */
  const call = (runId: string, action: string, args: Record<string, unknown>) =>
    serveCall(host, envelope(runId, action, args), alice);
  /** A build under system authority, with its live output. */
  const build = async (runId: string, args: Record<string, unknown> = {}) => {
    const live: string[] = [];
    const result = await host.handleDispatch(
      parsedEnvelope(envelope(runId, 'build', args)),
      system,
      {
        onOutput: (_stream, chunk) => live.push(chunk.toString('utf8')),
      },
    );
    return { result, live: live.join('') };
  };
  function ok<T = ExecPayload>(t: Test, r: DispatchResult, what: string): T {
    if (!r.ok) t.fail(`${what}: ${r.errorCode}: ${r.message}`);
    return (r.ok ? r.payload : {}) as T;
  }
  const shell = async (t: Test, runId: string, command: string) => {
    const r = ok(t, await call(runId, 'exec', { command }), command);
    t.equal(r.exitCode, 0, `${command}: ${r.stderr}`);
  };
  const newRun = async (id: string) => {
    await createRun(db, { id, ownerUserId: 'alice' });
    for (const [path, content] of [
      ['package.json', packageJson('built A')],
      ['package-lock.json', PACKAGE_LOCK],
    ] as const) {
      ok(t, await call(id, 'fs_write', { path, content }), `write ${path}`);
    }
    return id;
  };

  t.test('the probe finds node, npm and git in the sandbox', async (t) => {
    t.same(await host.toolchainSettled(), { status: 'probed', missing: [] });
    t.same(host.toolchain(), { status: 'probed', missing: [] });
  });

  t.test('a build of the current checkout: dist/ written, synced, answered as exec', async (t) => {
    const runId = await newRun('run-build');
    const { result, live } = await build(runId);
    const out = ok(t, result, 'build');
    t.match(out, {
      status: 'completed',
      exitCode: 0,
      signal: null,
      timedOut: false,
      cancelled: false,
      stdoutTruncated: false,
    });
    t.type(out.commandId, 'string');
    t.type(out.durationMs, 'number');
    t.match(out.stdout, /> pkg@1\.0\.0 build/, 'npm ran the script');
    t.match(out.stderr, /\+ npm ci --include=dev/, 'each step is traced');
    t.match(live, /> pkg@1\.0\.0 build/, 'the output arrived live as well');
    t.equal(await readFile(join(root, runId, 'dist/out.txt'), 'utf8'), 'built A');

    const manifest = await getManifest(db, runId);
    const paths = manifest.files.map((f) => f.path);
    t.ok(paths.includes('dist/out.txt'), 'the output is in the durable manifest');
    t.notOk(
      paths.some((p) => p.startsWith('.npm') || p.includes('_cacache') || p.startsWith('tmp/')),
      `nothing of npm's cache or HOME is in the workspace: ${paths.join(' ')}`,
    );
    const read = ok<{ content: string }>(
      t,
      await call(runId, 'fs_read', { path: 'dist/out.txt' }),
      'read',
    );
    t.equal(read.content, 'built A', 'the run sees it');

    const row = await getCommand(db, out.commandId);
    t.match(row, { status: 'completed', exitCode: 0, timeoutMs: MAX_TIMEOUT_MS });
    const events = await listAuditEvents(db, { commandId: out.commandId });
    t.same(
      events.map((e) => e.eventType),
      ['workspace_command.queued', 'workspace_command.running', 'workspace_command.completed'],
    );
    const audited = JSON.stringify(events);
    for (const secret of ['npm', 'node -e', 'built A', 'pkg@1.0.0', 'git']) {
      t.notMatch(audited, secret, `no command text or output in audit events (${secret})`);
    }
  });

  t.test('a build of a ref after commits made with git in the workspace', async (t) => {
    const runId = await newRun('run-ref');
    await shell(
      t,
      runId,
      'git init -q && git config user.email build@example.com && git config user.name builder && git add -A && git commit -qm A && git tag v1',
    );
    ok(
      t,
      await call(runId, 'fs_write', { path: 'package.json', content: packageJson('built B') }),
      'B',
    );
    await shell(t, runId, 'git commit -qam B');

    const current = ok(t, (await build(runId)).result, 'build of the checkout');
    t.equal(current.exitCode, 0, current.stderr);
    t.equal(await readFile(join(root, runId, 'dist/out.txt'), 'utf8'), 'built B');

    const tagged = ok(t, (await build(runId, { ref: 'v1' })).result, 'build of v1');
    t.equal(tagged.exitCode, 0, tagged.stderr);
    t.match(tagged.stderr, '+ git checkout --quiet v1 --');
    t.equal(await readFile(join(root, runId, 'dist/out.txt'), 'utf8'), 'built A', 'v1 was built');
    const manifest = await getManifest(db, runId);
    const kept = manifest.files.find((f) => f.path === 'dist/out.txt');
    t.equal(kept?.size, 'built A'.length, 'the manifest holds the v1 output');
    const read = ok<{ content: string }>(
      t,
      await call(runId, 'fs_read', { path: 'package.json' }),
      'read',
    );
    t.match(read.content, 'built A', 'the checkout itself was synced');
  });

  t.test('the local node’s path: the agent dispatcher and its in-process host', async (t) => {
    const runId = await newRun('run-local');
    const dispatcher = new AgentDispatcher({
      remote: false,
      localFallback: false,
      local: host,
      router: null,
      readAffinity: async () => null,
      peersRaw: '',
      log: pino({ level: 'silent' }),
    });
    const live: string[] = [];
    const out = await dispatcher.dispatch(parsedEnvelope(envelope(runId, 'build', {})), system, {
      onOutput: (_s, chunk) => live.push(chunk.toString()),
    });
    t.match(out.route, { kind: 'local', reason: 'not_remote' });
    t.equal(ok(t, out.result, 'local build').exitCode, 0);
    t.match(live.join(''), /> pkg@1\.0\.0 build/);
    t.equal(await readFile(join(root, runId, 'dist/out.txt'), 'utf8'), 'built A');
    const refused = await dispatcher.dispatch(parsedEnvelope(envelope(runId, 'build', {})), alice);
    t.match(refused.result, { ok: false, errorCode: 'build_not_permitted' });
  });

  t.test('a failing step answers its exit status and output, as exec does', async (t) => {
    const runId = await newRun('run-fail');
    const missing = ok(t, (await build(runId, { script: 'nope' })).result, 'missing script');
    t.not(missing.exitCode, 0);
    t.match(missing.stderr, /Missing script: "?nope/);
    const badRef = ok(t, (await build(runId, { ref: 'no-such-ref' })).result, 'bad ref');
    t.not(badRef.exitCode, 0);
    t.match(badRef.stderr, 'no-such-ref');
    t.notMatch(badRef.stderr, 'npm ci', 'the first failing step ends the build');
  });

  t.test('a dependency that is not available fails at once, offline', async (t) => {
    const runId = await newRun('run-offline');
    const lock = JSON.parse(PACKAGE_LOCK) as { packages: Record<string, unknown> };
    lock.packages[''] = { name: 'pkg', version: '1.0.0', dependencies: { 'left-pad': '1.3.0' } };
    lock.packages['node_modules/left-pad'] = {
      version: '1.3.0',
      resolved: 'https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz',
      integrity: `sha512-${Buffer.alloc(64, 7).toString('base64')}`,
    };
    const pkg = JSON.parse(packageJson('never')) as Record<string, unknown>;
    pkg.dependencies = { 'left-pad': '1.3.0' };
    ok(
      t,
      await call(runId, 'fs_write', { path: 'package.json', content: JSON.stringify(pkg) }),
      'pkg',
    );
    ok(
      t,
      await call(runId, 'fs_write', { path: 'package-lock.json', content: JSON.stringify(lock) }),
      'lock',
    );
    const out = ok(t, (await build(runId)).result, 'build with a dependency');
    t.not(out.exitCode, 0);
    t.match(
      out.stderr,
      /ENOTCACHED|offline/,
      'npm says it is offline, not that a registry timed out',
    );
    t.notMatch(out.stdout, 'pkg@1.0.0 build', 'the script did not run');
  });

  t.test("the node's environment is out of a build's reach", async (t) => {
    const runId = await newRun('run-environ');
    ok(t, await call(runId, 'fs_write', { path: 'environ.sh', content: ENVIRON_PROBE }), 'probe');
    const scripts = { build: 'sh environ.sh' };
    ok(
      t,
      await call(runId, 'fs_write', { path: 'package.json', content: packageJson('x', scripts) }),
      'pkg',
    );
    const out = ok(t, (await build(runId)).result, 'build');
    t.equal(out.exitCode, 0, out.stderr);
    const all = out.stdout + out.stderr;
    t.notMatch(all, canary, 'the secret appears nowhere');
    t.notMatch(all, 'MEMQL_BUILD_CANARY');
    if (pid1 === 'denied') {
      t.match(out.stderr, /\/proc\/1\/environ: Permission denied/);
    } else {
      // bwrap: process 1 is the sandbox's own init, started with an empty environment;
      // the node's processes are in another pid namespace, not visible at all.
      t.match(out.stdout, /== pid1\n pid1-exit=0\n/, 'process 1 holds no environment at all');
    }
    // Every other process's environment was read for real: the build's own processes.
    t.match(out.stdout, /npm_lifecycle_event=build/);
  });
}
