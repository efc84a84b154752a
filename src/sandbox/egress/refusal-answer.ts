/**
 * A refusal written to the client: as an HTTP response on a request the proxy is
 * answering, or as raw bytes on a CONNECT socket before the tunnel opens.
 *
 * @module
 */

import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  type Refusal,
  refusalBody,
  refusalHeader,
  refusalPhrase,
  refusalResponse,
  refusalStatus,
} from './refusal.js';

/** Answers `res` with the refusal (a response already begun is cut instead). */
export function answerRefusal(res: ServerResponse, refusal: Refusal, runId: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = Buffer.from(refusalBody(refusal, runId));
  res.writeHead(refusalStatus(refusal.reason), refusalPhrase(refusal), {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': body.length,
    'x-memql-egress': refusalHeader(refusal.reason),
  });
  res.end(body);
}

/** Writes the refusal on a raw socket and closes it. */
export function refuseSocket(socket: Duplex, refusal: Refusal, runId: string): void {
  if (socket.destroyed) return;
  socket.end(refusalResponse(refusal, runId));
}

/**
 * A fatal TLS `access_denied` alert: how a tunnel already opened says no to the
 * ClientHello it was sent (clients print "tlsv1 alert access denied").
 */
export const TLS_ACCESS_DENIED = Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x31]);
