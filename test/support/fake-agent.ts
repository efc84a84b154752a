import { Server, ServerCredentials, type ServerDuplexStream, status } from '@grpc/grpc-js';
import {
  decodeFrame,
  encodeFrame,
  type Frame,
  type OutputFrame,
  type ResponseFrame,
  type WireAuthority,
} from '../../src/mesh/frames.js';
import { serverChannelOptions } from '../../src/mesh/limits.js';
import { loadMeshProtos } from '../../src/mesh/proto.js';
import { WORKER_DISPATCH_METHOD } from '../../src/mesh/worker-method.js';

/**
 * The agent's side of worker streams, played by a test: a real grpc-js server on
 * 127.0.0.1:0 serving `NodeService.Stream`, which checks the worker's bearer token,
 * records every frame the worker sends, and lets the test send frames, calls and ends.
 * Waits are on events (a frame, a stream, an end), never on time.
 */

/** Calls the waiters of a change. */
class Changes {
  private readonly waiters = new Set<() => void>();

  notify(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Resolves with `check()`'s first defined value, checked at once and on every change. */
  until<T>(check: () => T | undefined, what: string, ms = 15_000): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const attempt = () => {
        const found = check();
        if (found === undefined) return;
        clearTimeout(timer);
        this.waiters.delete(attempt);
        resolve(found);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(attempt);
        reject(new Error(`no ${what} within ${ms} ms`));
      }, ms);
      this.waiters.add(attempt);
      attempt();
    });
  }
}

/** One worker stream as the agent sees it. */
export interface AgentSideStream {
  /** The `authorization` metadata the worker presented. */
  readonly authorization: string | undefined;
  /** Every frame the worker sent, in order. */
  readonly frames: Frame[];
  /** Whether the worker's side has ended (or the call is gone). */
  readonly over: boolean;
  send(frame: Frame): void;
  waitFor<F extends Frame>(pred: (f: Frame) => f is F, ms?: number): Promise<F>;
  /** Resolves when the worker has ended its side or the call is gone. */
  waitForEnd(ms?: number): Promise<void>;
  /** Sends a `worker.dispatch` call; resolves with its Response and the Output before it. */
  dispatch(
    id: string,
    envelope: object,
    authority?: WireAuthority,
  ): Promise<{ response: ResponseFrame; outputs: OutputFrame[] }>;
  /** Ends the stream from the agent's side (status OK). */
  end(): void;
}

/** A test's agent node. */
export interface FakeAgent {
  readonly target: string;
  readonly port: number;
  /** Streams accepted with the right token. */
  readonly streams: AgentSideStream[];
  /** Streams refused UNAUTHENTICATED. */
  readonly refusals: number;
  /** Waits for the `n`th accepted stream (1-based). */
  waitForStream(n: number, ms?: number): Promise<AgentSideStream>;
  /** Waits for `n` refusals. */
  waitForRefusals(n: number, ms?: number): Promise<void>;
  close(): Promise<void>;
}

const isResponse =
  (id: string) =>
  (f: Frame): f is ResponseFrame =>
    f.kind === 'response' && f.id === id;

/** Starts the server; streams whose token is not `Bearer <token>` are refused UNAUTHENTICATED. */
export async function startFakeAgent(token: string): Promise<FakeAgent> {
  const changes = new Changes();
  const streams: AgentSideStream[] = [];
  const calls = new Set<ServerDuplexStream<unknown, unknown>>();
  let refusals = 0;
  const server = new Server(serverChannelOptions());
  server.addService(loadMeshProtos().nodeService, {
    Stream: (call: ServerDuplexStream<unknown, unknown>) => {
      const presented = call.metadata.get('authorization')[0];
      const authorization = typeof presented === 'string' ? presented : undefined;
      if (authorization !== `Bearer ${token}`) {
        refusals += 1;
        call.emit('error', {
          code: status.UNAUTHENTICATED,
          details: 'unauthenticated: the API token is not valid',
        });
        changes.notify();
        return;
      }
      calls.add(call);
      const frames: Frame[] = [];
      let over = false;
      const ended = () => {
        over = true;
        calls.delete(call);
        changes.notify();
      };
      call.on('data', (message: unknown) => {
        const decoded = decodeFrame(message);
        if (decoded.ok) frames.push(decoded.frame);
        changes.notify();
      });
      call.on('end', ended);
      call.on('cancelled', ended);
      call.on('error', ended);
      call.on('close', ended);
      const stream: AgentSideStream = {
        authorization,
        frames,
        get over() {
          return over;
        },
        send: (frame) => {
          call.write(encodeFrame(frame));
        },
        waitFor: <F extends Frame>(pred: (f: Frame) => f is F, ms?: number) =>
          changes.until(() => frames.find(pred), 'matching frame', ms),
        waitForEnd: (ms) =>
          changes.until(() => (over ? true : undefined), 'end of the stream', ms).then(() => {}),
        dispatch: async (id, envelope, authority = { class: 'user', subject: 'user:alice' }) => {
          stream.send({
            kind: 'request',
            id,
            method: WORKER_DISPATCH_METHOD,
            authority,
            payload: Buffer.from(JSON.stringify(envelope)),
          });
          const response = await stream.waitFor(isResponse(id), 30_000);
          const at = frames.indexOf(response);
          const outputs = frames
            .slice(0, at)
            .filter((f): f is OutputFrame => f.kind === 'output' && f.id === id);
          return { response, outputs };
        },
        end: () => {
          call.end();
        },
      };
      streams.push(stream);
      changes.notify();
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    );
  });
  return {
    target: `127.0.0.1:${port}`,
    port,
    streams,
    get refusals() {
      return refusals;
    },
    waitForStream: (n, ms) => changes.until(() => streams[n - 1], `stream ${n}`, ms),
    waitForRefusals: (n, ms) =>
      changes.until(() => (refusals >= n ? true : undefined), `${n} refusals`, ms).then(() => {}),
    close: async () => {
      for (const call of calls) call.end();
      server.forceShutdown();
    },
  };
}
