/**
 * Log lines for people: what `MEMQL_LOG_FORMAT=pretty` (or `auto` on a terminal)
 * writes instead of JSON. Each record is one short line, `HH:MM:SS.mmm LEVEL message
 * key=value ...`, without the fields every line of a node repeats (time, level, node,
 * node type, pid, host) and with long values cut. The records are pino's own JSON,
 * already redacted, turned into text as they are written.
 *
 * @module
 */

import type { DestinationStream } from 'pino';

const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO ',
  40: 'WARN ',
  50: 'ERROR',
  60: 'FATAL',
};

/** Fields shown in the line's head or the same on every line, so not repeated. */
const HEAD_FIELDS = new Set(['level', 'time', 'msg', 'node', 'nodeType', 'pid', 'hostname']);

/** Longest value shown in full; longer ones are cut with an ellipsis. */
const MAX_VALUE_CHARS = 160;

function shown(value: unknown): string {
  const text =
    typeof value === 'string'
      ? /^[\w.:/@+-]*$/.test(value) && value !== ''
        ? value
        : JSON.stringify(value)
      : JSON.stringify(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 1)}…` : text;
}

/** One JSON log record as a line for people (with its newline). */
export function prettyLine(json: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const time = typeof record.time === 'string' ? record.time.slice(11, 23) : '';
  const level = LEVELS[record.level as number] ?? String(record.level);
  const parts = [time, level, String(record.msg ?? '')];
  let stack: string | null = null;
  for (const [key, value] of Object.entries(record)) {
    if (HEAD_FIELDS.has(key) || value === undefined) continue;
    if (key === 'err' && typeof value === 'object' && value !== null) {
      const err = value as { message?: unknown; stack?: unknown };
      parts.push(`err=${shown(err.message ?? '')}`);
      if (typeof err.stack === 'string') stack = err.stack;
      continue;
    }
    parts.push(`${key}=${shown(value)}`);
  }
  const head = parts.filter((p) => p !== '').join(' ');
  return stack === null ? `${head}\n` : `${head}\n${stack.replace(/^/gm, '    ')}\n`;
}

/** A pino destination that writes each record as a {@link prettyLine} to `out`. */
export function prettyDestination(out: { write(text: string): unknown }): DestinationStream {
  return {
    write(chunk: string) {
      for (const line of chunk.split('\n')) if (line !== '') out.write(prettyLine(line));
    },
  };
}
