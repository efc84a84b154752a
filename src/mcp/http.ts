/**
 * Streamable HTTP at `/mcp` on an agent node: one stateless MCP exchange a request
 * (no session id; each POST carries one JSON-RPC message and is answered on its own
 * response, as an event stream when the call sends progress). The caller's bearer
 * token is checked by the API before this runs, and the server it builds acts with
 * that same token, so an MCP caller can reach exactly what its API calls could.
 *
 * @module
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { WorkbenchClient } from '../client/index.js';
import { McpCancels } from './cancels.js';
import { createMcpServer, type McpCallIdentity } from './server.js';

/** How dispatches made through `/mcp` are recorded. */
export const MCP_HTTP_IDENTITY: McpCallIdentity = { agentId: 'mcp', taskId: 'mcp-http' };

/**
 * The API's own address as this request reached it: the MCP server calls the API
 * there, with the caller's token.
 */
export function selfBaseUrl(req: IncomingMessage): string {
  const address = req.socket.localAddress ?? '127.0.0.1';
  const host = address.includes(':') ? `[${address}]` : address;
  return `http://${host}:${req.socket.localPort}`;
}

/** The calls in flight over `/mcp` on this node, for the cancels of every POST. */
const HTTP_CANCELS = new McpCancels();

/**
 * Serves one authenticated `POST /mcp` of user `userId` whose JSON body was already
 * read.
 */
export async function serveMcpHttp(
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  caller: { token: string; userId: string },
): Promise<void> {
  const client = new WorkbenchClient({ baseUrl: selfBaseUrl(req), token: caller.token });
  const server = createMcpServer(client, MCP_HTTP_IDENTITY, {
    cancels: HTTP_CANCELS,
    cancelScope: caller.userId,
  });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.once('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}
