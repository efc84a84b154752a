import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import t from 'tap';
import { ClientError, WorkbenchClient } from '../../src/client/index.js';
import { MAX_ID_CHARS } from '../../src/contract/index.js';
import { type ApiHarness, startApiHarness } from '../api/api-support.js';

/**
 * Ids far over `MAX_ID_CHARS` (100,000 characters), through MCP, the TypeScript client
 * and plain HTTP against a live API: each is a typed refusal that names the field and
 * the limit, never `internal: HTTP 431`; and a request line the server cannot read is
 * answered in the API's error shape.
 */

const h: ApiHarness = await startApiHarness(t);
const LONG = 'a'.repeat(100_000);

t.test('MCP: a long artifact id and a long run id are invalid_arguments', async (t) => {
  const client = new Client({ name: 'memql-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${h.alice}` } },
    }),
  );
  t.teardown(() => client.close());
  const read = await client.readResource({ uri: `memql://artifacts/${LONG}` }).then(
    () => null,
    (err: Error) => err,
  );
  t.match(read?.message, new RegExp(`invalid_arguments: artifactId: .*${MAX_ID_CHARS}`));
  t.notMatch(read?.message, /431|internal/);
  const ended = (await client.callTool({
    name: 'end_run',
    arguments: { runId: LONG, status: 'succeeded' },
  })) as CallToolResult;
  t.equal(ended.isError, true);
  t.match(ended.structuredContent, { errorCode: 'invalid_arguments' });
  t.match(JSON.stringify(ended.content), /invalid_arguments: runId: /);
});

t.test('the client refuses a long id before it sends anything', async (t) => {
  const sent: string[] = [];
  const client = new WorkbenchClient({
    baseUrl: h.url,
    token: h.alice,
    fetch: (input, init) => {
      sent.push(String(input));
      return fetch(input, init);
    },
  });
  const cases: [string, () => Promise<unknown>][] = [
    ['artifactId', () => client.getArtifact(LONG)],
    ['artifactId', () => client.openArtifact(LONG)],
    ['runId', () => client.getRun(LONG)],
    ['runId', () => client.deleteRun(LONG)],
    ['commandId', () => client.getCommand(LONG)],
    ['before', () => client.listRuns({ before: LONG })],
    ['runId', () => client.listArtifacts({ runId: LONG })],
    ['workerId', () => client.workers.setScope(LONG, 'none')],
    ['agentId', () => client.openFile('run-x', 'a.txt', { agentId: LONG })],
  ];
  for (const [field, attempt] of cases) {
    const err = await attempt().then(
      () => null,
      (e: unknown) => e,
    );
    t.ok(err instanceof ClientError, field);
    t.match(err, {
      code: 'invalid_arguments',
      payload: { field, length: 100_000, limit: MAX_ID_CHARS },
    });
  }
  t.same(sent, [], 'no request was sent');
  // An id at the limit is sent and answered as the API answers it.
  const atLimit = await client.getRun('r'.repeat(MAX_ID_CHARS)).then(null, (e: unknown) => e);
  t.match(atLimit, { code: 'not_found' });
});

t.test('a request line over the server limit is a typed 431', async (t) => {
  const url = new URL(`${h.url}/v1/artifacts/${LONG}`);
  const answer = await new Promise<{ status: number; type: string; body: string }>(
    (resolve, reject) => {
      const req = request(url, { headers: { authorization: `Bearer ${h.alice}` } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'] ?? '', body }),
        );
      });
      req.on('error', reject);
      req.end();
    },
  );
  t.equal(answer.status, 431);
  t.match(answer.type, /^application\/json/);
  t.match(JSON.parse(answer.body), {
    ok: false,
    errorCode: 'invalid_arguments',
    message: /over this server's limit of \d+ bytes/,
  });
});
