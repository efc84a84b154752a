import pino from 'pino';
import t from 'tap';
import { localFleet, startApiServer } from '../../src/api/index.js';
import { ClientError, WorkbenchClient } from '../../src/client/index.js';
import { resultFromError } from '../../src/contract/index.js';
import { translateFsError } from '../../src/objects/fs-errors.js';
import {
  createS3Client,
  ObjectStoreUnavailableError,
  S3ObjectStore,
} from '../../src/objects/index.js';
import { translateS3Error } from '../../src/objects/s3-errors.js';
import { createApiToken, openDb, translateDbError } from '../../src/store/index.js';
import { createTestDatabase } from '../support/postgres.js';
import { startS3Server } from '../support/s3-server.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { envelope, type Json, startApiHarness } from './api-support.js';

/**
 * One outage, one code: with the object store down, every route that needs it answers
 * `unavailable` (503 where the route has a status of its own), whatever part of the
 * node met the outage. The store is a real S3-compatible server behind a TCP proxy the
 * test cuts, so the failure goes through the S3 edge's own table first.
 */

t.test('every edge answers its outage as unavailable, naming the dependency', async (t) => {
  const outages: [unknown, string][] = [
    [
      translateDbError(Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' })),
      'database',
    ],
    [
      translateDbError(Object.assign(new Error('the admin shut it'), { code: '57P01' })),
      'database',
    ],
    [
      translateS3Error(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), 'k'),
      'object_store',
    ],
    [translateFsError(Object.assign(new Error('I/O error'), { code: 'EIO' }), 'k'), 'object_store'],
    [new ObjectStoreUnavailableError('disk on fire'), 'object_store'],
  ];
  for (const [err, reason] of outages) {
    const result = resultFromError(err);
    t.match(result, { ok: false, errorCode: 'unavailable', payload: { reason } }, String(err));
    t.notMatch(result.message, /refused|hang up|I\/O|fire|shut/, 'the foreign message stays home');
  }
  const bug = resultFromError(translateDbError(Object.assign(new Error('x'), { code: '42P01' })));
  t.equal(bug.errorCode, 'internal', 'a bug of ours is no outage');
});

const server = await startS3Server({ bucket: 'memql-outages' });
t.teardown(() => server.stop());
const endpoint = new URL(server.endpoint);
const proxy = await startTcpProxy({ host: endpoint.hostname, port: Number(endpoint.port) });
t.teardown(() => proxy.close());
const client = createS3Client({
  region: server.region,
  endpoint: `http://127.0.0.1:${proxy.port}`,
  forcePathStyle: true,
  // An outage is answered at once, not after the SDK's backoff.
  maxAttempts: 1,
  credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
});
t.teardown(() => client.destroy());
const objects = new S3ObjectStore(client, { bucket: server.bucket, prefix: 'outages' });

const h = await startApiHarness(t, { objects });
const api = new WorkbenchClient({ baseUrl: h.url, token: h.alice });

