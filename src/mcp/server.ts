/**
 * The MCP server: the workbench as tools and resources for MCP clients (desktop and
 * IDE agents over stdio with `memql mcp`, remote agents over Streamable HTTP at
 * `/mcp` on an agent node).
 *
 * It is a client of the agent node's HTTP API on both transports, holding the
 * caller's own token, so it can do nothing the API would not let that caller do: runs,
 * ownership, refusals and limits are the API's. What it adds is the shape MCP clients
 * expect:
 *
 * - `tools/list`: `open_run`, `end_run`, `list_runs`, `set_run_network` and one tool
 *   per workbench action (see `tools.ts`).
 * - `tools/call`: a refused or failed call is a tool result with `isError: true` whose
 *   text starts with the stable error code and says what to do, so the model can read
 *   it and try again; the dispatch result is also given whole as `structuredContent`.
 *   A call that carries a progress token gets an `exec` command's output live, as
 *   progress notifications whose `message` is the new output text.
 * - `resources/list` and `resources/read`: the caller's promoted artifacts as
 *   `memql://artifacts/<id>` (text for UTF-8 text types, base64 `blob` otherwise).
 *
 * @module
 */

import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  CancelledNotificationSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ErrorCode as McpErrorCode,
  ReadResourceRequestSchema,
  type ReadResourceResult,
} from '@modelcontextprotocol/sdk/types.js';
import {
  ClientError,
  type DispatchResult,
  isTerminalRunStatus,
  type WorkbenchClient,
} from '../client/index.js';
import { isActionName, isToolActionName } from '../contract/index.js';
import { McpCancels } from './cancels.js';
import { invalidCall, resourceError, toolErrorOf, toolResultOf } from './tool-errors.js';
import { mcpTools } from './tools.js';

/** What the MCP server needs of the API: a {@link WorkbenchClient} or the same shape. */
export type McpBackend = Pick<
  WorkbenchClient,
  | 'createRun'
  | 'setRunNetwork'
  | 'endRun'
  | 'listRuns'
  | 'dispatchStream'
  | 'cancelCall'
  | 'listArtifacts'
  | 'getArtifact'
  | 'openArtifact'
  | 'versions'
>;

/** The server's name and version, as `initialize` reports them. */
export const MCP_SERVER_INFO = { name: 'memql-workbench', version: '0.1.0' } as const;

/** The largest artifact `resources/read` returns inline; larger ones are downloaded. */
export const MCP_RESOURCE_MAX_BYTES = 16 * 1024 * 1024;

