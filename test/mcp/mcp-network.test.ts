import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config/index.js';
import { type ApiHarness, startApiHarness } from '../api/api-support.js';

/**
 * A run's network through MCP, with the SDK's own client over both transports against
 * a live API on Postgres: `open_run` takes `network`, `set_run_network` replaces it
 * (the tool a model whose `pip install` was refused is told to use), and a host outside
 * the operator's ceiling is a tool error whose text starts with `egress_not_allowed`
 * and names what the ceiling allows.
 */

const DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = resolve(DIST, 'nodes/cli/main.js');
const config = loadConfig({
  MEMQL_EGRESS_CEILING: 'pypi.org,files.pythonhosted.org,registry.npmjs.org',
});
const h: ApiHarness = await startApiHarness(t, { api: { egress: config.egress } });

const transports: [string, (token: string) => Transport][] = [
  [
    'Streamable HTTP',
    (token) =>
      new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
  ],
  [
    'stdio (memql mcp)',
    (token) =>
      new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp'],
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', MEMQL_URL: h.url, MEMQL_TOKEN: token },
        stderr: 'pipe',
      }),
  ],
];

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

type Network = { allow: string[]; secrets: string[] };

for (const [name, transport] of transports) {
  t.test(`${name}: open_run with a network, set_run_network, refusals`, async (t) => {
    const client = await connect(t, transport(h.alice));
    const { tools } = await client.listTools();
    const setTool = tools.find((tool) => tool.name === 'set_run_network');
    t.ok(setTool, 'the tool is listed');
    t.same(setTool!.inputSchema.required, ['runId', 'allow']);
    t.match(setTool!.description, 'egress.refused', 'a refused pip install points here');
    t.match(setTool!.description, 'pypi.org and files.pythonhosted.org');
    t.match(setTool!.description, "operator's ceiling");
    const openTool = tools.find((tool) => tool.name === 'open_run')!;
    t.ok(
      (openTool.inputSchema.properties as Record<string, unknown>).network,
      'open_run takes network',
    );

    const opened = await call(client, 'open_run', { network: { allow: ['pypi.org'] } });
    t.notOk(opened.isError, textOf(opened));
    const { runId, run } = opened.structuredContent as { runId: string; run: { network: Network } };
    t.same(run.network, { allow: ['pypi.org'], secrets: [] });

    const set = await call(client, 'set_run_network', {
      runId,
      allow: ['pypi.org', 'files.pythonhosted.org'],
    });
    t.notOk(set.isError, textOf(set));
    t.same(set.structuredContent, {
      runId,
      network: { allow: ['pypi.org', 'files.pythonhosted.org'], secrets: [] },
    });
    const stored = await h.json<{ run: { network: Network } }>(h.alice, 'GET', `/v1/runs/${runId}`);
    t.same(stored.body.run.network.allow, ['pypi.org', 'files.pythonhosted.org']);

    const outside = await call(client, 'set_run_network', { runId, allow: ['evil.example'] });
    t.equal(outside.isError, true);
    t.match(textOf(outside), /^egress_not_allowed: "evil\.example" is outside/);
    t.match(textOf(outside), '"pypi.org", "files.pythonhosted.org", "registry.npmjs.org"');
    t.same((outside.structuredContent as { payload: { outside: string[] } }).payload.outside, [
      'evil.example',
    ]);
    const openOutside = await call(client, 'open_run', { network: { allow: ['github.com'] } });
    t.equal(openOutside.isError, true);
    t.match(textOf(openOutside), /^egress_not_allowed: /);

    const secret = await call(client, 'set_run_network', {
      runId,
      allow: ['pypi.org'],
      secrets: ['github'],
    });
    t.equal(secret.isError, true);
    t.match(textOf(secret), 'MEMQL_EGRESS_SECRETS defines none');

    const malformed = await call(client, 'set_run_network', { runId, allow: ['10.0.0.1'] });
    t.equal(malformed.isError, true);
    t.match(textOf(malformed), /^invalid_arguments: body\.allow\[0\]: /);

    const others = await connect(t, transport(h.bob));
    const absent = await call(others, 'set_run_network', { runId, allow: [] });
    t.equal(absent.isError, true);
    t.match(textOf(absent), /^not_found: /);
    t.same(
      (await h.json<{ run: { network: Network } }>(h.alice, 'GET', `/v1/runs/${runId}`)).body.run
        .network.allow,
      ['pypi.org', 'files.pythonhosted.org'],
      'nothing changed by the refusals',
    );
  });
}
