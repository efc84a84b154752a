/**
 * The one list of error codes that crosses the wire, and the error that carries one.
 *
 * A code never changes meaning once shipped: tool loops, tests and the mesh match on
 * the code, never on message text. Add a code only when no existing one says the same
 * thing to the caller; the meaning line is the contract.
 *
 * Each code's entry also says how every wire answers it: its HTTP status (the one
 * place a route's status comes from) and whether sending the call again may succeed.
 * The wires' converters read them here: `api/http-errors.ts` (HTTP, and
 * `client/client-error.ts` back), `mesh/wire-errors.ts` (the mesh's frames and stream
 * statuses), `mcp/tool-errors.ts` (MCP).
 *
 * @module
 */

/**
 * Who has to act on a failure, derived from its code.
 *
 * - `caller`: the call is wrong; fixing the call is the only useful response.
 * - `policy`: the call is well formed but a rule refuses it; retrying will not help.
 * - `environment`: this deployment or node cannot do it (a fact about the workbench,
 *   not about the call); another node or an operator change might.
 * - `dependency`: something the workbench depends on failed; a retry may succeed.
 * - `internal`: a bug; details are in the node logs, never on the wire.
 */
export type ErrorCategory = 'caller' | 'policy' | 'environment' | 'dependency' | 'internal';

/** One entry of {@link ERROR_CODES}: what the code means, who has to act, how wires answer it. */
export interface ErrorCodeInfo {
  /** One line saying what happened, written for the person or model reading a result. */
  readonly meaning: string;
  /** Who has to act; audit events record it beside the code. */
  readonly category: ErrorCategory;
  /**
   * The HTTP status of a route that refuses with this code (the dispatch routes answer
   * every result, refusals included, with 200). A route answers another status only
   * where HTTP names the situation itself: 405 (wrong method), 416 (a range outside
   * the file), 408 and 431 (a request the server could not read), 409 (a consent
   * request decided already).
   */
  readonly httpStatus: number;
  /**
   * Whether the same call, sent again later unchanged (with a new `callId` when it had
   * one), may succeed: the failure was a dependency's or a node's, not the call's.
   */
  readonly retryable: boolean;
}

/**
 * Every error code, with its meaning, category, HTTP status and retry intent. The keys
 * are the codes.
 *
 * `cancelled` and `timed_out` are deliberately absent: they are command statuses
 * (the command ran and ended that way), not reasons a call was refused.
 */
