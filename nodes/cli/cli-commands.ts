/**
 * Running one parsed `memql` command against the API: each subcommand calls the
 * client, prints human or JSON output, and returns the process exit code.
 */
import { open, readFile } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import {
  ClientError,
  type CommandStatus,
  type DispatchResult,
  type ExecPayload,
  type FsListPayload,
  type FsReadPayload,
  isAbortError,
  MAX_FILE_WRITE_BYTES,
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
  formatListing,
  formatOutputs,
  formatProgress,
  formatRun,
  formatRuns,
  formatTokens,
  formatWorkspaces,
  USAGE,
} from './cli-output.js';

/** Where a command's output goes; the process's streams in the binary. */
export interface CliIo {
  readonly stdout: Writable & { isTTY?: boolean };
  readonly stderr: Writable & { isTTY?: boolean };
  readonly stdin: Readable & { isTTY?: boolean };
}

/** Bytes per `fs_read` and per `fs_write` call; halved on `payload_too_large`. */
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
      return fsRead(command, call, io, global.json);
    case 'fs-write':
      return fsWrite(command, call, io, global.json);
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
      const made = await client.createToken(
        command.userId,
        command.label === undefined ? {} : { label: command.label },
      );
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
      if (global.json) {
        json(out, fleet);
        return 0;
      }
      line(out, `mode: ${fleet.mode}`);
      for (const replica of fleet.replicas) {
        line(
          out,
          Object.entries(replica)
            .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
            .join('  '),
        );
      }
      return 0;
    }
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
  const { kind: _kind, runId, ...request } = command;
  // What is piped in (not a terminal) is the command's standard input.
  const stdin = io.stdin.isTTY ? '' : await readStdinText(io.stdin);
  const args = stdin === '' ? request : { ...request, stdin };
  const result = await client.dispatchStream(
    { action: 'exec', args, runId, agentId: global.agentId, taskId: global.taskId },
    {
      signal,
      onOutput: (stream, chunk) => {
        if (!global.json) (stream === 'stdout' ? io.stdout : io.stderr).write(chunk);
      },
    },
  );
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

async function fsRead(
  command: Extract<CliCommand, { kind: 'fs-read' }>,
  call: Call,
  io: CliIo,
  asJson: boolean,
): Promise<number> {
  const file = command.out === undefined ? null : await open(command.out, 'w');
  const parts: Buffer[] = [];
  let offset = 0;
  let size = 0;
  try {
    for (;;) {
      const read = payloadOf<FsReadPayload>(
        await call(command.runId, 'fs_read', {
          path: command.path,
          encoding: 'base64',
          offset,
          length: CHUNK_BYTES,
        }),
      );
      const bytes = Buffer.from(read.content, 'base64');
      size = read.size;
      offset += read.bytesRead;
      if (file) await file.write(bytes);
      else if (asJson) parts.push(bytes);
      else io.stdout.write(bytes);
      if (read.eof || read.bytesRead === 0) break;
    }
  } finally {
    await file?.close();
  }
  if (asJson) {
    const content = Buffer.concat(parts);
    json(io.stdout, {
      path: command.path,
      size,
      ...(command.out === undefined
        ? { encoding: 'base64', content: content.toString('base64') }
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

async function readSource(source: { from: string } | { content: string }, io: CliIo) {
  if ('content' in source) return Buffer.from(source.content, 'utf8');
  if (source.from !== '-') return readFile(source.from);
  return readAll(io.stdin);
}

/** Everything `stream` gives until it ends. */
async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

/**
 * Writes in chunks (the first replaces, the rest append) so a file larger than one
 * request body still arrives; a chunk refused as too large is retried at half size.
 */
async function fsWrite(
  command: Extract<CliCommand, { kind: 'fs-write' }>,
  call: Call,
  io: CliIo,
  asJson: boolean,
): Promise<number> {
  const bytes = await readSource(command.source, io);
  // The limit is stated before anything is sent, so no part of a file too large is ever
  // written.
  if (bytes.length > MAX_FILE_WRITE_BYTES) {
    throw new ClientError(
      'payload_too_large',
      `payload_too_large: the source is ${bytes.length} bytes; a file written through the API is at most ${MAX_FILE_WRITE_BYTES} bytes (32 MiB). Nothing was sent: make a larger file in the workspace with exec, or download it with fetch`,
    );
  }
  const progress = { written: 0 };
  try {
    return await writeInChunks(command, call, io, asJson, bytes, progress);
  } catch (err) {
    // A file this command started is not left cut short: what was written is deleted
    // (an --append keeps the file it appended to, as it was given).
    if (!command.append && progress.written > 0) {
      await call(command.runId, 'fs_delete', { path: command.path }).catch(() => {});
    }
    throw err;
  }
}

async function writeInChunks(
  command: Extract<CliCommand, { kind: 'fs-write' }>,
  call: Call,
  io: CliIo,
  asJson: boolean,
  bytes: Buffer,
  progress: { written: number },
): Promise<number> {
  let chunk = CHUNK_BYTES;
  let offset = 0;
  let last: unknown;
  do {
    const part = bytes.subarray(offset, offset + chunk);
    const result = await call(command.runId, 'fs_write', {
      path: command.path,
      content: part.toString('base64'),
      encoding: 'base64',
      append: command.append || offset > 0,
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
    progress.written = offset;
  } while (offset < bytes.length);
  if (asJson) json(io.stdout, last);
  else line(io.stdout, `wrote ${formatBytes(bytes.length)} to ${command.path}`);
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
