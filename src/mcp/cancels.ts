/**
 * Where an MCP client's `notifications/cancelled` finds the tool call it names. Over
 * stdio a session is one server, so its request ids name its calls. Streamable HTTP is
 * stateless here: the cancel arrives in a POST of its own, to a server of its own, with
 * only the JSON-RPC id of the call, and ids restart in every session. So the HTTP
 * transport keeps one registry for the node, by user and request id, and a cancel
 * ends a call only when exactly one call of that user has that id in flight on this
 * node; an ambiguous cancel ends none (the call's command can still be cancelled by
 * its `callId` through the API).
 *
 * @module
 */

/** The tool calls in flight that a cancel may end, by key. */
export class McpCancels {
  private readonly calls = new Map<string, Set<() => void>>();

  /** Registers `cancel` under `key`; the returned function removes it. */
  add(key: string, cancel: () => void): () => void {
    let set = this.calls.get(key);
    if (!set) {
      set = new Set();
      this.calls.set(key, set);
    }
    set.add(cancel);
    return () => {
      set.delete(cancel);
      if (set.size === 0 && this.calls.get(key) === set) this.calls.delete(key);
    };
  }

  /** Ends the one call under `key`; false when none, or several, are. */
  cancel(key: string): boolean {
    const set = this.calls.get(key);
    if (set?.size !== 1) return false;
    const [only] = set;
    only!();
    return true;
  }
}
