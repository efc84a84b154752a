/**
 * Running one parsed `memql` command against the API: each subcommand calls the
 * client, prints human or JSON output, and returns the process exit code.
 */
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { type Readable, Writable } from 'node:stream';
import {
  ClientError,
  type CommandStatus,
  type DispatchResult,
  type ExecPayload,
  type FsListPayload,
  isAbortError,
  MAX_FILE_WRITE_BYTES,
  MAX_UPLOAD_BYTES,
  type PromotePayload,
  type WorkbenchClient,
} from '../../src/client/index.js';
import { serveMcpStdio } from '../../src/mcp/index.js';
import type { CliCommand, CliInvocation } from './cli-args.js';
import {
  EXIT_CANCELLED,
  execExitCode,
  formatArtifacts,
  formatBytes,
  formatCommands,
  formatError,
  formatFleet,
  formatListing,
  formatOutputs,
  formatProgress,
  formatRun,
  formatRuns,
  formatTokens,
  formatWorkspaces,
  USAGE,
} from './cli-output.js';
import { runNetworkCommand } from './network-commands.js';
import { runProcessCommand } from './process-commands.js';
import { runVersionCommand } from './version-commands.js';
import { runWorkerCommand } from './worker-commands.js';

/** Where a command's output goes; the process's streams in the binary. */
export interface CliIo {
  readonly stdout: Writable & { isTTY?: boolean };
  readonly stderr: Writable & { isTTY?: boolean };
  readonly stdin: Readable & { isTTY?: boolean };
}

/** Bytes per appending `fs_write` call; halved on `payload_too_large`. */
const CHUNK_BYTES = 1024 * 1024;
const MIN_CHUNK_BYTES = 16 * 1024;
/** Downloads at least this large show progress on a terminal without `--progress`. */
const PROGRESS_MIN_BYTES = 1024 * 1024;

/** A dispatch the server refused, carried to the one place that prints errors. */
class Refused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function payloadOf<P>(result: DispatchResult): P {
  if (!result.ok) throw new Refused(result.errorCode, result.message);
  return result.payload as P;
}

const line = (out: Writable, text: string) => out.write(text.endsWith('\n') ? text : `${text}\n`);
const json = (out: Writable, value: unknown) => out.write(`${JSON.stringify(value, null, 2)}\n`);

/**
 * Runs `invocation` and resolves to the exit code. Errors are printed here as
 * `error: <code>: <message>` with a hint, and answer 1; `signal` (Ctrl-C) cancels a
 * running `exec`.
 */
export async function runCli(
  invocation: CliInvocation,
  client: WorkbenchClient,
  io: CliIo,
  signal: AbortSignal,
): Promise<number> {
  try {
    return await runCommand(invocation, client, io, signal);
  } catch (err) {
    if (err instanceof ClientError || err instanceof Refused) {
      io.stderr.write(formatError(err.code, err.message));
      return 1;
    }
    if (isAbortError(err) || signal.aborted) {
      io.stderr.write('memql: cancelled\n');
      return EXIT_CANCELLED;
    }
    const code = (err as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && code.startsWith('E')) {
      // A local file problem (--from, --out): name it plainly.
      io.stderr.write(`error: local_file: ${(err as Error).message}\n`);
      return 1;
    }
    throw err;
  }
}

