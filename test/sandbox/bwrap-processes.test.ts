import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import type { OutputStream } from '../../src/contract/index.js';
import { BwrapRunner, type SessionProcess } from '../../src/sandbox/bwrap/index.js';
import type { RunSpec } from '../../src/sandbox/runner.js';
import { eventually } from '../support/mesh.js';
import { makeWorkspace } from './sandbox-support.js';

/**
 * Background processes in a run's warm sandbox, with real bubblewrap and the real agent:
 * a server started in the background answers a bounded command of the same sandbox on
 * its loopback, and outlives it; its output comes as it is written; its input is
 * written and closed; a signal ends it; what it started goes with it; what a bounded
 * command leaves is still ended while a background process lives; and the sandbox's
 * end takes it (`lost`), the runner keeping nothing of it.
 */

const runner = new BwrapRunner({ cgroups: { groupName: `memql-test-${process.pid}` } });
t.teardown(() => runner.close());

function collector() {
  const out: Record<OutputStream, string> = { stdout: '', stderr: '' };
  const waiters: { text: string; done: () => void }[] = [];
  return {
    out,
    onOutput: (stream: OutputStream, chunk: Buffer) => {
      out[stream] += chunk.toString();
      for (const w of [...waiters]) {
        if (out.stdout.includes(w.text) || out.stderr.includes(w.text)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.done();
        }
      }
    },
    /** Resolves once the output holds `text`. */
    saw(text: string): Promise<void> {
      if (out.stdout.includes(text) || out.stderr.includes(text)) return Promise.resolve();
      return new Promise((done) => waiters.push({ text, done }));
    },
  };
}

function bounded(workspaceDir: string, command: string, extra: Partial<RunSpec> = {}) {
  return runner.run({
    workspaceDir,
    command,
    timeoutMs: 30_000,
    outputLimitBytes: 1 << 20,
    reuse: 'key-p',
    ...extra,
  });
}

async function start(workspaceDir: string, command: string) {
  const seen = collector();
  const process = await runner.startProcess({
    workspaceDir,
    command,
    reuse: 'key-p',
    onOutput: seen.onOutput,
  });
  return { process, seen };
}

const SERVER = `python3 -c "
import http.server, socketserver
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'hello from the background'
        self.send_response(200); self.send_header('content-length', str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
s = socketserver.TCPServer(('127.0.0.1', 8765), H)
print('listening', flush=True)
s.serve_forever()
"`;

t.test('a server in the background answers the bounded commands of its sandbox', async (t) => {
  const ws = await makeWorkspace(t);
  const { process, seen } = await start(ws, SERVER);
  t.ok(process.pid > 1, 'it has a pid in the sandbox');
  await seen.saw('listening');
  const first = await bounded(ws, 'curl -sS http://127.0.0.1:8765/');
  t.equal(first.exitCode, 0, first.stderr.toString());
  t.equal(first.stdout.toString(), 'hello from the background');
  const second = await bounded(ws, 'curl -sS http://127.0.0.1:8765/');
  t.equal(second.stdout.toString(), 'hello from the background', 'and outlives them');
  process.signal('SIGTERM');
  const exit = await process.ended;
  t.same(exit, { exitCode: null, signal: 'SIGTERM', lost: false }, 'a signal ends it');
  const after = await bounded(ws, 'curl -sS -m 2 http://127.0.0.1:8765/ || echo refused');
  t.match(after.stdout.toString(), 'refused', 'gone with its end');
});

t.test('input is written and closed; output comes as it is written', async (t) => {
  const ws = await makeWorkspace(t);
  const { process, seen } = await start(
    ws,
    'while read line; do echo "got $line"; done; echo bye >&2; exit 7',
  );
  process.write(Buffer.from('one\n'));
  await seen.saw('got one');
  process.write(Buffer.from('two\n'));
  await seen.saw('got two');
  process.endInput();
  const exit = await process.ended;
  t.same(exit, { exitCode: 7, signal: null, lost: false });
  t.equal(seen.out.stdout, 'got one\ngot two\n');
  t.equal(seen.out.stderr, 'bye\n');
});

t.test("a bounded command's leftovers still end; a background process's go with it", async (t) => {
  const ws = await makeWorkspace(t);
  const { process: keeper } = await start(ws, 'sleep 600');
  const left = await bounded(ws, '(sleep 601 &) ; echo started');
  t.equal(left.stdout.toString(), 'started\n');
  const count = async (what: string) =>
    Number(
      (
        await bounded(
          ws,
          `n=0; for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < "$f" | grep -q "^sleep ${what}" && n=$((n+1)); done; echo $n`,
        )
      ).stdout
        .toString()
        .trim(),
    );
  t.equal(await count('601'), 0, "the bounded command's sleep was ended");
  t.equal(await count('600'), 1, 'the background process lives on');
  // Its child leaves its process group (a signal to the group misses it), not its session.
  const { process: parent, seen } = await start(
    ws,
    `(perl -e 'setpgrp(0, 0); exec qw(sleep 602)' &); echo forked; exec sleep 603`,
  );
  await seen.saw('forked');
  // 'forked' comes once the subshell is started; its perl may not have become the sleep yet.
  await eventually('the regrouped sleep runs', async () => (await count('602')) === 1, 60_000);
  t.equal(await count('602'), 1);
  parent.signal('SIGKILL');
  t.same(await parent.ended, { exitCode: null, signal: 'SIGKILL', lost: false });
  t.equal(await count('602'), 0, 'what it started went with it');
  keeper.signal('SIGTERM');
  await keeper.ended;
});

