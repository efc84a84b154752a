/**
 * The options of {@link WorkbenchClient}'s methods, and the tool function a tool loop
 * gets from it.
 *
 * @module
 */

import type { Writable } from 'node:stream';
import type { DispatchResult } from '../contract/index.js';
import type { ProgressListener } from './artifact-download.js';
import { checkedId, checkedPath } from './id-checks.js';
import type { OutputStream } from './ndjson-stream.js';

/** How to reach the API. */
export interface WorkbenchClientOptions {
  /**
   * The API's base address, such as `http://127.0.0.1:8080`; a trailing `/v1` (as
   * `npm start` prints the API address) is accepted and dropped.
   */
  readonly baseUrl: string;
  /** A bearer token; every `/v1` route needs one. */
  readonly token: string;
  /** The `fetch` to use; the global one by default. */
  readonly fetch?: typeof fetch;
}

/** Options of a streaming dispatch. */
export interface DispatchStreamOptions {
  /** Called with each chunk of a running command's output, as it happens. */
  readonly onOutput?: (stream: OutputStream, chunk: Buffer) => void;
  /**
   * Aborting closes the connection. A command the call queued goes on unless
   * `cancelOnDisconnect` is set; cancel one explicitly with
   * {@link WorkbenchClient.cancelCall} or {@link WorkbenchClient.cancelCommand}.
   */
  readonly signal?: AbortSignal;
  /**
   * Cancel the call's command when the connection closes before the answer (a CLI's
   * Ctrl-C). Default false: the command belongs to the queue, not to the connection.
   */
  readonly cancelOnDisconnect?: boolean;
}

/** What {@link WorkbenchClient.build} builds. */
export interface BuildRequest {
  /** Git ref to check out first; the workspace's current checkout when omitted. */
  readonly ref?: string;
  /** npm script to run after `npm ci`; `build` when omitted. */
  readonly script?: string;
  /** An id for the call, recorded with it (and its audit events). */
  readonly callId?: string;
}

/** Options of an artifact download. */
export interface DownloadOptions {
  /** Where the bytes go: a file path (created or replaced) or a writable stream (left open). */
  readonly to: string | Writable;
  /** Called as bytes arrive. */
  readonly onProgress?: ProgressListener;
  readonly signal?: AbortSignal;
}

/** Options of the file stream calls. */
export interface FileCallOptions {
  /** Recorded on the calls it is made of, as a dispatch's `agentId` is. */
  readonly agentId?: string;
  readonly taskId?: string;
  readonly signal?: AbortSignal;
}

/** The `?path=&agentId=&taskId=` of a file stream call. */
export function fileQuery(path: string, options: FileCallOptions): URLSearchParams {
  const query = new URLSearchParams({ path: checkedPath('path', path) });
  if (options.agentId !== undefined) query.set('agentId', checkedId('agentId', options.agentId));
  if (options.taskId !== undefined) query.set('taskId', checkedId('taskId', options.taskId));
  return query;
}

/** A tool loop's one tool: run an action in the run's workspace. */
export type WorkbenchHostFn = (
  action: string,
  args: unknown,
  call?: { readonly callId?: string; readonly environment?: unknown },
) => Promise<DispatchResult>;
