import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { ExpectedOutputResult } from '../../src/contract/index.js';
import type { ExecuteCommand } from '../../src/queue/index.js';
import {
  claimNextCommand,
  type Db,
  enqueueCommand,
  finishAndClaim,
  getCommand,
  listAuditEvents,
  type NewArtifact,
  openDb,
} from '../../src/store/index.js';
import { emptyRun, makeQueue, newRun, setupDb, watchedDb } from './queue-support.js';

/**
 * The artifacts of a command's expected outputs are recorded by the statement that
 * records its result, and only when it does: an artifact exists exactly when its
 * command's result does. Real Postgres.
 */

function artifact(id: string, run: { runId: string; ownerUserId: string }): NewArtifact {
  return {
    id,
    runId: run.runId,
    ownerUserId: run.ownerUserId,
    name: `${id}.txt`,
    contentType: 'text/plain; charset=utf-8',
    size: 5,
    hash: 'ab'.repeat(32),
    objectKey: `artifacts/${id}`,
    sourcePath: `out/${id}.txt`,
  };
}

function promoted(a: NewArtifact): ExpectedOutputResult {
  return {
    path: a.sourcePath,
    artifact: {
      artifactId: a.id,
      name: a.name,
      contentType: a.contentType,
      size: a.size,
      sha256: a.hash,
      path: a.sourcePath,
      runId: a.runId,
    },
  };
}

async function artifactRows(db: Db, runId: string) {
  return db.query<{ id: string; created_at: Date }>(
    'select id, created_at from artifact where run_id = $1 order by id',
    [runId],
  );
}

/** The finish with artifacts, on either driver. */
async function finishRecordsArtifacts(t: Test, db: Db): Promise<void> {
  const run = await newRun(db);
  await enqueueCommand(db, { ...run, id: 'c1', request: { command: 'x' }, timeoutMs: 5000 });
  await enqueueCommand(db, { ...run, id: 'c2', request: { command: 'y' }, timeoutMs: 5000 });
  await claimNextCommand(db, 'worker-1', 5000);
  const a = artifact('art_a', run);
  const outputs = [
    promoted(a),
    { path: 'out/none.txt', error: { code: 'path_not_found', message: 'path_not_found: ...' } },
  ];
  const statements: string[] = [];
  const watched = watchedDb(db, (sql) => statements.push(sql));

  const stolen = await finishAndClaim(watched, 'c1', 'worker-2', {
    status: 'completed',
    exitCode: 0,
    outputs,
    artifacts: [a],
  });
  t.equal(stolen.row, null, 'another worker cannot finish it');
  t.same(await artifactRows(db, run.runId), [], 'and records none of its artifacts');

  const { row, claimed } = await finishAndClaim(
    watched,
    'c1',
    'worker-1',
    { status: 'completed', exitCode: 0, outputs, artifacts: [a] },
    { limit: 1, leaseMs: 5000 },
  );
  t.match(row, { id: 'c1', status: 'completed' });
  t.same(row?.outputs, outputs, 'the row carries what became of each output');
  t.match(claimed, [{ id: 'c2', status: 'running' }], 'the slot still claims the next');
  t.equal(statements.length, 2, 'each finish is one statement');
  t.match(statements[1], /insert into artifact/, 'which records the artifacts');
  const rows = await artifactRows(db, run.runId);
  t.same(
    rows.map((r) => r.id),
    ['art_a'],
  );
  // now() is the transaction's start: the same instant means the same transaction.
  t.equal(rows[0]?.created_at.getTime(), row?.finishedAt?.getTime(), 'in the same transaction');
  const events = await listAuditEvents(db, { runId: run.runId });
  const promotedEvent = events.find((e) => e.eventType === 'artifact.promoted');
  t.match(promotedEvent, {
    commandId: 'c1',
    ownerUserId: run.ownerUserId,
    metadata: { artifactId: 'art_a', size: 5, contentType: 'text/plain; charset=utf-8' },
  });
  t.same(Object.keys(promotedEvent?.metadata ?? {}).sort(), ['artifactId', 'contentType', 'size']);
  t.same((await getCommand(db, 'c1'))?.outputs, outputs, 'read back by id');
}

t.test('a finish records the artifacts with the result, in its one statement', async (t) => {
  await finishRecordsArtifacts(t, (await setupDb(t)).db);
});

t.test('the same on the embedded database', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'memql-outputs-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const db = await openDb({ kind: 'pglite', dataDir: join(dir, 'db') });
  t.teardown(() => db.close());
  await finishRecordsArtifacts(t, db);
});

t.test('the queue records promoted outputs only with a completed command', async (t) => {
  const { db } = await setupDb(t);
  const run = await newRun(db);
  const ok = artifact('art_ok', run);
  const late = artifact('art_late', run);
  const execute: ExecuteCommand = async (command) => {
    const a = command.id === 'ok' ? ok : late;
    const outputs = { results: [promoted(a)], artifacts: [a] };
    // A command cancelled as it ended: its outputs must not be promoted.
    if (command.id === 'cancelled') return { ...emptyRun(), cancelled: true, outputs };
    return { ...emptyRun(), outputs };
  };
  const q = makeQueue(t, { db, execute });
  q.start();
  for (const id of ['ok', 'cancelled']) {
    const { command } = await q.enqueue({
      ...run,
      id,
      request: { command: 'x', outputs: [{ path: 'out/x.txt', name: 'x.txt' }] },
      timeoutMs: 5000,
    });
    await q.waitForTerminal(command.id);
  }
  t.same(
    (await artifactRows(db, run.runId)).map((r) => r.id),
    ['art_ok'],
    'only the completed command promoted its output',
  );
  t.match(await getCommand(db, 'ok'), { status: 'completed', outputs: [promoted(ok)] });
  const cancelled = await getCommand(db, 'cancelled');
  t.match(cancelled, { status: 'cancelled', outputs: null });
});
