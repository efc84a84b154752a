/**
 * The MCP converter: a dispatch result, or what a call of the API threw, as MCP says a
 * failure. A tool call's failure is a tool result with `isError: true`, its text the
 * stable code and what to do (the model reads it and tries again), the dispatch failure
 * whole as `structuredContent`; a resource read's is a JSON-RPC error, `InvalidParams`
 * when the request was wrong (a code of category `caller`) and `InternalError` when
 * the node failed (an outage is no bad parameter), its message the code's.
 *
 * @module
 */

import {
  type CallToolResult,
  McpError,
  ErrorCode as McpErrorCode,
} from '@modelcontextprotocol/sdk/types.js';
import { ClientError, type DispatchResult } from '../client/index.js';
import { ERROR_CODES, isErrorCode } from '../contract/index.js';

function text(value: string): CallToolResult['content'][number] {
  return { type: 'text', text: value };
}

/**
 * A dispatch result as a tool result: refusals and failures are tool errors. A failure
 * names the call's `callId`, so the model can repeat the call with it to learn the
 * outcome (an answer lost to an outage, say).
 */
export function toolResultOf(result: DispatchResult, callId?: string): CallToolResult {
  const key = callId === undefined ? {} : { callId };
  if (result.ok) {
    return {
      content: [text(JSON.stringify(result.payload))],
      structuredContent: { ...result, ...key },
    };
  }
  const detail = result.payload === undefined ? '' : `\n${JSON.stringify(result.payload)}`;
  const named = callId === undefined ? '' : `\n(this call's callId: ${callId})`;
  return {
    isError: true,
    content: [text(`${result.message}${detail}${named}`)],
    structuredContent: { ...result, ...key },
  };
}

/** The message of a {@link ClientError}, starting with its code as every refusal does. */
function codedMessage(err: ClientError): string {
  return err.message.startsWith(`${err.code}:`) ? err.message : `${err.code}: ${err.message}`;
}

/** A thrown API error (a bad run id, a bad token) as a tool error the model can read. */
export function toolErrorOf(err: unknown): CallToolResult {
  if (err instanceof ClientError) {
    const message = codedMessage(err);
    const payload = err.payload === undefined ? {} : { payload: err.payload };
    return {
      isError: true,
      content: [text(message)],
      structuredContent: { ok: false, errorCode: err.code, message, ...payload },
    };
  }
  throw err;
}

/** A tool call whose arguments are wrong, as its `invalid_arguments` tool error. */
export function invalidCall(message: string): CallToolResult {
  return toolResultOf({
    ok: false,
    errorCode: 'invalid_arguments',
    message: `invalid_arguments: ${message}`,
  });
}

/** A refused resource read, as its JSON-RPC error (see the module comment). */
export function resourceError(err: unknown): unknown {
  if (!(err instanceof ClientError)) return err;
  const caller = isErrorCode(err.code) && ERROR_CODES[err.code].category === 'caller';
  return new McpError(
    caller ? McpErrorCode.InvalidParams : McpErrorCode.InternalError,
    codedMessage(err),
  );
}
