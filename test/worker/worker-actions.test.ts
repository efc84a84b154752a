import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import type { DispatchResult, Need } from '../../src/contract/index.js';
import {
  responseFrame,
  resultFromResponse,
  type WireAuthority,
  WORKER_DISPATCH_METHOD,
} from '../../src/mesh/index.js';
import { ProcessRunner } from '../../src/sandbox/process-runner.js';
import {
  CallSlots,
  commandBaseEnv,
  createWorkerHandler,
  execTimeoutMs,
  type WorkerExecPayload,
  workerOffer,
} from '../../src/worker/index.js';
import { killAll, leftovers, markedSleep, sleepStarted } from '../sandbox/sandbox-support.js';

/**
 * The worker's answer to one call, through its request handler (no network): the
 * checks it makes itself, the file actions on a temp root, and exec through the
 * process runner with the worker's base environment.
 */

// The worker process has the token, other MEMQL_* settings and a display; its
// commands must see none of them unless the worker offers the display.
const TOKEN = `mqt_${randomBytes(16).toString('hex')}`;
process.env.MEMQL_WORKER_TOKEN = TOKEN;
process.env.MEMQL_WORKER_AGENT = 'agent.example:50060';
process.env.DISPLAY = ':42';

const USER: WireAuthority = { class: 'user', subject: 'user:alice' };

async function tempDir(t: { teardown(fn: () => unknown): void }, prefix: string) {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function worker(root: string, provides: readonly Need[] = ['user_files']) {
  const offer = workerOffer(provides, process.platform, 2);
  const handler = createWorkerHandler({
    offer,
    slots: new CallSlots(offer.capacity),
    runner: new ProcessRunner({ baseEnv: commandBaseEnv(process.env, offer.provides) }),
    root,
    limits: { defaultTimeoutMs: 10_000, maxTimeoutMs: 20_000, outputLimitBytes: 1 << 20 },
    maxReadBytes: 1 << 20,
    maxWriteBytes: 1 << 20,
    log: pino({ level: 'silent' }),
  });
  return async (
    action: string,
    args: Record<string, unknown>,
    options: {
      authority?: WireAuthority | null;
      environment?: unknown;
      signal?: AbortSignal;
      output?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void;
    } = {},
  ): Promise<DispatchResult> => {
    const envelope = {
      action,
      args,
      runId: 'run-1',
      agentId: 'agent-1',
      taskId: 'task-1',
      ...(options.environment === undefined ? {} : { environment: options.environment }),
    };
    const answer = await handler(
      {
        id: 'r1',
        method: WORKER_DISPATCH_METHOD,
        authority: options.authority === undefined ? USER : options.authority,
        payload: Buffer.from(JSON.stringify(envelope)),
        authenticated: false,
        peerNodeId: 'agent',
      },
      {
        signal: options.signal ?? new AbortController().signal,
        output: options.output ?? (() => undefined),
      },
    );
    return resultFromResponse(responseFrame('r1', answer));
  };
}

function payloadOf<P>(result: DispatchResult): P {
  if (!result.ok) throw new Error(`expected ok, got ${result.errorCode}: ${result.message}`);
  return result.payload as P;
}

t.test('files are read and written relative to the root, shared by every run', async (t) => {
  const root = await tempDir(t, 'memql-worker-root-');
  const call = worker(root);
  t.match(payloadOf(await call('fs_write', { path: 'notes/a.txt', content: 'hello' })), {
    path: 'notes/a.txt',
    bytesWritten: 5,
  });
  t.equal(await readFile(join(root, 'notes/a.txt'), 'utf8'), 'hello', 'in the root itself');
  t.match(payloadOf(await call('fs_read', { path: 'notes/a.txt' })), { content: 'hello' });
  t.match(payloadOf(await call('fs_list', { path: '.', recursive: true })), {
    entries: [
      { path: 'notes', type: 'directory' },
      { path: 'notes/a.txt', type: 'file' },
    ],
  });
  t.match(payloadOf(await call('fs_delete', { path: 'notes', recursive: true })), {
    deleted: true,
  });
  await t.rejects(stat(join(root, 'notes')), { code: 'ENOENT' });
});

t.test('no path leaves the root: .., absolute paths and links out are invalid_path', async (t) => {
  const parent = await tempDir(t, 'memql-worker-parent-');
  const root = join(parent, 'root');
  const outside = join(parent, 'outside');
  await mkdir(root);
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), 'secret');
  await symlink(outside, join(root, 'link'));
  await symlink(join(outside, 'secret.txt'), join(root, 'secret-link'));
  const call = worker(root);
  const refused = async (action: string, args: Record<string, unknown>) => {
    const r = await call(action, args);
    t.equal(r.ok ? 'ok' : r.errorCode, 'invalid_path', `${action} ${JSON.stringify(args)}`);
  };
  await refused('fs_read', { path: '../outside/secret.txt' });
  await refused('fs_read', { path: join(outside, 'secret.txt') });
  await refused('fs_read', { path: 'link/secret.txt' });
  await refused('fs_read', { path: 'secret-link' });
  await refused('fs_write', { path: 'link/new.txt', content: 'x' });
  await refused('fs_write', { path: '../new.txt', content: 'x' });
  await refused('fs_list', { path: 'link' });
  await refused('fs_delete', { path: '../outside/secret.txt' });
  await refused('exec', { command: 'pwd', cwd: 'link' });
  await refused('exec', { command: 'pwd', cwd: '..' });
  await t.rejects(stat(join(outside, 'new.txt')), { code: 'ENOENT' }, 'nothing written outside');
  await t.rejects(stat(join(parent, 'new.txt')), { code: 'ENOENT' });
  t.equal(await readFile(join(outside, 'secret.txt'), 'utf8'), 'secret', 'nothing deleted');
});

