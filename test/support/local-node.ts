import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import { type NodeProcess, spawnNode } from './node-process.js';

const DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** The local node's, the agent's and the CLI's compiled entry points. */
export const localMain = resolve(DIST, 'nodes/local/main.js');
export const agentMain = resolve(DIST, 'nodes/agent/main.js');
export const cliMain = resolve(DIST, 'nodes/cli/main.js');

/** A child's output so far, kept up to date as it arrives. */
export function captured(child: ChildProcess): { stdout: string; stderr: string } {
  const out = { stdout: '', stderr: '' };
  child.stdout?.on('data', (c: Buffer) => {
    out.stdout += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    out.stderr += c.toString();
  });
  return out;
}

/** Runs a child to its end: its exit code and everything it printed. */
export function finished(
  child: ChildProcess,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const out = captured(child);
  return new Promise((done) => child.on('close', (code) => done({ code, ...out })));
}

/** Starts the local node in `cwd`, waits for "ready", stops it with SIGINT. */
export async function startAndStop(
  cwd: string,
  env: Record<string, string> = {},
  whileUp: (
    stdout: string,
    pid: number,
    /** All of stdout so far, once more of it has come (a log line may follow "ready."). */
    more: () => Promise<string>,
  ) => Promise<void> = async () => {},
) {
  const child = spawn(process.execPath, [localMain], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', MEMQL_HTTP_LISTEN: '127.0.0.1:0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = captured(child);
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  // Ready once it prints so, or not at all if it exits first: both are events (the
  // output listener above runs first, so the text is already there).
  const ready = await new Promise<boolean>((settle) => {
    const done = () => {
      child.stdout?.off('data', onData);
      child.off('exit', done);
      settle(out.stdout.includes('ready.'));
    };
    const onData = () => {
      if (out.stdout.includes('ready.')) done();
    };
    child.stdout?.on('data', onData);
    child.on('exit', done);
  });
  const more = () =>
    new Promise<string>((next) => child.stdout?.once('data', () => next(out.stdout)));
  if (ready) await whileUp(out.stdout, child.pid!, more);
  child.kill('SIGINT');
  const code = await exited;
  return { ready, code, stdout: out.stdout, stderr: out.stderr };
}

/** Runs `agent/main.js create-token <user>` on the embedded database in `dataDir`. */
export function createToken(cwd: string, dataDir: string, user: string) {
  return finished(
    spawn(process.execPath, [agentMain, 'create-token', user], {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', MEMQL_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

/** Runs `memql` against the API at `url` as `token`'s user, to its end. */
export function memqlAs(url: string, token: string, ...argv: string[]) {
  return finished(
    spawn(process.execPath, [cliMain, ...argv], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', MEMQL_URL: url, MEMQL_TOKEN: token },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

/** What a local node's start banner says. */
export interface LocalBanner {
  /** The API's address, without `/v1`. */
  readonly baseUrl: string;
  /** The agent token it printed. */
  readonly token: string;
  /** The person token it printed, when it printed one. */
  readonly personToken: string | undefined;
}

/** Reads the API address and the tokens from a local node's banner; throws when it has none. */
export function localBanner(printed: string): LocalBanner {
  const baseUrl = /API: +(http:\/\/\S+?)\/v1/.exec(printed)?.[1];
  const token = /^\s*token: +(mqt_\S+)/m.exec(printed)?.[1];
  if (!baseUrl || !token) throw new Error(`no API address or token in:\n${printed}`);
  return { baseUrl, token, personToken: /MEMQL_TOKEN=(mqp_\S+)/.exec(printed)?.[1] };
}

/**
 * A local node as `npm start` runs it, on a data directory of its own under a new
 * temporary directory (removed when `t` ends), once it has said "ready.".
 */
export async function servingLocalNode(
  t: Test,
  prefix: string,
): Promise<{ node: NodeProcess; banner: LocalBanner }> {
  const cwd = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  // bwrap runs commands as uid 10001: the workspace's parent directories must be searchable.
  await chmod(cwd, 0o755);
  const node = spawnNode(t, 'local', localMain, {
    MEMQL_HTTP_LISTEN: '127.0.0.1:0',
    MEMQL_DATA_DIR: join(cwd, '.data'),
  });
  await node.waitFor(() => node.other.find((l) => l.startsWith('ready.')), '"ready."', 120_000);
  return { node, banner: localBanner(node.other.join('\n')) };
}
