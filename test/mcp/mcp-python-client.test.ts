import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { TOOL_ACTION_NAMES } from '../../src/contract/index.js';
import { startApiHarness } from '../api/api-support.js';
import { finished } from '../support/local-node.js';

/**
 * An independent MCP client, the Python `mcp` package (installed by
 * `scripts/setup/install-mcp-client.sh` into its own virtualenv), against the MCP server over
 * both transports: it lists the tools, opens a run, runs an exec and ends the run.
 */

const DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ROOT = resolve(DIST, '..');
const CLI = resolve(DIST, 'nodes/cli/main.js');
const SCRIPT = resolve(ROOT, 'test/mcp/python_client.py');
const PYTHON = process.env.MEMQL_MCP_PYTHON ?? '/opt/memql-mcp-client/bin/python';

if (!existsSync(PYTHON)) {
  throw new Error(
    `no Python MCP client at ${PYTHON}: run "bash scripts/setup/install-mcp-client.sh" (or set MEMQL_MCP_PYTHON to a python with the mcp package)`,
  );
}

const h = await startApiHarness(t);

function runClient(args: string[]) {
  return finished(spawn(PYTHON, [SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }));
}

for (const [name, args] of [
  ['Streamable HTTP', ['http', `${h.url}/mcp`, h.alice]],
  ['stdio (memql mcp)', ['stdio', process.execPath, CLI, h.url, h.alice]],
] as const) {
  t.test(`the Python mcp client over ${name}`, async (t) => {
    const { code, stdout, stderr } = await runClient([...args]);
    t.equal(code, 0, stderr);
    const seen = JSON.parse(stdout) as {
      tools: string[];
      runId: string;
      exec: { isError: boolean; stdout: string; exitCode: number };
      refused: { isError: boolean; text: string };
      ended: boolean;
    };
    t.same(seen.tools, [
      'open_run',
      'end_run',
      'list_runs',
      'set_run_network',
      'fork_run',
      ...TOOL_ACTION_NAMES,
    ]);
    t.same(seen.exec, { isError: false, stdout: 'HELLO FROM PYTHON\n', exitCode: 0 });
    t.equal(seen.refused.isError, true);
    t.match(seen.refused.text, /^command_not_allowed: /);
    t.equal(seen.ended, true);
    const run = await h.json<{ run: { status: string } }>(h.alice, 'GET', `/v1/runs/${seen.runId}`);
    t.equal(run.body.run.status, 'succeeded', 'the run the client opened is ended in the store');
  });
}
