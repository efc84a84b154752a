import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm, stat, watch, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import t from 'tap';
import { WorkbenchClient } from '../../src/client/index.js';
import { createApiToken, openDb } from '../../src/store/index.js';
import { finished, memqlAs } from '../support/local-node.js';
import { type NodeProcess, nodeMain, spawnNode } from '../support/node-process.js';
import { PORT_SERVER, webSocketEcho, webSocketHead } from '../support/port-server.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * Background processes end to end, on a real local node (its own process, Postgres, the
 * bwrap sandbox) through real HTTP: a server started with `process_start` answers a
 * bounded `exec`'s curl over the sandbox's loopback; output is read from an offset
 * while the process runs and after it ended, and stdin and signals reach it; a file it
 * writes is read by a file action while it runs and kept once it ends; the run's cap
 * refuses one process too many (`process_limit`); a `callId` gives the same process
 * again, and another call under it is refused; a process id of another run is
 * `process_not_found`; the run's end kills its processes; and a node SIGKILLed under a
 * running process finds it `lost` when it starts again, its output kept to the last
 * flush and its files to the last sync.
 */

t.setTimeout(600_000);

const database = await createTestDatabase();
t.teardown(() => database.drop());
const sql = postgres(database.url, { max: 1, onnotice: () => {} });
t.teardown(() => sql.end({ timeout: 1 }));
const cwd = await mkdtemp(join(tmpdir(), 'memql-processes-node-'));
t.teardown(() => rm(cwd, { recursive: true, force: true }));
await chmod(cwd, 0o755);

const ENV = {
  MEMQL_DATABASE_URL: database.url,
  MEMQL_DATA_DIR: join(cwd, 'data'),
  MEMQL_NODE_ID: 'local-proc',
  MEMQL_HTTP_LISTEN: '127.0.0.1:0',
  MEMQL_GRPC_LISTEN: '127.0.0.1:0',
  MEMQL_LOG_FORMAT: 'json',
  MEMQL_LOG_LEVEL: 'debug',
  MEMQL_PROCESS_MAX_PER_RUN: '3',
  // Slower than the idle time below: the cadence's syncs do not keep a copy warm here.
  MEMQL_PROCESS_SYNC_MS: '2000',
  // Idle copies go fast, so the idle test sees sweeps; a copy with a process is in use.
  MEMQL_HYDRATED_IDLE_TTL_MS: '500',
  MEMQL_CLEANUP_INTERVAL_MS: '500',
};

interface Node {
  proc: NodeProcess;
  url: string;
  token: string;
  /** The person token of the same user. */
  person: string;
  /** Where the workspace copies are. */
  root: string;
}

async function startNode(): Promise<Node> {
  const proc = spawnNode(t, 'local', nodeMain('local'), ENV);
  t.teardown(async () => {
    if (proc.alive) await proc.stop('SIGINT');
  });
  const banner = await proc.waitFor(
    () => (proc.other.some((l) => l.startsWith('ready.')) ? proc.other.join('\n') : undefined),
    'the ready banner',
    120_000,
  );
  return {
    proc,
    url: /API: +(http:\/\/\S+?)\/v1/.exec(banner)![1]!,
    token: /token: +(\S+)/.exec(banner)![1]!,
    person: /MEMQL_TOKEN=(\S+)/.exec(banner)![1]!,
    root: /workspaces: +(\S+)/.exec(banner)![1]!,
  };
}

let node = await startNode();

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field
type Json = any;

