/**
 * The `memql processes` (or `memql ps`) command lines: start a run's background process,
 * list them, read or follow their output, write to their stdin, signal them, wait for
 * them. Pure, like the rest of the parser.
 */
import { PROCESS_SIGNALS, type ProcessSignal } from '../../src/client/index.js';
import { take, UsageError } from './cli-usage.js';

/** A parsed `processes` subcommand. */
export type ProcessCliCommand =
  | { kind: 'processes-start'; runId: string; command: string; cwd?: string }
  | { kind: 'processes-list'; runId: string; running: boolean }
  | { kind: 'processes-get'; runId: string; processId: string }
  | { kind: 'processes-logs'; runId: string; processId: string; follow: boolean }
  | {
      kind: 'processes-stdin';
      runId: string;
      processId: string;
      source: { from: string } | { content: string } | null;
      eof: boolean;
    }
  | { kind: 'processes-kill'; runId: string; processId: string; signal: ProcessSignal }
  | { kind: 'processes-wait'; runId: string; processId: string; timeoutMs?: number }
  | { kind: 'shell'; runId: string; cwd?: string };

/** The options these subcommands read. */
export interface ProcessOptionValues {
  readonly cwd?: string;
  readonly running?: boolean;
  readonly follow?: boolean;
  readonly from?: string;
  readonly content?: string;
  readonly eof?: boolean;
  readonly signal?: string;
  readonly 'timeout-ms'?: string;
}

function signalOf(value: string | undefined): ProcessSignal {
  if (value === undefined) return 'SIGTERM';
  const name = (value.startsWith('SIG') ? value : `SIG${value}`).toUpperCase();
  if (!(PROCESS_SIGNALS as readonly string[]).includes(name)) {
    throw new UsageError(`--signal: expected one of ${PROCESS_SIGNALS.join(', ')}, not "${value}"`);
  }
  return name as ProcessSignal;
}

/** `memql shell <runId> [--cwd DIR]`. */
export function parseShell(rest: readonly string[], v: ProcessOptionValues): ProcessCliCommand {
  const [runId] = take(rest, ['<runId>'], 'shell');
  return { kind: 'shell', runId: runId!, ...(v.cwd ? { cwd: v.cwd } : {}) };
}

/** `memql processes start|ls|get|logs|stdin|kill|wait ...`; `command` is the line after `--`. */
export function parseProcesses(
  sub: string | undefined,
  rest: readonly string[],
  command: string | null,
  v: ProcessOptionValues,
): ProcessCliCommand {
  const pair = (what: string) => {
    const [runId, processId] = take(rest, ['<runId>', '<processId>'], `processes ${what}`);
    return { runId: runId!, processId: processId! };
  };
  switch (sub) {
    case 'start': {
      const [runId] = take(rest, ['<runId>'], 'processes start');
      if (command === null) {
        throw new UsageError(
          'processes start: give the command after --: memql processes start <runId> -- <command...>',
        );
      }
      return { kind: 'processes-start', runId: runId!, command, ...(v.cwd ? { cwd: v.cwd } : {}) };
    }
    case 'ls':
    case 'list': {
      const [runId] = take(rest, ['<runId>'], `processes ${sub}`);
      return { kind: 'processes-list', runId: runId!, running: v.running === true };
    }
    case 'get':
      return { kind: 'processes-get', ...pair('get') };
    case 'logs':
      return { kind: 'processes-logs', ...pair('logs'), follow: v.follow === true };
    case 'stdin': {
      if (v.from !== undefined && v.content !== undefined) {
        throw new UsageError(
          'processes stdin: pass at most one of --from FILE (or -) and --content TEXT',
        );
      }
      const source =
        v.from !== undefined
          ? { from: v.from }
          : v.content !== undefined
            ? { content: v.content }
            : null;
      if (source === null && v.eof !== true) {
        throw new UsageError(
          'processes stdin: pass --content TEXT, --from FILE (or -), --eof, or text and --eof',
        );
      }
      return { kind: 'processes-stdin', ...pair('stdin'), source, eof: v.eof === true };
    }
    case 'kill':
      return { kind: 'processes-kill', ...pair('kill'), signal: signalOf(v.signal) };
    case 'wait': {
      const timeout = v['timeout-ms'];
      if (timeout !== undefined && !/^\d+$/.test(timeout)) {
        throw new UsageError('--timeout-ms expects a whole number of milliseconds');
      }
      return {
        kind: 'processes-wait',
        ...pair('wait'),
        ...(timeout !== undefined ? { timeoutMs: Number(timeout) } : {}),
      };
    }
    default:
      throw new UsageError(
        `processes: expected start, ls, get, logs, stdin, kill or wait, not "${sub ?? ''}"`,
      );
  }
}
