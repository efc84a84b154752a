/**
 * Running the `memql` commands that move bytes: `fs read` streams a workspace file out,
 * `fs write` streams one in (or appends in chunks with `--append`), and
 * `artifacts download` fetches a promoted artifact.
 */
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { Writable } from 'node:stream';
import {
  ClientError,
  MAX_FILE_WRITE_BYTES,
  MAX_UPLOAD_BYTES,
  type WorkbenchClient,
} from '../../src/client/index.js';
import { type Call, type CliIo, json, line, payloadOf, readAll } from './cli-io.js';
import { formatBytes, formatProgress } from './cli-output.js';
import type { FileCliCommand } from './file-args.js';

/** Bytes per appending `fs_write` call; halved on `payload_too_large`. */
const CHUNK_BYTES = 1024 * 1024;
const MIN_CHUNK_BYTES = 16 * 1024;
/** Downloads at least this large show progress on a terminal without `--progress`. */
const PROGRESS_MIN_BYTES = 1024 * 1024;

/**
 * Streams a workspace file to `--out` (a partial file is removed on failure), to
 * stdout, or, with `--json` and no `--out`, into the answer as base64.
 */
export async function fsRead(
  command: Extract<FileCliCommand, { kind: 'fs-read' }>,
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

/** `fs write`: a new or replaced file is streamed whole; `--append` adds to one. */
export async function fsWrite(
  command: Extract<FileCliCommand, { kind: 'fs-write' }>,
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
  command: Extract<FileCliCommand, { kind: 'fs-write' }>,
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

/**
 * `artifacts download`: to `--out` or a redirected stdout, with progress on a terminal
 * (or with `--progress`).
 */
export async function download(
  command: Extract<FileCliCommand, { kind: 'artifacts-download' }>,
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