t.test('only the worker actions run; other actions are refused by name', async (t) => {
  const root = await tempDir(t, 'memql-worker-root-');
  const call = worker(root);
  for (const [action, args] of [
    ['fetch', { url: 'https://example.com/', path: 'x' }],
    ['promote_artifact', { path: 'x' }],
    ['build', { script: 'build' }],
  ] as const) {
    const r = await call(action, args);
    t.equal(r.ok ? 'ok' : r.errorCode, 'invalid_arguments', action);
    t.match(r.ok ? '' : r.message, /worker hosts.*fs_read, fs_list, fs_write, fs_delete, exec/);
  }
});

t.test('only a user-class authority is served', async (t) => {
  const root = await tempDir(t, 'memql-worker-root-');
  const call = worker(root);
  for (const authority of [{ class: 'system', subject: 'system:ci' } as const, null]) {
    const r = await call('fs_list', { path: '.' }, { authority });
    t.equal(r.ok ? 'ok' : r.errorCode, 'forbidden', JSON.stringify(authority));
  }
});

t.test("the hint is checked against the worker's own offer", async (t) => {
  const root = await tempDir(t, 'memql-worker-root-');
  const call = worker(root, ['display', 'user_files']);
  const list = (environment: unknown) => call('fs_list', { path: '.' }, { environment });
  t.equal((await list({ needs: ['display', 'user_files'] })).ok, true, 'offered needs pass');
  const gpu = await list({ needs: ['gpu', 'display'] });
  t.match(gpu, { ok: false, errorCode: 'environment_mismatch', payload: { unmetNeeds: ['gpu'] } });
  const os = await list({ os: process.platform === 'darwin' ? 'windows' : 'darwin' });
  t.match(os, { ok: false, errorCode: 'environment_mismatch', payload: { unmetNeeds: ['os'] } });
  t.match(await list({ needs: ['screen'] }), { ok: false, errorCode: 'invalid_environment_hint' });
});