async function json(method: string, path: string, body?: unknown) {
  const res = await fetch(`${node.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${node.token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

/** One call through the dispatch route; its whole answer. */
async function call(runId: string, action: string, args: object, extra: object = {}) {
  return (
    await json('POST', '/v1/dispatch', {
      action,
      args,
      runId,
      agentId: 'agent',
      taskId: 'task',
      ...extra,
    })
  ).body as Json;
}

/** The payload of a call that must succeed. */
async function ok(runId: string, action: string, args: object, extra: object = {}) {
  const answer = await call(runId, action, args, extra);
  if (!answer.ok) throw new Error(`${action} failed: ${answer.errorCode}: ${answer.message}`);
  return answer.payload as Json;
}

async function newRun(): Promise<string> {
  const made = await json('POST', '/v1/runs', {});
  if (made.status !== 201) throw new Error(JSON.stringify(made.body));
  return made.body.run.id as string;
}

/** Reads a stream until `until` holds for all of it read so far (waits between reads on the process). */
async function readUntil(
  runId: string,
  processId: string,
  until: (text: string, last: Json) => boolean,
  stream = 'stdout',
): Promise<{ text: string; last: Json }> {
  let text = '';
  let offset = 0;
  for (;;) {
    const last = await ok(runId, 'process_output', { processId, stream, offset });
    text += last.data;
    offset = last.next;
    if (until(text, last)) return { text, last };
    if (last.complete) throw new Error(`the stream ended without the condition: ${text}`);
    // Nothing new yet: let the process go on (a short wait on it, not a sleep).
    await ok(runId, 'process_wait', { processId, timeoutMs: 50 });
  }
}

const PORT = 18_765;

t.test('a server in the background answers a second exec over loopback', async (t) => {
  const runId = await newRun();
  await ok(runId, 'fs_write', { path: 'site/hello.txt', content: 'hello from the workspace\n' });
  const started = await ok(runId, 'process_start', {
    command: `python3 -u -m http.server ${PORT} --bind 127.0.0.1`,
    cwd: 'site',
  });
  t.match(started, { status: 'running', command: /http\.server/, cwd: 'site', replayed: false });
  t.match(started.processId, /^proc-/);
  await readUntil(runId, started.processId, (text) => text.includes('Serving HTTP'));
  const got = await ok(runId, 'exec', { command: `curl -s http://127.0.0.1:${PORT}/hello.txt` });
  t.equal(got.exitCode, 0, got.stderr);
  t.equal(got.stdout, 'hello from the workspace\n', 'the bounded command reached the server');
  // The server logs the request on stderr.
  await readUntil(runId, started.processId, (text) => text.includes('GET /hello.txt'), 'stderr');

  const listed = await ok(runId, 'process_list', { running: true });
  t.same(
    listed.processes.map((p: Json) => p.processId),
    [started.processId],
    'listed while it runs',
  );
  const signalled = await ok(runId, 'process_signal', { processId: started.processId });
  t.equal(signalled.processId, started.processId);
  const ended = await ok(runId, 'process_wait', {
    processId: started.processId,
    timeoutMs: 60_000,
  });
  t.match(ended, { status: 'killed', signal: 'SIGTERM', errorCode: null });
  t.ok(ended.endedAt && ended.durationMs >= 0, 'its end and duration recorded');
  const again = await call(runId, 'process_signal', { processId: started.processId });
  t.match(again, { ok: false, errorCode: 'process_not_running' });
  t.match(again.message, /process_output/, 'the refusal names what still works');
});

t.test('stdin, output from an offset, and the whole of it after the end', async (t) => {
  const runId = await newRun();
  const script =
    'import sys\nfor line in sys.stdin:\n    print("got " + line.strip(), flush=True)\nprint("bye")\nsys.exit(4)';
  const { processId } = await ok(runId, 'process_start', {
    command: `python3 -u -c '${script}'`,
  });
  await ok(runId, 'process_write', { processId, stdin: 'one\n' });
  const first = await readUntil(runId, processId, (text) => text.includes('got one'));
  t.equal(first.text, 'got one\n');
  const offset = first.last.next;
  await ok(runId, 'process_write', { processId, stdin: 'two\nthree\n', eof: true });
  const ended = await ok(runId, 'process_wait', { processId, timeoutMs: 60_000 });
  t.match(ended, { status: 'exited', exitCode: 4 });
  const rest = await ok(runId, 'process_output', { processId, offset });
  t.match(rest, { data: 'got two\ngot three\nbye\n', offset, complete: true, status: 'exited' });
  const whole = await ok(runId, 'process_output', { processId, encoding: 'base64' });
  t.equal(Buffer.from(whole.data, 'base64').toString(), 'got one\ngot two\ngot three\nbye\n');
  t.equal(whole.total, whole.next);
  const past = await ok(runId, 'process_output', { processId, offset: 10_000 });
  t.match(past, { data: '', offset: whole.total, complete: true }, 'past the end reads nothing');
});