export const ERROR_CODES = {
  invalid_arguments: {
    meaning:
      'The call does not match the contract: a missing, mistyped or unknown field, named in the message.',
    category: 'caller',
    httpStatus: 400,
    retryable: false,
  },
  invalid_path: {
    meaning:
      'A path is absolute, escapes the workspace (by "..", or through a symlink), or is otherwise unusable.',
    category: 'caller',
    httpStatus: 400,
    retryable: false,
  },
  path_not_found: {
    meaning: 'The path is inside the workspace but nothing exists there.',
    category: 'caller',
    httpStatus: 404,
    retryable: false,
  },
  payload_too_large: {
    meaning: 'Content, stdin, output or a fetched body is over the size limit.',
    category: 'caller',
    httpStatus: 413,
    retryable: false,
  },
  command_not_allowed: {
    meaning: 'An exec command names a binary that is not on the allowlist; nothing ran.',
    category: 'policy',
    httpStatus: 403,
    retryable: false,
  },
  no_sandbox: {
    meaning:
      'No sandbox backend is available on this node, so it refuses to run commands rather than run them unisolated.',
    category: 'environment',
    httpStatus: 503,
    retryable: false,
  },
  environment_mismatch: {
    meaning:
      'The environment hint asks for something a workbench does not provide; the payload lists unmetNeeds. Nothing ran.',
    category: 'environment',
    httpStatus: 400,
    retryable: false,
  },
  invalid_environment_hint: {
    meaning:
      'The environment hint is malformed (not an object, a bad needs list, an unknown need or os); fix the call.',
    category: 'caller',
    httpStatus: 400,
    retryable: false,
  },
  no_workbench_peer: {
    meaning:
      'Remote mode is on and no healthy workbench peer is reachable; the call was refused rather than run locally.',
    category: 'environment',
    httpStatus: 503,
    retryable: true,
  },
  workspace_owner_unresolved: {
    meaning:
      'The runId does not resolve to a readable run, so the workspace has no owner; nothing was written.',
    category: 'caller',
    httpStatus: 404,
    retryable: false,
  },
  run_ended: {
    meaning:
      'The run has reached a terminal status and its workspace is released; start a new run to keep working.',
    category: 'caller',
    httpStatus: 409,
    retryable: false,
  },
  build_not_permitted: {
    meaning: 'The build action needs a system-class authority; tool loops cannot call it.',
    category: 'policy',
    httpStatus: 403,
    retryable: false,
  },
  build_unavailable: {
    meaning:
      'No healthy workbench replica can run a build: none reported node, npm and git in its sandbox. The payload lists each replica and what it lacks; nothing ran.',
    category: 'environment',
    httpStatus: 503,
    retryable: false,
  },
  consent_required: {
    meaning:
      'The call needs a worker host (the workbench cannot provide what it needs) and the user has not given that worker the scope it takes. A consent request was recorded (payload consentRequest); the user approves it, then the same call runs. Nothing ran.',
    category: 'policy',
    httpStatus: 403,
    retryable: false,
  },
  kill_switch_engaged: {
    meaning:
      'The call would run on a worker host and the user has turned computer use off (the kill switch): either nothing ran, or (payload stopped: true) the call was running when the switch was turned on and was stopped, its processes killed. No consent request was made; only the user can turn it back on.',
    category: 'policy',
    httpStatus: 403,
    retryable: false,
  },
  person_required: {
    meaning:
      "The request decides something only the user may decide (approving or denying a consent request, raising a worker's standing scope, turning the kill switch off), and it carries an agent token. HTTP 403; nothing changed. The user does it themselves, signed in to the console.",
    category: 'policy',
    httpStatus: 403,
    retryable: false,
  },
  worker_unavailable: {
    meaning:
      "The workbench cannot provide what the call needs and no connected worker host of the caller's does either; the payload names what is missing and each worker. Start a worker that provides it. Nothing ran.",
    category: 'environment',
    httpStatus: 503,
    retryable: false,
  },
  egress_not_allowed: {
    meaning:
      "A run's network policy names a host rule outside the operator's egress ceiling (MEMQL_EGRESS_CEILING) or a secret the operator did not define (MEMQL_EGRESS_SECRETS). HTTP 403; nothing changed. The message names each rule or secret refused and what the ceiling allows; only the operator can widen it.",
    category: 'policy',
    httpStatus: 403,
    retryable: false,
  },
  fetch_blocked: {
    meaning: 'The fetch target is refused by policy (for example a private or internal address).',
    category: 'policy',
    httpStatus: 403,
    retryable: false,
  },
  fetch_failed: {
    meaning:
      'The fetch target could not be retrieved (DNS, connection, timeout or an error status).',
    category: 'dependency',
    httpStatus: 502,
    retryable: true,
  },
  call_id_conflict: {
    meaning:
      'The callId was already used in this run for a different call (another action, other arguments or another environment hint); nothing ran. A callId names one call: repeat that call exactly to get its outcome, or use a new callId.',
    category: 'caller',
    httpStatus: 409,
    retryable: false,
  },
  not_found: {
    meaning: 'A named thing other than a workspace path (run, command, artifact) does not exist.',
    category: 'caller',
    httpStatus: 404,
    retryable: false,
  },
  command_expired: {
    meaning:
      'The command existed but finished longer ago than the node keeps command results (`MEMQL_COMMAND_KEEP_MS`), and its record was removed: its output and exit code are gone. A repeat of its callId does not run it again; send the command with a new callId if you need it run again.',
    category: 'caller',
    httpStatus: 410,
    retryable: false,
  },
  unauthenticated: {
    meaning: 'The caller or peer did not prove who it is (missing or wrong token).',
    category: 'policy',
    httpStatus: 401,
    retryable: false,
  },
  forbidden: {
    meaning:
      'The caller is known but its authority does not allow this (for example minting a system authority for a user).',
    category: 'policy',
    httpStatus: 403,
    retryable: false,
  },
  workspace_quota_exceeded: {
    meaning:
      'The write or command would take the workspace over its byte or file quota; nothing of it was kept (a command is stopped). Delete files, or write less.',
    category: 'caller',
    httpStatus: 413,
    retryable: false,
  },
  command_failed: {
    meaning:
      "An expected output of exec was not promoted because its command did not succeed (a non-zero exit, a timeout, a cancel or a failure); the command's own status says how it ended.",
    category: 'caller',
    httpStatus: 409,
    retryable: false,
  },
  command_lost: {
    meaning:
      'The node running the command stopped answering before its outcome was recorded; whether it finished is unknown, and any file changes it committed are kept. Its callId stays bound to it: run it again with a new callId.',
    category: 'dependency',
    httpStatus: 503,
    retryable: true,
  },
  node_stopping: {
    meaning:
      'The node running the command was shutting down and cut it off at the end of its grace period; files it wrote until then are kept. Run it again.',
    category: 'dependency',
    httpStatus: 503,
    retryable: true,
  },
  process_not_found: {
    meaning:
      'No background process with that id belongs to this run; process_list names the ones it has.',
    category: 'caller',
    httpStatus: 404,
    retryable: false,
  },
  process_not_running: {
    meaning:
      'The background process has ended, so it takes no input or signal; its output stays readable with process_output.',
    category: 'caller',
    httpStatus: 409,
    retryable: false,
  },
  process_limit: {
    meaning:
      'The run has as many background processes running as its node allows (MEMQL_PROCESS_MAX_PER_RUN); end one with process_signal, or wait for one to end, then start again.',
    category: 'policy',
    httpStatus: 409,
    retryable: false,
  },
  process_lifetime: {
    meaning:
      'The background process ran the longest a process may on this node (MEMQL_PROCESS_MAX_LIFETIME_MS) and was killed; its output and files are kept. Start it again to go on, or ask the operator for a longer lifetime.',
    category: 'policy',
    httpStatus: 409,
    retryable: false,
  },
  version_not_found: {
    meaning:
      'The run has no kept version with that number or label: version_list names the kept ones (older unlabelled versions pass retention, MEMQL_VERSION_KEEP_COUNT and MEMQL_VERSION_KEEP_MS).',
    category: 'caller',
    httpStatus: 404,
    retryable: false,
  },
  label_in_use: {
    meaning:
      'That label already names another version of this run: remove it first (version_checkpoint with remove: true), or choose another label.',
    category: 'caller',
    httpStatus: 409,
    retryable: false,
  },
  port_not_listening: {
    meaning:
      "Nothing listens on that port in the run's sandbox: start the server with process_start first, and check its output for the port it chose.",
    category: 'caller',
    httpStatus: 502,
    retryable: false,
  },
  process_lost: {
    meaning:
      'The replica running the background process was lost; its output is kept up to its last flush and its files up to their last sync. Processes are not migrated: start it again.',
    category: 'dependency',
    httpStatus: 503,
    retryable: true,
  },
  unavailable: {
    meaning:
      'A dependency of the workbench (database, object store) failed or is unreachable; retrying may succeed.',
    category: 'dependency',
    httpStatus: 503,
    retryable: true,
  },
  internal: {
    meaning: 'An unexpected failure inside the workbench; details are in the node logs only.',
    category: 'internal',
    httpStatus: 500,
    retryable: false,
  },
} as const satisfies Record<string, ErrorCodeInfo>;

