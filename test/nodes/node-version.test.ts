import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { createS3Client } from '../../src/objects/index.js';

/**
 * The Node.js the tests run on is one the project supports (package.json's `engines`,
 * 22 or later; `npm run setup:test` installs Node.js 24 where the machine's is older),
 * and on it the AWS SDK starts without its warning about unsupported Node.js releases.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as {
  engines: { node: string };
};

const major = (version: string) => Number(version.replace(/^v/, '').split('.')[0]);

t.test('engines names Node.js 22 or later, and the tests run on such a release', async (t) => {
  const floor = /^>=(\d+)$/.exec(pkg.engines.node);
  t.ok(floor, `engines.node is a floor (${pkg.engines.node})`);
  t.equal(Number(floor?.[1]), 22, 'the supported floor is Node.js 22');
  t.ok(
    major(process.version) >= Number(floor?.[1]),
    `running on ${process.version}, supported from ${pkg.engines.node}; run npm run setup:test`,
  );
});

t.test('an S3 client starts without a NodeVersionSupportWarning', async (t) => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  t.teardown(() => process.off('warning', onWarning));
  const client = createS3Client({
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:9',
    forcePathStyle: true,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  t.teardown(() => client.destroy());
  // A warning is emitted on the next tick of the process: let that tick pass.
  await new Promise((done) => setImmediate(done));
  await new Promise((done) => setImmediate(done));
  t.same(
    warnings.filter((w) => w.includes('NodeVersionSupport')),
    [],
    'the SDK does not warn that this Node.js is unsupported',
  );
});
