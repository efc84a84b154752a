import { randomUUID } from 'node:crypto';
import t from 'tap';
import { createS3Client, S3ObjectStore } from '../../src/objects/index.js';
import { startS3Server } from '../support/s3-server.js';
import { listKeys } from './sync/fixtures.js';
import { versionsSuite } from './versions-suite.js';

t.setTimeout(600_000);

const server = await startS3Server({ bucket: 'memql-versions' });
t.teardown(() => server.stop());

versionsSuite(t, async (t) => {
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