/** A stable error code: one of the keys of {@link ERROR_CODES}. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** Every error code, in declaration order (for enumerations in docs, tests and metrics). */
export const ERROR_CODE_LIST: readonly ErrorCode[] = Object.freeze(
  Object.keys(ERROR_CODES) as ErrorCode[],
);

/**
 * Whether `value` is a known error code. Used where codes arrive as data (the wire,
 * stored audit rows) and must not be trusted as the {@link ErrorCode} type.
 */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}

/** The category of a code (see {@link ErrorCategory}). */
export function errorCategory(code: ErrorCode): ErrorCategory {
  return ERROR_CODES[code].category;
}

/** The HTTP status of a route that refuses with `code` (see {@link ErrorCodeInfo.httpStatus}). */
export function httpStatusOf(code: ErrorCode): number {
  return ERROR_CODES[code].httpStatus;
}

/** Whether a call refused with `code` may succeed when sent again unchanged. */
export function isRetryable(code: ErrorCode): boolean {
  return ERROR_CODES[code].retryable;
}

/**
 * The codes an HTTP status stands for when its answer carries no `errorCode` (a proxy's
 * error page, an empty body): one per status, each the code whose table status it is.
 */
const BARE_STATUS_CODES: readonly ErrorCode[] = [
  'invalid_arguments',
  'unauthenticated',
  'forbidden',
  'not_found',
  'run_ended',
  'payload_too_large',
  'unavailable',
  'internal',
];

/**
 * The code of an HTTP answer without a readable `errorCode`: the code that status
 * stands for ({@link BARE_STATUS_CODES}), else `unavailable` for a gateway's 5xx (502,
 * 504: the server was not reached) and `internal` for anything else.
 */
export function codeForHttpStatus(status: number): ErrorCode {
  const own = BARE_STATUS_CODES.find((code) => ERROR_CODES[code].httpStatus === status);
  if (own !== undefined) return own;
  return status > 500 && status < 600 ? 'unavailable' : 'internal';
}

/**
 * An error that carries a stable code, thrown where failure is exceptional and
 * turned into a dispatch result at the edge (see `resultFromError`).
 *
 * The message is shown to callers, so it must say what happened and what to do,
 * and must not contain secrets, command text or file contents.
 */
export class WorkbenchError extends Error {
  /** The stable code callers match on. */
  readonly code: ErrorCode;
  /** Structured detail for the caller (for example the environment mismatch body). */
  readonly payload: unknown;

  /**
   * @param code - the stable code.
   * @param message - a human message; by convention it starts with the code.
   * @param payload - optional structured detail that travels with the result.
   * @param options - standard error options; `cause` stays in the node, never on the wire.
   */
  constructor(code: ErrorCode, message: string, payload?: unknown, options?: ErrorOptions) {
    super(message, options);
    this.name = 'WorkbenchError';
    this.code = code;
    this.payload = payload;
  }
}

/**
 * A dependency's failure, translated at its edge through that edge's one table:
 * Postgres (SQLSTATE and connection errors) in `store/errors.ts`, the object store
 * (S3 errors, errno codes) in `objects/`. Its own code and message are the edge's
 * (callers inside the node match on them); {@link DependencyError.answer} is what it
 * answers on every wire, so one outage answers one code on every route. Its message
 * may name hosts, keys or SQL, so it stays in the node's logs.
 */
export abstract class DependencyError extends Error {
  /**
   * What a caller is told: a {@link WorkbenchError} (`unavailable` for an outage), or
   * `null` when the failure is a bug of this node (answered `internal`).
   */
  abstract answer(): WorkbenchError | null;
}
