import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import { systemAuthority, userAuthority } from '../../src/contract/index.js';
import { FsObjectStore } from '../../src/objects/index.js';
import { DockerRunner } from '../../src/sandbox/docker/index.js';
import { SANDBOX_UID } from '../../src/sandbox/runner.js';
import { createRun, openDb } from '../../src/store/index.js';
import { createCommandChecker } from '../../src/workbench/allowlist/index.js';
import { WorkbenchHost } from '../../src/workbench/host.js';
import {
  dockerCommand as dockerCli,
  imageWithoutNpm,
  RUNTIME_IMAGE,
  runtimeImageId,
} from '../support/build-images.js';
import { connectTestDocker, removeContainersLabelled } from '../support/docker.js';
import { parsedEnvelope, serveCall } from '../support/envelope.js';
import { createTestDatabase } from '../support/postgres.js';
import { buildSuite, PACKAGE_LOCK, packageJson } from './build-suite.js';

/**
 * `build` on the docker runner, its image the `workbench-runtime` target of
 * deploy/Dockerfile (node, npm, git, uid 10001, and the runner init named by its
 * label), against the real daemon; and a replica whose runner image lacks npm.
 */

const docker = await connectTestDocker();
await runtimeImageId(); // throws, naming the fix, when the image is missing
const TEST_LABEL = 'memql.test';
const testRun = randomBytes(6).toString('hex');
t.teardown(() => removeContainersLabelled(docker, TEST_LABEL, testRun).then(() => undefined));
const labels = { [TEST_LABEL]: testRun };

t.test('the runtime image as the runner image', (t) =>
  buildSuite(t, new DockerRunner({ docker, image: RUNTIME_IMAGE, labels }), 'denied'),
);

t.test("the runbook's check: root reads process 1's environment, uid 10001 does not", async (t) => {
  const secret = `secret-${randomBytes(8).toString('hex')}`;
  const name = `memql-runbook-${testRun}`;
  const started = await dockerCli([
    'run',
    '--detach',
    '--name',
    name,
    '--label',
    `${TEST_LABEL}=${testRun}`,
    '--network',
    'none',
    '--env',
    `MEMQL_SECRET=${secret}`,
    '--entrypoint',
    '/usr/bin/tini',
    RUNTIME_IMAGE,
    '--',
    'sleep',
    '600',
  ]);
  t.equal(started.code, 0, started.stderr);
  t.teardown(() => dockerCli(['rm', '--force', name]).then(() => undefined));
  const asRoot = await dockerCli(['exec', name, 'sh', '-c', 'tr "\\0" "\\n" < /proc/1/environ']);
  t.match(asRoot.stdout, `MEMQL_SECRET=${secret}`, 'root reads it: the check means something');
  const asSandbox = await dockerCli([
    'exec',
    '--user',
    `${SANDBOX_UID}:${SANDBOX_UID}`,
    name,
    'sh',
    '-c',
    'id -u; cat /proc/1/environ',
  ]);
  t.equal(asSandbox.stdout.trim(), String(SANDBOX_UID));
  t.match(asSandbox.stderr, /\/proc\/1\/environ: Permission denied/);
  t.notMatch(asSandbox.stdout, secret);
});

t.test('a replica whose sandbox lacks npm refuses a build, naming npm', async (t) => {
  const image = await imageWithoutNpm();
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const db = await openDb({ kind: 'postgres', url: database.url });
  t.teardown(() => db.close());
  const base = await mkdtemp(join(tmpdir(), 'memql-no-npm-'));
  await chmod(base, 0o755);
  t.teardown(() => rm(base, { recursive: true, force: true }));
  const host = new WorkbenchHost({
    db,
    nodeId: 'node-no-npm',
    workbenchRoot: join(base, 'workbenches'),
    ...(process.getuid?.() === 0 ? { fileOwner: { uid: SANDBOX_UID, gid: SANDBOX_UID } } : {}),
    files: { maxReadBytes: 1 << 20, maxWriteBytes: 4 << 20 },
    objects: new FsObjectStore({ baseDir: join(base, 'objects') }),
    queue: { concurrency: 1, leaseMs: 30_000, pollIntervalMs: 200 },
    idleTtlMs: 600_000,
    cleanupIntervalMs: 3_600_000,
    exec: {
      checker: await createCommandChecker(),
      runner: { runner: new DockerRunner({ docker, image, labels }), warnings: [] },
      limits: {
        defaultTimeoutMs: 60_000,
        maxTimeoutMs: 120_000,
        outputLimitBytes: 1 << 20,
        memoryLimitBytes: 512 << 20,
        pidsLimit: 64,
      },
    },
    fetch: { maxBytes: 1 << 20, timeoutMs: 5_000, allowPrivate: [] },
    log: pino({ level: 'silent' }),
  });
  t.teardown(() => host.stop());
  await createRun(db, { id: 'run-no-npm', ownerUserId: 'alice' });
  for (const [path, content] of [
    ['package.json', packageJson('built')],
    ['package-lock.json', PACKAGE_LOCK],
  ] as const) {
    const w = await serveCall(
      host,
      {
        action: 'fs_write',
        args: { path, content },
        runId: 'run-no-npm',
        agentId: 'a',
        taskId: 't',
      },
      userAuthority('user:alice'),
    );
    t.ok(w.ok, `write ${path}`);
  }

  // Not started: the build starts the probe and waits for it, rather than run blind.
  t.equal(host.toolchain(), null, 'nothing known before the probe');
  const result = await host.handleDispatch(
    parsedEnvelope({ action: 'build', args: {}, runId: 'run-no-npm', agentId: 'a', taskId: 'b' }),
    systemAuthority('system:deploy'),
  );
  t.same(host.toolchain(), { status: 'probed', missing: ['npm'] });
  t.match(result, { ok: false, errorCode: 'build_unavailable' });
  if (!result.ok) {
    t.match(result.message, 'node-no-npm lacks npm');
    t.match(result.message, 'workbench-runtime image, which carries node, npm and git');
    t.same(result.payload, {
      replicas: [{ nodeId: 'node-no-npm', missing: ['npm'], problem: 'missing_tools' }],
    });
  }
  const commands = await db.query('select id from workspace_command');
  t.same(commands, [], 'no command was queued: nothing ran to fail with npm: not found');
});
