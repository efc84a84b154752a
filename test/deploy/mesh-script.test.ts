import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { WorkbenchClient } from '../../src/client/index.js';
import { finished } from '../support/local-node.js';
import { createTestDatabase } from '../support/postgres.js';
import { REPO_ROOT } from '../support/readme.js';
import { docker, freePort, IMAGE_TAG, requireImages } from './containers.js';

/**
 * The mesh on one machine as docs/deploy.md starts it, `bash scripts/mesh.sh up`: plain
 * `docker run` of the locally built images (no Compose plugin, no registry), on this
 * machine's Postgres, on ports that do not clash with `npm start`. The line it prints
 * is all a newcomer needs: a command runs in a replica through the agent, and
 * `bash scripts/mesh.sh down --purge` leaves no container, volume or database behind.
 */

t.setTimeout(600_000);

const mesh = (env: Record<string, string>, ...args: string[]) =>
  finished(
    spawn('bash', ['scripts/mesh.sh', ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );

t.test('scripts/mesh.sh up, a command through it, down', async (t) => {
  await requireImages(['agent', 'workbench']);
  const database = await createTestDatabase();
  // The script's database: made by the script, dropped by its down --purge.
  const dbUrl = database.url.replace(/\/[^/]+$/, `/mesh_${randomBytes(4).toString('hex')}`);
  t.teardown(() => database.drop());
  const dir = await mkdtemp(join(tmpdir(), 'memql-mesh-'));
  await chmod(dir, 0o755);
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const name = `memql-mesh-test-${randomBytes(3).toString('hex')}`;
  const env = {
    MEMQL_MESH_NAME: name,
    MEMQL_MESH_DIR: join(dir, 'mesh'),
    MEMQL_MESH_TAG: IMAGE_TAG,
    MEMQL_MESH_DATABASE_URL: dbUrl,
    MEMQL_MESH_HTTP_PORT: String(await freePort()),
    MEMQL_MESH_GRPC_PORTS: `${await freePort()},${await freePort()}`,
  };
  t.teardown(async () => {
    await mesh(env, 'down', '--purge');
  });

  const up = await mesh(env, 'up');
  t.equal(up.code, 0, `up: ${up.stdout}\n${up.stderr}`);
  const line = /export MEMQL_URL=(\S+) MEMQL_TOKEN=(\S+)/.exec(up.stdout);
  t.ok(line, 'it prints the line to paste');
  const client = new WorkbenchClient({ baseUrl: line![1]!, token: line![2]! });
  const run = await client.createRun();
  const result = await client.dispatch({
    action: 'exec',
    args: { command: 'echo from the mesh > out.txt && cat out.txt' },
    runId: run.id,
    agentId: 'mesh-test',
    taskId: 'mesh',
  });
  t.match(result, { ok: true, payload: { exitCode: 0, stdout: 'from the mesh\n' } });
  const held = await client.listWorkspaces();
  t.match(
    held.find((w) => w.runId === run.id)?.nodeId,
    new RegExp(`^${name}-wb[12]$`),
    'a replica holds the run',
  );
  const status = await mesh(env, 'status');
  t.match(status.stdout, `${name}-agent`);

  const down = await mesh(env, 'down', '--purge');
  t.equal(down.code, 0, down.stderr);
  const left = await docker(['ps', '-a', '--filter', `name=^${name}-`, '--format', '{{.Names}}']);
  t.equal(left.stdout.trim(), '', 'no container left');
  const volumes = await docker([
    'volume',
    'ls',
    '--filter',
    `name=${name}`,
    '--format',
    '{{.Name}}',
  ]);
  t.equal(volumes.stdout.trim(), '', 'no volume left');
});
