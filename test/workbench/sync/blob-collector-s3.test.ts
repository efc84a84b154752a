import { randomUUID } from 'node:crypto';
import t from 'tap';
import { createS3Client, S3ObjectStore } from '../../../src/objects/index.js';
import { startS3Server } from '../../support/s3-server.js';
import { blobCollectorSuite } from './blob-collector-suite.js';
import { listKeys, openTestDb } from './fixtures.js';

t.setTimeout(600_000);

const { db } = await openTestDb(t);
const server = await startS3Server({ bucket: 'memql-collector' });
t.teardown(() => server.stop());
await blobCollectorSuite(t, db, async (t) => {
  const client = createS3Client({
    region: server.region,
    endpoint: server.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  });
  const store = new S3ObjectStore(client, { bucket: server.bucket, prefix: `t-${randomUUID()}` });
  t.teardown(async () => {
    await store.deleteMany(await listKeys(store, ''));
    client.destroy();
  });
  return store;
});
