import { once } from 'node:events';
import { Writable } from 'node:stream';
import { Client, credentials } from '@grpc/grpc-js';
import pino from 'pino';
import t from 'tap';
import { FrameWriter, StreamClosedError } from '../../src/mesh/frame-writer.js';
import { MeshServer } from '../../src/mesh/mesh-server.js';
import { loadMeshProtos } from '../../src/mesh/proto.js';
import { eventually } from '../support/mesh.js';

const log = pino({ level: 'silent' });

t.test('grpc.health.v1: Check and Watch follow the node through drain', async (t) => {
  const server = new MeshServer({
    nodeId: 'wb',
    nodeType: 'workbench',
    version: 't',
    token: 'health-needs-no-token-0123456789',
    tls: null,
    log,
    handler: async () => ({ ok: true }),
  });
  const { port } = await server.start({ host: '127.0.0.1', port: 0 });
  t.teardown(() => server.close());
  const health = loadMeshProtos().healthService;
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  t.teardown(() => client.close());
  const check = (service: string) =>
    new Promise<{ status?: string; code?: number }>((resolve) => {
      client.makeUnaryRequest(
        '/grpc.health.v1.Health/Check',
        health.Check!.requestSerialize,
        health.Check!.responseDeserialize,
        { service },
        (err, value) => resolve(err ? { code: err.code } : (value as { status: string })),
      );
    });
  t.same(await check(''), { status: 'SERVING' }, 'no mesh token needed for probes');
  t.same(await check('memql.node.v1.NodeService'), { status: 'SERVING' });
  t.same(await check('nope'), { code: 5 }, 'NOT_FOUND for an unknown service');

  const watch = client.makeServerStreamRequest(
    '/grpc.health.v1.Health/Watch',
    health.Watch!.requestSerialize,
    health.Watch!.responseDeserialize,
    { service: '' },
  );
  watch.on('error', () => {});
  const seen: string[] = [];
  let firstSeen: () => void = () => {};
  const oneSeen = new Promise<void>((resolve) => {
    firstSeen = resolve;
  });
  const twoSeen = new Promise<void>((resolve) => {
    watch.on('data', (m: { status: string }) => {
      seen.push(m.status);
      if (seen.length === 1) firstSeen();
      if (seen.length === 2) resolve();
    });
  });
  // Drain only once the watch has its first answer, so it is known to be watching.
  await oneSeen;
  await server.drain(0);
  await twoSeen;
  t.same(seen, ['SERVING', 'NOT_SERVING']);
  t.same(await check(''), { status: 'NOT_SERVING' });
  watch.cancel();
});

t.test('FrameWriter: writes keep their order and wait for drain', async (t) => {
  const written: string[] = [];
  let release: (() => void) | undefined;
  const slow = new Writable({
    objectMode: true,
    highWaterMark: 1,
    write(chunk: { cancel?: { id: string } }, _enc, cb) {
      written.push(chunk.cancel?.id ?? '?');
      release = cb;
    },
  });
  const writer = new FrameWriter(slow);
  const done: string[] = [];
  const first = writer.send({ kind: 'cancel', id: 'a' }).then(() => done.push('a'));
  const second = writer.send({ kind: 'cancel', id: 'b' }).then(() => done.push('b'));
  // The writer has written 'a' and now waits on 'drain': 'b' can only follow a drain.
  await eventually('the writer waits for drain', () => slow.listenerCount('drain') > 0);
  t.same(written, ['a'], 'the buffer is full: nothing more is written');
  t.same(done, [], 'and the writer waits for drain');
  release?.();
  await first;
  await eventually('the next frame is written', () => written.length === 2);
  t.same(written, ['a', 'b'], 'after drain the next frame goes out, in order');
  release?.();
  await second;
  t.same(done, ['a', 'b']);

  const closed = once(slow, 'close');
  slow.destroy();
  await closed;
  await t.rejects(writer.send({ kind: 'cancel', id: 'c' }), StreamClosedError);
  t.equal(writer.open, false);
});
