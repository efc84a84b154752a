/**
 * `client.processes`: a run's background processes over the process routes (see
 * `api/process-routes.ts`). Every method throws a `ClientError` with the stable code
 * when the route refuses (`process_not_found`, `process_not_running`, `process_limit`,
 * ...). {@link ProcessClient.follow} re-attaches from any offsets: pass the ones the last
 * chunk it gave reached.
 *
 * @module
 */

import type {
  OutputStream,
  ProcessOutputPayload,
  ProcessSignal,
  ProcessStartPayload,
  ProcessView,
  ProcessWritePayload,
} from '../contract/index.js';
import { ClientError } from './client-error.js';
import { type ClientTransport, enc, field, notShaped } from './client-transport.js';
import { NdjsonSplitter } from './ndjson-stream.js';

/** What {@link ProcessClient.start} starts. */
export interface ProcessStartRequest {
  command: string;
  cwd?: string;
  env?: Record<string, string>;
  /** A terminal of this size as its stdin, stdout and stderr. */
  pty?: { cols: number; rows: number };
  /** The idempotency key: the same key and command give the same process again. */
  callId?: string;
}

/** One piece of a followed process's output. */
export interface FollowedOutput {
  stream: OutputStream;
  /** Where the bytes start in their stream. */
  offset: number;
  bytes: Buffer;
}

/** Options of {@link ProcessClient.follow}. */
export interface FollowOptions {
  stdoutOffset?: number;
  stderrOffset?: number;
  signal?: AbortSignal;
}

/** See the module comment. */
export class ProcessClient {
  constructor(private readonly http: ClientTransport) {}

  private path(runId: string, processId?: string, tail = ''): string {
    const base = `/v1/runs/${enc(runId, 'runId')}/processes`;
    return processId === undefined ? base : `${base}/${enc(processId, 'processId')}${tail}`;
  }

  /** Starts a background process in the run's sandbox; answers at once. */
  async start(runId: string, request: ProcessStartRequest): Promise<ProcessStartPayload> {
    const body = await this.http.json('POST', this.path(runId), { body: request });
    return field<ProcessStartPayload>(body, 'process');
  }

  /** The run's processes, newest first. */
  async list(
    runId: string,
    options: { running?: boolean; limit?: number } = {},
  ): Promise<ProcessView[]> {
    const query = new URLSearchParams();
    if (options.running) query.set('running', 'true');
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    const q = query.size > 0 ? `?${query}` : '';
    return field<ProcessView[]>(
      await this.http.json('GET', `${this.path(runId)}${q}`),
      'processes',
    );
  }

  /** One process. */
  async get(runId: string, processId: string): Promise<ProcessView> {
    return field<ProcessView>(await this.http.json('GET', this.path(runId, processId)), 'process');
  }

  /** A piece of one stream from `offset` (default 0); its `next` is the next read's offset. */
  async output(
    runId: string,
    processId: string,
    options: {
      stream?: OutputStream;
      offset?: number;
      maxBytes?: number;
      encoding?: 'utf8' | 'base64';
    } = {},
  ): Promise<ProcessOutputPayload> {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(options)) if (v !== undefined) query.set(k, String(v));
    const q = query.size > 0 ? `?${query}` : '';
    const body = await this.http.json('GET', `${this.path(runId, processId, '/output')}${q}`);
    if (typeof body !== 'object' || body === null || !('next' in body)) {
      throw notShaped('process output', 'a process_output answer');
    }
    return body as ProcessOutputPayload;
  }

  /** Writes to its standard input; `eof` closes it after. */
  async write(
    runId: string,
    processId: string,
    stdin: string,
    options: { eof?: boolean } = {},
  ): Promise<ProcessWritePayload> {
    const body = await this.http.json('POST', this.path(runId, processId, '/stdin'), {
      body: { stdin, ...(options.eof ? { eof: true } : {}) },
    });
    return body as ProcessWritePayload;
  }

  /** Closes its standard input. */
  async closeInput(runId: string, processId: string): Promise<void> {
    await this.http.json('POST', this.path(runId, processId, '/stdin'), { body: { eof: true } });
  }

  /** Resizes its terminal (a process started with `pty`, or a shell). */
  async resize(runId: string, processId: string, cols: number, rows: number): Promise<ProcessView> {
    const body = await this.http.json('POST', this.path(runId, processId, '/resize'), {
      body: { cols, rows },
    });
    return field<ProcessView>(body, 'process');
  }

  /**
   * Opens a login shell on a terminal in the run's sandbox (a person token only: an
   * agent token is refused `person_required`); drive it with {@link write},
   * {@link resize} and {@link follow}.
   */
  async shell(
    runId: string,
    size: { cols: number; rows: number; cwd?: string },
  ): Promise<ProcessStartPayload> {
    const body = await this.http.json('POST', `/v1/runs/${enc(runId, 'runId')}/shell`, {
      body: size,
    });
    return field<ProcessStartPayload>(body, 'process');
  }

  /** Sends a signal (default `SIGTERM`) to its process group. */
  async signal(runId: string, processId: string, signal?: ProcessSignal): Promise<ProcessView> {
    const body = await this.http.json('POST', this.path(runId, processId, '/signal'), {
      body: signal === undefined ? {} : { signal },
    });
    return field<ProcessView>(body, 'process');
  }

  /** Waits up to `timeoutMs` for its end; the answer's `status` says whether it came. */
  async wait(runId: string, processId: string, timeoutMs?: number): Promise<ProcessView> {
    const body = await this.http.json('POST', this.path(runId, processId, '/wait'), {
      body: timeoutMs === undefined ? {} : { timeoutMs },
    });
    return field<ProcessView>(body, 'process');
  }

  /**
   * Follows both streams live from the given offsets until the process ends: yields each
   * piece as it comes, and returns the process as it ended. Aborting `signal` stops the
   * follow (the process goes on).
   */
  async *follow(
    runId: string,
    processId: string,
    options: FollowOptions = {},
  ): AsyncGenerator<FollowedOutput, ProcessView> {
    const query = new URLSearchParams({ follow: 'true' });
    if (options.stdoutOffset !== undefined) query.set('stdoutOffset', String(options.stdoutOffset));
    if (options.stderrOffset !== undefined) query.set('stderrOffset', String(options.stderrOffset));
    const path = `${this.path(runId, processId, '/output')}?${query}`;
    const response = await this.http.send('GET', path, {
      raw: true,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (response.body === null) throw notShaped(path, 'a stream');
    const splitter = new NdjsonSplitter();
    const lines = async function* (body: AsyncIterable<Uint8Array>) {
      for await (const chunk of body) yield* splitter.push(chunk);
      yield* splitter.end();
    };
    for await (const text of lines(response.body as AsyncIterable<Uint8Array>)) {
      const line = JSON.parse(text) as Record<string, unknown>;
      if (line.type === 'output') {
        yield {
          stream: line.stream as OutputStream,
          offset: Number(line.offset),
          bytes: Buffer.from(String(line.data), 'base64'),
        };
      } else if (line.type === 'end') {
        return line.process as ProcessView;
      } else if (line.type === 'error') {
        throw new ClientError(String(line.errorCode) as ClientError['code'], String(line.message));
      }
    }
    throw new ClientError(
      'unavailable',
      'unavailable: the follow ended before the process did; follow again from the offsets reached',
    );
  }
}
