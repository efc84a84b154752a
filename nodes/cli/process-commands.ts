/**
 * Running `memql processes`: each is one or a few calls of `client.processes`, printed
 * as a line or a table, or JSON with `--json`. `logs` writes a process's stdout to
 * stdout and its stderr to stderr; `logs --follow` and `wait` end with the process's
 * exit code (128 + the signal's number when one killed it; 124 when a wait ran out
 * first).
 */
import { readFile } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import type { ProcessView, WorkbenchClient } from '../../src/client/index.js';
import { EXIT_DID_NOT_RUN, EXIT_TIMED_OUT, execExitCode, table } from './cli-output.js';
import type { ProcessCliCommand } from './process-args.js';

/** The streams a command uses (the CLI's own, or a test's). */
interface CliIo {
  readonly stdout: Writable & { isTTY?: boolean };
  readonly stderr: Writable;
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

const json = (out: Writable, value: unknown) => out.write(`${JSON.stringify(value, null, 2)}\n`);

/** The exit code a process's end gives `memql`. */
export function processExitCode(view: ProcessView): number {
  if (view.status === 'running') return EXIT_TIMED_OUT;
  if (view.status === 'lost' || view.status === 'node_stopping') return EXIT_DID_NOT_RUN;
  return execExitCode({
    exitCode: view.exitCode,
    signal: view.signal,
    timedOut: false,
    cancelled: false,
    oomKilled: false,
  });
}

/** One process as `key: value` lines. */
export function formatProcess(view: ProcessView): string {
  const end =
    view.status === 'exited'
      ? `exited ${view.exitCode}`
      : view.status === 'killed'
        ? `killed${view.signal ? ` by ${view.signal}` : ''}`
        : view.status;
  return [
    `process:  ${view.processId}`,
    `status:   ${end}${view.errorCode ? ` (${view.errorCode})` : ''}`,
    `command:  ${view.command}`,
    `cwd:      ${view.cwd}`,
    `started:  ${view.startedAt}`,
    ...(view.endedAt ? [`ended:    ${view.endedAt} (${view.durationMs} ms)`] : []),
    `output:   ${view.stdoutBytes} bytes stdout, ${view.stderrBytes} bytes stderr`,
    '',
  ].join('\n');
}

/** A run's processes as a table. */
export function formatProcesses(views: readonly ProcessView[]): string {
  if (views.length === 0) return 'no processes\n';
  return table(
    ['PROCESS', 'STATUS', 'EXIT', 'STARTED', 'COMMAND'],
    views.map((v) => [
      v.processId,
      v.status,
      v.exitCode === null ? (v.signal ?? '-') : String(v.exitCode),
      v.startedAt,
      v.command.length > 60 ? `${v.command.slice(0, 57)}...` : v.command,
    ]),
  );
}

/** Runs one `processes` subcommand; resolves to the exit code. */
export async function runProcessCommand(
  command: ProcessCliCommand,
  client: WorkbenchClient,
  io: CliIo,
  asJson: boolean,
  signal: AbortSignal,
): Promise<number> {
  const out = io.stdout;
  const processes = client.processes;
  switch (command.kind) {
    case 'processes-start': {
      const started = await processes.start(command.runId, {
        command: command.command,
        ...(command.cwd ? { cwd: command.cwd } : {}),
      });
      asJson ? json(out, started) : out.write(`${started.processId}\n`);
      return 0;
    }
    case 'processes-list': {
      const views = await processes.list(command.runId, { running: command.running });
      asJson ? json(out, { processes: views }) : out.write(formatProcesses(views));
      return 0;
    }
    case 'processes-get': {
      const view = await processes.get(command.runId, command.processId);
      asJson ? json(out, view) : out.write(formatProcess(view));
      return 0;
    }
    case 'processes-logs': {
      if (command.follow) {
        const following = processes.follow(command.runId, command.processId, { signal });
        for (;;) {
          const next = await following.next();
          if (next.done) return processExitCode(next.value);
          (next.value.stream === 'stdout' ? io.stdout : io.stderr).write(next.value.bytes);
        }
      }
      for (const stream of ['stdout', 'stderr'] as const) {
        let offset = 0;
        for (;;) {
          const piece = await processes.output(command.runId, command.processId, {
            stream,
            offset,
            encoding: 'base64',
            maxBytes: 1024 * 1024,
          });
          (stream === 'stdout' ? io.stdout : io.stderr).write(Buffer.from(piece.data, 'base64'));
          if (piece.next >= piece.total) break;
          offset = piece.next;
        }
      }
      return 0;
    }
    case 'processes-stdin': {
      const source = command.source;
      const text =
        source === null
          ? ''
          : 'content' in source
            ? source.content
            : source.from === '-'
              ? await readText(io.stdin)
              : await readFile(source.from, 'utf8');
      const written = await processes.write(command.runId, command.processId, text, {
        eof: command.eof,
      });
      asJson
        ? json(out, written)
        : out.write(`wrote ${written.written} bytes${written.eof ? '; stdin closed' : ''}\n`);
      return 0;
    }
    case 'processes-kill': {
      const view = await processes.signal(command.runId, command.processId, command.signal);
      asJson ? json(out, view) : out.write(`sent ${command.signal} to ${view.processId}\n`);
      return 0;
    }
    case 'processes-wait': {
      const view = await processes.wait(command.runId, command.processId, command.timeoutMs);
      asJson ? json(out, view) : out.write(formatProcess(view));
      return processExitCode(view);
    }
    case 'shell':
      return shell(command, client, io);
  }
}

/**
 * `memql shell`: a login shell on a terminal in the run's sandbox. The local terminal
 * goes raw (Ctrl-C and Ctrl-D are bytes for the shell, not signals for memql), what is
 * typed is written to the shell in order, a resize of the local terminal resizes the
 * remote one, and its output is followed until it ends.
 */
async function shell(
  command: Extract<ProcessCliCommand, { kind: 'shell' }>,
  client: WorkbenchClient,
  io: CliIo,
): Promise<number> {
  const stdin = io.stdin as NodeJS.ReadStream;
  const stdout = io.stdout as NodeJS.WriteStream;
  if (!stdin.isTTY || !stdout.isTTY) {
    io.stderr.write('error: memql shell needs a terminal on stdin and stdout\n');
    return 2;
  }
  const size = () => ({ cols: stdout.columns || 80, rows: stdout.rows || 24 });
  const { runId } = command;
  const started = await client.processes.shell(runId, {
    ...size(),
    ...(command.cwd ? { cwd: command.cwd } : {}),
  });
  const id = started.processId;
  let sending = Promise.resolve();
  const send = (work: () => Promise<unknown>) => {
    sending = sending.then(work).then(
      () => undefined,
      () => undefined,
    );
  };
  const onData = (chunk: Buffer) =>
    send(() => client.processes.write(runId, id, chunk.toString('utf8')));
  const onResize = () => send(() => client.processes.resize(runId, id, size().cols, size().rows));
  stdin.setRawMode(true);
  stdin.on('data', onData);
  stdin.resume();
  process.on('SIGWINCH', onResize);
  try {
    const following = client.processes.follow(runId, id);
    for (;;) {
      const next = await following.next();
      if (next.done) return processExitCode(next.value);
      stdout.write(next.value.bytes);
    }
  } finally {
    process.off('SIGWINCH', onResize);
    stdin.off('data', onData);
    stdin.setRawMode(false);
    stdin.pause();
  }
}

async function readText(stream: NodeJS.ReadableStream): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(parts).toString('utf8');
}
