import t from 'tap';
import { createApiToken } from '../../src/store/index.js';
import { DurableMesh, okPayload } from '../support/durable-mesh.js';
import { eventually } from '../support/mesh.js';
import { bigBody, PORT_SERVER, webSocketEcho } from '../support/port-server.js';

/**
 * A background process through the mesh, with an agent and two workbench replicas as
 * their own processes on a real Postgres: its output is read from an offset through a
 * second agent process after the first one (the caller) was killed, while the process
 * goes on; then its replica is SIGKILLed under it, and the other replica, taking the
 * run's workspace over, ends it `lost` (`process_lost`) with its output kept to the
 * last flush and its file to the last sync. The port route of the agent node binary
 * reaches a server started as a process on the replica holding its run, over a tunnel
 * of the mesh stream.
 */

t.setTimeout(600_000);

const LIVENESS_MS = 3000;

t.test('a process outlives its caller, and its replica’s loss ends it lost', async (t) => {
  const mesh = await DurableMesh.start(t, {
    store: 'fs',
    env: {
      MEMQL_RUNNER: 'bwrap',
      MEMQL_NODE_LIVENESS_MS: String(LIVENESS_MS),
      MEMQL_PROCESS_SYNC_MS: '200',
    },
  });
  const run = await mesh.run('run-proc', 'wb-a');
  const script =
    'import sys\nopen("kept.txt","w").write("synced\\n")\nfor line in sys.stdin:\n    print("got " + line.strip(), flush=True)';
  const started = okPayload<{ processId: string; status: string }>(
    t,
    await mesh.dispatch(run, 'process_start', { command: `python3 -u -c '${script}'` }),
    'process_start',
  );
  t.equal(started.status, 'running');
  const { processId } = started;
  await mesh.dispatch(run, 'process_write', { processId, stdin: 'one\n' });
  const read = async (offset: number) =>
    okPayload<{ data: string; next: number; status: string; complete: boolean }>(
      t,
      await mesh.dispatch(run, 'process_output', { processId, offset }),
      'process_output',
    );
  await eventually('the first line', async () => (await read(0)).data === 'got one\n');
  const offset = (await read(0)).next;

  // The caller goes away; another agent process reads on from the offset.
  await mesh.restartAgent();
  await mesh.untilHealthy(['wb-a', 'wb-b']);
  await mesh.dispatch(run, 'process_write', { processId, stdin: 'two\n' });
  await eventually('the second line, from the offset', async () => {
    const piece = await read(offset);
    return piece.data === 'got two\n' && piece.status === 'running';
  });
  await eventually('its file synced on the cadence', async () => {
    const rows = await mesh.db.query(
      `select 1 from workspace_file where run_id = $1 and path = 'kept.txt'`,
      [run],
    );
    return rows.length === 1;
  });

  await mesh.replica('wb-a').proc.stop('SIGKILL');
  // The next call goes to wb-b, which takes the workspace over once wb-a is gone.
  let lost: unknown;
  await eventually(
    'the process lost',
    async () => {
      const r = await mesh.dispatch(run, 'process_wait', { processId, timeoutMs: 0 });
      if (!r.result.ok) return false;
      lost = r.result.payload;
      return (lost as { status: string }).status === 'lost';
    },
    120_000,
  );
  t.match(lost, { status: 'lost', errorCode: 'process_lost' });
  t.match(await read(0), { data: 'got one\ngot two\n', complete: true, status: 'lost' });
  const file = await mesh.dispatch(run, 'fs_read', { path: 'kept.txt' });
  t.match(okPayload(t, file, 'kept.txt'), { content: 'synced\n' }, 'its file kept');
  t.equal(await mesh.holder(run), 'wb-b');
  const control = await mesh.dispatch(run, 'process_write', { processId, stdin: 'three\n' });
  t.match(control.result, { ok: false, errorCode: 'process_not_running' });
  const events = await mesh.db.query<{ event_type: string; node: string }>(
    `select event_type, metadata->>'nodeId' as node from audit_event
     where metadata->>'processId' = $1 order by id`,
    [processId],
  );
  t.same(
    events.map((e) => [e.event_type, e.node]),
    [
      ['workspace_process.started', 'wb-a'],
      ['workspace_process.lost', 'wb-a'],
    ],
  );
  await mesh.stop();
});