t.test('files a process writes: read while it runs, kept once it ends', async (t) => {
  const runId = await newRun();
  const script =
    'import sys\nopen("made.txt","w").write("by the process\\n")\nprint("written", flush=True)\nsys.stdin.read()';
  const { processId } = await ok(runId, 'process_start', { command: `python3 -u -c '${script}'` });
  await readUntil(runId, processId, (text) => text.includes('written'));
  const read = await ok(runId, 'fs_read', { path: 'made.txt' });
  t.equal(read.content, 'by the process\n', 'a file action reads what it wrote so far');
  await ok(runId, 'process_write', { processId, eof: true });
  t.match(await ok(runId, 'process_wait', { processId, timeoutMs: 60_000 }), { status: 'exited' });
  const rows =
    await sql`select size from workspace_file where run_id = ${runId} and path = 'made.txt'`;
  t.same(
    rows.map((r) => Number(r.size)),
    [15],
    'in the durable manifest when its end is seen',
  );
});

t.test('the cap, callId replay and conflict, another run’s process', async (t) => {
  const runId = await newRun();
  const hold = `python3 -c 'import sys; sys.stdin.read()'`;
  const a = await ok(runId, 'process_start', { command: hold }, { callId: 'start-a' });
  const replay = await ok(runId, 'process_start', { command: hold }, { callId: 'start-a' });
  t.match(replay, { processId: a.processId, replayed: true }, 'the same callId: the same process');
  const conflict = await call(
    runId,
    'process_start',
    { command: `${hold} # other` },
    { callId: 'start-a' },
  );
  t.match(conflict, { ok: false, errorCode: 'call_id_conflict' });
  const b = await ok(runId, 'process_start', { command: hold });
  const c = await ok(runId, 'process_start', { command: hold });
  const over = await call(runId, 'process_start', { command: hold });
  t.match(over, { ok: false, errorCode: 'process_limit', payload: { running: 3, limit: 3 } });
  t.match(over.message, /MEMQL_PROCESS_MAX_PER_RUN=3/);
  t.match(over.message, /process_signal/);

  const other = await newRun();
  const foreign = await call(other, 'process_output', { processId: a.processId });
  t.match(foreign, { ok: false, errorCode: 'process_not_found' }, 'not through another run');
  const bad = await call(runId, 'process_output', { processId: 'nope' });
  t.match(bad, { ok: false, errorCode: 'invalid_arguments' });

  // Ending the run ends its processes.
  const ended = await json('POST', `/v1/runs/${runId}/end`, { status: 'succeeded' });
  t.equal(ended.status, 200, JSON.stringify(ended.body));
  const statuses =
    await sql`select id, status from workspace_process where run_id = ${runId} order by id`;
  t.same(
    statuses.map((r) => r.status),
    ['killed', 'killed', 'killed'],
    'all three killed by the run’s end',
  );
  t.same(statuses.map((r) => r.id).sort(), [a.processId, b.processId, c.processId].sort());
});

t.test('a node killed under a running process finds it lost when it starts again', async (t) => {
  const runId = await newRun();
  const script =
    'import sys\nopen("before.txt","w").write("kept\\n")\nprint("ready", flush=True)\nsys.stdin.read()';
  const { processId } = await ok(runId, 'process_start', { command: `python3 -u -c '${script}'` });
  await readUntil(runId, processId, (text) => text.includes('ready'));
  // Its file is synced on the cadence: wait until the manifest has it.
  for (;;) {
    const rows =
      await sql`select 1 from workspace_file where run_id = ${runId} and path = 'before.txt'`;
    if (rows.length > 0) break;
    await ok(runId, 'process_wait', { processId, timeoutMs: 100 });
  }
  node.proc.child.kill('SIGKILL');
  await node.proc.exited;
  node = await startNode();
  const view = await ok(runId, 'process_wait', { processId, timeoutMs: 0 });
  t.match(view, { status: 'lost', errorCode: 'process_lost' });
  const out = await ok(runId, 'process_output', { processId });
  t.match(
    out,
    { data: 'ready\n', complete: true, status: 'lost' },
    'output kept to the last flush',
  );
  const read = await ok(runId, 'fs_read', { path: 'before.txt' });
  t.equal(read.content, 'kept\n', 'files kept to the last sync');
  const events = await sql`select event_type from audit_event
    where metadata->>'processId' = ${processId} order by id`;
  t.same(
    events.map((e) => e.event_type),
    ['workspace_process.started', 'workspace_process.lost'],
  );
});

