/**
 * Typed frames: the TypeScript face of `memql.node.v1.Frame`. Everything read off a
 * stream goes through {@link decodeFrame}, which checks what protobuf cannot (a kind
 * is set, ids are present and bounded, the authority class is known), so the rest of
 * the mesh handles typed values only. A frame that fails is answered, never thrown.
 *
 * @module
 */

import {
  isBuildTool,
  type OutputStream,
  offeredNeeds,
  type Toolchain,
  type WorkerOffer,
} from '../contract/index.js';
import { MAX_FRAME_BYTES, MAX_REQUEST_ID_CHARS } from './limits.js';

/** The node types that speak the mesh. */
export type NodeType = 'agent' | 'workbench' | 'worker';

/** Who is on the other end; the first frame each side sends. */
export interface HelloFrame {
  readonly kind: 'hello';
  readonly nodeId: string;
  readonly nodeType: string;
  readonly version: string;
  /** A worker host's offer; absent from other node types. */
  readonly worker?: WorkerOffer;
}

/** Whether the sender takes work, and how loaded it is. */
export interface HealthFrame {
  readonly kind: 'health';
  readonly healthy: boolean;
  /** Calls running now. */
  readonly running: number;
  /** Calls waiting for a slot. */
  readonly queued: number;
  /** Calls the node runs at once. */
  readonly capacity: number;
  /**
   * What the node's sandbox can run for a build. Absent until its probe has ended, and
   * from nodes that predate the field: unknown, which counts as cannot build.
   */
  readonly toolchain?: Toolchain;
}

/**
 * An authority as it crosses the wire: a claim, not a credential. The receiving node
 * re-derives the in-process authority from it (see `wire-authority.ts`).
 */
export interface WireAuthority {
  readonly class: 'user' | 'system';
  readonly subject: string;
}

/** A call, answered by exactly one Response with the same id. */
export interface RequestFrame {
  readonly kind: 'request';
  readonly id: string;
  readonly method: string;
  /** `null` when the sender gave none. */
  readonly authority: WireAuthority | null;
  /** JSON. */
  readonly payload: Buffer;
}

/** The answer to a Request. */
export interface ResponseFrame {
  readonly kind: 'response';
  readonly id: string;
  readonly ok: boolean;
  /** A contract error code when `ok` is false, else `''`. */
  readonly errorCode: string;
  readonly message: string;
  /** JSON, or empty. */
  readonly payload: Buffer;
}

/** A chunk of a running request's output, sent before its Response. */
export interface OutputFrame {
  readonly kind: 'output';
  readonly id: string;
  readonly stream: OutputStream;
  readonly chunk: Buffer;
}

/** Asks the serving side to stop the request with this id. */
export interface CancelFrame {
  readonly kind: 'cancel';
  readonly id: string;
}

/**
 * Bytes of a tunnel request, either way: its `chunk`, `eof` once the sender has no
 * more, and `ack`, the bytes of the other side's chunks the sender's reader took. An
 * empty frame from the serving side says the tunnel is open.
 */
export interface DataFrame {
  readonly kind: 'data';
  readonly id: string;
  readonly chunk: Buffer;
  readonly eof: boolean;
  readonly ack: number;
}

/** Any frame. */
export type Frame =
  | HelloFrame
  | HealthFrame
  | RequestFrame
  | ResponseFrame
  | OutputFrame
  | CancelFrame
  | DataFrame;

/** What {@link decodeFrame} makes of one message. */
export type DecodedFrame =
  | { readonly ok: true; readonly frame: Frame }
  | {
      readonly ok: false;
      /** What is wrong, for the error answer and the log. */
      readonly problem: string;
      /** The request id, when one could be read, so the answer reaches its caller. */
      readonly id: string;
    };

const UNDECODABLE = Symbol('undecodable');

/** What a wrapped deserializer returns for bytes protobuf cannot read. */
interface Undecodable {
  readonly [UNDECODABLE]: string;
}

