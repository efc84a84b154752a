import { createServer } from 'node:net';
import t from 'tap';
import {
  ClientError,
  codeForStatus,
  errorFromResponse,
  WorkbenchClient,
} from '../../src/client/index.js';

t.test('an API error body gives the code, message and payload', async (t) => {
  const err = errorFromResponse(
    404,
    JSON.stringify({
      ok: false,
      errorCode: 'not_found',
      message: 'not_found: run "r1"',
      payload: { runId: 'r1' },
    }),
  );
  t.equal(err.code, 'not_found');
  t.equal(err.message, 'not_found: run "r1"');
  t.equal(err.status, 404);
  t.same(err.payload, { runId: 'r1' });
});

t.test('a code the client does not know is kept as sent', async (t) => {
  const err = errorFromResponse(
    400,
    JSON.stringify({ ok: false, errorCode: 'brand_new', message: 'm' }),
  );
  t.equal(err.code, 'brand_new');
});

t.test('without an error body the status decides the code', async (t) => {
  const table: [number, string][] = [
    [400, 'invalid_arguments'],
    [401, 'unauthenticated'],
    [403, 'forbidden'],
    [404, 'not_found'],
    [409, 'run_ended'],
    [413, 'payload_too_large'],
    [500, 'internal'],
    [502, 'unavailable'],
    [503, 'unavailable'],
    [504, 'unavailable'],
  ];
  for (const [status, code] of table) {
    t.equal(codeForStatus(status), code, String(status));
    const err = errorFromResponse(status, '<html>bad gateway</html>');
    t.equal(err.code, code);
    t.match(err.message, `HTTP ${status}: <html>bad gateway</html>`);
  }
  t.equal(errorFromResponse(401, '').message, 'unauthenticated: HTTP 401');
  t.equal(errorFromResponse(400, '{"errorCode":""}').code, 'invalid_arguments');
});

t.test('a node that is not listening is unavailable, naming the address', async (t) => {
  const port = await new Promise<number>((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
  const client = new WorkbenchClient({ baseUrl: `http://127.0.0.1:${port}/v1/`, token: 'x' });
  t.equal(client.baseUrl, `http://127.0.0.1:${port}`, 'a trailing /v1 is dropped');
  const err = await client.getRun('r1').catch((e: unknown) => e);
  t.ok(err instanceof ClientError);
  t.equal((err as ClientError).code, 'unavailable');
  t.match((err as ClientError).message, `127.0.0.1:${port}`);
  t.match((err as ClientError).message, 'ECONNREFUSED');
});

t.test('an aborted request rejects with the abort, not a ClientError', async (t) => {
  const client = new WorkbenchClient({
    baseUrl: 'http://127.0.0.1:9',
    token: 'x',
    fetch: (_url, init) =>
      new Promise((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
      }),
  });
  const abort = new AbortController();
  const pending = client.dispatchStream(
    { action: 'exec', args: { command: 'true' }, runId: 'r', agentId: 'a', taskId: 't' },
    { signal: abort.signal },
  );
  abort.abort();
  const err = await pending.catch((e: unknown) => e);
  t.notOk(err instanceof ClientError);
  t.equal((err as Error).name, 'AbortError');
});
