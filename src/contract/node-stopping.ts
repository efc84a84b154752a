/**
 * The abort reason a node gives the calls it is serving when it shuts down. A call
 * aborted this way was not given up by its caller: a command it queued is left to run
 * (here or on the workspace's next holder) rather than cancelled.
 *
 * @module
 */

/** The reason on a call's AbortSignal when its node stops. */
export class NodeStoppingError extends Error {
  override readonly name = 'NodeStoppingError';
  constructor(readonly nodeId: string) {
    super(`node "${nodeId}" is stopping`);
  }
}

/** Whether an abort reason says the serving node stops (not that the caller left). */
export function isNodeStopping(reason: unknown): reason is NodeStoppingError {
  return reason instanceof NodeStoppingError;
}