t.test(
  'a replica’s stop gives its processes the grace, then ends them node_stopping',
  async (t) => {
    const mesh = await DurableMesh.start(t, {
      store: 'fs',
      nodes: ['wb-a'],
      env: { MEMQL_RUNNER: 'bwrap' },
      args: ['--shutdown-grace-ms=2000'],
    });
    const run = await mesh.run('run-stop', 'wb-a');
    // One ends on SIGTERM after writing a file; one ignores it and is killed after the grace.
    const polite =
      'import signal,sys,time\ndef bye(*_):\n    open("bye.txt","w").write("stopped\\n")\n    sys.exit(0)\nsignal.signal(signal.SIGTERM, bye)\nprint("up", flush=True)\ntime.sleep(600)';
    const stubborn =
      'import signal,time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint("up", flush=True)\ntime.sleep(600)';
    const ids: string[] = [];
    for (const script of [polite, stubborn]) {
      const r = await mesh.dispatch(run, 'process_start', { command: `python3 -u -c '${script}'` });
      const { processId } = okPayload<{ processId: string }>(t, r, 'process_start');
      ids.push(processId);
      await eventually('it is up', async () => {
        const out = await mesh.dispatch(run, 'process_output', { processId });
        return out.result.ok && (out.result.payload as { data: string }).data === 'up\n';
      });
    }
    await mesh.replica('wb-a').proc.stop('SIGTERM', 60_000);
    const rows = await mesh.db.query<{ id: string; status: string; signal: string | null }>(
      'select id, status, signal from workspace_process where run_id = $1',
      [run],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    t.match(byId.get(ids[0]!), { status: 'node_stopping' }, 'ended within the grace');
    // Its shell ends on SIGTERM; python, ignoring it, is killed after the grace.
    t.match(byId.get(ids[1]!), { status: 'node_stopping' }, 'ended after it');
    const file = await mesh.db.query(
      `select size from workspace_file where run_id = $1 and path = 'bye.txt'`,
      [run],
    );
    t.equal(file.length, 1, 'what it wrote on its way out is kept');
    await mesh.stop();
  },
);

t.test('the port route reaches a server on the run’s replica over the mesh', async (t) => {
  const mesh = await DurableMesh.start(t, { store: 'fs', env: { MEMQL_RUNNER: 'bwrap' } });
  // Held by the second replica, so the agent must find it, not take the first it knows.
  const run = await mesh.run('run-port', 'wb-b');
  const port = 18_769;
  okPayload(
    t,
    await mesh.dispatch(run, 'fs_write', { path: 'server.py', content: PORT_SERVER }),
    'fs_write',
  );
  const { processId } = okPayload<{ processId: string }>(
    t,
    await mesh.dispatch(run, 'process_start', { command: `python3 -u server.py ${port}` }),
    'process_start',
  );
  await eventually('the server listening', async () => {
    const out = await mesh.dispatch(run, 'process_output', { processId });
    return out.result.ok && (out.result.payload as { data: string }).data.includes('listening');
  });
  const api = await mesh.startApiAgent();
  const alice = (await createApiToken(mesh.db, 'alice')).token;
  const bob = (await createApiToken(mesh.db, 'bob')).token;
  const auth = { authorization: `Bearer ${alice}` };
  const base = `${api.url}/v1/runs/${run}/ports/${port}`;
  // The agent answers once its streams to the replicas are up.
  await eventually(
    'the route reaches the replica',
    async () => (await fetch(`${base}/`, { headers: auth })).status === 200,
    60_000,
  );

  const got = await fetch(`${base}/some/where?x=1`, { headers: auth });
  t.equal(got.status, 200);
  t.equal(await got.text(), 'path /some/where?x=1 auth None\n', 'the credential stays out');
  const posted = await fetch(`${base}/echo`, { method: 'POST', headers: auth, body: 'abc' });
  t.same([posted.status, await posted.text()], [201, 'cba']);
  // Larger than the tunnel's window many times over, both ways.
  const size = 9 * 1024 * 1024 + 17;
  const big = await fetch(`${base}/big/${size}`, { headers: auth });
  t.ok(Buffer.from(await big.arrayBuffer()).equals(bigBody(size)), 'a 9 MiB answer, intact');
  const upload = bigBody(3 * 1024 * 1024 + 5);
  const back = await fetch(`${base}/echo`, { method: 'POST', headers: auth, body: upload });
  t.ok(
    Buffer.from(await back.arrayBuffer()).equals(Buffer.from(upload).reverse()),
    'a 3 MiB body there and back',
  );
  const many = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      fetch(`${base}/n/${i}`, { headers: auth }).then(async (r) => [r.status, await r.text()]),
    ),
  );
  t.same(
    many,
    Array.from({ length: 12 }, (_, i) => [200, `path /n/${i} auth None\n`]),
    'twelve at once, each its own tunnel',
  );
  const ws = await webSocketEcho(new URL(`${base}/ws`), alice, 'over the mesh');
  t.match(ws.head, /^HTTP\/1\.1 101 /);
  t.equal(ws.message, 'echo over the mesh', 'a WebSocket message and its answer');

  t.equal((await fetch(`${base}/`)).status, 401, 'no token, no port');
  const other = await fetch(`${base}/`, { headers: { authorization: `Bearer ${bob}` } });
  t.equal(other.status, 404, 'another user’s run');
  const closed = await fetch(`${api.url}/v1/runs/${run}/ports/${port + 1}/`, { headers: auth });
  t.equal(closed.status, 502);
  t.match(await closed.json(), { errorCode: 'port_not_listening' }, 'nothing listens there');

  await mesh.dispatch(run, 'process_signal', { processId, signal: 'SIGKILL' });
  await mesh.dispatch(run, 'process_wait', { processId, timeoutMs: 60_000 });
  const ended = await fetch(`${base}/`, { headers: auth });
  t.same(
    [ended.status, ((await ended.json()) as { errorCode: string }).errorCode],
    [502, 'port_not_listening'],
    'the server gone',
  );
  await api.proc.stop('SIGTERM');
  await mesh.stop();
});
