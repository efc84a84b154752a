import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import { loadConfig } from '../../src/config/index.js';
import { type DispatchResult, userAuthority } from '../../src/contract/index.js';
import { createRun, openDb } from '../../src/store/index.js';
import { createWorkbenchHost } from '../../src/workbench/host-factory.js';
import { parsedEnvelope } from '../support/envelope.js';
import { createTestDatabase } from '../support/postgres.js';

const database = await createTestDatabase();
t.teardown(() => database.drop());
const db = await openDb({ kind: 'postgres', url: database.url });
t.teardown(() => db.close());
const base = await mkdtemp(join(tmpdir(), 'memql-factory-'));
await chmod(base, 0o755);
const built: Awaited<ReturnType<typeof createWorkbenchHost>>[] = [];
t.teardown(async () => {
  // Each host's warm pool fills in the background: it ends before its directory goes.
  for (const { runner } of built) if ('runner' in runner) await runner.runner.close?.();
  await rm(base, { recursive: true, force: true });
});
await createRun(db, { id: 'run-f', ownerUserId: 'u' });

const log = pino({ level: 'silent' });
const deps = { db, log, platform: 'linux' as const, runsAsRoot: process.getuid?.() === 0 };

async function build(env: Record<string, string>) {
  const config = loadConfig(
    { MEMQL_WORKBENCH_ROOT: join(base, 'wb'), MEMQL_DATA_DIR: join(base, 'data'), ...env },
    { hostname: 'factory-node' },
  );
  const made = await createWorkbenchHost(config, deps);
  built.push(made);
  return made;
}

function exec(host: Awaited<ReturnType<typeof build>>['host'], command: string) {
  return host.handleDispatch(
    parsedEnvelope({
      action: 'exec',
      args: { command },
      runId: 'run-f',
      agentId: 'a',
      taskId: 't',
    }),
    userAuthority('user:u'),
  );
}

const code = (r: DispatchResult) => (r.ok ? 'ok' : r.errorCode);

t.test('the default picks bwrap and runs commands', async (t) => {
  const { host, runner } = await build({});
  t.equal('runner' in runner && runner.runner.kind, 'bwrap');
  const r = await exec(host, 'echo hi');
  t.same(r.ok && (r.payload as { stdout: string }).stdout, 'hi\n');
});

t.test('docker chosen but no Docker client wired: exec answers no_sandbox', async (t) => {
  const { host, runner } = await build({ MEMQL_RUNNER: 'docker' });
  t.ok('error' in runner);
  const r = await exec(host, 'echo hi');
  t.equal(code(r), 'no_sandbox');
  t.match(r.ok ? '' : r.message, 'MEMQL_RUNNER');
});

t.test('operator extras extend the allowlist', async (t) => {
  const plain = await build({});
  t.equal(code(await exec(plain.host, 'perl -e 1')), 'command_not_allowed');
  const extended = await build({ MEMQL_EXEC_ALLOWLIST_EXTRA: 'perl' });
  const r = await exec(extended.host, 'perl -e "print 6*7"');
  t.equal(r.ok && (r.payload as { stdout: string }).stdout, '42');
});
