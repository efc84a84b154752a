/**
 * Case 14: the port route's added latency. A small HTTP server (python's `http.server`,
 * a 2-byte answer) runs as a background process in a run's sandbox; a `GET` through the
 * agent's port route (`/v1/runs/:runId/ports/:port/`, the token checked, the run's
 * owner checked, a connection carried by the sandbox's agent into its loopback) against
 * the same `GET` to the same server program on the host's loopback, one request at a
 * time, a new connection each, interleaved. Target: the route adds at most 2 ms (p50).
 *
 * @module
 */

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { portOpener } from '../../../src/agent/index.js';
import { startApiServer } from '../../../src/api/index.js';
import { createObjectStore } from '../../../src/objects/index.js';
import { createApiToken } from '../../../src/store/index.js';
import { BENCH_AUTHORITY, type BenchContext, envelope, expectOk } from '../context.js';
import { type Row, ratioRow, sampleInterleaved, skippedRow } from '../harness.js';

const CASE = '14 port route';

const SERVER = `import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")
    def log_message(self, *a):
        pass
print("listening", flush=True)
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
`;

/** One GET on a new connection; resolves with its ms. */
async function get(url: string, headers: Record<string, string>): Promise<number> {
  const start = performance.now();
  const res = await fetch(url, { headers: { ...headers, connection: 'close' } });
  const body = await res.text();
  if (res.status !== 200 || body !== 'ok') throw new Error(`GET ${url}: ${res.status} ${body}`);
  return performance.now() - start;
}

export async function ports(ctx: BenchContext): Promise<Row[]> {
  const { db } = await ctx.openDb();
  const objects = createObjectStore({ kind: 'fs', baseDir: await ctx.dir('port-objects') });
  const { host, root } = await ctx.host(db, {}, objects);
  const [runId] = await ctx.runs(db, 1);
  const hostServer = join(await ctx.dir('port-host'), 'server.py');
  await writeFile(hostServer, SERVER);
  const written = await host.handleDispatch(
    envelope(runId!, 'fs_write', { path: 'server.py', content: SERVER }),
    BENCH_AUTHORITY,
  );
  expectOk(written, 'fs_write server.py');
  const port = 18_800;
  const started = await host.handleDispatch(
    envelope(runId!, 'process_start', { command: `python3 -u server.py ${port}` }),
    BENCH_AUTHORITY,
  );
  if (!started.ok) return [skippedRow(CASE, `process_start: ${started.message}`)];
  const { processId } = started.payload as { processId: string };
  for (;;) {
    const out = await host.handleDispatch(
      envelope(runId!, 'process_output', { processId }),
      BENCH_AUTHORITY,
    );
    expectOk(out, 'process_output');
    if ((out.payload as { data: string }).data.includes('listening')) break;
    await host.handleDispatch(
      envelope(runId!, 'process_wait', { processId, timeoutMs: 50 }),
      BENCH_AUTHORITY,
    );
  }
  // The same server program on the host's loopback: the direct request's floor.
  const direct = spawn('python3', ['-u', hostServer, String(port + 1)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  ctx.defer(async () => {
    direct.kill('SIGKILL');
    await once(direct, 'exit').catch(() => undefined);
  });
  await new Promise<void>((resolve) => direct.stdout.once('data', () => resolve()));
  const token = await createApiToken(db, 'bench');
  const api = await startApiServer(
    {
      db,
      objects,
      dispatcher: { dispatch: async (e, a) => ({ result: await host.handleDispatch(e, a) }) },
      // The port route reads no fleet.
      fleet: { view: async () => ({ mode: 'local', replicas: [] }) } as never,
      workbenchRoot: root,
      // As the local node opens it: the in-process workbench, through the agent's opener.
      openPort: portOpener({
        remote: false,
        local: host,
        registry: null,
        readAffinity: async () => null,
      })!,
      log: ctx.log,
    },
    { host: '127.0.0.1', port: 0 },
  );
  ctx.defer(() => api.close());
  const auth = { authorization: `Bearer ${token.token}` };
  const routed = `${api.url}/v1/runs/${runId}/ports/${port}/`;
  const plain = `http://127.0.0.1:${port + 1}/`;
  const samples = ctx.pick(30, 300);
  const [through, base] = await sampleInterleaved(
    [
      { name: 'port route', run: () => get(routed, auth) },
      { name: 'direct', run: () => get(plain, {}) },
    ],
    { samples, warmup: 10 },
  );
  return [
    ratioRow(
      {
        case: CASE,
        subject: 'GET through the port route to a server in the sandbox',
        baseline: 'the same GET to the same server on the host loopback',
        unit: 'ms',
        target: 'p50 ≤ baseline + 2 ms',
        note: `${samples} samples a variant, interleaved, a new connection each`,
      },
      through!,
      base!,
      (_r, s, b) => s.median - b.median <= 2,
    ),
  ];
}
