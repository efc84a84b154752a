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

/**
 * `payload.reason` of an `unavailable` refusal given before anything of the call ran,
 * because the node drains: the call may be sent to another replica as it is.
 */
export const NODE_DRAINING = 'node_draining';

/**
 * `payload.reason` of an `unavailable` refusal given before anything of the call ran,
 * because the run's workspace moved to another replica: send the call to the run's
 * holder as it is.
 */
export const WORKSPACE_MOVED = 'workspace_moved';

/**
 * Whether a refusal says nothing of the call ran and it belongs elsewhere (the node
 * drains, or the workspace moved): the agent may send it again at once.
 */
export function refusedBeforeRunning(errorCode: string, payload: unknown): boolean {
  if (errorCode !== 'unavailable' || typeof payload !== 'object' || payload === null) {
    return false;
  }
  const reason = (payload as { reason?: unknown }).reason;
  return reason === NODE_DRAINING || reason === WORKSPACE_MOVED;
}
