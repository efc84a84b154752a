import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { bytesOutsideWorkspaces, bytesUnder, sandboxProcessesOf } from '../support/leftovers.js';
import { eventually } from '../support/mesh.js';
import { type NodeProcess, nodeMain, spawnNode } from '../support/node-process.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * Nothing of an upload or a run outlives its owner, on a real local node (its own
 * process, Postgres, the bwrap sandbox) through real HTTP: refused and aborted uploads
 * leave no staged byte, staged bytes count against the workspace quota, a run's end or
 * deletion takes its staged uploads and its warm sandbox before the call answers, and
 * a node killed with a stage staged finds and removes it when it starts again.
 */

t.setTimeout(600_000);

const MiB = 1024 * 1024;
const QUOTA = 20 * MiB;
const database = await createTestDatabase();
t.teardown(() => database.drop());
const cwd = await mkdtemp(join(tmpdir(), 'memql-leftovers-'));
t.teardown(() => rm(cwd, { recursive: true, force: true }));
await chmod(cwd, 0o755);

const nodeEnv = {
  MEMQL_DATABASE_URL: database.url,
  MEMQL_HTTP_LISTEN: '127.0.0.1:0',
  MEMQL_GRPC_LISTEN: '127.0.0.1:0',
  MEMQL_WORKSPACE_MAX_BYTES: String(QUOTA),
  MEMQL_LOG_FORMAT: 'json',
};

interface LocalNode {
  proc: NodeProcess;
  url: string;
  token: string;
  root: string;
}

/** A local node on `dataDir` (its own per test, but for a restart). */
async function startLocal(
  t: Test,
  dataDir: string,
  env: Record<string, string> = {},
): Promise<LocalNode> {
  const proc = spawnNode(t, 'local', nodeMain('local'), {
    ...nodeEnv,
    MEMQL_DATA_DIR: join(cwd, dataDir),
    ...env,
  });
  const banner = await proc.waitFor(
    () => (proc.other.some((l) => l.startsWith('ready.')) ? proc.other.join('\n') : undefined),
    'the ready banner',
    120_000,
  );
  const field = (re: RegExp) => re.exec(banner)![1]!;
  return {
    proc,
    url: field(/API: +(http:\/\/\S+?)\/v1/),
    token: field(/token: +(\S+)/),
    root: field(/workspaces: +(\S+)/),
  };
}

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field
type Json = any;

