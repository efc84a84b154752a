/**
 * The background-process actions of `workbenchHost` and what they answer. A process
 * outlives the call that started it: `process_start` answers at once with its id, and
 * the others list a run's processes, read their output from an offset, write to
 * stdin, signal them and wait for their end. Output is kept durably in the order it
 * came, so a read from any agent replica, while the process runs, after it ended or
 * after its replica was lost, sees the same bytes at the same offsets.
 *
 * @module
 */

import { z } from 'zod';
import { commandEnv, commandLine, MAX_PAYLOAD_CHARS, workspacePath } from './arg-fields.js';

/** Pattern of a process id. */
export const PROCESS_ID_PATTERN =
  /^proc-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Most bytes one `process_output` returns. */
export const MAX_PROCESS_READ_BYTES = 1024 * 1024;
/** Bytes `process_output` returns when `maxBytes` is omitted. */
export const DEFAULT_PROCESS_READ_BYTES = 64 * 1024;
/** Longest `process_wait`, ms: a longer wait is a loop of waits. */
export const MAX_PROCESS_WAIT_MS = 600_000;
/** The wait of a `process_wait` that names none, ms. */
export const DEFAULT_PROCESS_WAIT_MS = 30_000;
/** Most processes one `process_list` returns. */
export const MAX_PROCESS_LIST = 500;

/** The signals a caller may send to a process. */
export const PROCESS_SIGNALS = [
  'SIGTERM',
  'SIGKILL',
  'SIGINT',
  'SIGHUP',
  'SIGQUIT',
  'SIGUSR1',
  'SIGUSR2',
  'SIGSTOP',
  'SIGCONT',
] as const;

/** A signal a caller may send. */
export type ProcessSignal = (typeof PROCESS_SIGNALS)[number];

const processId = () =>
  z
    .string()
    .regex(PROCESS_ID_PATTERN, { error: 'expected a processId from process_start or process_list' })
    .describe('The id process_start answered.');

/** Most columns or rows of a process's terminal. */
export const MAX_PTY_SIZE = 1000;

const ptySize = () =>
  z.strictObject({
    cols: z.int().min(1).max(MAX_PTY_SIZE).describe('Columns of the terminal.'),
    rows: z.int().min(1).max(MAX_PTY_SIZE).describe('Rows of the terminal.'),
  });

/** `process_start`: start a background process in the run's sandbox. */
export const processStartArgsSchema = z.strictObject({
  command: commandLine(),
  cwd: workspacePath().optional(),
  env: commandEnv().describe('Extra environment variables for the process.').optional(),
  pty: ptySize()
    .describe(
      'Run it on a terminal of this size (a REPL, a curses program): its output, echo included, is stdout; eof sends Ctrl-D.',
    )
    .optional(),
});

/** `process_resize`: resize a running process's terminal (its group gets SIGWINCH). */
export const processResizeArgsSchema = z.strictObject({
  processId: processId(),
  ...ptySize().shape,
});

/**
 * `process_shell` (system only: a person's terminal, through the shell route, which a
 * person credential opens): an interactive login shell on a terminal, in the run's
 * sandbox. Its command is the workbench's, so no allowlist applies; the sandbox does.
 */
export const processShellArgsSchema = z.strictObject({
  ...ptySize().shape,
  cwd: workspacePath().optional(),
});

/** `process_list`: the run's processes, newest first. */
export const processListArgsSchema = z.strictObject({
  running: z.boolean().default(false).describe('Only the processes still running.'),
  limit: z.int().positive().max(MAX_PROCESS_LIST).default(50).describe('Most processes to list.'),
});

/** `process_output`: a piece of a process's output, from an offset. */
export const processOutputArgsSchema = z.strictObject({
  processId: processId(),
  stream: z.enum(['stdout', 'stderr']).default('stdout').describe('Which stream to read.'),
  offset: z
    .int()
    .min(0)
    .default(0)
    .describe("Byte offset to read from: 0, or the `next` of the previous read's answer."),
  maxBytes: z
    .int()
    .positive()
    .max(MAX_PROCESS_READ_BYTES)
    .default(DEFAULT_PROCESS_READ_BYTES)
    .describe('Most bytes to return.'),
  encoding: z
    .enum(['utf8', 'base64'])
    .default('utf8')
    .describe('How the answer carries the bytes: "utf8" text or "base64".'),
});

/** `process_write`: write to a running process's standard input. */
export const processWriteArgsSchema = z
  .strictObject({
    processId: processId(),
    stdin: z
      .string()
      .max(MAX_PAYLOAD_CHARS)
      .describe('Text to write to its standard input.')
      .optional(),
    eof: z
      .boolean()
      .default(false)
      .describe('Close its standard input after the text (the end of input).'),
  })
  .refine((a) => a.stdin !== undefined || a.eof, {
    error: 'give stdin, eof: true, or both',
  });

/** `process_signal`: send a signal to a running process's process group. */
export const processSignalArgsSchema = z.strictObject({
  processId: processId(),
  signal: z.enum(PROCESS_SIGNALS).default('SIGTERM').describe('The signal to send.'),
});

/** `process_wait`: wait for a process to end, at most `timeoutMs`. */
export const processWaitArgsSchema = z.strictObject({
  processId: processId(),
  timeoutMs: z
    .int()
    .min(0)
    .max(MAX_PROCESS_WAIT_MS)
    .default(DEFAULT_PROCESS_WAIT_MS)
    .describe('How long to wait, ms; the answer says whether it ended (`status`).'),
});

/** Where a process is: running, or how it ended. */
export type ProcessState = 'running' | 'exited' | 'killed' | 'lost' | 'node_stopping';

/**
 * Why a process ended without its own doing: its replica was lost (`process_lost`), its
 * replica shut down after the grace (`node_stopping`), or it ran the node's maximum
 * lifetime and was killed (`process_lifetime`).
 */
export type ProcessErrorCode = 'process_lost' | 'node_stopping' | 'process_lifetime';

/** A process as the actions answer it. */
export interface ProcessView {
  processId: string;
  runId: string;
  status: ProcessState;
  /** Why it ended without its own doing; null while it runs, or when it did. */
  errorCode: ProcessErrorCode | null;
  command: string;
  cwd: string;
  /** True when it runs on a terminal (`pty`). */
  pty: boolean;
  /** Its exit code once `exited`. */
  exitCode: number | null;
  /** The signal that ended it once `killed` by one. */
  signal: string | null;
  /** Bytes of each stream kept so far. */
  stdoutBytes: number;
  stderrBytes: number;
  startedAt: string;
  endedAt: string | null;
  durationMs: number | null;
}

/** What `process_start` answers. */
export interface ProcessStartPayload extends ProcessView {
  /** True when the `callId` was used before: this is the process it started then. */
  replayed: boolean;
}

/** What `process_write` answers. */
export interface ProcessWritePayload {
  processId: string;
  /** Bytes written to its standard input. */
  written: number;
  /** True when its standard input was closed after them. */
  eof: boolean;
}

/** What `process_output` answers. */
export interface ProcessOutputPayload {
  processId: string;
  stream: 'stdout' | 'stderr';
  /** The bytes, as `encoding` says. */
  data: string;
  encoding: 'utf8' | 'base64';
  /** Where they start (the asked-for offset, or the stream's end if past it). */
  offset: number;
  /** Where the next read starts. */
  next: number;
  /** The stream's length so far. */
  total: number;
  /** True when the process ended and nothing more will come. */
  complete: boolean;
  status: ProcessState;
}