async function runCommand(
  { command, global }: CliInvocation,
  client: WorkbenchClient,
  io: CliIo,
  signal: AbortSignal,
): Promise<number> {
  const out = io.stdout;
  const call = (runId: string, action: string, args: Record<string, unknown>) =>
    client.dispatch({ action, args, runId, agentId: global.agentId, taskId: global.taskId });
  const ids = { agentId: global.agentId, taskId: global.taskId };
  switch (command.kind) {
    case 'help':
      out.write(USAGE);
      return 0;
    case 'runs-create': {
      const { kind: _kind, ...options } = command;
      const run = await client.createRun(options);
      global.json ? json(out, { run }) : line(out, run.id);
      return 0;
    }
    case 'runs-list': {
      const { kind: _kind, ...options } = command;
      const page = await client.listRuns(options);
      global.json ? json(out, page) : out.write(formatRuns(page));
      return 0;
    }
    case 'runs-get': {
      const run = await client.getRun(command.runId);
      global.json ? json(out, { run }) : out.write(formatRun(run));
      return 0;
    }
    case 'runs-end': {
      const ended = await client.endRun(command.runId, command.status);
      global.json
        ? json(out, ended)
        : line(out, `run ${ended.run.id} ${ended.run.status}; its workspace is released`);
      return 0;
    }
    case 'runs-delete': {
      const deleted = await client.deleteRun(command.runId);
      global.json
        ? json(out, { deleted })
        : line(
            out,
            `deleted run ${command.runId}: ${deleted.objects} objects, ${deleted.commands} commands, ${deleted.workspaces} workspaces, ${deleted.artifacts} artifacts`,
          );
      return 0;
    }
    case 'exec':
      return exec(command, global, client, io, signal);
    case 'build':
      return build(command, global, client, io, signal);
    case 'commands-get': {
      const record = await client.getCommand(command.commandId);
      if (global.json) {
        json(out, { command: record });
        return 0;
      }
      line(
        out,
        `command ${record.id} (run ${record.runId}): ${record.status}, exit code ${record.exitCode ?? '-'}`,
      );
      // Output that is not text arrives as base64: written back as the bytes it was.
      for (const [name, text, encoding] of [
        ['stdout', record.stdout, record.stdoutEncoding],
        ['stderr', record.stderr, record.stderrEncoding],
      ] as const) {
        if (text === '') continue;
        out.write(`--- ${name}\n`);
        out.write(encoding === 'base64' ? Buffer.from(text, 'base64') : text);
      }
      return 0;
    }
    case 'commands-list': {
      const { kind: _kind, runId, status, ...options } = command;
      const page = await client.listCommands(runId, {
        ...options,
        ...(status === undefined ? {} : { status: status as CommandStatus }),
      });
      global.json ? json(out, page) : out.write(formatCommands(runId, page));
      return 0;
    }
    case 'fs-read':
      return fsRead(command, client, io, global.json, signal, ids);
    case 'fs-write':
      return fsWrite(command, call, client, io, global.json, signal, ids);
    case 'fs-ls': {
      const listing = payloadOf<FsListPayload>(
        await call(command.runId, 'fs_list', { path: command.path, recursive: command.recursive }),
      );
      global.json ? json(out, listing) : out.write(formatListing(listing));
      return 0;
    }
    case 'promote': {
      const { kind: _kind, runId, ...args } = command;
      const artifact = payloadOf<PromotePayload>(await call(runId, 'promote_artifact', args));
      global.json ? json(out, artifact) : line(out, artifact.artifactId);
      return 0;
    }
    case 'workspaces': {
      const workspaces = await client.listWorkspaces({ includeReleased: command.all });
      global.json ? json(out, { workspaces }) : out.write(formatWorkspaces(workspaces));
      return 0;
    }
    case 'artifacts-list': {
      const artifacts = await client.listArtifacts(
        command.runId === undefined ? {} : { runId: command.runId },
      );
      global.json ? json(out, { artifacts }) : out.write(formatArtifacts(artifacts));
      return 0;
    }
    case 'artifacts-download':
      return download(command, global.json, client, io, signal);
    case 'tokens-create': {
      const made = await client.createToken(command.userId, {
        ...(command.label === undefined ? {} : { label: command.label }),
        ...(command.tokenKind === undefined ? {} : { kind: command.tokenKind }),
      });
      global.json ? json(out, made) : line(out, made.secret);
      return 0;
    }
    case 'tokens-list': {
      const tokens = await client.listTokens(
        command.userId === undefined ? {} : { userId: command.userId },
      );
      global.json ? json(out, { tokens }) : out.write(formatTokens(tokens));
      return 0;
    }
    case 'tokens-revoke': {
      const done = await client.revokeToken(command.tokenId);
      global.json
        ? json(out, done)
        : line(
            out,
            done.revoked
              ? `revoked ${done.token.id} (user ${done.token.userId})`
              : `${done.token.id} was already revoked`,
          );
      return 0;
    }
    case 'mcp':
      await serveMcpStdio(
        client,
        { agentId: global.agentId, taskId: global.taskId },
        { stdin: io.stdin, stdout: io.stdout },
        signal,
      );
      return 0;
    case 'fleet': {
      const fleet = await client.fleet();
      global.json ? json(out, fleet) : out.write(formatFleet(fleet));
      return 0;
    }
    case 'network-show':
    case 'network-allow':
    case 'network-set':
    case 'network-clear':
      return runNetworkCommand(command, client, out, global.json);
    case 'processes-start':
    case 'processes-list':
    case 'processes-get':
    case 'processes-logs':
    case 'processes-stdin':
    case 'processes-kill':
    case 'processes-wait':
    case 'shell':
      return runProcessCommand(command, client, io, global.json, signal);
    case 'versions':
    case 'diff':
    case 'checkpoint':
    case 'restore':
    case 'fork':
      return runVersionCommand(command, client, out, global.json);
    default:
      return runWorkerCommand(command, client, out, global.json);
  }
}

