import { execFile } from 'node:child_process';
import { Client, type ClientDuplexStream, credentials, Metadata } from '@grpc/grpc-js';
import { decodeFrame, encodeFrame, type Frame } from '../../src/mesh/frames.js';
import { clientChannelOptions } from '../../src/mesh/limits.js';
import { loadMeshProtos, NODE_STREAM_PATH } from '../../src/mesh/proto.js';

/** The independent gRPC client: Debian's python3-grpcio on the system interpreter. */
export const SYSTEM_PYTHON = '/usr/bin/python3';

const HEALTH_CHECK_PY = `
import sys, grpc
target, service = sys.argv[1], sys.argv[2]
def ser(s):
    b = s.encode()
    return (b'\\x0a' + bytes([len(b)]) + b) if b else b''
names = {0: 'UNKNOWN', 1: 'SERVING', 2: 'NOT_SERVING', 3: 'SERVICE_UNKNOWN'}
with grpc.insecure_channel(target) as channel:
    check = channel.unary_unary('/grpc.health.v1.Health/Check',
                                request_serializer=ser, response_deserializer=lambda b: b)
    try:
        resp = check(service, timeout=10)
    except grpc.RpcError as e:
        print('ERROR ' + e.code().name)
        sys.exit(0)
status = resp[1] if len(resp) >= 2 and resp[0] == 0x08 else 0
print(names.get(status, str(status)))
`;

/**
 * Calls grpc.health.v1 Check on `target` (`host:port`) with python3-grpcio, hand
 * encoding the two tiny messages so nothing of this project's proto handling is used.
 * Resolves to the status name, or `ERROR <CODE>`.
 */
export function pythonHealthCheck(target: string, service = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      SYSTEM_PYTHON,
      ['-c', HEALTH_CHECK_PY, target, service],
      { timeout: 20_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`python health check failed: ${err.message} ${stderr}`));
        else resolve(stdout.trim());
      },
    );
  });
}

/** A raw NodeService stream for tests: writes typed frames or arbitrary bytes. */
export interface RawStream {
  readonly call: ClientDuplexStream<unknown, unknown>;
  /** Every decoded frame received, in order. */
  readonly frames: Frame[];
  /** Resolves with the gRPC status code when the stream ends. */
  readonly ended: Promise<{ code: number; details: string }>;
  send(frame: Frame | Buffer): void;
  /** Waits until a frame matching `pred` has arrived. */
  waitFor<F extends Frame>(pred: (f: Frame) => f is F, ms?: number): Promise<F>;
  waitFor(pred: (f: Frame) => boolean, ms?: number): Promise<Frame>;
  close(): void;
}

/** Opens a raw stream to `target`, presenting `token` when given. */
export function openRawStream(target: string, token: string | null): RawStream {
  const method = loadMeshProtos().nodeService.Stream!;
  const client = new Client(target, credentials.createInsecure(), {
    ...clientChannelOptions(),
    // Let the test send frames over the limit, to see the server refuse them.
    'grpc.max_send_message_length': -1,
  });
  const metadata = new Metadata();
  if (token !== null) metadata.set('authorization', `Bearer ${token}`);
  const call = client.makeBidiStreamRequest(
    NODE_STREAM_PATH,
    (v: unknown) => (Buffer.isBuffer(v) ? v : method.requestSerialize(v)),
    (b: Buffer) => method.responseDeserialize(b),
    metadata,
  );
  const frames: Frame[] = [];
  const waiters = new Set<() => void>();
  call.on('data', (m: unknown) => {
    const d = decodeFrame(m);
    if (d.ok) frames.push(d.frame);
    for (const w of [...waiters]) w();
  });
  const ended = new Promise<{ code: number; details: string }>((resolve) => {
    call.on('status', (s: { code: number; details: string }) => resolve(s));
  });
  call.on('error', () => {});
  return {
    call,
    frames,
    ended,
    send(frame) {
      call.write(Buffer.isBuffer(frame) ? frame : encodeFrame(frame));
    },
    waitFor(pred: (f: Frame) => boolean, ms = 10_000) {
      return new Promise<Frame>((resolve, reject) => {
        const check = () => {
          const found = frames.find(pred);
          if (found) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `no matching frame within ${ms} ms; got ${JSON.stringify(frames.map((f) => f.kind))}`,
            ),
          );
        }, ms);
        waiters.add(check);
        check();
      });
    },
    close() {
      call.cancel();
      client.close();
    },
  } as RawStream;
}

/** Waits until `check` returns true, polling every `everyMs`, or throws after `ms`. */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
  ms = 15_000,
  everyMs = 50,
): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
