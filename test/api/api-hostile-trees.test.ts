import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import { getManifest } from '../../src/store/index.js';
import { endRun, sweepOnce } from '../../src/workbench/lifecycle/index.js';
import { envelope, startApiHarness } from './api-support.js';

/**
 * A command can make a tree deeper than PATH_MAX (each directory made relative to the
 * last). The run keeps working, the rest of its files are kept, and it can be ended,
 * deleted and swept, through the HTTP API over a real host, Postgres and bwrap.
 */

const h = await startApiHarness(t);

interface Answer {
  ok: boolean;
  errorCode?: string;
  message?: string;
  payload?: Record<string, unknown>;
}

async function dispatch(runId: string, action: string, args: Record<string, unknown>) {
  return (await h.json<Answer>(h.alice, 'POST', '/v1/dispatch', envelope(runId, action, args)))
    .body;
}

async function newRun(): Promise<string> {
  const res = await h.json<{ run: { id: string } }>(h.alice, 'POST', '/v1/runs', {});
  if (res.status !== 201) throw new Error(`create run: ${res.status}`);
  return res.body.run.id;
}

/** 45 directories of 100 characters, one inside the other, and a file at the bottom. */
const DEEP_TREE = [
  "open('kept.txt', 'w').write('kept')",
  "os.mkdir('deep')",
  "os.chdir('deep')",
  'for _ in range(45):',
  "    os.mkdir('d' * 100)",
  "    os.chdir('d' * 100)",
  "open('leaf.txt', 'w').write('too deep')",
].join('\n');

async function makeDeepTree(runId: string): Promise<Answer> {
  return dispatch(runId, 'exec', { command: `python3 -c "import os\n${DEEP_TREE}"` });
}

async function gone(path: string): Promise<boolean> {
  return lstat(path).then(
    () => false,
    (err: NodeJS.ErrnoException) => err.code === 'ENOENT',
  );
}

t.test(
  'a run whose command made a tree deeper than PATH_MAX keeps working, ends and is deleted',
  async (t) => {
    const runId = await newRun();
    const made = await makeDeepTree(runId);
    t.equal(made.ok, true, `exec answers (${made.errorCode}: ${made.message})`);
    t.equal(made.payload?.exitCode, 0, 'the command itself succeeded');
    t.match(
      made.payload?.filesRefused,
      { total: 1, entries: [{ reason: 'path_too_long', path: /^deep\/d+\/.*…/ }] },
      'the answer names what could not be kept',
    );
    const manifest = await getManifest(h.db, runId);
    t.same(
      manifest.files.map((f) => f.path),
      ['kept.txt'],
      'the rest of the workspace was synced',
    );

    const write = await dispatch(runId, 'fs_write', { path: 'later.txt', content: 'later' });
    t.equal(write.ok, true, `a later fs_write works (${write.errorCode}: ${write.message})`);
    const exec = await dispatch(runId, 'exec', { command: 'cat kept.txt later.txt' });
    t.equal(exec.ok, true, `a later exec works (${exec.errorCode}: ${exec.message})`);
    t.equal(exec.payload?.stdout, 'keptlater');
    t.match(exec.payload?.filesRefused, { total: 1 }, 'and is told the tree is still out of reach');
    const list = await dispatch(runId, 'fs_list', { path: 'deep', recursive: true });
    t.equal(list.ok, true, `fs_list answers (${list.errorCode}: ${list.message})`);
    t.match(list.payload?.refused, [{ reason: 'path_too_long' }]);
    const tooLong = await dispatch(runId, 'fs_write', {
      path: `x/${'n'.repeat(256)}`,
      content: 'x',
    });
    t.match(tooLong, { ok: false, errorCode: 'invalid_path' }, 'a 256-byte name is invalid_path');

    const dir = join(h.root, runId);
    t.equal(await gone(dir), false, 'the directory is there before the end');
    const ended = await h.json(h.alice, 'POST', `/v1/runs/${runId}/end`, { status: 'succeeded' });
    t.equal(ended.status, 200, 'ending the run answers 200');
    t.equal(await gone(dir), true, 'and removes its directory');
    const deleted = await h.json(h.alice, 'DELETE', `/v1/runs/${runId}`);
    t.equal(deleted.status, 200, 'deleting the run answers 200');
    t.equal((await h.json(h.alice, 'GET', `/v1/runs/${runId}`)).status, 404);
  },
);

t.test('deleting a run that was never ended removes its deep directory', async (t) => {
  const runId = await newRun();
  t.equal((await makeDeepTree(runId)).ok, true);
  const deleted = await h.json(h.alice, 'DELETE', `/v1/runs/${runId}`);
  t.equal(deleted.status, 200);
  t.equal(await gone(join(h.root, runId)), true);
});

t.test('the cleanup sweep removes a deep directory no live workspace claims', async (t) => {
  const runId = await newRun();
  t.equal((await makeDeepTree(runId)).ok, true);
  // Ended where this node's directory is not in reach (another replica's API, say):
  // the row is released and the directory is left for this node's sweep.
  const log = pino({ level: 'silent' });
  await endRun({ db: h.db, log }, runId, 'succeeded');
  t.equal(await gone(join(h.root, runId)), false);
  const report = await sweepOnce(
    { db: h.db, objects: h.objects, nodeId: 'node-api', workbenchRoot: h.root, log },
    new Date(),
  );
  t.match(report, { directoriesFailed: 0 });
  t.ok(report.directoriesRemoved >= 1, 'the directory was removed');
  t.equal(await gone(join(h.root, runId)), true);
});
