import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chown, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { eventually } from './mesh.js';

/**
 * A PostgreSQL cluster of a test's own: `initdb` into a temporary directory, the
 * server started on a free loopback port, as the `postgres` system user when the test
 * runs as root (initdb refuses root). A test may freeze it whole (`pause`: SIGSTOP of
 * the postmaster and every backend) and thaw it (`resume`) without touching the
 * shared server on 5432. `stop` shuts it down and removes its directory.
 */
export interface PgCluster {
  readonly port: number;
  /** A `postgres://` URL of database `name` on this cluster. */
  url(name?: string): string;
  /** Creates a fresh database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Freezes the postmaster and all its children; returns the pids stopped. */
  pause(): Promise<number[]>;
  /** Thaws what `pause` froze. */
  resume(): void;
  readonly paused: boolean;
  stop(): Promise<void>;
}

/** The newest installed server's bin directory (`/usr/lib/postgresql/<v>/bin`). */
async function serverBin(): Promise<string> {
  const root = '/usr/lib/postgresql';
  const versions = (await readdir(root)).filter((v) => /^\d+$/.test(v)).sort((a, b) => +b - +a);
  if (!versions[0]) throw new Error(`no PostgreSQL server under ${root}`);
  return join(root, versions[0], 'bin');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** uid and gid of the `postgres` user, when this process is root; else none. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

/** Pids whose parent is `ppid`, read from /proc. */
async function childrenOf(ppid: number): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // The command name is in parentheses and may hold spaces: fields follow its ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[1]) === ppid) pids.push(Number(entry));
  }
  return pids;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Gone already.
  }
}

/** Starts a cluster; call `stop()` at teardown. */
export async function startPgCluster(): Promise<PgCluster> {
  const bin = await serverBin();
  const user = serverUser();
  const dir = await mkdtemp(join(tmpdir(), 'memql-pg-'));
  if (user) await chown(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const asUser = user ? { uid: user.uid, gid: user.gid } : {};
  execFileSync(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'],
    { ...asUser, stdio: 'pipe', cwd: dir },
  );
  const port = await freePort();
  let stderr = '';
  const server: ChildProcess = spawn(
    join(bin, 'postgres'),
    [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      dir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=off',
      '-c',
      'max_connections=200',
    ],
    { ...asUser, stdio: ['ignore', 'ignore', 'pipe'], cwd: dir },
  );
  server.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-4000);
  });
  const exited = new Promise<void>((r) => server.once('exit', () => r()));
  const url = (name = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${name}`;
  const admin = postgres(url(), { max: 1, onnotice: () => {}, connect_timeout: 5 });
  let refused = '';
  await eventually(
    'the test cluster accepts connections',
    async () => {
      if (server.exitCode !== null) throw new Error(`the test cluster exited: ${stderr}`);
      try {
        await admin`select 1`;
        return true;
      } catch (err) {
        refused = (err as Error).message;
        return false;
      }
    },
    120_000,
  ).catch((err: unknown) => {
    throw new Error(
      `the test cluster did not start (${refused}): ${(err as Error).message}; ${stderr}`,
    );
  });
  let frozen: number[] = [];
  return {
    port,
    url,
    async createDatabase(name) {
      await admin.unsafe(`create database ${name}`);
      return url(name);
    },
    async pause() {
      const postmaster = server.pid!;
      // The postmaster first, so it forks no backend while its children are stopped.
      signal(postmaster, 'SIGSTOP');
      frozen = [postmaster, ...(await childrenOf(postmaster))];
      for (const pid of frozen.slice(1)) signal(pid, 'SIGSTOP');
      return frozen;
    },
    resume() {
      for (const pid of frozen) signal(pid, 'SIGCONT');
      frozen = [];
    },
    get paused() {
      return frozen.length > 0;
    },
    async stop() {
      for (const pid of frozen) signal(pid, 'SIGCONT');
      frozen = [];
      await admin.end({ timeout: 1 }).catch(() => undefined);
      // Fast shutdown: backends are ended, clients disconnected.
      signal(server.pid!, 'SIGINT');
      const killed = setTimeout(() => signal(server.pid!, 'SIGKILL'), 15_000);
      await exited;
      clearTimeout(killed);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
