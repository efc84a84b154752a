import t from 'tap';
import { startS3Server } from '../support/s3-server.js';
import { s3TestStore } from '../support/s3-store.js';
import { versionsSuite } from './versions-suite.js';

t.setTimeout(600_000);

const server = await startS3Server({ bucket: 'memql-versions' });
t.teardown(() => server.stop());

versionsSuite(t, async (t) => s3TestStore(t, server));
