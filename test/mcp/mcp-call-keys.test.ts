import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import t, { type Test } from 'tap';
import { startApiHarness } from '../api/api-support.js';
import { finished } from '../support/local-node.js';
import { eventually } from '../support/mesh.js';

/**
 * Every MCP tool call is its own call. JSON-RPC ids restart in every session, so they
 * must never be the call's key: sessions of independent clients (the Python `mcp`
 * package over stdio and over Streamable HTTP, and the SDK's own client) on one run
 * each get their own command's output. A key the model gives itself replays its call,
 * and refuses another; a client's cancel ends the command, a client that goes away
 * does not.
 */

const DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ROOT = resolve(DIST, '..');
const CLI = resolve(DIST, 'nodes/cli/main.js');
const SCRIPT = resolve(ROOT, 'test/mcp/python_exec_session.py');
const PYTHON = process.env.MEMQL_MCP_PYTHON ?? '/opt/memql-mcp-client/bin/python';

if (!existsSync(PYTHON)) {
  throw new Error(
    `no Python MCP client at ${PYTHON}: run "bash scripts/setup/install-mcp-client.sh" (or set MEMQL_MCP_PYTHON to a python with the mcp package)`,
  );
}

const h = await startApiHarness(t);

interface SessionSeen {
  isError: boolean;
  stdout: string | null;
  callId: string | null;
  text: string;
}

async function pythonSession(args: string[]): Promise<SessionSeen> {
  const { code, stdout, stderr } = await finished(
    spawn(PYTHON, [SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  if (code !== 0) throw new Error(`python client exited ${code}: ${stderr}`);
  return JSON.parse(stdout) as SessionSeen;
}

async function sdkClient(t: Test): Promise<Client> {
  const client = new Client({ name: 'memql-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${h.alice}` } },
    }),
  );
  t.teardown(() => client.close());
  return client;
}

const commandsOf = async (runId: string) =>
  h.db.query<{ call_id: string; status: string }>(
    'select call_id, status from workspace_command where run_id = $1 order by queued_at',
    [runId],
  );

t.test('sessions of three independent clients on one run each run their own command', async (t) => {
  const runId = await h.newRun(h.alice);
  const first = await pythonSession([
    'stdio',
    process.execPath,
    CLI,
    h.url,
    h.alice,
    runId,
    'echo FIRST',
  ]);
  const second = await pythonSession(['http', `${h.url}/mcp`, h.alice, runId, 'echo SECOND']);
  const client = await sdkClient(t);
  const third = (await client.callTool({
    name: 'exec',
    arguments: { runId, command: 'echo THIRD' },
  })) as CallToolResult;
  t.same([first.stdout, second.stdout], ['FIRST\n', 'SECOND\n']);
  t.match(third.structuredContent, { ok: true, payload: { stdout: 'THIRD\n' } });
  const rows = await commandsOf(runId);
  t.equal(rows.length, 3, 'three commands ran');
  t.equal(new Set(rows.map((r) => r.call_id)).size, 3, 'under three keys');
  t.same(
    rows.map((r) => r.call_id),
    [first.callId, second.callId, (third.structuredContent as { callId: string }).callId],
    'each answer names its own key',
  );
});

t.test("a model's own callId replays its call and refuses another", async (t) => {
  const runId = await h.newRun(h.alice);
  const client = await sdkClient(t);
  const exec = (command: string, callId: string) =>
    client.callTool({
      name: 'exec',
      arguments: { runId, command, callId },
    }) as Promise<CallToolResult>;
  const ran = await exec('echo once', 'toolu_1');
  const again = await exec('echo once', 'toolu_1');
  t.same(again.structuredContent, ran.structuredContent, 'the repeat is the recorded outcome');
  const other = await exec('echo another', 'toolu_1');
  t.equal(other.isError, true);
  t.match(other.structuredContent, { errorCode: 'call_id_conflict' });
  const text = other.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  t.match(text, /^call_id_conflict: /);
  t.equal((await commandsOf(runId)).length, 1, 'one command ran');

  // File actions too: the same key and arguments replay, anything else is refused.
  const write = (content: string, callId: string) =>
    client.callTool({
      name: 'fs_write',
      arguments: { runId, path: 'log.txt', content, append: true, callId },
    }) as Promise<CallToolResult>;
  t.match((await write('a\n', 'toolu_2')).structuredContent, { ok: true });
  t.match((await write('a\n', 'toolu_2')).structuredContent, { ok: true });
  t.match((await write('b\n', 'toolu_2')).structuredContent, { errorCode: 'call_id_conflict' });
  const read = (await client.callTool({
    name: 'fs_read',
    arguments: { runId, path: 'log.txt' },
  })) as CallToolResult;
  t.match(read.structuredContent, { ok: true, payload: { content: 'a\n' } }, 'appended once');
});

t.test('a client that cancels ends the command; one that goes away does not', async (t) => {
  const runId = await h.newRun(h.alice);
  const client = await sdkClient(t);
  const cancelled = new AbortController();
  const call = client
    .callTool(
      { name: 'exec', arguments: { runId, command: 'sleep 60', callId: 'to-cancel' } },
      undefined,
      { signal: cancelled.signal },
    )
    .catch((err: unknown) => err);
  await eventually('the command runs', async () =>
    (await commandsOf(runId)).some((r) => r.call_id === 'to-cancel' && r.status === 'running'),
  );
  cancelled.abort();
  await call;
  await eventually('the cancel ended it', async () =>
    (await commandsOf(runId)).some((r) => r.call_id === 'to-cancel' && r.status === 'cancelled'),
  );

  // A session that closes mid-call: its command runs to its end.
  await h.dispatch(h.alice, runId, 'fs_write', { path: 'gate', content: 'wait\n' });
  const leaving = await sdkClient(t);
  const left = leaving
    .callTool({
      name: 'exec',
      arguments: { runId, command: 'until grep -q go gate; do sleep 0.05; done', callId: 'left' },
    })
    .catch((err: unknown) => err);
  await eventually('the second command runs', async () =>
    (await commandsOf(runId)).some((r) => r.call_id === 'left' && r.status === 'running'),
  );
  await leaving.close();
  await left;
  await eventually('the node let go of the call', () => h.answered.has('left'));
  const row = (await commandsOf(runId)).find((r) => r.call_id === 'left');
  t.equal(row?.status, 'running', 'closing the session did not cancel it');
  await writeFile(join(h.root, runId, 'gate'), 'go\n');
  await eventually('it ran to its end', async () =>
    (await commandsOf(runId)).some((r) => r.call_id === 'left' && r.status === 'completed'),
  );
});
