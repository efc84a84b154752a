import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import t, { type Test } from 'tap';
import { TOOL_ACTION_NAMES } from '../../src/contract/index.js';
import { type ApiHarness, startApiHarness } from '../api/api-support.js';

/**
 * The MCP server through the SDK's own client, over both transports, against a live
 * API on Postgres and the real bwrap sandbox: Streamable HTTP at /mcp on the node, and
 * stdio through `memql mcp` run as a child process.
 */

const DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = resolve(DIST, 'nodes/cli/main.js');

const h: ApiHarness = await startApiHarness(t);

function httpTransport(token: string): Transport {
  return new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
}

function stdioTransport(token: string): Transport {
  return new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', MEMQL_URL: h.url, MEMQL_TOKEN: token },
    stderr: 'pipe',
  });
}

async function connect(t: Test, transport: Transport): Promise<Client> {
  const client = new Client({ name: 'memql-test', version: '1.0.0' });
  await client.connect(transport);
  t.teardown(() => client.close());
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;

const textOf = (result: CallToolResult) =>
  result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

for (const [transportName, transport] of [
  ['Streamable HTTP', httpTransport],
  ['stdio (memql mcp)', stdioTransport],
] as const) {
  t.test(
    `${transportName}: tools, a run, exec with live output, refusals, artifacts`,
    async (t) => {
      const client = await connect(t, transport(h.alice));
      t.equal(client.getServerVersion()?.name, 'memql-workbench');

      const { tools } = await client.listTools();
      const names = tools.map((tool) => tool.name);
      t.same(names, [
        'open_run',
        'end_run',
        'list_runs',
        'set_run_network',
        'fork_run',
        ...TOOL_ACTION_NAMES,
      ]);
      t.notOk(names.includes('build'), 'the system-only build is never a tool');
      const execTool = tools.find((tool) => tool.name === 'exec')!;
      t.same(execTool.inputSchema.required, ['runId', 'command']);

      const opened = await call(client, 'open_run', { conversationId: 'mcp-conv' });
      t.notOk(opened.isError);
      const runId = (opened.structuredContent as { runId: string }).runId;
      t.match(runId, /^run-/);

      const written = await call(client, 'fs_write', {
        runId,
        path: 'notes/hello.txt',
        content: 'hello from mcp\n',
      });
      t.notOk(written.isError, textOf(written));

      // Live output: progress notifications carry the command's output as it runs.
      const progress: string[] = [];
      const ran = (await client.callTool(
        {
          name: 'exec',
          arguments: {
            runId,
            command: 'cat notes/hello.txt; echo oops >&2; wc -c notes/hello.txt',
          },
        },
        undefined,
        { onprogress: (p) => progress.push(p.message ?? '') },
      )) as CallToolResult;
      t.notOk(ran.isError, textOf(ran));
      const payload = (ran.structuredContent as { payload: Record<string, unknown> }).payload;
      t.equal(payload.exitCode, 0);
      t.equal(payload.stdout, 'hello from mcp\n15 notes/hello.txt\n');
      t.equal(payload.stderr, 'oops\n');
      t.match(progress.join(''), /stdout: hello from mcp/);
      t.match(progress.join(''), /stderr: oops/);

      // A refusal is a tool error the model can read, with the stable code first.
      const denied = await call(client, 'exec', { runId, command: 'sudo id' });
      t.equal(denied.isError, true);
      t.match(textOf(denied), /^command_not_allowed: /);
      t.equal((denied.structuredContent as { errorCode: string }).errorCode, 'command_not_allowed');

      const badArgs = await call(client, 'fs_read', { runId, path: '../etc/passwd' });
      t.equal(badArgs.isError, true);
      t.match(textOf(badArgs), /^invalid_path: /);

      const missingRun = await call(client, 'fs_read', { path: 'x' });
      t.equal(missingRun.isError, true);
      t.match(textOf(missingRun), /^invalid_arguments: runId/);

      const unknownTool = await call(client, 'build', { runId });
      t.equal(unknownTool.isError, true);
      t.match(textOf(unknownTool), /^invalid_arguments: no tool "build"/);

      // A promoted artifact is a resource, read back byte for byte.
      const promoted = await call(client, 'promote_artifact', {
        runId,
        path: 'notes/hello.txt',
        contentType: 'text/plain',
      });
      t.notOk(promoted.isError, textOf(promoted));
      const artifactId = (promoted.structuredContent as { payload: { artifactId: string } }).payload
        .artifactId;
      const { resources } = await client.listResources();
      const resource = resources.find((r) => r.uri === `memql://artifacts/${artifactId}`);
      t.ok(resource, 'the artifact is listed as a resource');
      t.equal(resource?.name, 'hello.txt');
      const read = await client.readResource({ uri: `memql://artifacts/${artifactId}` });
      t.same(read.contents, [
        {
          uri: `memql://artifacts/${artifactId}`,
          mimeType: 'text/plain',
          text: 'hello from mcp\n',
        },
      ]);
      await t.rejects(client.readResource({ uri: 'memql://artifacts/nope' }), /not_found/);

      const listed = await call(client, 'list_runs', {});
      t.ok(
        (listed.structuredContent as { runs: { id: string }[] }).runs.some((r) => r.id === runId),
      );
      const ended = await call(client, 'end_run', { runId, status: 'succeeded' });
      t.notOk(ended.isError, textOf(ended));
      const afterEnd = await call(client, 'exec', { runId, command: 'true' });
      t.equal(afterEnd.isError, true);
      t.match(textOf(afterEnd), /^run_ended: /);
    },
  );

  t.test(`${transportName}: another user's run and artifacts stay out of reach`, async (t) => {
    const alice = await connect(t, transport(h.alice));
    const bob = await connect(t, transport(h.bob));
    const opened = await call(alice, 'open_run', {});
    const runId = (opened.structuredContent as { runId: string }).runId;
    const secret = await call(bob, 'fs_read', { runId, path: 'x' });
    t.equal(secret.isError, true);
    t.match(textOf(secret), /^not_found: /);
    t.match(textOf(secret), 'open_run', 'the way out is named as an MCP tool');
    const bobRuns = await call(bob, 'list_runs', {});
    t.notOk(
      (bobRuns.structuredContent as { runs: { id: string }[] }).runs.some((r) => r.id === runId),
    );
    t.match(textOf(await call(bob, 'fork_run', { runId })), /not_found/, 'nor forked');
  });

  t.test(`${transportName}: versions, a checkpoint, a restore and a fork`, async (t) => {
    const client = await connect(t, transport(h.alice));
    const opened = await call(client, 'open_run', {});
    const runId = (opened.structuredContent as { runId: string }).runId;
    await call(client, 'fs_write', { runId, path: 'plan.md', content: 'first' });
    const labelled = await call(client, 'version_checkpoint', { runId, label: 'first-draft' });
    t.notOk(labelled.isError, textOf(labelled));
    await call(client, 'fs_write', { runId, path: 'plan.md', content: 'second' });
    const list = await call(client, 'version_list', { runId });
    t.match(list.structuredContent, {
      payload: { current: 2, versions: [{ version: 2 }, { version: 1, label: 'first-draft' }] },
    });
    const diff = await call(client, 'version_diff', { runId, from: 1 });
    t.match(diff.structuredContent, {
      payload: { entries: [{ path: 'plan.md', change: 'changed' }] },
    });
    const forked = await call(client, 'fork_run', { runId, label: 'first-draft' });
    const forkId = (forked.structuredContent as { runId: string }).runId;
    t.not(forkId, runId);
    const inFork = await call(client, 'fs_read', { runId: forkId, path: 'plan.md' });
    t.match(
      inFork.structuredContent,
      { payload: { content: 'first' } },
      'the fork starts at the label',
    );
    const restored = await call(client, 'version_restore', { runId, to: 'first-draft' });
    t.match(restored.structuredContent, { payload: { version: 3, restoredFrom: 1, changed: 1 } });
    const read = await call(client, 'fs_read', { runId, path: 'plan.md' });
    t.match(read.structuredContent, { payload: { content: 'first' } });
    const missing = await call(client, 'version_restore', { runId, to: 'no-such-label' });
    t.equal(missing.isError, true);
    t.match(textOf(missing), /^version_not_found: /);
  });
}

t.test('/mcp without a token, or with a GET, is refused', async (t) => {
  const noToken = await h.call(null, '/mcp', { method: 'POST', body: '{}' });
  t.equal(noToken.status, 401);
  const client = new Client({ name: 'memql-test', version: '1.0.0' });
  await t.rejects(client.connect(httpTransport('not-a-token')), /401|unauthenticated/);
  const get = await h.call(h.alice, '/mcp', { method: 'GET' });
  t.equal(get.status, 405);
  t.equal(get.headers.get('allow'), 'POST');
});
