import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { createS3Client, S3ObjectStore } from '../../src/objects/index.js';
import { listKeys } from '../workbench/sync/fixtures.js';
import type { S3TestServer } from './s3-server.js';

/**
 * An S3 object store on `server` under a prefix of its own, emptied at teardown.
 * `doomed`: the server will be stopped, so requests are not retried and nothing is
 * cleaned up.
 */
export function s3TestStore(t: Test, server: S3TestServer, doomed = false): S3ObjectStore {
  const client = createS3Client({
    region: server.region,
    endpoint: server.endpoint,
    forcePathStyle: true,
    // s3rver's DeleteObjects sometimes answers 500 on several keys of one folder and
    // succeeds when retried, so only the doomed store gives up at once.
    ...(doomed ? { maxAttempts: 1 } : {}),
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
  });
  const store = new S3ObjectStore(client, { bucket: server.bucket, prefix: `t-${randomUUID()}` });
  t.teardown(async () => {
    if (!doomed) await store.deleteMany(await listKeys(store, ''));
    client.destroy();
  });
  return store;
}