t.test("the sandbox's end takes its processes: lost", async (t) => {
  const ws = await makeWorkspace(t);
  const started: SessionProcess[] = [];
  for (let i = 0; i < 2; i++) started.push((await start(ws, 'sleep 600')).process);
  await runner.release(ws);
  for (const p of started) {
    t.same(await p.ended, { exitCode: null, signal: null, lost: true });
  }
  // Nothing of the ended sandbox is kept: a node releases a copy per run, for as long as it runs.
  const held = (runner as unknown as { processSessions: Map<string, unknown> }).processSessions;
  t.notOk(held.has(ws), 'the runner forgets it');
});

t.test(
  "the node's own writes reach a sandbox with processes; a new copy stamp keeps it",
  async (t) => {
    const ws = await makeWorkspace(t);
    // A warm sandbox of bounded commands first: it gives way to one made for processes.
    t.equal((await bounded(ws, 'echo warm')).exitCode, 0);
    const { process, seen } = await start(ws, SERVER);
    await seen.saw('listening');
    await writeFile(join(ws, 'note.txt'), 'one');
    const first = await bounded(ws, 'cat note.txt', { reuse: 'key-p-stamp-2' });
    t.equal(first.stdout.toString(), 'one', 'a file the node wrote is seen');
    await writeFile(join(ws, 'next.txt'), 'two');
    await rename(join(ws, 'next.txt'), join(ws, 'note.txt'));
    const second = await bounded(ws, 'cat note.txt; curl -sS http://127.0.0.1:8765/', {
      reuse: 'key-p-stamp-3',
    });
    t.equal(
      second.stdout.toString(),
      'twohello from the background',
      'a file the node replaced is seen, in the same sandbox as the server',
    );
    process.signal('SIGKILL');
    await process.ended;
  },
);

t.test('a terminal: a tty of the asked size, echo, resize with SIGWINCH, Ctrl-D', async (t) => {
  const workspaceDir = await makeWorkspace(t);
  const seen = collector();
  const script = [
    'import os, signal, sys',
    'def size(*_):',
    '    c, r = os.get_terminal_size(0)',
    '    print(f"size {c}x{r}", flush=True)',
    'signal.signal(signal.SIGWINCH, size)',
    'print("tty", os.isatty(0), os.isatty(1), os.isatty(2), os.environ.get("TERM"), flush=True)',
    'size()',
    'for line in sys.stdin:',
    '    print("line " + line.strip(), flush=True)',
    'print("eof", flush=True)',
  ].join('\n');
  const proc = await runner.startProcess({
    workspaceDir,
    command: `exec python3 -u -c '${script}'`,
    reuse: 'key-p',
    pty: { cols: 100, rows: 30 },
    onOutput: seen.onOutput,
  });
  await seen.saw('size 100x30');
  t.match(seen.out.stdout, 'tty True True True xterm-256color');
  proc.resize(120, 40);
  await seen.saw('size 120x40');
  proc.write(Buffer.from('hello\r'));
  await seen.saw('line hello');
  t.match(seen.out.stdout, 'hello\r\n', 'the terminal echoes what is typed');
  proc.endInput();
  const exit = await proc.ended;
  t.match(seen.out.stdout, 'eof', 'Ctrl-D ends its input');
  t.same([exit.exitCode, exit.lost], [0, false]);
  t.equal(seen.out.stderr, '', 'a terminal has one stream');
});

t.test('a port of the sandbox reached over the agent: HTTP, half-close, refusal', async (t) => {
  const workspaceDir = await makeWorkspace(t);
  await writeFile(join(workspaceDir, 'page.txt'), 'a page from the sandbox\n');
  const server = await start(workspaceDir, 'exec python3 -u -m http.server 18766 --bind 127.0.0.1');
  await server.seen.saw('Serving HTTP');
  const conn = await runner.connectPort(workspaceDir, 18766);
  const answer = new Promise<string>((resolve, reject) => {
    let text = '';
    conn.on('data', (c: Buffer) => {
      text += c.toString();
    });
    conn.on('end', () => resolve(text));
    conn.on('error', reject);
  });
  // The request, then the write side closed: the answer still comes.
  conn.end('GET /page.txt HTTP/1.0\r\nHost: sandbox\r\n\r\n');
  const text = await answer;
  t.match(text, /^HTTP\/1\.0 200 OK/);
  t.match(text, /\r\n\r\na page from the sandbox\n$/);
  await t.rejects(runner.connectPort(workspaceDir, 18767), { code: 'port_not_listening' });
  const other = await makeWorkspace(t);
  await t.rejects(runner.connectPort(other, 18766), { code: 'port_not_listening' }, 'no sandbox');
  server.process.signal('SIGKILL');
  await server.process.ended;
});
