/**
 * Running `memql exec` and `memql build`: the command's output streamed to ours as it
 * comes (not with `--json`), piped input as its standard input, and an end it did not
 * say itself (a time limit, a cancel, memory) told on stderr; the exit code is the
 * command's.
 */
import type { DispatchResult, ExecPayload, WorkbenchClient } from '../../src/client/index.js';
import type { CliInvocation } from './cli-args.js';
import { type CliIo, json, payloadOf, Refused, readAll } from './cli-io.js';
import { execExitCode, formatOutputs } from './cli-output.js';
import type { ExecCliCommand } from './exec-args.js';

/** `memql exec`: one command, streamed; Ctrl-C cancels it. */
export async function exec(
  command: Extract<ExecCliCommand, { kind: 'exec' }>,
  global: CliInvocation['global'],
  client: WorkbenchClient,
  io: CliIo,
  signal: AbortSignal,
): Promise<number> {
  const { kind: _kind, runId, environment, ...request } = command;
  // What is piped in (not a terminal) is the command's standard input.
  const stdin = io.stdin.isTTY ? '' : await readStdinText(io.stdin);
  const args = stdin === '' ? request : { ...request, stdin };
  const result = await client.dispatchStream(
    {
      action: 'exec',
      args,
      runId,
      agentId: global.agentId,
      taskId: global.taskId,
      ...(environment === undefined ? {} : { environment }),
    },
    // Ctrl-C (or a reader that went away) is the person cancelling the command.
    { signal, cancelOnDisconnect: true, onOutput: liveOutput(global, io) },
  );
  return reportCommand(result, global, io);
}

/** Writes a command's output to ours as it comes (not with --json). */
function liveOutput(global: CliInvocation['global'], io: CliIo) {
  return (stream: 'stdout' | 'stderr', chunk: Buffer) => {
    if (!global.json) (stream === 'stdout' ? io.stdout : io.stderr).write(chunk);
  };
}

/** Says how a command that ran ended (what its output did not) and gives its exit code. */
function reportCommand(result: DispatchResult, global: CliInvocation['global'], io: CliIo) {
  const payload = payloadOf<ExecPayload>(result);
  if (global.json) json(io.stdout, payload);
  else if (payload.timedOut) io.stderr.write(`memql: command ${payload.commandId} timed out\n`);
  else if (payload.cancelled)
    io.stderr.write(`memql: command ${payload.commandId} was cancelled\n`);
  else if (payload.oomKilled)
    io.stderr.write(`memql: command ${payload.commandId} ran out of memory\n`);
  if (!global.json && (payload.stdoutTruncated || payload.stderrTruncated)) {
    io.stderr.write('memql: output was over the size limit and is truncated\n');
  }
  if (!global.json && payload.outputs) io.stderr.write(formatOutputs(payload.outputs));
  return execExitCode(payload);
}

/** `memql build`: the operator's package build, streamed like exec. */
export async function build(
  command: Extract<ExecCliCommand, { kind: 'build' }>,
  global: CliInvocation['global'],
  client: WorkbenchClient,
  io: CliIo,
  signal: AbortSignal,
): Promise<number> {
  const { kind: _kind, runId, ...request } = command;
  const result = await client.build(runId, request, {
    signal,
    cancelOnDisconnect: true,
    onOutput: liveOutput(global, io),
  });
  return reportCommand(result, global, io);
}

/** All of `stdin` as text; refused when it is not UTF-8 (exec takes its input as text). */
async function readStdinText(stdin: NodeJS.ReadableStream): Promise<string> {
  const bytes = await readAll(stdin);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new Refused(
      'invalid_arguments',
      'invalid_arguments: the standard input piped to memql exec is not UTF-8 text; write binary input into the workspace with memql fs write --from - and read it from the file there',
    );
  }
}
