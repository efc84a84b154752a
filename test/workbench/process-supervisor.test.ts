import pino from 'pino';
import t, { type Test } from 'tap';
import { BwrapRunner } from '../../src/sandbox/bwrap/index.js';
import {
  createRun,
  getProcess,
  listAuditEvents,
  openDb,
  readProcessOutput,
} from '../../src/store/index.js';
import { ProcessSupervisor } from '../../src/workbench/processes/index.js';
import { makeWorkspace } from '../sandbox/sandbox-support.js';

/**
 * Background processes from the sandbox to the store, with real bubblewrap and the real
 * agent on PGlite: output is readable while the process runs and whole, from any
 * offset, once it ended; the end is recorded with its code or signal after the last
 * output; the run's cap refuses a process over it; a sandbox ended under its processes
 * records them killed, or `node_stopping` during the node's stop; an earlier process of
 * the node's leftovers are lost.
 */

const db = await openDb({ kind: 'pglite' });
t.teardown(() => db.close());
const runner = new BwrapRunner({ cgroups: { groupName: `memql-test-${process.pid}` } });
t.teardown(() => runner.close());
const log = pino({ level: 'silent' });
const supervisor = new ProcessSupervisor({
  db,
  nodeId: 'node-a',
  maxLivePerRun: 2,
  flushMs: 20,
  log,
});
let runs = 0;

async function fixture(t: Test) {
  runs += 1;
  const run = await createRun(db, { id: `run-proc-${runs}`, ownerUserId: 'user-p' });
  const workspaceDir = await makeWorkspace(t);
  const start = (command: string, callId?: string) =>
    supervisor.start(
      { runId: run.id, ownerUserId: 'user-p', callId: callId ?? null, request: { command } },
      (onOutput) =>
        runner.startProcess({ workspaceDir, command, reuse: `key-${run.id}`, onOutput }),
    );
  return { run, workspaceDir, start };
}

t.test('output while it runs, whole once it ended, the end after it', async (t) => {
  const { run, workspaceDir } = await fixture(t);
  let firstSeen!: () => void;
  const sawFirst = new Promise<void>((resolve) => {
    firstSeen = resolve;
  });
  const command = 'echo first; read go; seq 1 50000; echo oops >&2; exit 3';
  const started = await supervisor.start(
    { runId: run.id, ownerUserId: 'user-p', request: { command } },
    (onOutput) =>
      runner.startProcess({
        workspaceDir,
        command,
        reuse: `key-${run.id}`,
        onOutput: (stream, chunk) => {
          onOutput(stream, chunk);
          if (chunk.toString().includes('first')) firstSeen();
        },
      }),
  );
  t.equal(started.kind, 'started');
  if (started.kind !== 'started') return;
  const id = started.process.id;
  await sawFirst;
  await supervisor.flush(id);
  const soFar = await readProcessOutput(db, id, 'stdout', 0, 1 << 22);
  t.equal(soFar?.bytes.toString(), 'first\n', 'readable while it runs');
  t.equal((await getProcess(db, id))?.status, 'running');
  supervisor.local(id)?.write(Buffer.from('go\n'));
  const ended = await started.ended;
  t.same([ended?.status, ended?.exitCode], ['exited', 3]);
  const expected = `first\n${Array.from({ length: 50000 }, (_, i) => i + 1).join('\n')}\n`;
  const all = await readProcessOutput(db, id, 'stdout', 0, 1 << 22);
  t.equal(all?.bytes.toString(), expected, 'every byte, in order');
  t.equal(all?.complete, true);
  const middle = await readProcessOutput(db, id, 'stdout', 6, 8);
  t.equal(middle?.bytes.toString(), '1\n2\n3\n4\n', 'from an offset');
  t.equal((await readProcessOutput(db, id, 'stderr', 0, 100))?.bytes.toString(), 'oops\n');
  t.equal(ended?.stdoutBytes, Buffer.byteLength(expected));
});

t.test('a signal is recorded; the cap refuses a third', async (t) => {
  const { run, start } = await fixture(t);
  const a = await start('sleep 600');
  const b = await start('sleep 600', 'call-b');
  t.same([a.kind, b.kind], ['started', 'started']);
  t.same(await start('sleep 600'), { kind: 'limit', live: 2 });
  const again = await start('sleep 600', 'call-b');
  t.equal(again.kind, 'replayed', 'a repeated callId answers the process it started');
  if (a.kind !== 'started' || b.kind !== 'started') return;
  supervisor.local(a.process.id)?.signal('SIGTERM');
  const ended = await a.ended;
  t.same([ended?.status, ended?.signal], ['killed', 'SIGTERM']);
  supervisor.local(b.process.id)?.signal('SIGKILL');
  await b.ended;
  const types = (await listAuditEvents(db, { runId: run.id })).map((e) => e.eventType);
  t.same(types, [
    'workspace_process.started',
    'workspace_process.started',
    'workspace_process.killed',
    'workspace_process.killed',
  ]);
});