type Call = (
  runId: string,
  action: string,
  args: Record<string, unknown>,
) => Promise<DispatchResult>;

async function exec(
  command: Extract<CliCommand, { kind: 'exec' }>,
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
async function build(
  command: Extract<CliCommand, { kind: 'build' }>,
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

/**
 * Streams a workspace file to `--out` (a partial file is removed on failure), to
 * stdout, or, with `--json` and no `--out`, into the answer as base64.
 */
async function fsRead(
  command: Extract<CliCommand, { kind: 'fs-read' }>,
  client: WorkbenchClient,
  io: CliIo,
  asJson: boolean,
  signal: AbortSignal,
  ids: { agentId: string; taskId: string },
): Promise<number> {
  const parts: Buffer[] = [];
  const collect = new Writable({
    write(chunk: Buffer, _encoding, done) {
      parts.push(chunk);
      done();
    },
  });
  const to = command.out ?? (asJson ? collect : io.stdout);
  const result = await client.downloadFile(command.runId, command.path, { to, signal, ...ids });
  if (asJson) {
    json(io.stdout, {
      path: command.path,
      size: result.bytes,
      sha256: result.sha256,
      ...(command.out === undefined
        ? { encoding: 'base64', content: Buffer.concat(parts).toString('base64') }
        : { out: command.out }),
    });
  }
  return 0;
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

/** Everything `stream` gives until it ends. */
async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

/** `fs write`: a new or replaced file is streamed whole; `--append` adds to one. */
async function fsWrite(
  command: Extract<CliCommand, { kind: 'fs-write' }>,
  call: Call,
  client: WorkbenchClient,
  io: CliIo,
  asJson: boolean,
  signal: AbortSignal,
  ids: { agentId: string; taskId: string },
): Promise<number> {
  if (command.append) return fsAppend(command, call, io, asJson);
  const { source } = command;
  let bytes: Uint8Array | AsyncIterable<Uint8Array>;
  if ('content' in source) bytes = Buffer.from(source.content, 'utf8');
  else if (source.from === '-') bytes = io.stdin as AsyncIterable<Uint8Array>;
  else {
    // The limit is stated before anything is sent.
    const size = (await stat(source.from)).size;
    if (size > MAX_UPLOAD_BYTES) {
      throw new ClientError(
        'payload_too_large',
        `payload_too_large: ${source.from} is ${size} bytes; a file written through the API is at most ${MAX_UPLOAD_BYTES} bytes (4 GiB). Nothing was sent`,
      );
    }
    bytes = createReadStream(source.from);
  }
  const written = await client.uploadFile(command.runId, command.path, bytes, { signal, ...ids });
  if (asJson) json(io.stdout, written);
  else line(io.stdout, `wrote ${formatBytes(written.size)} to ${command.path}`);
  return 0;
}

/**
 * `fs write --append`: `fs_write` calls in chunks, each appending; a chunk refused as
 * too large is retried at half size. The file it appends to may grow to
 * `MAX_FILE_WRITE_BYTES` (32 MiB), stated before anything is sent.
 */
async function fsAppend(
  command: Extract<CliCommand, { kind: 'fs-write' }>,
  call: Call,
  io: CliIo,
  asJson: boolean,
): Promise<number> {
  const { source } = command;
  const bytes =
    'content' in source
      ? Buffer.from(source.content, 'utf8')
      : source.from === '-'
        ? await readAll(io.stdin)
        : await readFile(source.from);
  if (bytes.length > MAX_FILE_WRITE_BYTES) {
    throw new ClientError(
      'payload_too_large',
      `payload_too_large: the source is ${bytes.length} bytes; a file appended to through the API grows to at most ${MAX_FILE_WRITE_BYTES} bytes (32 MiB). Nothing was sent: write the whole file instead (without --append), or make it in the workspace with exec`,
    );
  }
  let chunk = CHUNK_BYTES;
  let offset = 0;
  let last: unknown;
  do {
    const part = bytes.subarray(offset, offset + chunk);
    const result = await call(command.runId, 'fs_write', {
      path: command.path,
      content: part.toString('base64'),
      encoding: 'base64',
      append: true,
    }).catch((err: unknown) => {
      if (err instanceof ClientError && err.code === 'payload_too_large') return err;
      throw err;
    });
    const tooLarge =
      result instanceof ClientError || (!result.ok && result.errorCode === 'payload_too_large');
    if (tooLarge && part.length > MIN_CHUNK_BYTES) {
      chunk = Math.floor(part.length / 2);
      continue;
    }
    if (result instanceof ClientError) throw result;
    last = payloadOf(result);
    offset += part.length;
  } while (offset < bytes.length);
  if (asJson) json(io.stdout, last);
  else line(io.stdout, `appended ${formatBytes(bytes.length)} to ${command.path}`);
  return 0;
}

async function download(
  command: Extract<CliCommand, { kind: 'artifacts-download' }>,
  asJson: boolean,
  client: WorkbenchClient,
  io: CliIo,
  signal: AbortSignal,
): Promise<number> {
  if (command.out === undefined && io.stdout.isTTY) {
    io.stderr.write('error: usage: pass --out FILE, or redirect stdout to a file\n');
    return 2;
  }
  let lastDraw = 0;
  const showProgress = (received: number, total: number | null) => {
    const wanted =
      command.progress || (io.stderr.isTTY === true && (total ?? 0) >= PROGRESS_MIN_BYTES);
    const now = Date.now();
    if (!wanted || (now - lastDraw < 100 && received !== total)) return;
    lastDraw = now;
    io.stderr.write(`\r${formatProgress(received, total)}`);
  };
  const result = await client.downloadArtifact(command.artifactId, {
    to: command.out ?? io.stdout,
    onProgress: showProgress,
    signal,
  });
  if (lastDraw > 0) io.stderr.write('\n');
  if (asJson)
    json(command.out === undefined ? io.stderr : io.stdout, {
      artifactId: command.artifactId,
      ...result,
      ...(command.out ? { out: command.out } : {}),
    });
  else if (command.out !== undefined) {
    line(io.stdout, `${command.out}: ${formatBytes(result.bytes)}, sha256 ${result.sha256}`);
  }
  return 0;
}
