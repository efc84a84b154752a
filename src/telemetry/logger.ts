import pino from 'pino';

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

/** Creates the root logger of a node. */
export function createLogger(options: LoggerOptions): Logger {
  const paths = REDACTED_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`]);
  return pino(
    {
      level: options.level ?? 'info',
      base: { node: options.nodeId, nodeType: options.nodeType },
      redact: { paths, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination,
  );
}
