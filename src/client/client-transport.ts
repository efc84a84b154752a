/**
 * The HTTP exchange under {@link WorkbenchClient}: one request with the bearer token,
 * a non-2xx answer turned into a {@link ClientError}, JSON read and checked for the
 * fields a method returns.
 *
 * @module
 */

import { ClientError, errorFromResponse, isAbortError, unreachableError } from './client-error.js';
import { checkedId, idSegment } from './id-checks.js';

/** Options of one request. */
export interface RequestOptions {
  readonly body?: unknown;
  /** Bytes sent as they are (`application/octet-stream`), instead of a JSON `body`. */
  readonly bytes?: Uint8Array | AsyncIterable<Uint8Array>;
  readonly signal?: AbortSignal;
  /** Accept this content type instead of reading JSON. */
  readonly raw?: boolean;
}

/** Sends the client's requests. */
export class ClientTransport {
  /** The API's base address, without a trailing `/` or `/v1`. */
  readonly baseUrl: string;
  private readonly token: string;
  private readonly fetchImpl: typeof fetch;

  constructor(options: { baseUrl: string; token: string; fetch?: typeof fetch }) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
    this.token = options.token;
    this.fetchImpl = options.fetch ?? fetch;
  }

  /** One request whose answer is JSON. */
  async json(method: string, path: string, options: RequestOptions = {}) {
    const response = await this.send(method, path, options);
    const text = await response.text();
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw notShaped(path, 'JSON');
    }
  }

  /** One request; a non-2xx answer becomes a {@link ClientError}. */
  async send(method: string, path: string, options: RequestOptions): Promise<Response> {
    const url = `${this.baseUrl}${path}`;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.token}`,
      accept: options.raw ? '*/*' : 'application/json',
    };
    const init: RequestInit = { method, headers };
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(options.body);
    }
    if (options.bytes !== undefined) {
      headers['content-type'] = 'application/octet-stream';
      if (options.bytes instanceof Uint8Array) {
        init.body = options.bytes;
      } else {
        // A streamed body: sent as it is read, never held whole.
        init.body = options.bytes as unknown as ReadableStream;
        (init as RequestInit & { duplex: 'half' }).duplex = 'half';
      }
    }
    if (options.signal) init.signal = options.signal;
    let response: Response;
    try {
      response = await this.fetchImpl(url, init);
    } catch (err) {
      if (isAbortError(err)) throw err;
      throw unreachableError(this.baseUrl, err);
    }
    if (!response.ok) throw errorFromResponse(response.status, await response.text());
    return response;
  }
}

/** The `?status=&limit=&before=` of a list page; empty when nothing is selected. */
export function pageSearch(options: {
  readonly status?: string;
  readonly limit?: number;
  readonly before?: string;
}): string {
  const query = new URLSearchParams();
  if (options.status !== undefined) query.set('status', options.status);
  if (options.limit !== undefined) query.set('limit', String(options.limit));
  if (options.before !== undefined) query.set('before', checkedId('before', options.before));
  return query.size > 0 ? `?${query}` : '';
}

/**
 * An id as a path segment: checked for length (`invalid_arguments` naming `field` and
 * `MAX_ID_CHARS`, before anything is sent), then encoded.
 */
export function enc(segment: string, field = 'id'): string {
  return idSegment(field, segment);
}

/** The error of an answer that is not what the route gives. */
export function notShaped(path: string, expected: string): ClientError {
  return new ClientError(
    'internal',
    `internal: ${path} did not answer with ${expected}; is the address an agent node's API?`,
  );
}

/** `body[key]`, or an `internal` error naming the missing field. */
export function field<T>(body: unknown, key: string): T {
  if (typeof body === 'object' && body !== null && key in body) {
    return (body as Record<string, unknown>)[key] as T;
  }
  throw notShaped(key, `a "${key}" field`);
}
