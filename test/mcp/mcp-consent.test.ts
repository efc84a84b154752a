import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import t from 'tap';
import { startAgentNode } from '../../src/agent/index.js';
import { remoteFleet, startApiServer } from '../../src/api/index.js';
import { loadConfig } from '../../src/config/index.js';
import { type DispatchResult, errorResult } from '../../src/contract/index.js';
import type { DispatchTarget } from '../../src/mesh/dispatch-target.js';
import { FsObjectStore } from '../../src/objects/index.js';
import {
  createApiToken,
  listConsentRequests,
  openDb,
  readConsentState,
} from '../../src/store/index.js';
import { finished } from '../support/local-node.js';
import { eventually, openRawStream } from '../support/mesh.js';
import { createTestDatabase } from '../support/postgres.js';

/**
 * The agent's MCP session cannot grant itself consent. An independent MCP client (the
 * Python `mcp` package), holding an agent token as a tool loop does, over both
 * transports, against an agent node that takes worker hosts (a worker of the user's
 * is connected, offering a display): no tool approves, raises a scope or turns the
 * kill switch off, and the `consent_required` answer of an exec that needs the display
 * tells the model to ask the user, naming no command or route that would approve. The
 * same token, tried on the approve route itself, is refused `person_required`.
 */

const DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ROOT = resolve(DIST, '..');
const CLI = resolve(DIST, 'nodes/cli/main.js');
const SCRIPT = resolve(ROOT, 'test/mcp/python_consent_client.py');
const PYTHON = process.env.MEMQL_MCP_PYTHON ?? '/opt/memql-mcp-client/bin/python';
if (!existsSync(PYTHON)) {
  throw new Error(
    `no Python MCP client at ${PYTHON}: run "bash scripts/setup/install-mcp-client.sh" (or set MEMQL_MCP_PYTHON to a python with the mcp package)`,
  );
}

const log = pino({ level: 'silent' });
const database = await createTestDatabase();
t.teardown(() => database.drop());
const db = await openDb({ kind: 'postgres', url: database.url, maxConnections: 4 });
t.teardown(() => db.close());
const base = await mkdtemp(join(tmpdir(), 'memql-mcp-consent-'));
t.teardown(() => rm(base, { recursive: true, force: true }));

// Calls this test makes never reach a workbench: the display they need is a mismatch,
// decided before any workbench is asked.
const local: DispatchTarget = {
  async handleDispatch(): Promise<DispatchResult> {
    return errorResult('internal', 'internal: the workbench must not see this call');
  },
};
const config = loadConfig({
  MEMQL_NODE_ID: 'agent-mcp',
  MEMQL_DATABASE_URL: database.url,
  MEMQL_WORKBENCH_ROOT: join(base, 'wb'),
  MEMQL_DATA_DIR: join(base, 'data'),
  MEMQL_GRPC_LISTEN: '127.0.0.1:0',
  MEMQL_RUNNER: 'process',
});
const node = await startAgentNode({
  config,
  log,
  local,
  readAffinity: async () => null,
  version: 'test',
  db,
});
t.teardown(() => node.close());
const api = await startApiServer(
  {
    db,
    objects: new FsObjectStore({ baseDir: join(base, 'objects') }),
    dispatcher: node.dispatcher,
    fleet: remoteFleet(null),
    ...(node.workers ? { workers: node.workers } : {}),
    ...(node.workerCalls ? { workerCalls: node.workerCalls } : {}),
    log,
  },
  { host: '127.0.0.1', port: 0 },
);
t.teardown(() => api.close());
const agentToken = (await createApiToken(db, 'alice')).token;

// alice's worker host, a real stream on the agent's gRPC port, offering a display.
const worker = openRawStream(`127.0.0.1:${node.grpcAddress?.port}`, agentToken);
t.teardown(() => worker.close());
worker.send({
  kind: 'hello',
  nodeId: 'desk',
  nodeType: 'worker',
  version: 'w',
  worker: { os: 'linux', provides: ['display', 'user_files'], capacity: 1 },
});
const health = setInterval(
  () => worker.send({ kind: 'health', healthy: true, running: 0, queued: 0, capacity: 1 }),
  500,
);
t.teardown(() => clearInterval(health));
await eventually('the worker is connected', () => node.workers?.connected('alice').length === 1);

interface Seen {
  instructions: string;
  tools: { name: string; description: string; schema: unknown }[];
  runId: string;
  asked: { isError: boolean; text: string; structured: { errorCode?: string; payload?: unknown } };
}

for (const [name, args] of [
  ['Streamable HTTP', ['http', `${api.url}/mcp`, agentToken]],
  ['stdio (memql mcp)', ['stdio', process.execPath, CLI, api.url, agentToken]],
] as const) {
  t.test(`over ${name}, the agent's session cannot approve`, async (t) => {
    const { code, stdout, stderr } = await finished(
      spawn(PYTHON, [SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    t.equal(code, 0, stderr);
    const seen = JSON.parse(stdout) as Seen;

    const offered = JSON.stringify({ tools: seen.tools, instructions: seen.instructions });
    t.notMatch(
      seen.tools.map((tool) => tool.name).join(' '),
      /consent|approve|deny|scope|kill|worker/,
      'no tool decides consent',
    );
    t.notMatch(offered, /memql consent|consent approve|\/v1\/|kill-switch|workers scope/);

    t.equal(seen.asked.isError, true);
    t.match(seen.asked.text, /^consent_required: /);
    t.equal(seen.asked.structured.errorCode, 'consent_required');
    t.match(seen.asked.text, /ask them to review it in the console/, 'tells the model to ask');
    t.notMatch(
      seen.asked.text,
      /memql |\/v1\/|consent approve|workers scope|kill-switch/,
      'names no command or route that would approve',
    );
    const card = (seen.asked.structured.payload as { consentRequest: { id: string } })
      .consentRequest;
    const pending = await listConsentRequests(db, 'alice', { status: 'pending' });
    t.ok(
      pending.some((r) => r.id === card.id),
      'the request waits for the user',
    );

    // The token the MCP session holds, on the approve route itself.
    const res = await fetch(`${api.url}/v1/consent-requests/${card.id}/approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agentToken}`, 'content-type': 'application/json' },
      body: '{}',
    });
    t.equal(res.status, 403);
    t.match(await res.json(), { errorCode: 'person_required' });
    t.equal((await readConsentState(db, 'alice')).workers.get('desk'), undefined, 'no scope');
    t.same(
      worker.frames.filter((f) => f.kind === 'request'),
      [],
      'nothing reached the worker',
    );
  });
}