/**
 * Wraps a protobuf deserializer so that bad bytes become a value the stream answers,
 * instead of an exception that gRPC turns into the end of the whole stream.
 */
export function tolerantDeserializer(
  deserialize: (bytes: Buffer) => unknown,
  maxFrameBytes = MAX_FRAME_BYTES,
): (bytes: Buffer) => unknown {
  return (bytes) => {
    if (bytes.length > maxFrameBytes) {
      return {
        [UNDECODABLE]: `frame of ${bytes.length} bytes is over the ${maxFrameBytes}-byte limit`,
      };
    }
    try {
      return deserialize(bytes);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      return {
        [UNDECODABLE]: `frame is not a memql.node.v1.Frame (${reason})`,
      } satisfies Undecodable;
    }
  };
}

type Raw = Record<string, unknown>;

function obj(value: unknown): Raw | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Raw)
    : null;
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function count(value: unknown): number {
  const n = typeof value === 'string' ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : 0;
}

/** Longest probe failure reason kept from a Health frame, characters. */
const MAX_PROBE_REASON_CHARS = 1000;

/** The toolchain of a Health frame; null when the sender set none. */
function toolchainOf(value: unknown): Toolchain | null {
  const body = obj(value);
  if (body === null) return null;
  const failed = str(body.probeFailed);
  if (failed !== '') {
    return { status: 'probe_failed', reason: failed.slice(0, MAX_PROBE_REASON_CHARS) };
  }
  // Names this node does not know are not tools its builds need: dropped.
  const missing = Array.isArray(body.missing) ? body.missing.filter(isBuildTool) : [];
  return { status: 'probed', missing: [...new Set(missing)] };
}

/** Longest OS name kept from a worker's hello, characters. */
const MAX_OS_CHARS = 32;

/** A worker's offer from its hello; null when the sender set none. */
function workerOfferOf(value: unknown): WorkerOffer | null {
  const body = obj(value);
  if (body === null) return null;
  const provides = Array.isArray(body.provides)
    ? body.provides.filter((v): v is string => typeof v === 'string')
    : [];
  return {
    os: str(body.os).slice(0, MAX_OS_CHARS),
    // Names outside the closed set are not needs anything checks: dropped.
    provides: offeredNeeds(provides),
    capacity: count(body.capacity),
  };
}

function bytes(value: unknown): Buffer {
  return Buffer.isBuffer(value) ? value : Buffer.alloc(0);
}

function idProblem(id: string): string | null {
  if (id === '') return 'id is empty';
  if (id.length > MAX_REQUEST_ID_CHARS)
    return `id is longer than ${MAX_REQUEST_ID_CHARS} characters`;
  return null;
}

function bad(problem: string, id = ''): DecodedFrame {
  return { ok: false, problem: `malformed frame: ${problem}`, id };
}

