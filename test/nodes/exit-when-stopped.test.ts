import { spawn } from 'node:child_process';
import { once } from 'node:events';
import t from 'tap';

/**
 * A stopped node ends its process even when a library left a handle open (postgres.js
 * can reopen a database socket after its pool ended, when an outage armed a reconnect
 * timer): real processes, each holding what the case needs, then calling
 * `exitWhenStopped` as the node binaries do once they have stopped.
 */

const NODE_BOOT = new URL('../../nodes/node-boot.js', import.meta.url).href;

/** Runs `body` after the boot module and a logger to stdout are loaded; its exit and lines. */
async function runStopped(body: string) {
  const script = `
    import { exitWhenStopped } from ${JSON.stringify(NODE_BOOT)};
    import { createLogger } from ${JSON.stringify(new URL('../../src/telemetry/logger.js', import.meta.url).href)};
    const log = createLogger({ nodeId: 'n', nodeType: 'workbench' });
    ${body}
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
  const lines = out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { code, signal, lines, err };
}

t.test('a handle left open: the process exits 0 and names it', async (t) => {
  const got = await runStopped(`
    const net = await import('node:net');
    const server = net.createServer();
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    exitWhenStopped(log, 100);
  `);
  t.equal(got.code, 0, `exit code 0 (stderr: ${got.err})`);
  t.equal(got.signal, null);
  const line = got.lines.find((l) => l.msg === 'stopped, but handles are still open: exiting');
  t.ok(line, 'the exit is logged');
  t.match(line, { level: 40 }, 'a warning');
  t.ok(
    (line?.resources as string[] | undefined)?.includes('TCPServerWrap'),
    'naming the server left open',
  );
});

t.test('nothing left open: the process ends without waiting or warning', async (t) => {
  // The wait is far longer than the test's timeout: only an empty event loop ends it.
  const got = await runStopped(`exitWhenStopped(log, 3_600_000);`);
  t.equal(got.code, 0, `exit code 0 (stderr: ${got.err})`);
  t.notOk(
    got.lines.some((l) => l.msg === 'stopped, but handles are still open: exiting'),
    'no warning',
  );
});