function api(node: LocalNode) {
  const json = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${node.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${node.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const dispatch = async (runId: string, action: string, args: object) =>
    (await json('POST', '/v1/dispatch', { action, args, runId, agentId: 'a', taskId: 't' })).body;
  /** One upload part through `fs_write`, as a resumable client sends it. */
  const part = (runId: string, id: string, offset: number, bytes: Buffer, complete = false) =>
    dispatch(runId, 'fs_write', {
      path: `${id}.bin`,
      content: bytes.toString('base64'),
      encoding: 'base64',
      upload: { id, offset, complete },
    });
  const put = async (runId: string, path: string, bytes: Buffer) => {
    const res = await fetch(`${node.url}/v1/runs/${runId}/files?path=${path}`, {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${node.token}`,
        'content-type': 'application/octet-stream',
      },
      body: bytes,
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const newRun = async () => (await json('POST', '/v1/runs', {})).body.run.id as string;
  return { json, dispatch, part, put, newRun };
}

/** A node, a run of its with a small file, and the bytes outside its workspace. */
async function withRun(t: Test, dataDir: string) {
  const node = await startLocal(t, dataDir);
  const calls = api(node);
  const runId = await calls.newRun();
  const kept = await calls.dispatch(runId, 'fs_write', { path: 'keep.txt', content: 'kept\n' });
  t.equal(kept.ok, true, kept.message);
  const outside = () => bytesOutsideWorkspaces(node.root, [runId]);
  return { node, runId, outside, ...calls };
}

t.test('ten uploads refused over the quota leave no staged byte', async (t) => {
  const { node, runId, outside, put } = await withRun(t, 'refused');
  // Each is refused part way (at 24 of 30 MiB), after two parts were staged.
  const tooBig = randomBytes(30 * MiB);
  const refusals: string[] = [];
  for (let i = 0; i < 10; i++) {
    const res = await put(runId, `big-${i}.bin`, tooBig);
    refusals.push(`${res.status} ${res.body.errorCode}`);
  }
  const left = await outside();
  t.comment(
    `bytes under the workbench root outside live workspaces after 10 refused uploads: ${left}`,
  );
  t.same(refusals, Array(10).fill('413 workspace_quota_exceeded'));
  t.equal(left, 0, 'no staged byte is left after 10 refused uploads');
  t.equal((await node.proc.stop('SIGINT', 60_000)).code, 0);
});

t.test('an upload whose caller goes away, or gives up, leaves nothing', async (t) => {
  const { node, runId, outside, dispatch, part } = await withRun(t, 'aborted');
  // A caller that goes away in the middle of its body: two parts were staged.
  const cut = request(`${node.url}/v1/runs/${runId}/files?path=cut.bin`, {
    method: 'PUT',
    headers: {
      authorization: `Bearer ${node.token}`,
      'content-type': 'application/octet-stream',
      'content-length': String(30 * MiB),
    },
  });
  cut.on('error', () => {});
  cut.write(randomBytes(20 * MiB));
  await eventually('two parts staged', async () => (await outside()) >= 16 * MiB, 60_000);
  cut.destroy();
  await eventually('the aborted upload is gone', async () => (await outside()) === 0, 60_000);

  // A part that gives the upload up removes what it staged.
  t.equal((await part(runId, 'upload-given-up', 0, randomBytes(MiB))).ok, true);
  t.equal(await outside(), MiB);
  const aborted = await dispatch(runId, 'fs_write', {
    path: 'given-up.bin',
    content: '',
    upload: { id: 'upload-given-up', offset: 0, abort: true },
  });
  t.match(aborted, { ok: true, payload: { upload: { staged: 0, aborted: true } } });
  t.equal(await outside(), 0);
  t.equal((await node.proc.stop('SIGINT', 60_000)).code, 0);
});

t.test('staged bytes count against the workspace quota', async (t) => {
  const { node, runId, outside, part, put } = await withRun(t, 'counted');
  // 12 MiB staged: a 10 MiB file no longer fits in the 20 MiB quota.
  const held = randomBytes(12 * MiB);
  t.equal((await part(runId, 'upload-held', 0, held.subarray(0, 8 * MiB))).ok, true);
  t.equal((await part(runId, 'upload-held', 8 * MiB, held.subarray(8 * MiB))).ok, true);
  const over = await put(runId, 'ten.bin', randomBytes(10 * MiB));
  t.equal(over.status, 413, 'staged bytes count against the quota');
  t.equal(over.body.errorCode, 'workspace_quota_exceeded');
  const placed = await part(runId, 'upload-held', 12 * MiB, Buffer.alloc(0), true);
  t.match(placed, { ok: true, payload: { size: 12 * MiB } }, 'the staged upload still completes');
  t.equal(await outside(), 0, 'and leaves nothing staged');
  t.equal(await bytesUnder(join(node.root, runId)), 12 * MiB + 5, 'the workspace holds it');
  t.equal((await node.proc.stop('SIGINT', 60_000)).code, 0);
});

t.test('a run that ends or is deleted takes its stages and warm sandbox with it', async (t) => {
  const node = await startLocal(t, 'ended');
  const { json, dispatch, part, newRun } = api(node);
  for (const how of ['end', 'delete'] as const) {
    const runId = await newRun();
    const ran = await dispatch(runId, 'exec', { command: 'true' });
    t.equal(ran.ok, true, ran.message);
    t.not((await sandboxProcessesOf(node.root, runId)).length, 0, `${how}: a warm sandbox waits`);
    t.equal((await part(runId, 'upload-staged', 0, randomBytes(MiB))).ok, true);
    t.equal(await bytesUnder(join(node.root, '.uploads', runId)), MiB, `${how}: 1 MiB staged`);
    const answer =
      how === 'end'
        ? await json('POST', `/v1/runs/${runId}/end`, { status: 'succeeded' })
        : await json('DELETE', `/v1/runs/${runId}`);
    t.equal(answer.status, 200);
    // Checked as the call answers: nothing waits for a timer.
    t.same(await sandboxProcessesOf(node.root, runId), [], `${how}: no sandbox process is left`);
    t.equal(await bytesUnder(join(node.root, '.uploads', runId)), 0, `${how}: no staged byte`);
    t.equal(await bytesUnder(join(node.root, runId)), 0, `${how}: no warm copy`);
  }
  t.equal((await node.proc.stop('SIGINT', 60_000)).code, 0);
});

t.test('a node that stops removes the stages it holds', async (t) => {
  const node = await startLocal(t, 'stopped');
  const runId = await api(node).newRun();
  t.equal((await api(node).part(runId, 'upload-stop', 0, randomBytes(MiB))).ok, true);
  t.equal(await bytesUnder(join(node.root, '.uploads')), MiB);
  t.equal((await node.proc.stop('SIGINT', 60_000)).code, 0);
  t.equal(await bytesUnder(join(node.root, '.uploads')), 0, 'no staged byte outlives the node');
});

t.test('a node killed with an upload staged removes the stage when it starts', async (t) => {
  const first = await startLocal(t, 'restarted');
  const runId = await api(first).newRun();
  const bytes = randomBytes(16 * MiB);
  const { part } = api(first);
  t.equal((await part(runId, 'upload-restart', 0, bytes.subarray(0, 8 * MiB))).ok, true);
  t.equal((await part(runId, 'upload-restart', 8 * MiB, bytes.subarray(8 * MiB))).ok, true);
  await first.proc.stop('SIGKILL');
  t.equal(await bytesUnder(join(first.root, '.uploads')), 16 * MiB, 'the stage outlived the node');

  const second = await startLocal(t, 'restarted');
  await eventually(
    'the stage is removed at start',
    async () => (await bytesUnder(join(second.root, '.uploads'))) === 0,
    60_000,
  );
  // The caller's next part finds nothing staged and is told to start again.
  const next = await api(second).part(runId, 'upload-restart', 16 * MiB, Buffer.from('x'));
  t.match(next, { ok: false, errorCode: 'invalid_arguments', payload: { staged: 0 } });
  t.equal((await second.proc.stop('SIGINT', 60_000)).code, 0);
});

t.test('a stage left idle past MEMQL_UPLOAD_IDLE_MS goes with the sweep', async (t) => {
  const node = await startLocal(t, 'idle', {
    MEMQL_UPLOAD_IDLE_MS: '1000',
    MEMQL_CLEANUP_INTERVAL_MS: '200',
  });
  const { newRun, part } = api(node);
  const runId = await newRun();
  t.equal((await part(runId, 'upload-idle', 0, randomBytes(MiB))).ok, true);
  await eventually(
    'the idle stage is removed',
    async () => (await bytesUnder(join(node.root, '.uploads'))) === 0,
    60_000,
  );
  const next = await part(runId, 'upload-idle', MiB, Buffer.from('x'));
  t.match(next, { ok: false, errorCode: 'invalid_arguments', payload: { staged: 0 } });
  t.equal((await node.proc.stop('SIGINT', 60_000)).code, 0);
});