t.test(
  'the process routes and the client: follow, disconnect, re-attach from offsets',
  async (t) => {
    const client = new WorkbenchClient({ baseUrl: node.url, token: node.token });
    const runId = await newRun();
    const script =
      'import sys\nfor line in sys.stdin:\n    print(line.strip(), flush=True)\n    print("err " + line.strip(), file=sys.stderr, flush=True)\nsys.exit(7)';
    const started = await client.processes.start(runId, {
      command: `python3 -u -c '${script}'`,
      callId: 'rest-start',
    });
    t.match(started, { status: 'running', replayed: false });
    const again = await json('POST', `/v1/runs/${runId}/processes`, {
      command: `python3 -u -c '${script}'`,
      callId: 'rest-start',
    });
    t.match(again, {
      status: 200,
      body: { process: { processId: started.processId, replayed: true } },
    });

    // Follow until the first line, then go away.
    await client.processes.write(runId, started.processId, 'alpha\n');
    const gone = new AbortController();
    const seen = { stdout: 0, stderr: 0 };
    let text = '';
    const first = client.processes.follow(runId, started.processId, { signal: gone.signal });
    for (;;) {
      const next = await first.next();
      if (next.done) throw new Error('ended early');
      seen[next.value.stream] = next.value.offset + next.value.bytes.length;
      if (next.value.stream === 'stdout') text += next.value.bytes.toString();
      if (text.includes('alpha') && seen.stderr > 0) break;
    }
    gone.abort();
    await t.rejects(first.next(), 'the follow ends with its caller');
    // Meanwhile the process goes on; a new follow from the offsets gets the rest, then the end.
    await client.processes.write(runId, started.processId, 'beta\n', { eof: true });
    const rest = { stdout: '', stderr: '' };
    const second = client.processes.follow(runId, started.processId, {
      stdoutOffset: seen.stdout,
      stderrOffset: seen.stderr,
    });
    let end: Json;
    for (;;) {
      const next = await second.next();
      if (next.done) {
        end = next.value;
        break;
      }
      rest[next.value.stream] += next.value.bytes.toString();
    }
    t.same(rest, { stdout: 'beta\n', stderr: 'err beta\n' }, 'exactly what came after the offsets');
    t.match(end, { status: 'exited', exitCode: 7 });
    t.match(await client.processes.get(runId, started.processId), {
      status: 'exited',
      stdoutBytes: 11,
    });
    t.same(
      (await client.processes.list(runId)).map((p) => p.processId),
      [started.processId],
    );

    const ended = await json('POST', `/v1/runs/${runId}/processes/${started.processId}/stdin`, {
      stdin: 'x',
    });
    t.match(ended, { status: 409, body: { ok: false, errorCode: 'process_not_running' } });
    const missing = await json(
      'GET',
      `/v1/runs/${runId}/processes/proc-00000000-0000-4000-8000-000000000000`,
    );
    t.match(missing, { status: 404, body: { errorCode: 'process_not_found' } });
    const notMine = await fetch(`${node.url}/v1/runs/run-nobody/processes`, {
      headers: { authorization: `Bearer ${node.token}` },
    });
    t.equal(notMine.status, 404, 'a run that is not the caller’s');
    await t.rejects(client.processes.signal(runId, started.processId), {
      code: 'process_not_running',
    });

    // The route starts a process on a terminal too.
    const onTerminal = await client.processes.start(runId, {
      command: `python3 -c 'import os; print(*reversed(os.get_terminal_size()))'; cat`,
      pty: { cols: 91, rows: 17 },
    });
    t.match(await client.processes.get(runId, onTerminal.processId), { pty: true });
    let size = '';
    for await (const piece of client.processes.follow(runId, onTerminal.processId)) {
      size += piece.bytes.toString();
      if (size.includes('17 91')) break;
    }
    t.match(size, '17 91', 'the terminal has the size asked for');
    await client.processes.signal(runId, onTerminal.processId, 'SIGKILL');
    const badSize = await json('POST', `/v1/runs/${runId}/processes`, {
      command: 'cat',
      pty: { cols: 0, rows: 24 },
    });
    t.match(badSize, { status: 400, body: { errorCode: 'invalid_arguments' } });
  },
);