t.test('with the object store down, each route answers unavailable', async (t) => {
  const runId = await h.newRun(h.alice);
  t.match(await h.dispatch(h.alice, runId, 'fs_write', { path: 'a.txt', content: 'kept' }), {
    ok: true,
  });
  const promoted = await h.dispatch(h.alice, runId, 'promote_artifact', {
    path: 'a.txt',
    name: 'a.txt',
  });
  t.equal(promoted.ok, true, promoted.message ?? 'promoted while the store is up');
  const artifactId: string = promoted.payload.artifactId;

  proxy.cut();
  t.teardown(() => proxy.restore());
  const down = { ok: false, errorCode: 'unavailable', payload: { reason: 'object_store' } };

  // promote_artifact: the object store's own failure, met by the workbench host.
  const promote = await h.dispatch(h.alice, runId, 'promote_artifact', {
    path: 'a.txt',
    name: 'again.txt',
  });
  t.match(promote, down, 'promote_artifact (dispatch)');

  // The artifact download: the same failure, met by the API's own route.
  const download = await h.call(h.alice, `/v1/artifacts/${artifactId}/content`);
  t.equal(download.status, 503, 'the download is a 503');
  t.match((await download.json()) as Json, down, 'the download');
  const read = await api.openArtifact(artifactId).catch((err: unknown) => err);
  t.ok(read instanceof ClientError, 'the client throws');
  t.match(read, { code: 'unavailable', status: 503 }, 'the client reads the same code back');

  // fs_write: the write's sync meets it.
  t.match(
    await h.dispatch(h.alice, runId, 'fs_write', { path: 'b.txt', content: 'lost' }),
    down,
    'fs_write (dispatch)',
  );
  const put = await h.call(h.alice, `/v1/runs/${runId}/files?path=c.txt`, {
    method: 'PUT',
    body: 'lost too',
    headers: { 'content-type': 'application/octet-stream' },
  });
  t.equal(put.status, 503, 'the file upload is a 503');
  t.match((await put.json()) as Json, down, 'the file upload');

  // fs_read works from the warm copy, or meets the outage the same way; never internal.
  const fsRead = await h.dispatch(h.alice, runId, 'fs_read', { path: 'a.txt' });
  t.ok(fsRead.ok || fsRead.errorCode === 'unavailable', `fs_read: ${JSON.stringify(fsRead)}`);

  proxy.restore();
  const after = await h.dispatch(h.alice, runId, 'promote_artifact', {
    path: 'a.txt',
    name: 'after.txt',
  });
  t.equal(after.ok, true, after.message ?? 'the same call succeeds once the store is back');
});

t.test('a database outage the dispatcher meets is unavailable on every route', async (t) => {
  // The API reads its own rows (tokens, runs) directly; what the dispatcher reads goes
  // through a proxy the test cuts, so the outage meets the call past the API's checks.
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const db = await openDb({ kind: 'postgres', url: database.url });
  t.teardown(() => db.close());
  const direct = new URL(database.url);
  const dbProxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
  t.teardown(() => dbProxy.close());
  const proxied = new URL(database.url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(dbProxy.port);
  const far = await openDb({ kind: 'postgres', url: proxied.toString() });
  t.teardown(() => far.close());
  await far.query('select 1');
  dbProxy.cut();
  const server = await startApiServer(
    {
      db,
      objects,
      dispatcher: {
        dispatch: async () => {
          await far.query('select 1');
          throw new Error('the cut database answered');
        },
      },
      fleet: localFleet({
        nodeId: 'node-outage',
        capacity: 1,
        since: new Date(),
        healthy: () => true,
        running: () => 0,
        queued: async () => 0,
        toolchain: () => null,
      }),
      log: pino({ level: 'silent' }),
    },
    { host: '127.0.0.1', port: 0 },
  );
  t.teardown(() => server.close());
  const token = (await createApiToken(db, 'uma')).token;
  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
  const runId = ((await (await call('/v1/runs', { method: 'POST', body: '{}' })).json()) as Json)
    .run.id as string;
  const down = { ok: false, errorCode: 'unavailable', payload: { reason: 'database' } };

  const dispatched = await call('/v1/dispatch', {
    method: 'POST',
    body: JSON.stringify(envelope(runId, 'fs_list', {})),
  });
  t.equal(dispatched.status, 200, 'a dispatch answers its result');
  t.match((await dispatched.json()) as Json, down, 'POST /v1/dispatch');

  const streamed = await call('/v1/dispatch/stream', {
    method: 'POST',
    body: JSON.stringify(envelope(runId, 'fs_list', {})),
  });
  const lines = (await streamed.text()).trim().split('\n');
  t.match(JSON.parse(lines.at(-1)!), { type: 'result', result: down }, 'the stream form');

  const read = await call(`/v1/runs/${runId}/files?path=a.txt`);
  t.equal(read.status, 503, 'the file download is a 503');
  t.match((await read.json()) as Json, down, 'GET files');

  const started = await call(`/v1/runs/${runId}/processes`, {
    method: 'POST',
    body: JSON.stringify({ command: 'sleep 1' }),
  });
  t.equal(started.status, 503, 'a process start is a 503');
  t.match((await started.json()) as Json, down, 'POST processes');
});
