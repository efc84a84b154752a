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

/** A client whose fetch answers every request with `status` and `body`. */
function answering(status: number, body: unknown): WorkbenchClient {
  return new WorkbenchClient({
    baseUrl: 'http://api.invalid',
    token: 'x',
    fetch: async () =>
      new Response(JSON.stringify(body), {
        status,
        headers: { 'content-type': 'application/json' },
      }),
  });
}

t.test('workbenchHost hands refusals a model can fix back as results', async (t) => {
  const tooLarge = { ok: false, errorCode: 'payload_too_large', message: 'body over 48 MiB' };
  const host = answering(413, tooLarge).workbenchHost('r1', 'agent');
  t.same(await host('fs_write', { path: 'a', content: 'x' }), tooLarge);

  const refused = { ok: false, errorCode: 'command_not_allowed', message: 'no', payload: { n: 1 } };
  t.same(await answering(200, refused).workbenchHost('r1', 'a')('exec', { command: 'x' }), refused);
});

t.test('workbenchHost throws what no model turn can fix', async (t) => {
  const host = answering(401, {
    ok: false,
    errorCode: 'unauthenticated',
    message: 'bad token',
  }).workbenchHost('r1', 'agent');
  const err = await host('fs_list', {}).catch((e: unknown) => e);
  t.ok(err instanceof ClientError);
  t.equal((err as ClientError).code, 'unauthenticated');
  t.equal((err as ClientError).status, 401);
});

t.test('an answer that is not the API shape is internal, naming what was expected', async (t) => {
  const notResult = await answering(200, { hello: 1 })
    .dispatch({ action: 'fs_list', args: {}, runId: 'r', agentId: 'a', taskId: 't' })
    .catch((e: unknown) => e);
  t.equal((notResult as ClientError).code, 'internal');
  t.match((notResult as ClientError).message, 'a dispatch result');
  const noRun = await answering(200, { runs: [] })
    .getRun('r')
    .catch((e: unknown) => e);
  t.equal((noRun as ClientError).code, 'internal');
  t.match((noRun as ClientError).message, '"run" field');
});

t.test('the envelope workbenchHost sends carries the run, agent, task and call id', async (t) => {
  const sent: unknown[] = [];
  const client = new WorkbenchClient({
    baseUrl: 'http://api.invalid/',
    token: 'secret-token',
    fetch: async (url, init) => {
      sent.push({
        url,
        auth: (init?.headers as Record<string, string> | undefined)?.authorization,
      });
      sent.push(JSON.parse(String(init?.body)));
      return new Response(JSON.stringify({ ok: true, payload: {} }), { status: 200 });
    },
  });
  await client.workbenchHost('r1', 'agent-7', { taskId: 'task-2' })(
    'fs_read',
    { path: 'a.txt' },
    { callId: 'call_9', environment: { needs: [] } },
  );
  await client.workbenchHost('r1', 'agent-7')('fs_list', {});
  t.same(sent, [
    { url: 'http://api.invalid/v1/dispatch', auth: 'Bearer secret-token' },
    {
      action: 'fs_read',
      args: { path: 'a.txt' },
      runId: 'r1',
      agentId: 'agent-7',
      taskId: 'task-2',
      callId: 'call_9',
      environment: { needs: [] },
    },
    { url: 'http://api.invalid/v1/dispatch', auth: 'Bearer secret-token' },
    { action: 'fs_list', args: {}, runId: 'r1', agentId: 'agent-7', taskId: 'tool-loop' },
  ]);
});
