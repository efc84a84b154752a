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

/** Whether a refusal says the node drained before anything of the call ran. */
export function refusedWhileDraining(errorCode: string, payload: unknown): boolean {
  return (
    errorCode === 'unavailable' &&
    typeof payload === 'object' &&
    payload !== null &&
    (payload as { reason?: unknown }).reason === NODE_DRAINING
  );
}
