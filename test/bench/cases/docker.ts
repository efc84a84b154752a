/**
 * Case 9: the Docker runner running `true` against a raw dockerode
 * create-start-wait-remove of the same image with the same user, mounts, network and
 * limits. A third variant adds the two daemon calls the runner makes beyond those
 * four (attach before start, inspect after wait), to attribute the gap.
 *
 * @module
 */

import { resolve } from 'node:path';
import Dockerode from 'dockerode';
import { DockerRunner } from '../../../src/sandbox/docker/index.js';
import { SANDBOX_UID } from '../../../src/sandbox/runner.js';
import {
  makeSandboxWorkspace,
  TEST_DOCKER_SOCKET,
  TEST_RUNNER_IMAGE,
} from '../../support/docker.js';
import type { BenchContext } from '../context.js';
import { type Row, ratioRow, sampleInterleaved } from '../harness.js';

const LABEL = 'memql.bench';

export async function docker(ctx: BenchContext): Promise<Row[]> {
  const client = new Dockerode({ socketPath: TEST_DOCKER_SOCKET });
  try {
    await client.ping();
  } catch (err) {
    throw new Error(
      `no Docker daemon at ${TEST_DOCKER_SOCKET} (${(err as Error).message}); run scripts/setup/install-docker.sh`,
    );
  }
  try {
    await client.getImage(TEST_RUNNER_IMAGE).inspect();
  } catch {
    throw new Error(`image ${TEST_RUNNER_IMAGE} missing; run scripts/setup/install-docker.sh`);
  }
  const ws = await makeSandboxWorkspace();
  ctx.defer(() => ws.remove());
  ctx.defer(async () => {
    const left = await client.listContainers({ all: true, filters: { label: [`${LABEL}=1`] } });
    await Promise.all(left.map((c) => client.getContainer(c.Id).remove({ force: true })));
  });
  const runner = new DockerRunner({
    docker: client,
    image: TEST_RUNNER_IMAGE,
    labels: { [LABEL]: '1' },
  });
  const memory = 2 * 1024 * 1024 * 1024;
  const options: Dockerode.ContainerCreateOptions = {
    Image: TEST_RUNNER_IMAGE,
    Cmd: ['/bin/sh', '-c', 'true'],
    Entrypoint: [],
    User: `${SANDBOX_UID}:${SANDBOX_UID}`,
    WorkingDir: '/workspace',
    Labels: { [LABEL]: '1' },
    AttachStdout: true,
    AttachStderr: true,
    NetworkDisabled: true,
    HostConfig: {
      NetworkMode: 'none',
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      ReadonlyRootfs: true,
      Tmpfs: { '/tmp': 'rw,nosuid,nodev,size=67108864' },
      Memory: memory,
      MemorySwap: memory,
      PidsLimit: 512,
      NanoCpus: 1e9,
      Binds: [`${resolve(ws.dir)}:/workspace:rw`],
      LogConfig: { Type: 'none', Config: {} },
    },
  };
  const raw = async (withAttach: boolean) => {
    const c = await client.createContainer(options);
    try {
      let ended: Promise<void> = Promise.resolve();
      if (withAttach) {
        const stream = await c.attach({ stream: true, stdout: true, stderr: true, hijack: true });
        stream.on('error', () => {});
        ended = new Promise((r) => {
          stream.once('end', r);
          stream.once('close', r);
        });
        stream.resume();
      }
      await c.start();
      const waited = (await c.wait()) as { StatusCode?: number };
      if (waited.StatusCode !== 0) throw new Error(`raw container exited ${waited.StatusCode}`);
      if (withAttach) {
        await Promise.race([ended, new Promise((r) => setTimeout(r, 1_000))]);
        await c.inspect();
      }
    } finally {
      await c.remove({ force: true, v: true });
    }
  };
  const [runnerMs, rawMs, attachMs] = await sampleInterleaved(
    [
      {
        name: 'runner',
        run: async () => {
          const r = await runner.run({
            workspaceDir: ws.dir,
            command: 'true',
            timeoutMs: 60_000,
            outputLimitBytes: 1 << 20,
          });
          if (r.exitCode !== 0) throw new Error(`docker runner: exit ${r.exitCode}`);
        },
      },
      { name: 'raw', run: () => raw(false) },
      { name: 'raw+attach+inspect', run: () => raw(true) },
    ],
    { samples: ctx.pick(5, 20), warmup: 1 },
  );
  return [
    ratioRow(
      {
        case: '9 docker',
        subject: 'DockerRunner.run true',
        baseline: 'raw create-start-wait-remove',
        unit: 'ms',
        target: 'p50 ratio <= 1.1',
        note: `image ${TEST_RUNNER_IMAGE}`,
      },
      runnerMs ?? [],
      rawMs ?? [],
      (r) => r <= 1.1,
    ),
    ratioRow(
      {
        case: '9 docker',
        subject: 'raw + attach + inspect',
        baseline: 'raw create-start-wait-remove',
        unit: 'ms',
        target: "info (the runner's two extra daemon calls)",
      },
      attachMs ?? [],
      rawMs ?? [],
      null,
    ),
  ];
}
