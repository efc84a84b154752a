import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { nodeMain, spawnNode } from '../support/node-process.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * The local node as a real process (HTTP API, Postgres, bwrap): runs whose commands
 * leave FIFOs never stall anyone. Before, each fs_read of a FIFO held one of the
 * node's four file-system threads forever; five of them stalled every other run's
 * file actions and kept the node from stopping.
 */

interface Answer {
  ok: boolean;
  errorCode?: string;
  message?: string;
  payload?: Record<string, unknown>;
}

t.test(
  'five runs reading their FIFOs are refused; another run is served; the node stops',
  async (t) => {
    const database = await createTestDatabase();
    t.teardown(() => database.drop());
    const cwd = await mkdtemp(join(tmpdir(), 'memql-fifo-'));
    // The sandbox's uid must reach the workspaces below it.
    await chmod(cwd, 0o755);
    t.teardown(() => rm(cwd, { recursive: true, force: true }));
    const node = spawnNode(t, 'local', nodeMain('local'), {
      MEMQL_HTTP_LISTEN: '127.0.0.1:0',
      MEMQL_DATA_DIR: join(cwd, '.data'),
      MEMQL_WORKBENCH_ROOT: join(cwd, 'workbenches'),
      MEMQL_DATABASE_URL: database.url,
    });
    await node.waitFor(
      () => (node.other.some((l) => l.startsWith('ready.')) ? true : undefined),
      'the ready line',
      120_000,
    );
    const api = node.other.map((l) => /API: +(\S+)/.exec(l)?.[1]).find(Boolean);
    const token = node.other.map((l) => /token: +(\S+)/.exec(l)?.[1]).find(Boolean);
    t.ok(api && token, 'the node prints its API and a token');
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

    async function newRun(): Promise<string> {
      const res = await fetch(`${api}/runs`, { method: 'POST', headers, body: '{}' });
      return ((await res.json()) as { run: { id: string } }).run.id;
    }
    async function dispatch(runId: string, action: string, args: object): Promise<Answer> {
      const res = await fetch(`${api}/dispatch`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ action, args, runId, agentId: 'agent-fifo', taskId: 'task-fifo' }),
      });
      return (await res.json()) as Answer;
    }

    const fifoRuns = await Promise.all(Array.from({ length: 5 }, () => newRun()));
    const other = await newRun();
    const made = await Promise.all(
      fifoRuns.map((runId) =>
        dispatch(runId, 'exec', { command: `python3 -c "import os; os.mkfifo('p')"` }),
      ),
    );
    for (const m of made) {
      t.match(
        m,
        { ok: true, payload: { exitCode: 0 } },
        m.ok ? 'a FIFO was made' : `no FIFO: ${m.errorCode}: ${m.message}`,
      );
    }

    // Five reads at once: more than the node's file-system threads.
    const reads = fifoRuns.map((runId) => dispatch(runId, 'fs_read', { path: 'p' }));
    const write = await dispatch(other, 'fs_write', { path: 'notes.txt', content: 'served' });
    t.match(write, { ok: true, payload: { path: 'notes.txt', size: 6 } }, 'another run is served');
    const exec = await dispatch(other, 'exec', { command: 'cat notes.txt' });
    t.match(exec, { ok: true, payload: { stdout: 'served' } }, 'and its commands run');
    for (const read of await Promise.all(reads)) {
      t.match(
        read,
        { ok: false, errorCode: 'invalid_path', payload: { path: 'p', fileType: 'fifo' } },
        'fs_read of a FIFO is refused, naming its type',
      );
    }

    const first = fifoRuns[0]!;
    t.match(
      await dispatch(first, 'fs_write', { path: 'p', content: 'x' }),
      { ok: false, errorCode: 'invalid_path', payload: { fileType: 'fifo' } },
      'fs_write over a FIFO is refused',
    );
    t.match(
      await dispatch(first, 'promote_artifact', { path: 'p' }),
      { ok: false, errorCode: 'invalid_path', payload: { fileType: 'fifo' } },
      'a FIFO is not promoted',
    );
    t.match(
      await dispatch(first, 'exec', { command: 'echo still fine' }),
      { ok: true, payload: { stdout: 'still fine\n' } },
      'the run with the FIFO goes on',
    );

    node.child.kill('SIGTERM');
    const exited = await node.exited;
    t.same(
      exited,
      { code: 0, signal: null },
      `SIGTERM stops it cleanly (stderr: ${node.stderr.slice(-500)})`,
    );
  },
);