/** The names and values a command saw, from `env`'s output. */
function envOf(result: DispatchResult): Map<string, string> {
  const out = payloadOf<WorkerExecPayload>(result).stdout;
  return new Map(
    out
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

t.test('exec: the allowlisted session, the display only when offered, never MEMQL_*', async (t) => {
  const root = await tempDir(t, 'memql-worker-root-');
  const plain = envOf(await worker(root)('exec', { command: 'env', env: { FOO: 'bar' } }));
  t.equal(plain.get('FOO'), 'bar', "the call's own env");
  t.equal(plain.get('PATH'), process.env.PATH, "the worker's PATH");
  t.notOk(plain.has('DISPLAY'), 'no display when not offered');
  const shown = envOf(await worker(root, ['display', 'user_files'])('exec', { command: 'env' }));
  t.equal(shown.get('DISPLAY'), ':42', 'the display when offered');
  for (const env of [plain, shown]) {
    t.same(
      [...env.keys()].filter((name) => name.startsWith('MEMQL_')),
      [],
      'no MEMQL_* variable',
    );
    t.notOk(
      [...env.values()].some((v) => v.includes(TOKEN)),
      'not the token',
    );
  }
});

t.test('exec: output streams ahead of the answer, which has the workbench shape', async (t) => {
  const root = await tempDir(t, 'memql-worker-root-');
  await mkdir(join(root, 'sub'));
  const chunks: string[] = [];
  const r = await worker(root)(
    'exec',
    { command: 'pwd; echo oops >&2; printf "\\377"; exit 3', cwd: 'sub' },
    { output: (stream, chunk) => chunks.push(`${stream}:${chunk.toString('latin1')}`) },
  );
  const answer = payloadOf<WorkerExecPayload>(r);
  t.match(answer, {
    status: 'completed',
    exitCode: 3,
    signal: null,
    timedOut: false,
    cancelled: false,
    stdoutEncoding: 'base64',
    stderr: 'oops\n',
    stdoutTruncated: false,
  });
  t.equal(Buffer.from(answer.stdout, 'base64').toString('latin1'), `${join(root, 'sub')}\n\xff`);
  t.type(answer.durationMs, 'number');
  t.notOk('commandId' in answer, 'no durable command on a worker');
  t.ok(
    chunks.some((c) => c.startsWith('stderr:oops')),
    'output streamed',
  );
  const refused = await worker(root)('exec', { command: 'true', outputs: [{ path: 'a.txt' }] });
  t.equal(refused.ok ? 'ok' : refused.errorCode, 'invalid_arguments', 'no outputs to promote');
});

t.test('exec: a timeout over the maximum is cut to it; the limit kills the tree', async (t) => {
  const limits = { defaultTimeoutMs: 10_000, maxTimeoutMs: 20_000, outputLimitBytes: 1 };
  t.equal(execTimeoutMs(50_000, limits), 20_000, 'cut to the maximum');
  t.equal(execTimeoutMs(undefined, limits), 10_000, 'the default');
  t.equal(execTimeoutMs(300, limits), 300);
  const root = await tempDir(t, 'memql-worker-root-');
  const s = markedSleep(60);
  const r = await worker(root)('exec', { command: `sleep ${s} & sleep 30`, timeoutMs: 300 });
  t.match(payloadOf(r), { status: 'timed_out', timedOut: true });
  const left = await leftovers(s);
  killAll(left);
  t.same(left, [], 'nothing left running');
});

t.test('exec: a cancel kills the running process tree', async (t) => {
  const root = await tempDir(t, 'memql-worker-root-');
  const s1 = markedSleep(60);
  const s2 = markedSleep(60);
  const controller = new AbortController();
  const running = worker(root)(
    'exec',
    { command: `sleep ${s1} & sleep ${s2}` },
    { signal: controller.signal },
  );
  await sleepStarted(s1);
  await sleepStarted(s2);
  controller.abort();
  t.match(payloadOf(await running), { status: 'cancelled', cancelled: true, exitCode: null });
  const left = [...(await leftovers(s1)), ...(await leftovers(s2))];
  killAll(left);
  t.same(left, [], 'the whole tree is gone');
});
