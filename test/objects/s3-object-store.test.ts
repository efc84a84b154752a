import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Socket } from 'node:net';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import t, { type Test } from 'tap';
import { createObjectStore } from '../../src/objects/create-object-store.js';
import { getBytes } from '../../src/objects/get-bytes.js';
import { createS3Client, type S3ClientOptions } from '../../src/objects/s3-client.js';
import { MULTIPART_PART_SIZE, S3ObjectStore } from '../../src/objects/s3-object-store.js';
import { startS3Server } from '../support/s3-server.js';
import {
  failingStream,
  patternBytes,
  patternSha256,
  patternStream,
  streamSha256,
} from './byte-pattern.js';
import { listAll, objectStoreConformance } from './conformance.js';

const server = await startS3Server({ bucket: 'memql-objects' });
t.teardown(() => server.stop());

const clientOptions: S3ClientOptions = {
  region: server.region,
  endpoint: server.endpoint,
  forcePathStyle: true,
  credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
};

/** A client of its own for `t`, destroyed when `t` ends. */
function freshClient(t: Test, overrides: Partial<S3ClientOptions> = {}): S3Client {
  const client = createS3Client({ ...clientOptions, ...overrides });
  t.teardown(() => client.destroy());
  return client;
}

/** The command names a client sends, in order. */
function recordCommands(client: S3Client): string[] {
  const sent: string[] = [];
  client.middlewareStack.add(
    (next, context) => (args) => {
      sent.push(String(context.commandName));
      return next(args);
    },
    { step: 'initialize', name: 'recordCommands' },
  );
  return sent;
}

/** A store under a prefix no other test uses; its objects are deleted when `t` ends. */
function freshStore(t: Test, client: S3Client = freshClient(t)): S3ObjectStore {
  const store = new S3ObjectStore(client, { bucket: server.bucket, prefix: `t-${randomUUID()}` });
  t.teardown(async () => {
    const keys = await listAll(store, '');
    await store.deleteMany(keys);
  });
  return store;
}

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

objectStoreConformance(t, async (t) => freshStore(t));

t.test('a 20 MB stream goes up as a multipart upload', async (t) => {
  const client = freshClient(t);
  const sent = recordCommands(client);
  const store = freshStore(t, client);
  const size = 20 * 1024 * 1024;
  t.same(await store.put('big/multi', patternStream(size), { contentLength: size }), { size });
  t.same(sent, [
    'CreateMultipartUploadCommand',
    'UploadPartCommand',
    'UploadPartCommand',
    'UploadPartCommand',
    'CompleteMultipartUploadCommand',
  ]);
  t.same(await streamSha256(await store.get('big/multi')), { sha256: patternSha256(size), size });
});

t.test('a body of one part or less goes up with one PutObject', async (t) => {
  const client = freshClient(t);
  const sent = recordCommands(client);
  const store = freshStore(t, client);
  await store.put('small/stream', patternStream(1000));
  await store.put('small/exact', patternStream(MULTIPART_PART_SIZE));
  t.same(sent, ['PutObjectCommand', 'PutObjectCommand']);
  sent.length = 0;
  await store.put('small/over', patternStream(MULTIPART_PART_SIZE + 1));
  t.same(sent, [
    'CreateMultipartUploadCommand',
    'UploadPartCommand',
    'UploadPartCommand',
    'CompleteMultipartUploadCommand',
  ]);
  const tail = await getBytes(store, 'small/over', { offset: MULTIPART_PART_SIZE - 2 });
  t.equal(tail.toString('hex'), patternBytes(MULTIPART_PART_SIZE - 2, 3).toString('hex'));
});

t.test('a multipart upload whose body fails is aborted and stores nothing', async (t) => {
  const client = freshClient(t);
  const sent = recordCommands(client);
  const store = freshStore(t, client);
  const boom = new Error('body failed');
  await t.rejects(store.put('big/failed', failingStream(9 * 1024 * 1024, boom)), boom);
  t.ok(sent.includes('UploadPartCommand'), 'a part went up before the failure');
  t.equal(sent.at(-1), 'AbortMultipartUploadCommand');
  t.notOk(sent.includes('CompleteMultipartUploadCommand'));
  t.equal(await store.head('big/failed'), null);

  sent.length = 0;
  const declared = 20 * 1024 * 1024;
  await t.rejects(
    store.put('big/short', patternStream(9 * 1024 * 1024), { contentLength: declared }),
    { code: 'object_size_mismatch' },
  );
  t.equal(sent.at(-1), 'AbortMultipartUploadCommand');
  t.equal(await store.head('big/short'), null);
});

t.test('deleteMany sends at most 1000 keys per request', async (t) => {
  const client = freshClient(t);
  const sent = recordCommands(client);
  const store = freshStore(t, client);
  await store.put('keep', Buffer.from('kept'));
  sent.length = 0;
  const absent = Array.from({ length: 2001 }, (_, i) => `gone/${i}`);
  await store.deleteMany(absent);
  t.same(sent, ['DeleteObjectsCommand', 'DeleteObjectsCommand', 'DeleteObjectsCommand']);
  t.equal((await getBytes(store, 'keep')).toString(), 'kept');
});

