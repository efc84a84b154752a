/**
 * The floor under the mesh for case 2: one round trip of a Request frame and its
 * Response frame over an open grpc-js bidirectional stream, between this process and a
 * child serving it (`grpc-floor-child.ts`), with the mesh's proto and codec, its client
 * and server channel options and frames of the sizes the mesh's call sends. What the
 * mesh adds above the in-process call is set against this: the part of it no mesh code
 * could save, short of leaving gRPC.
 *
 * @module
 */

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client, credentials } from '@grpc/grpc-js';
import { encodeFrame } from '../../src/mesh/frames.js';
import { clientChannelOptions } from '../../src/mesh/limits.js';
import { loadMeshProtos, NODE_STREAM_PATH } from '../../src/mesh/proto.js';
import type { BenchContext } from './context.js';

/** A bare stream to the floor's child process. */
export interface GrpcFloor {
  /** Sends one Request frame of the given payload and resolves at its Response. */
  roundTrip(payload: Buffer): Promise<void>;
}

/** Starts the child (answering with `responseBytes` of payload) and opens the stream. */
export async function startGrpcFloor(ctx: BenchContext, responseBytes: number): Promise<GrpcFloor> {
  const script = join(dirname(fileURLToPath(import.meta.url)), 'grpc-floor-child.js');
  const child = spawn(process.execPath, [script, String(responseBytes)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  ctx.defer(async () => {
    child.stdin?.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  const { port } = JSON.parse(line) as { port: number };

  const method = loadMeshProtos().nodeService.Stream;
  if (!method) throw new Error('NodeService has no Stream method');
  const client = new Client(
    `127.0.0.1:${port}`,
    credentials.createInsecure(),
    clientChannelOptions(),
  );
  const call = client.makeBidiStreamRequest(
    NODE_STREAM_PATH,
    method.requestSerialize,
    method.responseDeserialize,
  );
  ctx.defer(async () => {
    call.end();
    call.cancel();
    client.close();
  });
  call.on('error', () => {});
  const waiting = new Map<string, () => void>();
  call.on('data', (message: { response?: { id: string } }) => {
    const id = message.response?.id;
    if (id === undefined) return;
    waiting.get(id)?.();
    waiting.delete(id);
  });
  let next = 0;
  return {
    roundTrip: (payload) =>
      new Promise<void>((resolve) => {
        next += 1;
        const id = String(next);
        waiting.set(id, resolve);
        call.write(
          encodeFrame({
            kind: 'request',
            id,
            method: 'workbench.dispatch',
            authority: { class: 'user', subject: 'user:bench' },
            payload,
          }),
        );
      }),
  };
}
