import t from 'tap';
import { objectStoreSettings } from '../../src/objects/index.js';

t.test('the filesystem store is passed through as configured', async (t) => {
  t.same(objectStoreSettings({ kind: 'fs', baseDir: '/var/lib/memql/objects' }), {
    kind: 'fs',
    baseDir: '/var/lib/memql/objects',
  });
});

t.test('S3: an endpoint and a key pair only when configured', async (t) => {
  const base = {
    kind: 's3' as const,
    bucket: 'memql',
    prefix: 'ws/',
    region: 'eu-west-1',
    forcePathStyle: false,
    endpoint: null,
    accessKeyId: null,
    secretAccessKey: null,
  };
  t.same(objectStoreSettings(base), {
    kind: 's3',
    bucket: 'memql',
    prefix: 'ws/',
    region: 'eu-west-1',
    forcePathStyle: false,
  });
  t.same(
    objectStoreSettings({
      ...base,
      endpoint: 'http://127.0.0.1:9000',
      forcePathStyle: true,
      accessKeyId: 'AK',
      secretAccessKey: 'SK',
    }),
    {
      kind: 's3',
      bucket: 'memql',
      prefix: 'ws/',
      region: 'eu-west-1',
      forcePathStyle: true,
      endpoint: 'http://127.0.0.1:9000',
      accessKeyId: 'AK',
      secretAccessKey: 'SK',
    },
  );
  t.notOk(
    'accessKeyId' in objectStoreSettings({ ...base, accessKeyId: 'AK' }),
    'half a key pair leaves the SDK its own credential chain',
  );
});