t.test('keys live under the prefix and listings strip it', async (t) => {
  const client = freshClient(t);
  const tag = randomUUID();
  const first = new S3ObjectStore(client, { bucket: server.bucket, prefix: `/p-${tag}/one` });
  const second = new S3ObjectStore(client, { bucket: server.bucket, prefix: `p-${tag}/two/` });
  t.equal(first.prefix, `p-${tag}/one/`, 'slashes normalised');
  t.teardown(() => first.deleteMany(['k/a', 'k/b']));
  await first.put('k/a', Buffer.from('a'));
  await first.put('k/b', Buffer.from('b'));
  const raw = await client.send(
    new ListObjectsV2Command({ Bucket: server.bucket, Prefix: `p-${tag}/` }),
  );
  t.same(
    raw.Contents?.map((object) => object.Key),
    [`p-${tag}/one/k/a`, `p-${tag}/one/k/b`],
  );
  t.same(await listAll(first, ''), ['k/a', 'k/b']);
  t.same(await listAll(first, 'k/b'), ['k/b']);
  t.same(await listAll(second, ''), []);
  t.equal(await second.head('k/a'), null);
  const afterCursor = await first.list('', { limit: 1 });
  t.same([afterCursor.items.map((item) => item.key), afterCursor.nextCursor], [['k/a'], 'k/a']);
});

t.test('an unreachable endpoint is object_store_unavailable', async (t) => {
  const port = await closedPort();
  const client = freshClient(t, { endpoint: `http://127.0.0.1:${port}`, maxAttempts: 2 });
  const store = new S3ObjectStore(client, { bucket: server.bucket });
  const unavailable = { code: 'object_store_unavailable' };
  await t.rejects(store.put('k', Buffer.from('x')), unavailable, 'put');
  await t.rejects(store.put('k', patternStream(MULTIPART_PART_SIZE + 1)), unavailable, 'multipart');
  await t.rejects(store.get('k'), unavailable, 'get');
  await t.rejects(store.head('k'), unavailable, 'head');
  await t.rejects(store.list(''), unavailable, 'list');
  await t.rejects(store.deleteMany(['k']), unavailable, 'deleteMany');
  await t.rejects(store.copy('k', 'j'), unavailable, 'copy');
});

t.test('a server that fails or never answers is object_store_unavailable', async (t) => {
  // Stand-ins for a broken S3 endpoint: one answers every request with 503, the
  // other accepts connections and stays silent.
  const failing = createHttpServer((_req, res) => {
    res.writeHead(503, { 'content-type': 'application/xml' });
    res.end('<Error><Code>ServiceUnavailable</Code><Message>down</Message></Error>');
  });
  const held = new Set<Socket>();
  const silent = createServer((socket) => held.add(socket));
  for (const server of [failing, silent]) {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  }
  t.teardown(async () => {
    failing.closeAllConnections();
    for (const socket of held) socket.destroy();
    await Promise.all(
      [failing, silent].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))),
    );
  });
  const endpointOf = (server: { address(): unknown }): string =>
    `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const unavailable = { code: 'object_store_unavailable' };

  const answers503 = new S3ObjectStore(
    freshClient(t, { endpoint: endpointOf(failing), maxAttempts: 1 }),
    { bucket: server.bucket },
  );
  await t.rejects(answers503.get('k'), unavailable, '503 on get');
  await t.rejects(answers503.head('k'), unavailable, '503 on head');
  await t.rejects(answers503.list(''), unavailable, '503 on list');

  const neverAnswers = new S3ObjectStore(
    freshClient(t, { endpoint: endpointOf(silent), maxAttempts: 1, socketTimeoutMs: 300 }),
    { bucket: server.bucket },
  );
  // The server never answers, so only the client's idle timeout can end this call.
  await t.rejects(neverAnswers.head('k'), unavailable, 'the idle timeout ends the wait');
});

t.test('refused credentials are object_store_unavailable', async (t) => {
  // s3rver checks the access key id (it does not verify SigV4 signatures).
  const client = freshClient(t, {
    credentials: { accessKeyId: 'UNKNOWN-KEY', secretAccessKey: server.secretAccessKey },
  });
  const store = new S3ObjectStore(client, { bucket: server.bucket });
  const unavailable = { code: 'object_store_unavailable' };
  await t.rejects(store.put('k', Buffer.from('x')), unavailable, 'put');
  await t.rejects(store.get('k'), unavailable, 'get');
  await t.rejects(store.head('k'), unavailable, 'head');
  await t.rejects(store.list(''), unavailable, 'list');
});

t.test('a missing bucket is object_store_unavailable, not a missing object', async (t) => {
  const store = new S3ObjectStore(freshClient(t), { bucket: 'no-such-bucket' });
  const unavailable = { code: 'object_store_unavailable' };
  await t.rejects(store.get('k'), unavailable, 'get');
  await t.rejects(store.list(''), unavailable, 'list');
  await t.rejects(store.put('k', Buffer.from('x')), unavailable, 'put');
});

t.test('createObjectStore builds a working S3 store from plain settings', async (t) => {
  const store = createObjectStore({
    kind: 's3',
    bucket: server.bucket,
    prefix: `factory-${randomUUID()}`,
    region: server.region,
    endpoint: server.endpoint,
    forcePathStyle: true,
    accessKeyId: server.accessKeyId,
    secretAccessKey: server.secretAccessKey,
  });
  t.teardown(() => store.deleteMany(['made/by-factory']));
  await store.put('made/by-factory', Buffer.from('yes'));
  t.equal((await getBytes(store, 'made/by-factory')).toString(), 'yes');
  t.throws(
    () =>
      createObjectStore({
        kind: 's3',
        bucket: server.bucket,
        prefix: '',
        region: server.region,
        accessKeyId: 'only-half',
      }),
    TypeError,
  );
});
