import type { Authority, DispatchResult, OutputSink } from '../contract/index.js';

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
 * workbench's internals.
 */
export interface DispatchTarget {
  handleDispatch(
    request: unknown,
    authority: Authority | undefined,
    options?: DispatchCallOptions,
  ): Promise<DispatchResult>;
}
