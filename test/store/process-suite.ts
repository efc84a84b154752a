import type { Test } from 'tap';
import {
  appendProcessOutput,
  createRun,
  type Db,
  deleteRunProcesses,
  endProcess,
  getProcess,
  listAuditEvents,
  listRunProcesses,
  loseProcesses,
  readProcessOutput,
  startProcess,
} from '../../src/store/index.js';
import { uid } from './store-suite.js';

/**
 * The background processes' rows, on every driver: the run's cap held by the start
 * itself, one process per `callId`, output appended only at its stream's end (a chunk
 * sent twice kept once, a chunk after a lost one refused) and read back from any
 * offset, the end and loss moves guarded and each with its audit event, which never
 * carries the command text.
 */
export function processSuite(t: Test, db: Db): void {
  async function newRun() {
    return createRun(db, { id: uid('prun'), ownerUserId: 'user-p' });
  }
  const request = { command: 'python3 -m http.server 8000 # SECRET-COMMAND-TEXT', cwd: '.' };

  t.test('processes: start within the cap; one process per callId', async (t) => {
    const run = await newRun();
    const start = (id: string, callId?: string) =>
      startProcess(
        db,
        {
          id,
          runId: run.id,
          ownerUserId: 'user-p',
          nodeId: 'node-a',
          callId: callId ?? null,
          request,
        },
        2,
      );
    const a = await start(uid('proc'), 'call-1');
    t.equal(a.kind, 'started');
    if (a.kind !== 'started') return;
    t.equal(a.process.status, 'running');
    t.same(a.process.request, request);
    const again = await start(uid('proc'), 'call-1');
    t.equal(again.kind, 'replayed', 'the same callId answers the process it started');
    if (again.kind === 'replayed') t.equal(again.process.id, a.process.id);
    t.equal((await start(uid('proc'))).kind, 'started');
    const over = await start(uid('proc'));
    t.same(over, { kind: 'limit', live: 2 }, 'a third is refused: two run');
    t.equal((await listRunProcesses(db, run.id, { limit: 10 })).length, 2, 'nothing was added');
    await endProcess(db, a.process.id, 'node-a', { status: 'exited', exitCode: 0 });
    t.equal((await start(uid('proc'))).kind, 'started', 'an ended one frees its place');
  });

  t.test('processes: output only at the stream end, read from any offset', async (t) => {
    const run = await newRun();
    const id = uid('proc');
    await startProcess(
      db,
      { id, runId: run.id, ownerUserId: 'user-p', nodeId: 'node-a', request },
      5,
    );
    const put = (offset: number, text: string, stream: 'stdout' | 'stderr' = 'stdout') =>
      appendProcessOutput(db, id, stream, offset, Buffer.from(text));
    t.equal(await put(0, 'hello '), 'appended');
    t.equal(await put(6, 'world\n'), 'appended');
    t.equal(await put(0, 'hello '), 'duplicate', 'a chunk sent again is kept once');
    t.equal(await put(20, 'later'), 'gap', 'a chunk after a missing one is refused');
    t.equal(await put(0, 'oops', 'stderr'), 'appended', 'each stream has its own offsets');
    const all = await readProcessOutput(db, id, 'stdout', 0, 1 << 20);
    t.equal(all?.bytes.toString(), 'hello world\n');
    t.equal(all?.total, 12);
    t.equal(all?.complete, false, 'still running: more may come');
    const middle = await readProcessOutput(db, id, 'stdout', 3, 5);
    t.equal(middle?.bytes.toString(), 'lo wo', 'across a chunk boundary');
    t.equal(middle?.next, 8);
    const past = await readProcessOutput(db, id, 'stdout', 100, 10);
    t.same([past?.offset, past?.bytes.length], [12, 0], 'past the end reads nothing, from the end');
    t.equal((await readProcessOutput(db, id, 'stderr', 0, 100))?.bytes.toString(), 'oops');
    t.equal(await readProcessOutput(db, 'no-such-process', 'stdout', 0, 10), null);

    const ended = await endProcess(db, id, 'node-a', { status: 'exited', exitCode: 3 });
    t.equal(ended?.exitCode, 3);
    t.equal(await put(12, 'too late'), 'not_running', 'an ended process takes no output');
    const rest = await readProcessOutput(db, id, 'stdout', 6, 100);
    t.same([rest?.bytes.toString(), rest?.complete], ['world\n', true], 'complete once ended');
    t.equal(
      await appendProcessOutput(db, 'no-such-process', 'stdout', 0, Buffer.from('x')),
      'not_running',
    );
  });

  t.test('processes: end and loss are guarded moves with their events', async (t) => {
    const run = await newRun();
    // Nodes of this subtest only: a loss takes every running process of its node.
    const [nodeA, nodeB] = [uid('node'), uid('node')];
    const ids = [uid('proc'), uid('proc'), uid('proc')];
    for (const [i, id] of ids.entries()) {
      await startProcess(
        db,
        { id, runId: run.id, ownerUserId: 'user-p', nodeId: i < 2 ? nodeA : nodeB, request },
        5,
      );
    }
    t.equal(
      await endProcess(db, ids[0]!, nodeB, { status: 'killed', signal: 'SIGKILL' }),
      null,
      'another node cannot end it',
    );
    const killed = await endProcess(db, ids[0]!, nodeA, { status: 'killed', signal: 'SIGKILL' });
    t.same([killed?.status, killed?.signal], ['killed', 'SIGKILL']);
    t.equal(await endProcess(db, ids[0]!, nodeA, { status: 'exited' }), null, 'ended once');
    const lost = await loseProcesses(db, nodeA);
    t.same(
      lost.map((p) => p.id),
      [ids[1]],
      "the node's running processes are lost; its ended one and another node's stay",
    );
    t.equal((await getProcess(db, ids[2]!))?.status, 'running');
    t.same(
      (await listRunProcesses(db, run.id, { limit: 10, status: 'running' })).map((p) => p.id),
      [ids[2]],
    );
    const events = await listAuditEvents(db, { runId: run.id });
    t.same(
      events.map((e) => [e.eventType, e.metadata.processId]),
      [
        ['workspace_process.started', ids[0]],
        ['workspace_process.started', ids[1]],
        ['workspace_process.started', ids[2]],
        ['workspace_process.killed', ids[0]],
        ['workspace_process.lost', ids[1]],
      ],
    );
    const kill = events.find((e) => e.eventType === 'workspace_process.killed');
    t.equal(kill?.metadata.signal, 'SIGKILL');
    t.type(kill?.metadata.durationMs, 'number');
    t.notOk(
      JSON.stringify(events).includes('SECRET-COMMAND-TEXT'),
      'no event carries the command text',
    );
  });

  t.test('processes: a page at a time, newest first; gone with the run data', async (t) => {
    const run = await newRun();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = uid('proc');
      ids.push(id);
      await startProcess(
        db,
        { id, runId: run.id, ownerUserId: 'user-p', nodeId: 'node-a', request },
        10,
      );
      await appendProcessOutput(db, id, 'stdout', 0, Buffer.from(`out ${i}`));
    }
    const first = await listRunProcesses(db, run.id, { limit: 3 });
    const second = await listRunProcesses(db, run.id, { limit: 3, before: first.at(-1)!.id });
    const seen = [...first, ...second].map((p) => p.id);
    t.equal(new Set(seen).size, 5, 'no process twice, none skipped');
    t.same([...seen].sort(), [...ids].sort());
    t.equal(await deleteRunProcesses(db, run.id), 5);
    t.same(await listRunProcesses(db, run.id, { limit: 10 }), []);
    t.equal(await readProcessOutput(db, ids[0]!, 'stdout', 0, 10), null);
  });
}
