/**
 * One HTTP exchange with a vetted target: the socket goes to the vetted IP, and
 * the URL's host travels only in the `Host` header and as the TLS server name
 * (SNI and certificate check), so nothing resolves the name a second time.
 *
 * @module
 */

import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { FetchError } from './error.js';
import { systemCode, type VettedTarget } from './target.js';

const USER_AGENT = 'memql-workbench-fetch/1';

/** Where a fetch is, for errors: the hop's URL and the redirects followed to reach it. */
export interface Hop {
  /** The URL of the current hop. */
  readonly url: string;
  /** Redirects followed so far. */
  readonly redirects: number;
}

/** Connects to the vetted address and sends the GET; resolves with the answer's head. */
export function request(target: VettedTarget, signal: AbortSignal): Promise<IncomingMessage> {
  const options: https.RequestOptions = {
    host: target.address,
    family: target.family,
    port: target.port,
    path: `${target.url.pathname}${target.url.search}`,
    method: 'GET',
    setHost: false,
    headers: {
      host: target.url.host,
      'user-agent': USER_AGENT,
      accept: '*/*',
      'accept-encoding': 'identity',
      connection: 'close',
    },
    agent: false, // no pooled socket is ever reused for another host
    signal,
    lookup: pinnedLookup(target), // defence in depth: the host is already an IP
  };
  return new Promise((resolve, reject) => {
    const req =
      target.url.protocol === 'https:'
        ? https.request(
            target.isName
              ? { ...options, servername: target.hostname.replace(/\.$/, '') }
              : options,
          )
        : http.request(options);
    req.once('error', reject);
    req.once('response', (response) => {
      // Later socket errors surface on the response stream; keep them off the process.
      req.on('error', () => undefined);
      resolve(response);
    });
    req.end();
  });
}

/** A lookup that can only ever answer the vetted address. */
function pinnedLookup(target: VettedTarget): LookupFunction {
  const { address, family } = target;
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/** A socket-level failure (refused, reset, TLS) as `fetch_failed`. */
export function networkError(err: unknown, hop: Hop): FetchError {
  const errno = systemCode(err);
  const tls =
    errno !== undefined &&
    /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH)/.test(errno);
  return new FetchError(
    'fetch_failed',
    tls
      ? `fetch_failed: the TLS handshake with ${hop.url} failed (${errno}); the server's certificate is not trusted for this host`
      : `fetch_failed: the connection to ${hop.url} failed${errno === undefined ? '' : ` (${errno})`}; check that the server is up`,
    { ...hop, category: tls ? 'tls' : 'connection', ...(errno && { errno }) },
    { cause: err },
  );
}