t.test(
  'memql processes: start, logs, stdin, logs --follow ends with its exit code, kill',
  async (t) => {
    const memql = (...argv: string[]) => memqlAs(node.url, node.token, ...argv);
    const runId = await newRun();
    const script =
      'import sys\nprint("up", flush=True)\nfor line in sys.stdin:\n    print("got " + line.strip(), flush=True)\nprint("bad", file=sys.stderr)\nsys.exit(3)';
    const started = await memql('processes', 'start', runId, '--', 'python3', '-u', '-c', script);
    t.equal(started.code, 0, started.stderr);
    const processId = started.stdout.trim();
    t.match(processId, /^proc-/);
    await readUntil(runId, processId, (text) => text.includes('up'));
    const logs = await memql('ps', 'logs', runId, processId);
    t.same([logs.code, logs.stdout], [0, 'up\n'], 'what it wrote so far');
    const listed = await memql('ps', 'ls', runId, '--running');
    t.match(listed.stdout, processId);
    const wrote = await memql('ps', 'stdin', runId, processId, '--content', 'x\n', '--eof');
    t.equal(wrote.code, 0, wrote.stderr);
    t.match(wrote.stdout, 'stdin closed');
    const followed = await memql('ps', 'logs', runId, processId, '--follow');
    t.same(
      [followed.code, followed.stdout, followed.stderr],
      [3, 'up\ngot x\n', 'bad\n'],
      'follows to the end and exits with its code',
    );
    const waited = await memql('ps', 'wait', runId, processId, '--json');
    t.equal(waited.code, 3);
    t.match(JSON.parse(waited.stdout), { status: 'exited', exitCode: 3 });

    const sleeper = await memql(
      'ps',
      'start',
      runId,
      '--',
      `python3 -c 'import time; time.sleep(600)'`,
    );
    const sleeperId = sleeper.stdout.trim();
    const still = await memql('ps', 'wait', runId, sleeperId, '--timeout-ms', '0');
    t.equal(still.code, 124, 'still running: 124');
    const killed = await memql('ps', 'kill', runId, sleeperId, '--signal', 'INT');
    t.equal(killed.code, 0, killed.stderr);
    const after = await memql('ps', 'wait', runId, sleeperId);
    t.equal(after.code, 130, '128 + SIGINT');
    const twice = await memql('ps', 'kill', runId, sleeperId);
    t.equal(twice.code, 1);
    t.match(twice.stderr, 'process_not_running');
    const usage = await memql('ps', 'kill', runId, sleeperId, '--signal', 'SEGV');
    t.equal(usage.code, 2);
    t.match(usage.stderr, /--signal: expected one of SIGTERM/);
  },
);

