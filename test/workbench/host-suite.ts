import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { Test } from 'tap';
import {
  cidr,
  type DispatchResult,
  environmentMismatchFromPayload,
  systemAuthority,
  userAuthority,
} from '../../src/contract/index.js';
import { FsObjectStore } from '../../src/objects/index.js';
import { type Runner, SANDBOX_UID } from '../../src/sandbox/runner.js';
import { createRun, finishRun, listWorkspacesForOwner, openDb } from '../../src/store/index.js';
import { createCommandChecker } from '../../src/workbench/allowlist/index.js';
import { WorkbenchHost, type WorkbenchHostDeps } from '../../src/workbench/host.js';
import { parsedEnvelope, serveCall } from '../support/envelope.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * The workbench host driven end to end in-process, on a real Postgres and a real
 * sandbox runner. Run once per backend (bwrap, docker) by the test files beside it.
 */
export async function hostSuite(t: Test, runner: Runner): Promise<void> {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const db = await openDb({ kind: 'postgres', url: database.url });
  t.teardown(() => db.close());

  const base = await mkdtemp(join(tmpdir(), 'memql-host-'));
  await chmod(base, 0o755);
  t.teardown(() => rm(base, { recursive: true, force: true }));
  const root = join(base, 'workbenches');
  const outside = join(base, 'outside');
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), 'SECRET');

  const server = createServer((req, res) => {
    if (req.url === '/hello') res.end('fetched bytes');
    else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => server.close(r)));
  const port = (server.address() as AddressInfo).port;

  const probe = await runner.probe();
  if (!probe.ok) throw new Error(`${runner.kind} runner unusable: ${probe.reason}`);
  const checker = await createCommandChecker();

  const deps: WorkbenchHostDeps = {
    db,
    nodeId: 'node-1',
    workbenchRoot: root,
    fileOwner: { uid: SANDBOX_UID, gid: SANDBOX_UID },
    files: { maxReadBytes: 1 << 20, maxWriteBytes: 4 << 20 },
    objects: new FsObjectStore({ baseDir: join(base, 'objects') }),
    queue: { concurrency: 4, leaseMs: 30_000, pollIntervalMs: 200 },
    idleTtlMs: 600_000,
    cleanupIntervalMs: 3_600_000,
    exec: {
      checker,
      runner: { runner, warnings: [] },
      limits: {
        defaultTimeoutMs: 20_000,
        maxTimeoutMs: 60_000,
        outputLimitBytes: 1 << 20,
        memoryLimitBytes: 256 << 20,
        pidsLimit: 64,
      },
    },
    fetch: { maxBytes: 1 << 20, timeoutMs: 5_000, allowPrivate: [cidr('127.0.0.1/32')] },
    log: pino({ level: 'silent' }),
  };
  const host = new WorkbenchHost(deps);
  host.start();
  t.teardown(() => host.stop());
  const user = userAuthority('user:alice');

  let calls = 0;
  function call(runId: string, action: string, args: Record<string, unknown>, extra = {}) {
    calls += 1;
    return serveCall(
      host,
      { action, args, runId, agentId: 'agent-1', taskId: `task-${calls}`, ...extra },
      user,
    );
  }

  function payload<T = Record<string, unknown>>(
    t: { fail(m: string): void },
    r: DispatchResult,
  ): T {
    if (!r.ok) t.fail(`expected ok, got ${r.errorCode}: ${r.message}`);
    return (r.ok ? r.payload : {}) as T;
  }

  function code(r: DispatchResult): string {
    return r.ok ? 'ok' : r.errorCode;
  }

  await createRun(db, { id: 'run-1', ownerUserId: 'alice' });
  await mkdir(join(root, 'run-1-x'), { recursive: true });
  await writeFile(join(root, 'run-1-x', 'loot.txt'), 'LOOT');

  t.test('a workspace driven end to end: write, list, read, exec, fetch, delete', async (t) => {
    const w = await call('run-1', 'fs_write', {
      path: 'notes/hello.txt',
      content: 'hello world\n',
    });
    t.same(payload(t, w), { path: 'notes/hello.txt', bytesWritten: 12, size: 12, version: 1 });
    t.equal((await stat(join(root, 'run-1/notes/hello.txt'))).uid, SANDBOX_UID);

    const list = payload<{ entries: { path: string }[] }>(
      t,
      await call('run-1', 'fs_list', { recursive: true }),
    );
    t.same(
      list.entries.map((e) => e.path),
      ['notes', 'notes/hello.txt'],
    );

    const ex = payload<{ exitCode: number; stdout: string }>(
      t,
      await call('run-1', 'exec', { command: 'wc -c < notes/hello.txt && id -u' }),
    );
    t.equal(ex.exitCode, 0);
    t.same(ex.stdout.trim().split('\n'), ['12', String(SANDBOX_UID)]);

    const made = await call('run-1', 'exec', {
      command: 'mkdir -p out && printf "%s" "$GREETING" > out/g.txt',
      env: { GREETING: 'from the sandbox' },
    });
    t.equal(payload<{ exitCode: number }>(t, made).exitCode, 0);
    const read = payload<{ content: string }>(
      t,
      await call('run-1', 'fs_read', { path: 'out/g.txt' }),
    );
    t.equal(read.content, 'from the sandbox');
    t.equal(
      (await stat(join(root, 'run-1/out/g.txt'))).uid,
      SANDBOX_UID,
      'owned by 10001 on the host',
    );

    const cwd = await call('run-1', 'exec', { command: 'pwd', cwd: 'notes' });
    t.equal(payload<{ stdout: string }>(t, cwd).stdout.trim(), '/workspace/notes');

    const fail = payload<{ exitCode: number; stderr: string }>(
      t,
      await call('run-1', 'exec', { command: 'ls no-such-file' }),
    );
    t.not(fail.exitCode, 0, 'a non-zero exit is an answer');

    const slow = payload<{ timedOut: boolean }>(
      t,
      await call('run-1', 'exec', { command: 'sleep 30', timeoutMs: 300 }),
    );
    t.equal(slow.timedOut, true);

    const f = await call('run-1', 'fetch', {
      url: `http://127.0.0.1:${port}/hello`,
      path: 'downloads/hello.txt',
    });
    t.equal(payload<{ bytes: number }>(t, f).bytes, 13);
    t.equal(await readFile(join(root, 'run-1/downloads/hello.txt'), 'utf8'), 'fetched bytes');
    t.equal(
      code(await call('run-1', 'fetch', { url: 'http://10.0.0.1/x', path: 'x' })),
      'fetch_blocked',
    );
    t.equal(
      code(await call('run-1', 'fetch', { url: `http://127.0.0.1:${port}/missing`, path: 'y' })),
      'fetch_failed',
    );

    t.equal(code(await call('run-1', 'fs_delete', { path: 'downloads' })), 'invalid_arguments');
    t.equal(code(await call('run-1', 'fs_delete', { path: 'downloads', recursive: true })), 'ok');
    await t.rejects(stat(join(root, 'run-1/downloads')));
  });

  t.test('links made by commands are never a way out', async (t) => {
    const setup = await call('run-1', 'exec', {
      command: [
        'ln -s / r',
        'ln -s /elsewhere/new.txt new.txt',
        `ln -s ${outside} esc`,
        'ln -s ../run-1-x sib',
      ].join(' && '),
    });
    t.equal(payload<{ exitCode: number }>(t, setup).exitCode, 0);
    t.equal(code(await call('run-1', 'fs_read', { path: 'r/etc/passwd' })), 'invalid_path');
    t.equal(
      code(await call('run-1', 'fs_write', { path: 'new.txt', content: 'x' })),
      'invalid_path',
    );
    t.equal(code(await call('run-1', 'fs_read', { path: 'esc/secret.txt' })), 'invalid_path');
    t.equal(code(await call('run-1', 'fs_read', { path: 'sib/loot.txt' })), 'invalid_path');
    t.equal(
      code(await call('run-1', 'exec', { command: 'ls', cwd: 'esc' })),
      'invalid_path',
      'a cwd through a link out is refused',
    );
    t.equal(code(await call('run-1', 'fs_delete', { path: 'esc/', recursive: true })), 'ok');
    t.equal(await readFile(join(outside, 'secret.txt'), 'utf8'), 'SECRET', 'the target survives');
    t.same(await readdir(outside), ['secret.txt']);
  });

  if (runner.kind === 'bwrap') {
    t.test("the sandbox's mount table names neither the workspace nor the root", async (t) => {
      const ex = await call('run-1', 'exec', { command: 'cat /proc/self/mountinfo /proc/mounts' });
      const { exitCode, stdout } = payload<{ exitCode: number; stdout: string }>(t, ex);
      t.equal(exitCode, 0);
      t.match(stdout, / \/workspace /, 'the mount table was read');
      t.notOk(stdout.includes(base), 'no part of the workbench root (MEMQL_WORKBENCH_ROOT)');
    });
  }

  t.test('every refusal answers with its code', async (t) => {
    const cases: [string, () => Promise<DispatchResult>, string][] = [
      ['unknown action', () => call('run-1', 'fs_move', { path: 'a' }), 'invalid_arguments'],
      ['bad field', () => call('run-1', 'fs_read', { path: 7 }), 'invalid_arguments'],
      ['absolute path', () => call('run-1', 'fs_read', { path: '/etc/passwd' }), 'invalid_path'],
      ['.. escape', () => call('run-1', 'fs_write', { path: '../x', content: '' }), 'invalid_path'],
      ['missing file', () => call('run-1', 'fs_read', { path: 'nope.txt' }), 'path_not_found'],
      [
        'hyphenated need',
        () => call('run-1', 'fs_list', {}, { environment: { needs: ['macos-tooling'] } }),
        'invalid_environment_hint',
      ],
      [
        'substitution',
        () => call('run-1', 'exec', { command: 'echo $(sh -c id)' }),
        'command_not_allowed',
      ],
      ['bash', () => call('run-1', 'exec', { command: 'bash -c ls' }), 'command_not_allowed'],
      [
        'LD_PRELOAD in env',
        () => call('run-1', 'exec', { command: 'ls', env: { LD_PRELOAD: 'x.so' } }),
        'invalid_arguments',
      ],
      [
        'HOME in env',
        () => call('run-1', 'exec', { command: 'git status', env: { HOME: '/workspace' } }),
        'invalid_arguments',
      ],
      ['run id with dots', () => call('..', 'fs_list', {}), 'invalid_arguments'],
    ];
    for (const [name, run, want] of cases) t.equal(code(await run()), want, name);

    const mismatch = await call(
      'run-1',
      'exec',
      { command: 'ls' },
      { environment: { os: 'darwin', needs: ['gpu'] } },
    );
    t.equal(code(mismatch), 'environment_mismatch');
    t.same(environmentMismatchFromPayload(mismatch.ok ? null : mismatch.payload), {
      unmetNeeds: ['gpu', 'os'],
    });

    const denied = await call('run-1', 'exec', { command: 'ls && nc -l 1' });
    t.equal(code(denied), 'command_not_allowed');
    t.match(denied.ok ? {} : denied.payload, { name: 'nc', position: { index: 6 } });

    const build = await host.handleDispatch(
      parsedEnvelope({ action: 'build', args: {}, runId: 'run-1', agentId: 'a', taskId: 't' }),
      user,
    );
    t.equal(code(build), 'build_not_permitted');
    // A run that does not resolve: past the gate, refused before anything runs.
    const sysBuild = await host.handleDispatch(
      parsedEnvelope({ action: 'build', args: {}, runId: 'no-run', agentId: 'a', taskId: 't' }),
      systemAuthority('system:deploy'),
    );
    t.equal(code(sysBuild), 'workspace_owner_unresolved', 'a system authority passes the gate');
  });

  t.test('a run that does not resolve writes nothing', async (t) => {
    const r = await call('ghost-run', 'fs_write', { path: 'a.txt', content: 'x' });
    t.equal(code(r), 'workspace_owner_unresolved');
    await t.rejects(stat(join(root, 'ghost-run')), 'no directory');
    const rows = await db.query("select * from workbench_workspace where run_id = 'ghost-run'");
    t.same(rows, [], 'no workspace row');
  });

  t.test('an ended run is refused', async (t) => {
    await createRun(db, { id: 'run-done', ownerUserId: 'alice' });
    t.equal(code(await call('run-done', 'fs_write', { path: 'a', content: 'x' })), 'ok');
    await finishRun(db, 'run-done', 'succeeded');
    t.equal(code(await call('run-done', 'fs_read', { path: 'a' })), 'run_ended');
    const ws = await listWorkspacesForOwner(db, 'alice');
    t.ok(ws.some((w) => w.runId === 'run-1' && w.nodeId === 'node-1'));
  });

  t.test('no sandbox: exec is refused, file actions still work', async (t) => {
    const bare = new WorkbenchHost({
      ...deps,
      exec: {
        ...deps.exec,
        runner: { error: { code: 'no_sandbox', message: 'no_sandbox: install bubblewrap' } },
      },
    });
    const r = await bare.handleDispatch(
      parsedEnvelope({
        action: 'exec',
        args: { command: 'ls' },
        runId: 'run-1',
        agentId: 'a',
        taskId: 't',
      }),
      user,
    );
    t.equal(code(r), 'no_sandbox');
    const l = await bare.handleDispatch(
      parsedEnvelope({ action: 'fs_list', args: {}, runId: 'run-1', agentId: 'a', taskId: 't' }),
      user,
    );
    t.equal(code(l), 'ok');
  });

  t.test('files are durable: an evicted warm copy comes back byte for byte', async (t) => {
    const bytes = Buffer.from([0, 1, 2, 250, 255, 10, 13]);
    t.equal(
      code(
        await call('run-1', 'fs_write', {
          path: 'durable/bin.dat',
          content: bytes.toString('base64'),
          encoding: 'base64',
        }),
      ),
      'ok',
    );
    t.equal(
      code(await call('run-1', 'exec', { command: 'printf made-by-exec > durable/from-exec.txt' })),
      'ok',
    );
    // Removed behind the cache's back first: the next call must not trust what the
    // cache knew of the directory.
    await rm(join(root, 'run-1'), { recursive: true, force: true });
    const again = payload<{ content: string }>(
      t,
      await call('run-1', 'fs_read', { path: 'durable/bin.dat', encoding: 'base64' }),
    );
    t.same(Buffer.from(again.content, 'base64'), bytes, 'hydrated after an outside removal');
    await host.warm.evict('run-1');
    await t.rejects(stat(join(root, 'run-1')), 'the warm copy is gone');
    const back = payload<{ content: string }>(
      t,
      await call('run-1', 'fs_read', { path: 'durable/bin.dat', encoding: 'base64' }),
    );
    t.same(Buffer.from(back.content, 'base64'), bytes);
    const seen = payload<{ stdout: string }>(
      t,
      await call('run-1', 'exec', { command: 'cat durable/from-exec.txt' }),
    );
    t.equal(seen.stdout, 'made-by-exec', 'a command sees the hydrated files');
  });

  t.test('a callId replays the first command instead of running it again', async (t) => {
    const first = payload<{ commandId: string }>(
      t,
      await call('run-1', 'exec', { command: 'echo once >> once.txt' }, { callId: 'call-once' }),
    );
    const again = payload<{ commandId: string }>(
      t,
      await call('run-1', 'exec', { command: 'echo once >> once.txt' }, { callId: 'call-once' }),
    );
    t.equal(again.commandId, first.commandId);
    const read = payload<{ content: string }>(
      t,
      await call('run-1', 'fs_read', { path: 'once.txt' }),
    );
    t.equal(read.content, 'once\n', 'it ran once');
    const byId = (await host.commandResult(first.commandId)) as { status: string; stdout: string };
    t.equal(byId.status, 'completed', 'the outcome is there by id');
  });

  t.test('a command row that holds no exec request fails without running', async (t) => {
    // Another writer of the table could queue one; the row boundary refuses to cast it.
    const { command } = await host.queue.enqueue({
      runId: 'run-1',
      ownerUserId: 'alice',
      request: { kind: 'not-exec', command: 7 },
      timeoutMs: 5_000,
    });
    const done = await host.queue.waitForTerminal(command.id);
    t.equal(done.status, 'failed');
    t.equal(done.errorCode, 'internal');
    t.equal(done.exitCode, null, 'nothing ran');
    t.equal(code(await call('run-1', 'fs_list', {})), 'ok', 'the run carries on');
  });

  t.test('another replica takes over with every file intact', async (t) => {
    const otherRoot = join(base, 'replica-2');
    const other = new WorkbenchHost({ ...deps, nodeId: 'node-2', workbenchRoot: otherRoot });
    t.teardown(() => other.stop());
    const read = await other.handleDispatch(
      parsedEnvelope({
        action: 'fs_read',
        args: { path: 'notes/hello.txt' },
        runId: 'run-1',
        agentId: 'a',
        taskId: 't',
      }),
      user,
    );
    t.equal(payload<{ content: string }>(t, read).content, 'hello world\n');
    const ex = await other.handleDispatch(
      parsedEnvelope({
        action: 'exec',
        args: { command: 'cat durable/from-exec.txt' },
        runId: 'run-1',
        agentId: 'a',
        taskId: 't',
      }),
      user,
    );
    t.equal(payload<{ stdout: string }>(t, ex).stdout, 'made-by-exec');
    const rows = await listWorkspacesForOwner(db, 'alice', { includeReleased: true });
    const mine = rows.filter((w) => w.runId === 'run-1');
    t.same(mine.map((w) => [w.nodeId, w.status, w.releasedReason]).sort(), [
      ['node-1', 'released', 'node_lost'],
      ['node-2', 'provisioned', null],
    ]);
  });
}
