import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startAndStop } from '../support/local-node.js';

/** Everything of a local node under its data directory: warm workspaces and its node id. */

t.test(
  'MEMQL_DATA_DIR holds the warm workspaces and the node id, one id a directory',
  async (t) => {
    const cwd = await mkdtemp(join(tmpdir(), 'memql-local-'));
    t.teardown(() => rm(cwd, { recursive: true, force: true }));
    // Searchable by the sandbox uid, so the warm copies stay in the data directory.
    await chmod(cwd, 0o755);
    const fleetNodeId = async (stdout: string) => {
      const api = /API: +(http:\/\/\S+?)\/v1/.exec(stdout)![1]!;
      const token = /token: +(\S+)/.exec(stdout)![1]!;
      const run = await fetch(`${api}/v1/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{}',
      });
      const runId = ((await run.json()) as { run: { id: string } }).run.id;
      await fetch(`${api}/v1/dispatch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          action: 'fs_write',
          args: { path: 'a.txt', content: 'a' },
          runId,
          agentId: 'a',
          taskId: 't',
        }),
      });
      const fleet = await fetch(`${api}/v1/fleet/workbenches`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return {
        runId,
        nodeId: ((await fleet.json()) as { replicas: { nodeId: string }[] }).replicas[0]!.nodeId,
      };
    };
    const seen: { runId: string; nodeId: string }[] = [];
    for (const dir of ['one', 'two', 'one']) {
      const run = await startAndStop(cwd, { MEMQL_DATA_DIR: join(cwd, dir) }, async (stdout) => {
        seen.push(await fleetNodeId(stdout));
      });
      t.equal(run.code, 0, run.stderr.slice(-500));
    }
    const [one, two, oneAgain] = seen;
    t.match(one!.nodeId, /^local-[0-9a-f]{12}$/);
    t.not(one!.nodeId, two!.nodeId, 'two data directories, two node ids');
    t.equal(oneAgain!.nodeId, one!.nodeId, 'a restart on the same data directory keeps its id');
    t.equal(
      (await readFile(join(cwd, 'one', 'node-id'), 'utf8')).trim(),
      one!.nodeId,
      'kept in <dataDir>/node-id',
    );
    t.ok(
      existsSync(join(cwd, 'two', 'workbenches', two!.runId, 'a.txt')),
      "the run's warm copy is under the data directory",
    );
    t.notOk(existsSync(join(cwd, '.data')), 'nothing is written beside it');
  },
);
