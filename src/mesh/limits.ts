/**
 * The mesh's fixed limits and timings. Sizes are bytes, durations milliseconds.
 *
 * @module
 */

/**
 * Largest frame either side sends or accepts, encoded. The contract lets `content`
 * and `stdin` carry 32 MiB of text; the rest is room for JSON escaping and the
 * envelope. gRPC enforces it on receive (a larger message ends that stream with
 * RESOURCE_EXHAUSTED; the node and its other streams carry on), and senders check
 * it before writing, answering `payload_too_large` instead.
 */
export const MAX_FRAME_BYTES = 48 * 1024 * 1024;

/** Largest output chunk in one Output frame; longer chunks are split. */
export const OUTPUT_CHUNK_BYTES = 64 * 1024;

/**
 * Bytes a tunnel's sender has in flight before the receiver reports them read (see
 * the Data frame): the most one slow reader holds in the other side's memory.
 */
export const TUNNEL_WINDOW_BYTES = 1024 * 1024;

/** Longest request id, characters. */
export const MAX_REQUEST_ID_CHARS = 128;

/** How often a serving node sends a Health frame on each stream. */
export const HEALTH_INTERVAL_MS = 1_000;

/**
 * How long a change of a node's load must hold before a Health frame reports it ahead
 * of the period: a call that starts and ends within it sends no frame of its own.
 */
export const LOAD_SETTLE_MS = 50;

/** A peer whose last Health frame is older than this is not healthy. */
export const HEALTH_STALE_MS = 5_000;

/** Client keepalive: ping after this much silence on the connection. */
export const KEEPALIVE_TIME_MS = 10_000;

/** Client keepalive: a ping unanswered for this long drops the connection. */
export const KEEPALIVE_TIMEOUT_MS = 5_000;

/** How often the agent re-resolves its seeds, to find replicas that came or went. */
export const RESOLVE_INTERVAL_MS = 15_000;

/** gRPC options every mesh server uses. */
export function serverChannelOptions(maxFrameBytes = MAX_FRAME_BYTES): Record<string, number> {
  return {
    'grpc.max_receive_message_length': maxFrameBytes,
    'grpc.max_send_message_length': maxFrameBytes,
    'grpc.keepalive_time_ms': KEEPALIVE_TIME_MS,
    'grpc.keepalive_timeout_ms': KEEPALIVE_TIMEOUT_MS,
    'grpc.keepalive_permit_without_calls': 1,
  };
}

/**
 * gRPC options of one agent-to-replica channel. A channel per connection attempt,
 * with its own subchannel pool, so the mesh's jittered backoff (not gRPC's shared
 * reconnect state) decides when to dial again. gRPC's own retries are off: the one
 * call on a channel is the long-lived stream, which the mesh redials itself (a request
 * not yet sent goes to another replica, one sent is never sent twice), so keeping its
 * frames for a transparent retry is of no use.
 */
export function clientChannelOptions(maxFrameBytes = MAX_FRAME_BYTES): Record<string, number> {
  return {
    'grpc.max_receive_message_length': maxFrameBytes,
    'grpc.max_send_message_length': maxFrameBytes,
    'grpc.keepalive_time_ms': KEEPALIVE_TIME_MS,
    'grpc.keepalive_timeout_ms': KEEPALIVE_TIMEOUT_MS,
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.use_local_subchannel_pool': 1,
    'grpc.enable_retries': 0,
    'grpc.initial_reconnect_backoff_ms': 200,
    'grpc.max_reconnect_backoff_ms': 2_000,
  };
}
