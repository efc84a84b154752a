import t from 'tap';
import {
  configLogView,
  loadConfig,
  REDACTED,
  redactConfig,
  redactUrlPassword,
} from '../../src/config/index.js';

const DB_PASSWORD = 'db-pass-4f9a';
const S3_SECRET = 's3-secret-77c1';
const MESH_TOKEN = 'mesh-token-0b3e5d8a';
const WORKER_TOKEN = 'mqt_worker-token-5e1c';

t.test('redaction hides every secret and keeps the rest', async (t) => {
  const config = loadConfig({
    MEMQL_DATABASE_URL: `postgres://memql:${DB_PASSWORD}@db.internal:5432/memql?sslmode=require`,
    MEMQL_OBJECT_STORE: 's3',
    MEMQL_S3_BUCKET: 'memql-files',
    MEMQL_S3_ACCESS_KEY_ID: 'AKIAVISIBLE',
    MEMQL_S3_SECRET_ACCESS_KEY: S3_SECRET,
    MEMQL_MESH_TOKEN: MESH_TOKEN,
    MEMQL_WORKER_AGENT: 'agent:50060',
    MEMQL_WORKER_TOKEN: WORKER_TOKEN,
    MEMQL_WORKER_ROOT: '/home/me/files',
  });
  const before = JSON.stringify(config);
  const redacted = redactConfig(config);
  const text = JSON.stringify(redacted);
  for (const secret of [DB_PASSWORD, S3_SECRET, MESH_TOKEN, WORKER_TOKEN]) {
    t.notOk(text.includes(secret), `${secret} is hidden`);
    t.ok(before.includes(secret), `${secret} is still in the original`);
  }
  t.equal(JSON.stringify(config), before, 'the input is not changed');
  t.equal(redacted.mesh.token, REDACTED);
  t.equal(redacted.worker?.token, REDACTED);
  t.equal(redacted.worker?.root, '/home/me/files');
  t.strictSame(redacted.database, {
    kind: 'postgres',
    url: 'postgres://memql:[redacted]@db.internal:5432/memql?sslmode=require',
  });
  t.strictSame(redacted.objectStore, { ...config.objectStore, secretAccessKey: REDACTED });
});

t.test('a config without secrets is unchanged', async (t) => {
  const config = loadConfig({ MEMQL_DATABASE_URL: 'postgres://memql@db/memql' });
  t.strictSame(redactConfig(config), config);
  t.notOk(JSON.stringify(redactConfig(loadConfig({}))).includes(REDACTED));
});

t.test('redactUrlPassword', async (t) => {
  const cases: Array<[string, string]> = [
    ['postgres://u:p@h/db', 'postgres://u:[redacted]@h/db'],
    ['postgres://u@h/db', 'postgres://u@h/db'],
    ['postgres://h/db', 'postgres://h/db'],
    ['postgres://u:p%40ss@h:5432/db', 'postgres://u:[redacted]@h:5432/db'],
    ['postgres://h/db?user=u&password=qp', 'postgres://h/db?user=u&password=[redacted]'],
    ['postgres://u:p@h/db?sslpassword=sp', 'postgres://u:[redacted]@h/db?sslpassword=[redacted]'],
    // Text that is not a URL is redacted by pattern.
    ['postgres://u:secret@[bad/db', 'postgres://u:[redacted]@[bad/db'],
    ['garbage password=secret&x=1', 'garbage password=secret&x=1'],
    ['garbage ?password=secret&x=1', 'garbage ?password=[redacted]&x=1'],
  ];
  for (const [input, expected] of cases) t.equal(redactUrlPassword(input), expected, input);
});

t.test('the log view shows address ranges as text, secrets redacted', async (t) => {
  const config = loadConfig({
    MEMQL_FETCH_ALLOW_PRIVATE: '10.1.2.3/8,fd00::/8',
    MEMQL_MESH_TOKEN: 'hunter2-hunter2-hunter2',
  });
  const view = configLogView(config) as { fetch: { allowPrivate: unknown } };
  t.strictSame(view.fetch.allowPrivate, ['10.0.0.0/8', 'fd00::/8']);
  t.notOk(JSON.stringify(view).includes('hunter2'), 'the token is redacted');
});
