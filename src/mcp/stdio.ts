/**
 * `memql mcp`: the MCP server on standard input and output, for desktop and IDE agents
 * that start it as a child process. It reaches the agent node's API with the CLI's
 * `--url` and `--token`. Standard output carries only MCP messages.
 *
 * @module
 */

import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMcpServer, type McpBackend, type McpCallIdentity } from './server.js';

/** Serves MCP on `stdin`/`stdout` until the client closes its end or `signal` aborts. */
export async function serveMcpStdio(
  backend: McpBackend,
  identity: McpCallIdentity,
  io: { readonly stdin: Readable; readonly stdout: Writable },
  signal: AbortSignal,
): Promise<void> {
  const server = createMcpServer(backend, identity);
  const transport = new StdioServerTransport(io.stdin, io.stdout);
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
  });
  const onEnd = () => void server.close();
  io.stdin.once('end', onEnd);
  io.stdin.once('close', onEnd);
  signal.addEventListener('abort', onEnd, { once: true });
  await server.connect(transport);
  try {
    await closed;
  } finally {
    io.stdin.off('end', onEnd);
    io.stdin.off('close', onEnd);
    signal.removeEventListener('abort', onEnd);
  }
}
