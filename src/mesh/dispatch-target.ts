import type { Duplex } from 'node:stream';
import type { Authority, DispatchResult, Envelope, OutputSink } from '../contract/index.js';

/** Per-call options of a {@link DispatchTarget}. */
export interface DispatchCallOptions {
  /** Aborts a running `exec` or `fetch`. */
  signal?: AbortSignal;
  /** Receives `exec` output as it arrives. */
  onOutput?: OutputSink;
}

/**
 * Something that answers `workbenchHost` calls: the workbench host
 * (`WorkbenchHost.handleDispatch`), in-process or behind a mesh stream. Declared
 * here, structurally, so the mesh and the agent depend on the shape and not on the
 * workbench's internals. It takes the envelope as parsed and admitted at the
 * process's boundary (the agent dispatcher, or the mesh service for a forwarded call).
 */
export interface DispatchTarget {
  handleDispatch(
    envelope: Envelope,
    authority: Authority | undefined,
    options?: DispatchCallOptions,
  ): Promise<DispatchResult>;
}

/** What a workbench node answers when told a run ended or was deleted (`WorkbenchHost.releaseRun`). */
export interface RunReleaseAnswer {
  /** False when the run still runs there (nothing was touched). */
  readonly released: boolean;
  /** True when a command of the run still ran: its sandbox goes as soon as it ends. */
  readonly afterRunning: boolean;
}

/**
 * Something that lets go of what it keeps of an ended or deleted run: its warm
 * sandbox (gone when the promise resolves), its warm copy and its upload stages.
 */
export interface RunReleaseTarget {
  releaseRun(runId: string): Promise<RunReleaseAnswer>;
}

/**
 * Something that opens a connection to a port in a run's sandbox
 * (`WorkbenchHost.openPort`): for `ownerUserId`, the run's owner (another user's run
 * is `not_found`, and no connection is made); `port_not_listening` when nothing
 * listens there.
 */
export interface PortTarget {
  openPort(runId: string, port: number, ownerUserId: string): Promise<Duplex>;
}
