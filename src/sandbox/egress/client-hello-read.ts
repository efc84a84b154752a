/**
 * Reads a tunnel's first bytes until they hold a whole ClientHello (or show they are
 * not one), without passing anything on: the bytes read are handed back so the
 * caller forwards them, or replays them into its own TLS server, once the server
 * name is judged.
 *
 * @module
 */

import type { Socket } from 'node:net';
import { type ClientHelloPeek, MAX_CLIENT_HELLO, peekClientHello } from './sni.js';

/** What the client sent first: the verdict on it and every byte read. */
export interface ClientHelloRead {
  /** `closed`: the client went away before sending a whole ClientHello. */
  readonly peek: ClientHelloPeek | { readonly kind: 'closed' } | { readonly kind: 'timeout' };
  readonly bytes: Buffer;
}

/**
 * Reads from `socket` (after `head`, bytes that came with the CONNECT) until the
 * ClientHello is whole, the socket closes, or `timeoutMs` passes. Leaves the socket
 * paused with nothing consumed beyond what `bytes` holds.
 */
export function readClientHello(
  socket: Socket,
  head: Buffer,
  timeoutMs: number,
): Promise<ClientHelloRead> {
  return new Promise((resolve) => {
    let bytes = head;
    let settled = false;
    const settle = (peek: ClientHelloRead['peek']) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.off('end', onClose);
      socket.pause();
      resolve({ peek, bytes });
    };
    const judge = () => {
      const peek = peekClientHello(bytes);
      if (peek.kind !== 'incomplete') settle(peek);
      else if (bytes.length > MAX_CLIENT_HELLO + 5 * 8) {
        settle({ kind: 'malformed', problem: 'the ClientHello is longer than the proxy reads' });
      }
    };
    const onData = (chunk: Buffer) => {
      bytes = bytes.length === 0 ? chunk : Buffer.concat([bytes, chunk]);
      judge();
    };
    const onClose = () => settle({ kind: 'closed' });
    const timer = setTimeout(() => settle({ kind: 'timeout' }), timeoutMs);
    timer.unref();
    if (bytes.length > 0) judge();
    if (settled) return;
    socket.on('data', onData);
    socket.once('end', onClose);
    socket.once('close', onClose);
    socket.resume();
  });
}
