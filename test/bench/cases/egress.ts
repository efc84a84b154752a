/**
 * Case 12: the egress proxy's cost. A 10 MB HTTPS download by curl inside a bwrap
 * sandbox, through the bridge and the run's proxy (the node's own, in this process),
 * against the same download by curl on the host, straight to the server; and the
 * connection setup (curl's `time_appconnect`: TCP, the proxy's CONNECT, and TLS) of a
 * small request the same two ways. The server is a loopback HTTPS server with a test
 * CA (`test/support/internet.ts`) in a process of its own, the name mapped to
 * 127.0.0.1 for both.
 *
 * curl measures itself (`-w`), so the sandbox's own start is not charged to the
 * proxy. Samples come in blocks (one sandbox command runs a block of downloads),
 * the two sides alternating block by block.
 *
 * @module
 */

import { execFile, spawn } from 'node:child_process';
import { chmod, chown, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { cidr, parseHostRule } from '../../../src/contract/index.js';
import { BwrapRunner } from '../../../src/sandbox/bwrap/index.js';
import { EgressProxy } from '../../../src/sandbox/egress/index.js';
import { SANDBOX_UID } from '../../../src/sandbox/runner.js';
import type { BenchContext } from '../context.js';
import { type Row, ratioRow, skippedRow } from '../harness.js';

const run = promisify(execFile);
const CASE = '12 egress';
const HOST = 'blobs.test';

/** curl's `-w` for one transfer: seconds to the TLS handshake's end, and in all. */
const WRITE_OUT = '%{time_appconnect} %{time_total}\\n';

interface Timing {
  setupMs: number;
  totalMs: number;
}

function parseTimings(text: string): Timing[] {
  return text
    .trim()
    .split('\n')
    .filter((l) => l.length > 0)
    .map((line) => {
      const [setup, total] = line.split(' ').map(Number);
      if (!Number.isFinite(setup) || !Number.isFinite(total)) {
        throw new Error(`curl printed ${JSON.stringify(line)}`);
      }
      return { setupMs: setup! * 1000, totalMs: total! * 1000 };
    });
}

interface Internet {
  port: number;
  caPath: string;
  caPem: string;
}

/** Starts the stand-in internet in its own process (`internet-child.ts`). */
async function startInternet(ctx: BenchContext, bytes: number): Promise<Internet> {
  const script = join(dirname(fileURLToPath(import.meta.url)), '..', 'internet-child.js');
  const child = spawn(process.execPath, [script, String(bytes)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  ctx.defer(async () => {
    child.stdin.end();
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
  });
  let text = '';
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the test internet exited (${code})`)));
    child.stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const nl = text.indexOf('\n');
      if (nl >= 0) resolve(JSON.parse(text.slice(0, nl)) as Internet);
    });
  });
}

export async function egress(ctx: BenchContext): Promise<Row[]> {
  // No CPU limit: the host's curl has none either, and the case measures the proxy.
  const runner = new BwrapRunner({ cpus: null });
  const probe = await runner.probe();
  if (!probe.ok) return [skippedRow(CASE, `bwrap is unusable: ${probe.reason}`)];
  const bytes = ctx.pick(1, 10) * 1024 * 1024;
  const blocks = ctx.pick(3, 8);
  const perBlock = ctx.pick(3, 6);
  const internet = await startInternet(ctx, bytes);
  const base = await ctx.dir('egress');
  // As the workbench makes it: owned by the sandbox uid, which bwrap binds the socket as.
  await mkdir(join(base, 's'), { mode: 0o700 });
  if (process.getuid?.() === 0) await chown(join(base, 's'), SANDBOX_UID, SANDBOX_UID);
  const rule = parseHostRule(HOST);
  if (!rule.ok) throw new Error(rule.problem);
  const proxy = new EgressProxy({
    dir: join(base, 's'),
    caDir: join(base, 'ca'),
    resolve: async (host) => (host === HOST ? ['127.0.0.1'] : []),
    allowPrivate: [cidr('127.0.0.0/8')],
    secrets: [],
    log: ctx.log,
  });
  ctx.defer(() => proxy.close());
  const endpoint = await proxy.openRun('bench-egress', () => ({
    allow: [rule.rule],
    secrets: [],
  }));
  const bundle = join(base, 'ca-bundle.pem');
  await writeFile(bundle, [await readFile(endpoint.caCertPath, 'utf8'), internet.caPem].join('\n'));
  await chmod(bundle, 0o644);
  const workspaceDir = await ctx.dir('egress-workspace');
  const url = (path: string) => `https://${HOST}:${internet.port}${path}`;
  const loop = (path: string) =>
    `i=0; while [ "$i" -lt ${perBlock} ]; do curl -sS -o /dev/null -w '${WRITE_OUT}' ${url(path)} || exit 1; i=$((i+1)); done`;

  async function proxied(path: string): Promise<Timing[]> {
    const result = await runner.run({
      workspaceDir,
      command: loop(path),
      timeoutMs: 300_000,
      outputLimitBytes: 1 << 20,
      egress: { socketPath: endpoint.socketPath, caBundlePath: bundle },
    });
    if (result.exitCode !== 0) {
      throw new Error(`curl in the sandbox failed: ${result.stderr.toString('utf8')}`);
    }
    return parseTimings(result.stdout.toString('utf8'));
  }

  async function direct(path: string): Promise<Timing[]> {
    const out: Timing[] = [];
    for (let i = 0; i < perBlock; i++) {
      const { stdout } = await run('curl', [
        '-sS',
        '-o',
        '/dev/null',
        '--noproxy',
        '*',
        '--cacert',
        internet.caPath,
        '--resolve',
        `${HOST}:${internet.port}:127.0.0.1`,
        '-w',
        WRITE_OUT.replace('\\n', '\n'),
        url(path),
      ]);
      out.push(...parseTimings(stdout));
    }
    return out;
  }

  const sides = { proxied: [] as Timing[], direct: [] as Timing[] };
  const small = { proxied: [] as Timing[], direct: [] as Timing[] };
  // One untimed block each: caches, the CA's first leaf-free handshake, the JIT.
  await proxied('/blob');
  await direct('/blob');
  for (let b = 0; b < blocks; b++) {
    const order = b % 2 === 0 ? (['proxied', 'direct'] as const) : (['direct', 'proxied'] as const);
    for (const side of order) {
      const fn = side === 'proxied' ? proxied : direct;
      sides[side].push(...(await fn('/blob')));
      small[side].push(...(await fn('/simple/')));
    }
  }
  const mib = (bytes / 1024 / 1024).toFixed(0);
  const download = ratioRow(
    {
      case: CASE,
      subject: `${mib} MB HTTPS download in a sandbox, through the proxy`,
      baseline: 'the same download on the host, direct',
      unit: 'ms',
      target: 'p50 ratio <= 1.2',
      note: `curl's time_total; ${sides.proxied.length} samples a side, in blocks of ${perBlock}; loopback server`,
    },
    sides.proxied.map((s) => s.totalMs),
    sides.direct.map((s) => s.totalMs),
    (r) => r <= 1.2,
  );
  const setup = ratioRow(
    {
      case: CASE,
      subject: 'connection setup through the proxy (bridge, CONNECT, TLS)',
      baseline: 'the same setup on the host, direct (TCP, TLS)',
      unit: 'ms',
      target: 'p50 +2 ms or less',
      note: "curl's time_appconnect of a small request",
    },
    small.proxied.map((s) => s.setupMs),
    small.direct.map((s) => s.setupMs),
    (_r, s, b) => s.median - b.median <= 2,
  );
  return [download, setup];
}
