/**
 * `fetchToFile`: the downloader behind the `fetch` action.
 *
 * The node downloads on an agent's behalf from inside the platform's network, so
 * every hop (the first URL and each redirect) is parsed, resolved and vetted by
 * the address policy before a socket is opened, and the socket goes to exactly
 * the vetted address: the request names the IP, with the URL's host in the
 * `Host` header and as the TLS server name. Nothing is resolved twice.
 *
 * Where the bytes land is the caller's business (file actions own workspace
 * paths): it hands in a {@link FetchDestination} that is opened only once a 2xx
 * answer within the size limit arrives, and told to discard partial output when
 * the transfer fails after that.
 *
 * @module
 */

import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { Writable } from 'node:stream';
import type { CidrRange } from '../../contract/index.js';
import { FetchError } from './error.js';
import { type Hop, networkError, request } from './request.js';
import { type HostResolver, parseHopUrl, systemResolver, vetTarget } from './target.js';

/** Where a download goes. Both methods are called at most once. */
export interface FetchDestination {
  /**
   * Opens the target for writing. Called only after the final answer is a 2xx
   * whose announced length fits, so refused and failed fetches create nothing.
   * An error thrown here reaches the caller of `fetchToFile` unchanged.
   */
  open(): Promise<Writable>;
  /**
   * Discards what `open` created. Called (after the writable is destroyed) when
   * the body could not be written completely: too large, timed out, cut off.
   * Its own errors are ignored; the caller sees the failure that caused it.
   */
  abort(): Promise<void>;
}

/** Options of {@link fetchToFile}. */
export interface FetchToFileOptions {
  /** Absolute `http:` or `https:` URL without credentials. */
  readonly url: string;
  /** Where the body goes. */
  readonly destination: FetchDestination;
  /** Largest body accepted, in bytes (positive). */
  readonly maxBytes: number;
  /** Time limit of the whole transfer (DNS, every hop, the body), in milliseconds. */
  readonly timeoutMs: number;
  /** Redirects followed at most. Default {@link DEFAULT_MAX_REDIRECTS}; 0 refuses any. */
  readonly maxRedirects?: number;
  /**
   * CIDR ranges exempt from the address policy (`MEMQL_FETCH_ALLOW_PRIVATE`), parsed
   * when the configuration was loaded and taken as given. Cloud metadata addresses
   * stay refused. Default none.
   */
  readonly allowPrivate?: readonly CidrRange[];
  /** Resolves host names. Default {@link systemResolver} (`getaddrinfo`). */
  readonly resolver?: HostResolver;
  /** Cancels the fetch (`fetch_failed`, category `cancelled`). */
  readonly signal?: AbortSignal;
}

/** What a successful fetch reports. */
export interface FetchToFileResult {
  /** The final HTTP status (2xx). */
  readonly status: number;
  /** Body bytes written. */
  readonly bytes: number;
  /** The `Content-Type` header of the final answer, or null. */
  readonly contentType: string | null;
  /** The URL that answered, after redirects. */
  readonly finalUrl: string;
  /** The vetted address that was connected to for the final hop. */
  readonly address: string;
  /** Redirects followed. */
  readonly redirects: number;
}

/** Redirects followed when the caller does not say. */
export const DEFAULT_MAX_REDIRECTS = 5;

/** Largest accepted `maxRedirects`. */
export const MAX_REDIRECTS_LIMIT = 20;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** setTimeout's ceiling; longer delays fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Downloads `url` into the destination, following redirects, within the size and
 * time limits. Throws a {@link FetchError}: `fetch_blocked` (scheme, credentials,
 * or an address the policy refuses, on any hop), `fetch_failed` (DNS, connection,
 * TLS, timeout, a non-2xx status, redirect trouble), `payload_too_large`
 * (announced or actual body over `maxBytes`) or `invalid_arguments` (options).
 * Errors from the destination itself pass through unchanged.
 */
export async function fetchToFile(options: FetchToFileOptions): Promise<FetchToFileResult> {
  checkOptions(options);
  const allow = options.allowPrivate ?? [];
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const resolver = options.resolver ?? systemResolver;
  const first = parseHopUrl(options.url, undefined, 0);

  const hop = { url: first.href, redirects: 0 };
  const controller = new AbortController();
  const signal = controller.signal;
  const timer = setTimeout(() => {
    controller.abort(
      new FetchError(
        'fetch_failed',
        `fetch_failed: the transfer took longer than ${options.timeoutMs} ms (at ${hop.url}); try a larger timeoutMs or a faster source`,
        { ...hop, category: 'timeout' },
      ),
    );
  }, options.timeoutMs);
  const onCancel = () =>
    controller.abort(
      new FetchError('fetch_failed', `fetch_failed: the fetch of ${hop.url} was cancelled`, {
        ...hop,
        category: 'cancelled',
      }),
    );
  if (options.signal?.aborted) onCancel();
  options.signal?.addEventListener('abort', onCancel, { once: true });
  const raceResolver: HostResolver = (host) => raceAbort(resolver(host), signal);

  const visited = new Set<string>();
  let url = first;
  try {
    for (;;) {
      hop.url = url.href;
      visited.add(withoutHash(url));
      const target = await vetTarget(url, raceResolver, allow, hop.redirects);
      const response = await request(target, signal);
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (REDIRECT_STATUSES.has(status) && location !== undefined) {
        response.destroy();
        url = nextHop(url, location, status, hop.redirects, maxRedirects, visited);
        hop.redirects += 1;
        continue;
      }
      if (status < 200 || status > 299) {
        response.destroy(); // the body is never read, so it cannot leak into an error
        throw new FetchError(
          'fetch_failed',
          `fetch_failed: ${url.href} answered HTTP ${status}; nothing was saved`,
          { ...hop, category: 'status', status },
        );
      }
      const bytes = await download(response, options, hop, signal);
      return {
        status,
        bytes,
        contentType: response.headers['content-type'] ?? null,
        finalUrl: url.href,
        address: target.address,
        redirects: hop.redirects,
      };
    }
  } catch (err) {
    throw translate(err, signal, hop);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onCancel);
  }
}

