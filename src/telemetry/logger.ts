import pino from 'pino';
import { prettyDestination } from './pretty-log.js';

/** The structured logger every part takes; scope it with `logger.child({ runId })`. */
export type Logger = pino.Logger;

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  /** pino level name (`trace` ... `fatal`, or `silent`). Default `info`. */
  level?: string;
  /** This node's id, stamped on every line. */
  nodeId: string;
  /** `agent`, `workbench` or `local`. */
  nodeType: string;
  /** Where lines go; default stdout. Tests pass a stream to read lines back. */
  destination?: pino.DestinationStream;
  /** `json` (default) or `pretty`: one short line a record for people (`pretty-log.ts`). */
  format?: 'json' | 'pretty';
}

/**
 * Keys whose values never reach a log line, wherever they sit in a logged object:
 * credentials, and the command text, output and file contents an agent produces.
 */
export const REDACTED_KEYS = [
  'token',
  'meshToken',
  'password',
  'secretAccessKey',
  'authorization',
  'command',
  'stdin',
  'stdout',
  'stderr',
  'content',
  'env',
] as const;

const REDACTED = new Set<string>(REDACTED_KEYS);

/** What a redacted value is replaced with. */
export const REDACTED_CENSOR = '[redacted]';

/**
 * How deep a redacted key is still found: at the top of a logged object, in a value
 * of it, and one level further (pino's `k`, `*.k` and `*.*.k`).
 */
const REDACT_DEPTH = 2;

/**
 * `value` with the value of every {@link REDACTED_KEYS} key at `depth` up to
 * {@link REDACT_DEPTH} replaced by {@link REDACTED_CENSOR}. What holds no such key is
 * returned as it is, and the caller's objects are never changed: only the objects on
 * the way to a redacted key are copied. Byte arrays are not walked.
 */
export function redactForLog<T>(value: T, depth = 0): T {
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return value;
  const source = value as Record<string, unknown>;
  let copy: Record<string, unknown> | null = null;
  for (const key of Object.keys(source)) {
    const was = source[key];
    let now = was;
    if (was !== undefined && REDACTED.has(key)) now = REDACTED_CENSOR;
    else if (depth < REDACT_DEPTH) now = redactForLog(was, depth + 1);
    if (now === was) continue;
    copy ??= (Array.isArray(source) ? [...source] : { ...source }) as Record<string, unknown>;
    copy[key] = now;
  }
  return (copy ?? source) as T;
}

/** Creates the root logger of a node. */
export function createLogger(options: LoggerOptions): Logger {
  const logger = pino(
    {
      level: options.level ?? 'info',
      base: { node: options.nodeId, nodeType: options.nodeType },
      // Redaction by a walk of the few levels it covers, on the lines that are written:
      // pino's path-based redaction cost several times the rest of a line. An error is
      // redacted once serialized (its own fields are not enumerable before).
      formatters: {
        log: (object) => {
          if (!('err' in object)) return redactForLog(object);
          const { err, ...rest } = object;
          return { ...redactForLog(rest), err };
        },
      },
      serializers: {
        err: (err: unknown) => redactForLog(pino.stdSerializers.err(err as Error), 1),
      },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.format === 'pretty'
      ? prettyDestination(options.destination ?? process.stdout)
      : options.destination,
  );
  // A child's bindings are written on every line it logs: redacted once, as it is made.
  // Children inherit this method from the root, so theirs are redacted as well.
  const pinoChild = logger.child;
  logger.child = function child(this: Logger, bindings, childOptions) {
    return pinoChild.call(this, redactForLog(bindings), childOptions);
  } as Logger['child'];
  return logger;
}