t.test(
  "a sandbox ended under its processes: killed, or node_stopping in the node's stop",
  async (t) => {
    const { workspaceDir, start } = await fixture(t);
    const a = await start('sleep 600');
    if (a.kind !== 'started') throw new Error('not started');
    await runner.release(workspaceDir);
    t.equal((await a.ended)?.status, 'killed', 'the run let go of its sandbox');
    const b = await start('sleep 600');
    if (b.kind !== 'started') throw new Error('not started');
    supervisor.stopping();
    await runner.release(workspaceDir);
    t.equal((await b.ended)?.status, 'node_stopping');
  },
);

t.test("an earlier process of the node's leftovers are lost", async (t) => {
  const { run } = await fixture(t);
  const other = new ProcessSupervisor({ db, nodeId: 'node-b', maxLivePerRun: 2, log });
  const left = await other
    .start(
      { runId: run.id, ownerUserId: 'user-p', request: { command: 'sleep 600' } },
      async () => {
        throw new Error('the node died before its sandbox answered');
      },
    )
    .catch(() => null);
  t.equal(left, null, 'a launch that fails is rethrown');
  const rows = await db.query(`select status from workspace_process where node_id = 'node-b'`);
  t.same(
    rows.map((r) => r.status),
    ['killed'],
    'and recorded killed',
  );
  // A start recorded by a node that then died: its row says running.
  await db.query(
    `insert into workspace_process (id, run_id, owner_user_id, node_id, request)
     values ('proc-left', $1, 'user-p', 'node-b', '{}')`,
    [run.id],
  );
  const lost = await other.loseLeftovers();
  t.same(
    lost.map((p) => [p.id, p.status]),
    [['proc-left', 'lost']],
  );
});

t.test(
  'the lifetime kills; the stop gives the grace, then node_stopping; files synced',
  async (t) => {
    const synced: string[] = [];
    const supervisor = (maxLifetimeMs?: number) =>
      new ProcessSupervisor({
        db,
        nodeId: 'node-c',
        maxLivePerRun: 4,
        flushMs: 20,
        ...(maxLifetimeMs === undefined ? {} : { maxLifetimeMs }),
        sync: async (runId) => {
          synced.push(runId);
        },
        syncMs: 50,
        log,
      });
    // The lifetime's supervisor; the stop's has none, so only the stop ends its processes.
    let node = supervisor(300);
    const { run, workspaceDir } = await fixture(t);
    // `onFirst` is told of the process's first output as it comes from the sandbox.
    const start = (command: string, onFirst: () => void = () => {}) =>
      node.start({ runId: run.id, ownerUserId: 'user-p', request: { command } }, (onOutput) =>
        runner.startProcess({
          workspaceDir,
          command,
          reuse: `key-${run.id}`,
          onOutput: (stream, chunk) => {
            onOutput(stream, chunk);
            onFirst();
          },
        }),
      );
    const old = await start('sleep 600');
    if (old.kind !== 'started') throw new Error('not started');
    t.equal(node.liveIn(run.id), 1);
    t.match(
      await old.ended,
      { status: 'killed', signal: 'SIGKILL', errorCode: 'process_lifetime' },
      'past its lifetime, typed',
    );
    const killedEvent = await db.query<{ code: string }>(
      `select metadata->>'errorCode' as code from audit_event
       where event_type = 'workspace_process.killed' and metadata->>'processId' = $1`,
      [old.process.id],
    );
    t.same(killedEvent, [{ code: 'process_lifetime' }], 'its event says why');
    t.ok(synced.includes(run.id), 'its files were synced before its end was recorded');
    t.equal(node.liveIn(run.id), 0);

    // A process that exits on SIGTERM within the grace, and one that ignores it.
    node = supervisor();
    const polite = await start('sleep 600');
    // (`exec`: the shell gives way to python, which leads the process group itself.)
    // It prints once its handler is set: the stop must come after that.
    let handlerSet!: () => void;
    const ignoring = new Promise<void>((resolve) => {
      handlerSet = resolve;
    });
    const stubborn = await start(
      `exec python3 -c 'import signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print("x", flush=True); time.sleep(600)'`,
      () => handlerSet(),
    );
    if (polite.kind !== 'started' || stubborn.kind !== 'started') throw new Error('not started');
    await ignoring;
    await node.endAll(100);
    t.match(await polite.ended, {
      status: 'node_stopping',
      signal: 'SIGTERM',
      errorCode: 'node_stopping',
    });
    t.match(
      await stubborn.ended,
      { status: 'node_stopping', signal: 'SIGKILL', errorCode: 'node_stopping' },
      'killed after the grace',
    );
    const events = await listAuditEvents(db, { runId: run.id });
    t.same(
      events.filter((e) => e.eventType === 'workspace_process.killed').length,
      3,
      'every end is a killed event',
    );
  },
);