/** Marks an error that came from the destination, so it is passed through as is. */
class DestinationFailure {
  constructor(readonly error: unknown) {}
}

function nextHop(
  from: URL,
  location: string,
  status: number,
  redirects: number,
  maxRedirects: number,
  visited: Set<string>,
): URL {
  if (redirects >= maxRedirects) {
    throw new FetchError(
      'fetch_failed',
      `fetch_failed: more than ${maxRedirects} redirect(s), the last from ${from.href} (HTTP ${status}); fetch the final URL directly`,
      { url: from.href, category: 'too_many_redirects', status, redirects },
    );
  }
  const next = parseHopUrl(location, from, redirects + 1);
  if (visited.has(withoutHash(next))) {
    throw new FetchError(
      'fetch_failed',
      `fetch_failed: redirect loop: ${from.href} redirects back to ${next.href}; the server's redirects never end`,
      { url: next.href, category: 'redirect_loop', status, redirects: redirects + 1 },
    );
  }
  return next;
}

/** Streams the body into the destination, counting bytes against the limit. */
async function download(
  response: IncomingMessage,
  options: FetchToFileOptions,
  hop: Hop,
  signal: AbortSignal,
): Promise<number> {
  const { maxBytes, destination } = options;
  const announced = parseContentLength(response.headers['content-length']);
  if (announced !== undefined && announced > maxBytes) {
    response.destroy();
    throw new FetchError(
      'payload_too_large',
      `payload_too_large: ${hop.url} announces ${announced} bytes, over the ${maxBytes}-byte limit; nothing was saved`,
      { ...hop, category: 'content_length', maxBytes, contentLength: announced },
    );
  }
  let writable: Writable;
  try {
    writable = await destination.open();
  } catch (err) {
    response.destroy();
    throw new DestinationFailure(err);
  }
  // Only the destination's own failures land here: on any other failure it is
  // destroyed without an error, so the two never mix.
  let destinationError: unknown;
  writable.on('error', (err) => {
    destinationError ??= err;
  });
  let bytes = 0;
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > maxBytes) {
        throw new FetchError(
          'payload_too_large',
          `payload_too_large: the body of ${hop.url} exceeds the ${maxBytes}-byte limit; the partial file was discarded`,
          { ...hop, category: 'body', maxBytes },
        );
      }
      if (destinationError !== undefined) throw new DestinationFailure(destinationError);
      if (!writable.write(chunk)) await once(writable, 'drain', { signal });
    }
    await new Promise<void>((resolve, reject) => {
      writable.end((err?: Error | null) => (err ? reject(err) : resolve()));
    });
    if (destinationError !== undefined) throw new DestinationFailure(destinationError);
    return bytes;
  } catch (err) {
    // Decide before destroying: a write still in flight fails with "destroyed" afterwards.
    const fromDestination =
      destinationError !== undefined && !(err instanceof FetchError) && !signal.aborted;
    response.destroy();
    writable.destroy();
    await destination.abort().catch(() => undefined);
    throw fromDestination ? new DestinationFailure(destinationError) : err;
  }
}

/** Turns anything thrown into a {@link FetchError}, except the destination's own errors. */
function translate(err: unknown, signal: AbortSignal, hop: Hop): unknown {
  if (err instanceof DestinationFailure) return err.error;
  if (err instanceof FetchError) return err;
  if (signal.aborted && signal.reason instanceof FetchError) return signal.reason;
  return networkError(err, hop);
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

function parseContentLength(header: string | undefined): number | undefined {
  if (header === undefined || !/^[0-9]+$/.test(header.trim())) return undefined;
  return Number(header.trim());
}

function withoutHash(url: URL): string {
  return url.href.slice(0, url.href.length - url.hash.length);
}

function invalidOption(name: string, expected: string): FetchError {
  return new FetchError('invalid_arguments', `invalid_arguments: ${name} must be ${expected}`, {
    category: 'options',
  });
}

function checkOptions(options: FetchToFileOptions): void {
  if (typeof options.url !== 'string') throw invalidOption('url', 'a string');
  const d = options.destination as Partial<FetchDestination> | undefined;
  if (typeof d?.open !== 'function' || typeof d.abort !== 'function') {
    throw invalidOption('destination', 'an object with open() and abort()');
  }
  if (!Number.isSafeInteger(options.maxBytes) || options.maxBytes < 1) {
    throw invalidOption('maxBytes', 'a positive whole number of bytes');
  }
  if (
    !Number.isSafeInteger(options.timeoutMs) ||
    options.timeoutMs < 1 ||
    options.timeoutMs > MAX_TIMER_MS
  ) {
    throw invalidOption('timeoutMs', `a whole number of milliseconds from 1 to ${MAX_TIMER_MS}`);
  }
  const r = options.maxRedirects;
  if (r !== undefined && !(Number.isSafeInteger(r) && r >= 0 && r <= MAX_REDIRECTS_LIMIT)) {
    throw invalidOption('maxRedirects', `a whole number from 0 to ${MAX_REDIRECTS_LIMIT}`);
  }
}
