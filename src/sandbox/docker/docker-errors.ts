/**
 * Docker failures, translated at the edge through one table: what went wrong with the
 * daemon or the image, which stable code it maps to, and what the operator should do.
 *
 * Dockerode surfaces two kinds of failure: a socket error from Node (`code` such as
 * `ECONNREFUSED`, `ENOENT`, `EACCES`) when the daemon cannot be reached, and an HTTP
 * status from the daemon (`statusCode`, with the daemon's text in `json.message`).
 *
 * @module
 */

import type Dockerode from 'dockerode';
import { type ErrorCode, WorkbenchError } from '../../contract/index.js';

/** What a Docker failure means to the runner. */
export type DockerFailureKind =
  /** The daemon's socket or address does not answer (missing, refused, not permitted). */
  | 'daemon_unreachable'
  /** The configured runner image is not present on the daemon. */
  | 'image_missing'
  /** The daemon answered with an error the runner does not expect. */
  | 'daemon_error';

/** A translated Docker failure. */
export interface DockerFailure {
  readonly kind: DockerFailureKind;
  /** The stable code a `run()` rejection carries. */
  readonly code: ErrorCode;
  /** For people: what happened and what to do. Never contains command text or the code. */
  readonly reason: string;
}

/** What the messages name: where the daemon is, and which image the runner uses. */
export interface DockerErrorContext {
  /** The daemon's address as a person reads it, e.g. `/var/run/docker.sock`. */
  readonly daemon: string;
  /** The runner image reference. */
  readonly image: string;
}

interface DockerErrorShape {
  code?: unknown;
  statusCode?: unknown;
  reason?: unknown;
  json?: { message?: unknown } | null;
  message?: unknown;
}

/** Socket-level error codes that mean "nobody is listening" or "not allowed to talk". */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOENT',
  'EACCES',
  'EPERM',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'ETIMEDOUT',
]);

interface TranslationRule {
  readonly kind: DockerFailureKind;
  readonly code: ErrorCode;
  readonly matches: (err: DockerErrorShape) => boolean;
  readonly reason: (ctx: DockerErrorContext, err: DockerErrorShape) => string;
}

function daemonText(err: DockerErrorShape): string {
  const fromJson = err.json?.message;
  if (typeof fromJson === 'string' && fromJson.length > 0) return fromJson.trim();
  if (typeof err.reason === 'string' && err.reason.length > 0) return err.reason;
  return typeof err.message === 'string' ? err.message : String(err);
}

/**
 * The translation table. Order matters: the first rule that matches wins. An
 * unreachable daemon and a missing image both map to `no_sandbox` (this node cannot run
 * commands until an operator acts); any other daemon error maps to `unavailable`
 * (a dependency failed; a retry may succeed).
 */
const RULES: readonly TranslationRule[] = [
  {
    kind: 'daemon_unreachable',
    code: 'no_sandbox',
    matches: (err) => err.code === 'EACCES' || err.code === 'EPERM',
    reason: (ctx) =>
      `permission denied on the Docker daemon at ${ctx.daemon}: run the node as a user allowed to use it (the docker group), or set MEMQL_RUNNER=bwrap`,
  },
  {
    kind: 'daemon_unreachable',
    code: 'no_sandbox',
    matches: (err) => typeof err.code === 'string' && UNREACHABLE_CODES.has(err.code),
    reason: (ctx, err) =>
      `Docker daemon not reachable at ${ctx.daemon} (${String(err.code)}): start dockerd, or set MEMQL_RUNNER=bwrap`,
  },
  {
    kind: 'image_missing',
    code: 'no_sandbox',
    matches: (err) => err.statusCode === 404 && /no such image/i.test(daemonText(err)),
    reason: (ctx) =>
      `runner image ${ctx.image} not found on the Docker daemon at ${ctx.daemon}: build or load it there, or set MEMQL_RUNNER_IMAGE`,
  },
  {
    kind: 'daemon_error',
    code: 'unavailable',
    matches: () => true,
    reason: (ctx, err) =>
      `the Docker daemon at ${ctx.daemon} failed${typeof err.statusCode === 'number' ? ` (HTTP ${err.statusCode})` : ''}: ${daemonText(err)}`,
  },
];

/** Translates any error thrown by a Dockerode call. */
export function translateDockerError(err: unknown, ctx: DockerErrorContext): DockerFailure {
  const shape: DockerErrorShape =
    typeof err === 'object' && err !== null ? (err as DockerErrorShape) : { message: String(err) };
  // The last rule matches everything, so find() always succeeds.
  const rule = RULES.find((r) => r.matches(shape))!;
  return { kind: rule.kind, code: rule.code, reason: rule.reason(ctx, shape) };
}

/** The translated failure as a {@link WorkbenchError}, keeping the Docker error as cause. */
export function dockerWorkbenchError(err: unknown, ctx: DockerErrorContext): WorkbenchError {
  const failure = translateDockerError(err, ctx);
  return new WorkbenchError(
    failure.code,
    `${failure.code}: ${failure.reason}`,
    { dockerFailure: failure.kind },
    { cause: err },
  );
}

/** Whether a Docker error is an HTTP status from the daemon (for expected 404/409s in cleanup). */
export function dockerStatus(err: unknown): number | null {
  if (typeof err !== 'object' || err === null) return null;
  const status = (err as DockerErrorShape).statusCode;
  return typeof status === 'number' ? status : null;
}

/** The daemon's address for messages: its socket path, or `host:port`. */
export function describeDaemon(docker: Dockerode): string {
  const modem = docker.modem as {
    socketPath?: unknown;
    host?: unknown;
    port?: unknown;
    protocol?: unknown;
  };
  if (typeof modem.socketPath === 'string') return modem.socketPath;
  if (typeof modem.host === 'string') {
    const protocol = typeof modem.protocol === 'string' ? `${modem.protocol}://` : '';
    const port = modem.port === undefined || modem.port === null ? '' : `:${String(modem.port)}`;
    return `${protocol}${modem.host}${port}`;
  }
  return 'the configured Docker address';
}