const ARTIFACT_URI = /^memql:\/\/artifacts\/([^/?#]+)$/;

const INSTRUCTIONS =
  'memql-workbench gives you a sandboxed Linux workspace per run. Call open_run first and pass ' +
  'its runId to every other tool; files persist across calls within the run. exec runs ' +
  'allowlisted shell commands, with no network unless the run is given hosts (open_run network, ' +
  'set_run_network; within the operator ceiling); fetch downloads a URL into the workspace; ' +
  'promote_artifact hands a file to the user. Paths are relative to the workspace root. ' +
  'End the run with end_run when the work is done.';

/** How the dispatches of one MCP session are recorded (`agentId`, `taskId`). */
export interface McpCallIdentity {
  readonly agentId: string;
  readonly taskId: string;
}

function text(value: string): CallToolResult['content'][number] {
  return { type: 'text', text: value };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** How often a cancel looks again for the command its call has not queued yet, ms. */
const CANCEL_RETRY_MS = 100;

/**
 * Cancels the command call `callId` queued, once it is queued: a cancel can arrive
 * before the call reached the queue. Gives up when the call answers first (`settled`),
 * which is also the end for actions that queue no command.
 */
async function cancelWhenQueued(
  backend: Pick<McpBackend, 'cancelCall'>,
  runId: string,
  callId: string,
  settled: AbortSignal,
): Promise<void> {
  while (!settled.aborted) {
    try {
      await backend.cancelCall(runId, callId);
      return;
    } catch (err) {
      if (!(err instanceof ClientError) || err.code !== 'not_found') return;
    }
    await delay(CANCEL_RETRY_MS, undefined, { signal: settled }).catch(() => undefined);
  }
}

/** Whether artifact bytes are shown as text: a text-like type and valid UTF-8. */
function asText(contentType: string, bytes: Buffer): string | null {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  const textual =
    type.startsWith('text/') ||
    type === 'application/json' ||
    type.endsWith('+json') ||
    type.endsWith('+xml') ||
    type === 'application/xml';
  if (!textual) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  /**
   * Where cancels find their calls; default one registry for this server (a session).
   * The stateless HTTP transport shares one across its servers (see `cancels.ts`).
   */
  readonly cancels?: McpCancels;
  /** The part of a call's cancel key before its request id: the user, over HTTP. */
  readonly cancelScope?: string;
}

/**
 * Builds an MCP server over `backend`. Connect it to a transport (`server.connect`);
 * one server serves one MCP session.
 */
export function createMcpServer(
  backend: McpBackend,
  identity: McpCallIdentity,
  options: McpServerOptions = {},
): Server {
  const server = new Server(MCP_SERVER_INFO, {
    capabilities: { tools: {}, resources: {} },
    instructions: INSTRUCTIONS,
  });

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: mcpTools() }));

  // A tool call's signal aborts both when the client cancels it and when the connection
  // closes; only the first may cancel a command (a command outlives its caller). So the
  // signal only ends the call's request to the API (which then stops waiting and leaves
  // the command to run), and the client's cancel is taken here and ends the command
  // through the API's cancel route.
  const cancels = options.cancels ?? new McpCancels();
  const cancelKey = (id: string | number) => `${options.cancelScope ?? ''}\u0000${String(id)}`;
  server.setNotificationHandler(CancelledNotificationSchema, (notification) => {
    const id = notification.params.requestId;
    if (id !== undefined) cancels.cancel(cancelKey(id));
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    const input = request.params.arguments ?? {};
    if (!isRecord(input)) return invalidCall('the arguments must be an object');
    try {
      switch (name) {
        case 'open_run': {
          const run = await backend.createRun(input as Parameters<McpBackend['createRun']>[0]);
          return {
            content: [text(JSON.stringify({ runId: run.id, run }))],
            structuredContent: { runId: run.id, run },
          };
        }
        case 'end_run': {
          const { runId, status } = input;
          if (typeof runId !== 'string') return invalidCall('runId: expected the run id');
          if (!isTerminalRunStatus(status)) {
            return invalidCall('status: expected succeeded, failed, cancelled or abandoned');
          }
          const ended = await backend.endRun(runId, status);
          return {
            content: [text(JSON.stringify(ended))],
            structuredContent: { ...ended },
          };
        }
        case 'list_runs': {
          const page = await backend.listRuns(input as Parameters<McpBackend['listRuns']>[0]);
          return { content: [text(JSON.stringify(page))], structuredContent: { ...page } };
        }
        case 'fork_run': {
          const { runId, version, label, conversationId } = input;
          if (typeof runId !== 'string')
            return invalidCall('runId: expected the run id from open_run');
          // The API checks the version or label, and answers version_not_found.
          const forked = await backend.versions.fork(runId, {
            ...(typeof version === 'number' ? { version } : {}),
            ...(typeof label === 'string' ? { label } : {}),
            ...(typeof conversationId === 'string' ? { conversationId } : {}),
          } as Parameters<McpBackend['versions']['fork']>[1]);
          const answer = { runId: forked.run.id, run: forked.run, forkedFrom: forked.forkedFrom };
          return { content: [text(JSON.stringify(answer))], structuredContent: answer };
        }
        case 'set_run_network': {
          const { runId, ...network } = input;
          if (typeof runId !== 'string')
            return invalidCall('runId: expected the run id from open_run');
          // The API checks the shape and the operator's ceiling, and answers why not.
          const run = await backend.setRunNetwork(
            runId,
            network as unknown as Parameters<McpBackend['setRunNetwork']>[1],
          );
          const answer = { runId: run.id, network: run.network };
          return { content: [text(JSON.stringify(answer))], structuredContent: answer };
        }
      }
      if (!isActionName(name) || !isToolActionName(name)) {
        return invalidCall(
          `no tool "${name}"; the tools are ${mcpTools()
            .map((t) => t.name)
            .join(', ')}`,
        );
      }
      const { runId, environment, callId, ...args } = input;
      if (typeof runId !== 'string') {
        return invalidCall('runId: expected the run id from open_run');
      }
      if (callId !== undefined && typeof callId !== 'string') {
        return invalidCall('callId: expected a string, or leave it out');
      }
      const progressToken = request.params._meta?.progressToken;
      let progress = 0;
      // One decoder a stream, so a character split across chunks is not mangled.
      const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
      // JSON-RPC ids restart with every session, so they never name a call: a call
      // without its own key gets a fresh one.
      const key = callId ?? `mcp-${randomUUID()}`;
      const settled = new AbortController();
      const forget = cancels.add(cancelKey(extra.requestId), () => {
        forget();
        void cancelWhenQueued(backend, runId, key, settled.signal);
      });
      const dispatched = backend.dispatchStream(
        {
          action: name,
          args,
          runId,
          agentId: identity.agentId,
          taskId: identity.taskId,
          callId: key,
          ...(environment === undefined ? {} : { environment }),
        },
        {
          signal: extra.signal,
          ...(progressToken === undefined
            ? {}
            : {
                onOutput: (stream, chunk) => {
                  progress += chunk.length;
                  void extra
                    .sendNotification({
                      method: 'notifications/progress',
                      params: {
                        progressToken,
                        progress,
                        message: `${stream}: ${decoders[stream].decode(chunk, { stream: true })}`,
                      },
                    })
                    .catch(() => {});
                },
              }),
        },
      );
      let result: DispatchResult;
      try {
        result = await dispatched;
      } finally {
        settled.abort();
        forget();
      }
      return toolResultOf(result, key);
    } catch (err) {
      return toolErrorOf(err);
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const artifacts = await backend.listArtifacts();
    return {
      resources: artifacts.map((a) => ({
        uri: `memql://artifacts/${encodeURIComponent(a.id)}`,
        name: a.name,
        title: `${a.name} (run ${a.runId})`,
        mimeType: a.contentType,
        size: a.size,
      })),
    };
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: 'memql://artifacts/{artifactId}',
        name: 'artifact',
        description: 'A promoted artifact, by the artifactId promote_artifact answered.',
      },
    ],
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const { uri } = request.params;
    const match = ARTIFACT_URI.exec(uri);
    if (match === null) {
      throw new McpError(
        McpErrorCode.InvalidParams,
        `invalid_arguments: "${uri}" is not an artifact; artifacts are memql://artifacts/<artifactId>`,
      );
    }
    const id = decodeURIComponent(match[1]!);
    let record: Awaited<ReturnType<McpBackend['getArtifact']>>;
    try {
      record = await backend.getArtifact(id);
    } catch (err) {
      throw resourceError(err);
    }
    if (record.size > MCP_RESOURCE_MAX_BYTES) {
      throw new McpError(
        McpErrorCode.InvalidParams,
        `payload_too_large: artifact ${id} is ${record.size} bytes, more than ${MCP_RESOURCE_MAX_BYTES} read inline; download it with "memql artifacts download ${id}" or GET /v1/artifacts/${id}/content`,
      );
    }
    const body = await backend.openArtifact(id, { signal: extra.signal }).catch((err: unknown) => {
      throw resourceError(err);
    });
    const chunks: Buffer[] = [];
    for await (const chunk of body.body) chunks.push(Buffer.from(chunk));
    const bytes = Buffer.concat(chunks);
    const shown = asText(record.contentType, bytes);
    const result: ReadResourceResult = {
      contents: [
        shown === null
          ? { uri, mimeType: record.contentType, blob: bytes.toString('base64') }
          : { uri, mimeType: record.contentType, text: shown },
      ],
    };
    return result;
  });

  return server;
}
