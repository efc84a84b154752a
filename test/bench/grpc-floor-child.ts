/**
 * The floor of case 2, in a process of its own: a bare grpc-js server of
 * `NodeService.Stream`, with the mesh's proto, codec and server channel options, that
 * answers every Request frame with a Response frame of the same id carrying
 * `<response bytes>` of payload. No mesh code runs per frame: no session, no frame
 * checks, no handler. Prints its port once it serves; exits when its standard input
 * ends.
 *
 *   node grpc-floor-child.js <response bytes>
 *
 * @module
 */

import { Server, ServerCredentials, type ServerDuplexStream } from '@grpc/grpc-js';
import { encodeFrame } from '../../src/mesh/frames.js';
import { serverChannelOptions } from '../../src/mesh/limits.js';
import { loadMeshProtos } from '../../src/mesh/proto.js';

const payload = Buffer.alloc(Number(process.argv[2] ?? 256), 'x');
const server = new Server(serverChannelOptions());
server.addService(loadMeshProtos().nodeService, {
  Stream: (call: ServerDuplexStream<unknown, unknown>) => {
    call.on('data', (message: { request?: { id: string } }) => {
      if (message.request === undefined) return;
      call.write(
        encodeFrame({
          kind: 'response',
          id: message.request.id,
          ok: true,
          errorCode: '',
          message: '',
          payload,
        }),
      );
    });
    call.on('end', () => call.end());
  },
});
server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, port) => {
  if (err) throw err;
  process.stdout.write(`${JSON.stringify({ port })}\n`);
});
process.stdin.resume();
process.stdin.on('end', () => server.tryShutdown(() => process.exit(0)));