t.test('memql shell: a person drives a terminal in the sandbox under tmux', async (t) => {
  const runId = await newRun();
  // Only a person opens one; through dispatch it is no tool loop's.
  const refused = await json('POST', `/v1/runs/${runId}/shell`, { cols: 80, rows: 24 });
  t.match(refused, { status: 403, body: { errorCode: 'person_required' } });
  const viaDispatch = await call(runId, 'process_shell', { cols: 80, rows: 24 });
  t.match(viaDispatch, { ok: false, errorCode: 'build_not_permitted' });

  const socket = `memql-test-${process.pid}`;
  const tmux = (...args: string[]) =>
    finished(spawn('tmux', ['-L', socket, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }));
  t.teardown(() => tmux('kill-server'));
  const cli = nodeMain('cli');
  // The pane waits until its output is piped to a file, whose changes wake the checks.
  const piped = join(cwd, 'pane.out');
  await writeFile(piped, '');
  const line = `tmux -L ${socket} wait-for go; env MEMQL_URL=${node.url} MEMQL_TOKEN=${node.person} ${process.execPath} ${cli} shell ${runId}; echo "memql exited $?"; read x`;
  const made = await tmux('new-session', '-d', '-x', '100', '-y', '30', '-s', 'sh', line);
  t.equal(made.code, 0, made.stderr);
  await tmux('pipe-pane', '-t', 'sh', '-o', `cat >> ${piped}`);
  const stopWatching = new AbortController();
  t.teardown(() => stopWatching.abort());
  const changes = watch(piped, { signal: stopWatching.signal })[Symbol.asyncIterator]();
  await tmux('wait-for', '-S', 'go');
  const screen = async () => (await tmux('capture-pane', '-p', '-t', 'sh')).stdout;
  const until = async (what: string, check: (text: string) => boolean) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const text = await screen();
      if (check(text)) return text;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; screen:\n${text}`);
      // The pane wrote more (changes that came meanwhile are queued, none is lost).
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        changes.next(),
        new Promise((resolve) => {
          timer = setTimeout(resolve, deadline - Date.now());
        }),
      ]);
      clearTimeout(timer);
    }
  };
  const keys = (...k: string[]) => tmux('send-keys', '-t', 'sh', ...k);
  await until('a prompt', (s) => /[$#] *$/m.test(s));
  await keys('echo hi-$((6*7)) $(id -u)', 'Enter');
  await until('the echo', (s) => s.includes('hi-42 10001'));
  await keys('stty size', 'Enter');
  await until('the size', (s) => /^30 100$/m.test(s));
  await tmux('resize-window', '-t', 'sh', '-x', '120', '-y', '40');
  await keys('stty size', 'Enter');
  await until('the new size', (s) => /^40 120$/m.test(s));
  // Ctrl-C is a signal the moment the terminal reads it: sent while the shell is still
  // reading the line, it would interrupt the shell, and the sleep after it would run.
  await keys('echo sleep-$((2+3)); sleep 300; echo not-interrupted', 'Enter');
  await until('the sleep', (s) => /^sleep-5$/m.test(s));
  await keys('C-c');
  await keys('echo after-$((1+1))', 'Enter');
  const after = await until('the interrupt', (s) => s.includes('after-2'));
  t.notMatch(after, /^not-interrupted$/m, 'Ctrl-C reached the sleep');
  await keys('echo made > by-shell.txt; exit 5', 'Enter');
  await until('memql’s exit', (s) => s.includes('memql exited 5'));
  const file = await ok(runId, 'fs_read', { path: 'by-shell.txt' });
  t.equal(file.content, 'made\n', 'what the shell wrote is in the workspace');
  const listed = await ok(runId, 'process_list', {});
  t.match(listed.processes[0], { status: 'exited', exitCode: 5, pty: true });
});

t.test('a running process keeps its copy and sandbox through idle sweeps', async (t) => {
  const busy = await newRun();
  const idle = await newRun();
  await ok(idle, 'fs_write', { path: 'x.txt', content: 'x' });
  const script =
    'import sys\nfor line in sys.stdin:\n    print("echo " + line.strip(), flush=True)';
  const { processId } = await ok(busy, 'process_start', { command: `python3 -u -c '${script}'` });
  const copy = await stat(join(node.root, busy));
  const sweeps = () => node.proc.lines.filter((l) => l.msg === 'workspace_command.temp_cleanup');
  const before = sweeps().length;
  // Sweeps until the idle run's copy is evicted, and one more after it.
  await node.proc.waitFor(
    () => {
      const after = sweeps().slice(before);
      const evictedAt = after.findIndex((l) => Number(l.warmEvicted) > 0);
      return evictedAt >= 0 && after.length > evictedAt + 1 ? true : undefined;
    },
    'sweeps that evict the idle copy',
    60_000,
  );
  t.equal(await stat(join(node.root, idle)).catch(() => null), null, 'the idle copy was evicted');
  t.equal((await stat(join(node.root, busy))).ino, copy.ino, 'the busy copy never was');
  await ok(busy, 'process_write', { processId, stdin: 'still here\n' });
  await readUntil(busy, processId, (text) => text.includes('echo still here'));
  t.match(await ok(busy, 'process_wait', { processId, timeoutMs: 0 }), { status: 'running' });
  await ok(busy, 'process_signal', { processId, signal: 'SIGKILL' });
  t.match(await ok(busy, 'process_wait', { processId, timeoutMs: 60_000 }), {
    status: 'killed',
    signal: 'SIGKILL',
  });
});

t.test(
  'the port route: HTTP and WebSocket to a server in the sandbox, the owner only',
  async (t) => {
    const runId = await newRun();
    const port = 18_767;
    await ok(runId, 'fs_write', { path: 'server.py', content: PORT_SERVER });
    const { processId } = await ok(runId, 'process_start', {
      command: `python3 -u server.py ${port}`,
    });
    await readUntil(runId, processId, (text) => text.includes('listening'));
    const base = `${node.url}/v1/runs/${runId}/ports/${port}`;
    const auth = { authorization: `Bearer ${node.token}` };
    const got = await fetch(`${base}/some/where?x=1`, { headers: auth });
    t.equal(got.status, 200);
    t.equal(await got.text(), 'path /some/where?x=1 auth None\n', 'the credential stays out');
    const posted = await fetch(`${base}/echo`, { method: 'POST', headers: auth, body: 'abc' });
    t.same([posted.status, await posted.text()], [201, 'cba']);

    const ws = await webSocketEcho(new URL(`${base}/ws`), node.token, 'hello');
    t.match(ws.head, /^HTTP\/1\.1 101 /);
    t.equal(ws.message, 'echo hello', 'a WebSocket message and its answer');

    const nobody = await fetch(`${base}/`);
    t.equal(nobody.status, 401, 'no token, no port');
    const other = await fetch(`${node.url}/v1/runs/run-nobody/ports/${port}/`, { headers: auth });
    t.equal(other.status, 404, 'not the caller’s run');
    // Another user, on this run whose server listens: not found, over HTTP and WebSocket.
    const store = await openDb({ kind: 'postgres', url: database.url });
    const mallory = (await createApiToken(store, 'mallory')).token;
    await store.close();
    const theirs = await fetch(`${base}/`, { headers: { authorization: `Bearer ${mallory}` } });
    t.same(
      [theirs.status, ((await theirs.json()) as Json).errorCode],
      [404, 'not_found'],
      'another user’s run, its server listening',
    );
    const theirSocket = await webSocketHead(new URL(`${base}/ws`), mallory);
    t.match(theirSocket, /^HTTP\/1\.1 404 /, 'nor a WebSocket to it');
    const closed = await fetch(`${node.url}/v1/runs/${runId}/ports/${port + 1}/`, {
      headers: auth,
    });
    t.equal(closed.status, 502);
    t.match(await closed.json(), { errorCode: 'port_not_listening' });
    await ok(runId, 'process_signal', { processId, signal: 'SIGKILL' });
    await ok(runId, 'process_wait', { processId, timeoutMs: 60_000 });
  },
);

t.test('a process is read and driven while a long bounded command holds the run', async (t) => {
  const runId = await newRun();
  const script = 'import sys\nfor line in sys.stdin:\n    print("got " + line.strip(), flush=True)';
  const { processId } = await ok(runId, 'process_start', { command: `python3 -u -c '${script}'` });
  const long = call(
    runId,
    'exec',
    { command: `python3 -c 'import time; time.sleep(600)'` },
    {
      callId: 'long-one',
    },
  );
  const running = async () =>
    (
      await sql`select status from workspace_command where run_id = ${runId} and call_id = 'long-one'`
    )[0]?.status;
  while ((await running()) !== 'running') {
    await ok(runId, 'process_wait', { processId, timeoutMs: 50 });
  }
  await ok(runId, 'process_write', { processId, stdin: 'during\n' });
  await readUntil(runId, processId, (text) => text.includes('got during'));
  t.equal(await running(), 'running', 'read and written while the command runs');
  await ok(runId, 'process_write', { processId, eof: true });
  t.match(await ok(runId, 'process_wait', { processId, timeoutMs: 60_000 }), {
    status: 'exited',
  });
  t.equal(await running(), 'running', 'its end seen while the command still runs');
  const cancelled = await json('POST', `/v1/runs/${runId}/calls/long-one/cancel`);
  t.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
  t.match(await long, { ok: true, payload: { cancelled: true } });
});
