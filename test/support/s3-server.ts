import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A running s3rver child process and the settings an S3 client needs to reach it. */
export interface S3TestServer {
  /** `http://127.0.0.1:<port>`; use with path-style addressing. */
  endpoint: string;
  /** A bucket created at startup. */
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Kills the child and removes its data directory. Safe to call twice. */
  stop(): Promise<void>;
}

/** The settings a node process needs to use `server` as its object store. */
export function s3NodeEnv(server: S3TestServer): Record<string, string> {
  return {
    MEMQL_OBJECT_STORE: 's3',
    MEMQL_S3_BUCKET: server.bucket,
    MEMQL_S3_ENDPOINT: server.endpoint,
    MEMQL_S3_REGION: server.region,
    MEMQL_S3_FORCE_PATH_STYLE: 'true',
    MEMQL_S3_ACCESS_KEY_ID: server.accessKeyId,
    MEMQL_S3_SECRET_ACCESS_KEY: server.secretAccessKey,
  };
}

/** Options for {@link startS3Server}. */
export interface StartS3ServerOptions {
  /** Bucket to create at startup (at least 3 characters). Default `memql-test`. */
  bucket?: string;
  /** How long to wait for the server to listen. Default 15000. */
  readyTimeoutMs?: number;
}

const READY_PREFIX = 'S3RVER_READY ';

/*
 * Runs in the child. Two places where s3rver differs from S3 in ways the object
 * store tests can see are brought in line before s3rver is loaded:
 * - it lists keys in the order it walks its data directory: readdir order, which
 *   the filesystem chooses, and which puts `a/b` (under directory `a`) before
 *   `a-b` even when sorted; S3 lists in UTF-8 byte order of the key, so the walk
 *   sorts each directory by the key each entry leads to;
 * - a ranged GET of an empty object answers Content-Length 1 with no body, so the
 *   client waits for a byte that never comes; S3 answers 416, which it does here.
 */
const CHILD_SCRIPT = `
const fs = require('fs');
const path = require('path');
const [s3rverMain, directory, bucket] = process.argv.slice(1);
const lib = path.dirname(s3rverMain);
const utils = require(path.join(lib, 'utils.js'));
const SUFFIX = /\\._S3rver_[^/]*$/;
utils.walk = function* walk(dir, filter) {
  const entries = fs.readdirSync(dir).map((name) => {
    const file = path.posix.join(dir, name);
    const isDir = fs.statSync(file).isDirectory();
    return { file, isDir, order: Buffer.from(isDir ? name + '/' : name.replace(SUFFIX, '')) };
  });
  entries.sort((a, b) => Buffer.compare(a.order, b.order) || (a.file < b.file ? -1 : 1));
  for (const entry of entries) {
    if (!entry.isDir) yield entry.file;
    else if (!filter || filter(entry.file)) yield* walk(entry.file, filter);
  }
};
const FilesystemStore = require(path.join(lib, 'stores', 'filesystem.js'));
const getObject = FilesystemStore.prototype.getObject;
FilesystemStore.prototype.getObject = async function (bucket, key, options) {
  const object = await getObject.call(this, bucket, key, options);
  if (object && object.range && object.size === 0 && object.content) {
    object.content.destroy();
    object.content = null;
  }
  return object;
};
// The parent holds our stdin open; if it dies without stopping us, we clean up
// after ourselves.
process.stdin.on('end', () => {
  fs.rmSync(directory, { recursive: true, force: true });
  process.exit(0);
});
process.stdin.resume();
const S3rver = require(s3rverMain);
new S3rver({
  address: '127.0.0.1',
  port: 0,
  directory,
  silent: true,
  configureBuckets: [{ name: bucket }],
})
  .run()
  .then(({ port }) => process.stdout.write('${READY_PREFIX}' + port + '\\n'))
  .catch((err) => {
    console.error(err);
    process.exit(1);
  });
`;

/**
 * Starts a real s3rver in a child process on 127.0.0.1 with a free port and a
 * fresh data directory. The caller must `stop()` it (use `t.teardown`).
 */
export async function startS3Server(options: StartS3ServerOptions = {}): Promise<S3TestServer> {
  const bucket = options.bucket ?? 'memql-test';
  if (bucket.length < 3) throw new Error(`bucket name "${bucket}" needs at least 3 characters`);
  const directory = await mkdtemp(join(tmpdir(), 'memql-s3rver-'));
  const s3rverMain = createRequire(import.meta.url).resolve('s3rver');
  const child = spawn(process.execPath, ['-e', CHILD_SCRIPT, s3rverMain, directory, bucket], {
    // s3rver builds continuation tokens with DES, which OpenSSL 3 only offers
    // through the legacy provider; without it truncated listings fail.
    env: { ...process.env, NODE_OPTIONS: '--openssl-legacy-provider' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await killChild(child);
    await rm(directory, { recursive: true, force: true });
  };
  try {
    const port = await waitForReady(child, options.readyTimeoutMs ?? 15_000);
    return {
      endpoint: `http://127.0.0.1:${port}`,
      bucket,
      region: 'us-east-1',
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function waitForReady(child: ChildProcess, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const fail = (why: string): void => {
      cleanup();
      reject(new Error(`s3rver did not start: ${why}\nstderr:\n${stderr || '(empty)'}`));
    };
    const onStdout = (chunk: Buffer): void => {
      stdout += chunk.toString('utf8');
      const line = stdout.split('\n').find((l) => l.startsWith(READY_PREFIX));
      if (line === undefined) return;
      const port = Number(line.slice(READY_PREFIX.length));
      cleanup();
      // Keep draining, so a chatty child never blocks on a full pipe.
      child.stdout?.resume();
      if (Number.isInteger(port) && port > 0) resolve(port);
      else reject(new Error(`s3rver reported an unusable port: ${line}`));
    };
    const onStderr = (chunk: Buffer): void => {
      stderr += chunk.toString('utf8');
    };
    const onExit = (code: number | null, signal: string | null): void =>
      fail(`exited early (code ${code}, signal ${signal})`);
    const onError = (err: Error): void => fail(`spawn failed: ${err.message}`);
    const timer = setTimeout(() => fail(`not listening after ${timeoutMs} ms`), timeoutMs);
    function cleanup(): void {
      clearTimeout(timer);
      child.stdout?.off('data', onStdout);
      child.off('exit', onExit);
      child.off('error', onError);
    }
    child.stdout?.on('data', onStdout);
    child.stderr?.on('data', onStderr);
    child.on('exit', onExit);
    child.on('error', onError);
  });
}

async function killChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}
