import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { Test } from 'tap';
import type { EgressPolicy } from '../../src/contract/index.js';
import { type EgressEndpoint, EgressProxy } from '../../src/sandbox/egress/index.js';
import { SANDBOX_UID } from '../../src/sandbox/runner.js';
import { writeTrustBundle } from '../../src/workbench/egress/index.js';
import { startTestInternet, TEST_INTERNET_NAMES, type TestInternet } from '../support/internet.js';
import { LOOPBACK, rules } from './egress/egress-fixture.js';

/** What a runner's egress tests share: the stand-in internet and a run's proxy endpoint. */
export interface SandboxEgressFixture {
  readonly internet: TestInternet;
  readonly endpoint: EgressEndpoint;
  /** The sandbox's trust bundle: the system CAs, the node CA and the stand-in's CA. */
  readonly bundle: string;
  /** A cache directory the sandbox uid owns. */
  readonly cacheDir: string;
  /** The run's policy, read at each new connection; starts with every stand-in name. */
  policy: EgressPolicy;
}

/**
 * The stand-in internet (`test/support/internet.ts`) and a run's endpoint of a real
 * proxy in this process, as the workbench sets them up for a run with network: the
 * socket directory and cache owned by the sandbox uid (bwrap binds as it when the node
 * is root), the names mapped to 127.0.0.1 and loopback allowed, the bundle written by
 * the workbench's own `writeTrustBundle`. Closed at the test's end.
 */
export async function startSandboxEgress(
  t: Test,
  options: { blobBytes: number },
): Promise<SandboxEgressFixture> {
  const internet = await startTestInternet({ blobBytes: options.blobBytes });
  t.teardown(() => internet.close());
  const base = await mkdtemp(join(tmpdir(), 'memql-sandbox-egress-'));
  await chmod(base, 0o755);
  t.teardown(() => rm(base, { recursive: true, force: true }));
  const root = process.getuid?.() === 0;
  for (const dir of ['sock', 'cache']) {
    await mkdir(join(base, dir), { mode: 0o700 });
    if (root) await chown(join(base, dir), SANDBOX_UID, SANDBOX_UID);
  }
  const proxy = new EgressProxy({
    dir: join(base, 'sock'),
    caDir: join(base, 'ca'),
    resolve: async (host) => (TEST_INTERNET_NAMES.includes(host) ? ['127.0.0.1'] : []),
    // The stand-in internet is on loopback: the tests' operator allows it.
    allowPrivate: LOOPBACK,
    secrets: [],
    log: pino({ level: 'silent' }),
  });
  t.teardown(() => proxy.close());
  const fixture = {
    internet,
    cacheDir: join(base, 'cache'),
    policy: { allow: rules(...TEST_INTERNET_NAMES), secrets: [] } as EgressPolicy,
  };
  const endpoint = await proxy.openRun('run-sandbox-egress', () => fixture.policy);
  const bundle = await writeTrustBundle(join(base, 'ca-bundle.pem'), {
    nodeCaPath: endpoint.caCertPath,
    extraPem: internet.caPem,
  });
  return Object.assign(fixture, { endpoint, bundle });
}