/** Turns one deserialized message into a typed frame, or says what is wrong with it. */
export function decodeFrame(message: unknown): DecodedFrame {
  const raw = obj(message);
  if (raw === null) return bad('not a message');
  if (UNDECODABLE in raw) return bad(String(raw[UNDECODABLE]));
  const kind = raw.kind;
  const body = typeof kind === 'string' ? obj(raw[kind]) : null;
  if (body === null) return bad('no frame kind is set');
  const id = str(body.id).slice(0, MAX_REQUEST_ID_CHARS);
  switch (kind) {
    case 'hello': {
      const worker = workerOfferOf(body.worker);
      return {
        ok: true,
        frame: {
          kind,
          nodeId: str(body.nodeId),
          nodeType: str(body.nodeType),
          version: str(body.version),
          ...(worker ? { worker } : {}),
        },
      };
    }
    case 'health': {
      const toolchain = toolchainOf(body.toolchain);
      return {
        ok: true,
        frame: {
          kind,
          healthy: body.healthy === true,
          running: count(body.running),
          queued: count(body.queued),
          capacity: count(body.capacity),
          ...(toolchain ? { toolchain } : {}),
        },
      };
    }
    case 'request': {
      const problem = idProblem(str(body.id));
      if (problem) return bad(`request ${problem}`, id);
      if (str(body.method) === '') return bad('request method is empty', id);
      const auth = obj(body.authority);
      let authority: WireAuthority | null = null;
      if (auth !== null && (str(auth.class) !== '' || str(auth.subject) !== '')) {
        if (auth.class !== 'user' && auth.class !== 'system') {
          return bad(`authority class ${JSON.stringify(auth.class)} is not "user" or "system"`, id);
        }
        authority = { class: auth.class, subject: str(auth.subject) };
      }
      return {
        ok: true,
        frame: { kind, id, method: str(body.method), authority, payload: bytes(body.payload) },
      };
    }
    case 'response': {
      // An empty id is allowed here: it answers a frame whose id could not be read.
      const problem = str(body.id) === '' ? null : idProblem(str(body.id));
      if (problem) return bad(`response ${problem}`, id);
      return {
        ok: true,
        frame: {
          kind,
          id,
          ok: body.ok === true,
          errorCode: str(body.errorCode),
          message: str(body.message),
          payload: bytes(body.payload),
        },
      };
    }
    case 'output': {
      const problem = idProblem(str(body.id));
      if (problem) return bad(`output ${problem}`, id);
      const stream = body.chunk;
      if (stream !== 'stdout' && stream !== 'stderr') return bad('output has no chunk', id);
      return { ok: true, frame: { kind, id, stream, chunk: bytes(body[stream]) } };
    }
    case 'cancel': {
      const problem = idProblem(str(body.id));
      if (problem) return bad(`cancel ${problem}`, id);
      return { ok: true, frame: { kind, id } };
    }
    case 'data': {
      const problem = idProblem(str(body.id));
      if (problem) return bad(`data ${problem}`, id);
      return {
        ok: true,
        frame: { kind, id, chunk: bytes(body.chunk), eof: body.eof === true, ack: count(body.ack) },
      };
    }
    default:
      return bad(`unknown frame kind ${JSON.stringify(kind)}`);
  }
}

/** The proto-loader object for a typed frame, ready to serialize. */
export function encodeFrame(frame: Frame): Raw {
  switch (frame.kind) {
    case 'hello':
      return {
        hello: {
          nodeId: frame.nodeId,
          nodeType: frame.nodeType,
          version: frame.version,
          ...(frame.worker
            ? {
                worker: {
                  os: frame.worker.os,
                  provides: [...frame.worker.provides],
                  capacity: frame.worker.capacity,
                },
              }
            : {}),
        },
      };
    case 'health':
      return {
        health: {
          healthy: frame.healthy,
          running: frame.running,
          queued: frame.queued,
          capacity: frame.capacity,
          ...(frame.toolchain ? { toolchain: toolchainToWire(frame.toolchain) } : {}),
        },
      };
    case 'request':
      return {
        request: {
          id: frame.id,
          method: frame.method,
          authority: frame.authority,
          payload: frame.payload,
        },
      };
    case 'response':
      return {
        response: {
          id: frame.id,
          ok: frame.ok,
          errorCode: frame.errorCode,
          message: frame.message,
          payload: frame.payload,
        },
      };
    case 'output':
      return { output: { id: frame.id, [frame.stream]: frame.chunk } };
    case 'cancel':
      return { cancel: { id: frame.id } };
    case 'data':
      return { data: { id: frame.id, chunk: frame.chunk, eof: frame.eof, ack: frame.ack } };
  }
}

/** The proto-loader object of a toolchain. */
function toolchainToWire(toolchain: Toolchain): Raw {
  return toolchain.status === 'probed'
    ? { missing: [...toolchain.missing], probeFailed: '' }
    : // Never empty: an empty reason would read as a probe that found nothing missing.
      { missing: [], probeFailed: toolchain.reason || 'the probe failed' };
}
