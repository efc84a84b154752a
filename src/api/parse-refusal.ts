/**
 * The answer to a request the HTTP server could not read at all: a request line or
 * headers over the server's limit (by default `node:http`'s 16 KiB), or bytes that are
 * no HTTP. `node:http` answers those itself with a bare status line (a 431 or a 400,
 * no body), which a client can only report as `internal: HTTP 431`. Here they are
 * answered in the API's error shape with a stable code, as every other refusal is,
 * through the same converter (`http-errors.ts`).
 *
 * @module
 */

import { maxHeaderSize } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  type DispatchFailure,
  errorResult,
  httpStatusOf,
  MAX_ID_CHARS,
} from '../contract/index.js';
import { rawRefusal } from './http-errors.js';

/**
 * The status line and body for a parse error's `code` (a `HPE_*` code of llhttp): always
 * `invalid_arguments`, with the status HTTP names for headers too large (431) and a
 * request too slow (408), else the code's own. Pure.
 */
export function parseRefusal(
  code: string | undefined,
  headerLimitBytes: number,
): { status: number; reason: string; body: DispatchFailure } {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return {
      status: 431,
      reason: 'Request Header Fields Too Large',
      body: errorResult(
        'invalid_arguments',
        `invalid_arguments: the request line and headers are over this server's limit of ${headerLimitBytes} bytes; an id in a path is at most ${MAX_ID_CHARS} characters (MAX_ID_CHARS), and a long value belongs in a JSON body`,
        { limit: headerLimitBytes },
      ),
    };
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return {
      status: 408,
      reason: 'Request Timeout',
      body: errorResult(
        'invalid_arguments',
        'invalid_arguments: the request line and headers did not arrive in time; send the request again',
      ),
    };
  }
  return {
    status: httpStatusOf('invalid_arguments'),
    reason: 'Bad Request',
    body: errorResult(
      'invalid_arguments',
      'invalid_arguments: the request is not well-formed HTTP/1.1; nothing was done',
    ),
  };
}

/** A `clientError` listener for an HTTP server: the refusal above, then the connection closes. */
export function answerParseError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // A connection the caller already broke gets no answer, nor one whose previous
  // answer is being written (its status line is out already).
  const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || answering?.headersSent) {
    socket.destroy();
    return;
  }
  const { status, reason, body } = parseRefusal(err.code, maxHeaderSize);
  socket.end(rawRefusal(status, reason, body));
}
