import t from 'tap';
import { startS3Server } from '../../support/s3-server.js';
import { s3TestStore } from '../../support/s3-store.js';
import { blobCollectorSuite } from './blob-collector-suite.js';
import { openTestDb } from './fixtures.js';

t.setTimeout(600_000);

const { db } = await openTestDb(t);
const server = await startS3Server({ bucket: 'memql-collector' });
t.teardown(() => server.stop());
await blobCollectorSuite(t, db, async (t) => s3TestStore(t, server));
