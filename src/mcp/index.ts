/**
 * The MCP server of memql-workbench, over stdio (`memql mcp`) and Streamable HTTP
 * (`/mcp` on agent nodes).
 *
 * ```ts
 * await serveMcpStdio(backend, identity, { stdin: process.stdin, stdout: process.stdout }, signal);
 * ```
 *
 * @module
 */

export { MCP_HTTP_IDENTITY, selfBaseUrl, serveMcpHttp } from './http.js';
export {
  createMcpServer,
  MCP_RESOURCE_MAX_BYTES,
  MCP_SERVER_INFO,
  type McpBackend,
  type McpCallIdentity,
} from './server.js';
export { serveMcpStdio } from './stdio.js';
export { toolResultOf } from './tool-errors.js';
export { actionToolInputSchema, type McpToolListing, mcpTools, RUN_TOOL_NAMES } from './tools.js';
