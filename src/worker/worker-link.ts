/**
 * A worker host's one link to its agent node. The worker dials out (its machine sits
 * behind NAT and cannot be dialled), presents its user's API token, says hello with
 * its offer, and then serves the calls that come down its own stream: it is the
 * serving side of a stream it opened (a {@link ServerSession} over the client end).
 * It sends Health frames at the start and every period, and redials with jittered
 * backoff whenever the stream ends, except when the agent refuses the token: redialling
 * with a refused token would only be refused again, so the link stops and says what to
 * do.
 *
 * Lifecycle ({@link WORKER_LINK_LIFECYCLE}, one log line per move): `connecting`
 * (dialled, no agent hello yet) -> `ready` (the agent said hello) -> `backoff` (stream
 * over, waiting to redial) -> `connecting` ...; `refused` (the agent answered
 * UNAUTHENTICATED) and `closed` (stopped) end it. The agent's side of the same stream
 * is another machine, `worker-stream` (`mesh/worker-hub.ts`).
 *
 * @module
 */

import { type Client, type ClientDuplexStream, status as GrpcStatus } from '@grpc/grpc-js';
import type { HostPort, MeshTlsConfig } from '../config/index.js';
import { NodeStoppingError } from '../contract/index.js';
import {
  type BackoffOptions,
  DEFAULT_BACKOFF,
  dialNodeStream,
  endpointKey,
  HEALTH_INTERVAL_MS,
  type HealthFrame,
  type HelloFrame,
  nextBackoff,
  type RequestHandler,
  ServerSession,
  type SessionHost,
  settleWithin,
} from '../mesh/index.js';
import type { Logger } from '../telemetry/index.js';
import { defineStateMachine, StateMachine } from '../telemetry/index.js';

/** The state of a {@link WorkerLink}. */
export type WorkerLinkState = 'connecting' | 'ready' | 'backoff' | 'refused' | 'closed';

/** A {@link WorkerLink}'s lifecycle, logged as `worker-link`. */
export const WORKER_LINK_LIFECYCLE = defineStateMachine<WorkerLinkState>(
  'worker-link',
  'connecting',
  {
    connecting: ['ready', 'backoff', 'refused', 'closed'],
    ready: ['backoff', 'refused', 'closed'],
    backoff: ['connecting', 'closed'],
    refused: ['closed'],
    closed: [],
  },
);

/** How long calls aborted at the end of a stop's grace get to answer, ms. */
const ABORT_SETTLE_MS = 2_000;
/** How long a stop waits for the agent to end the stream after the worker ended its side, ms. */
const END_WAIT_MS = 2_000;

/** Options of {@link WorkerLink}. */
export interface WorkerLinkOptions {
  /** `MEMQL_WORKER_AGENT`. */
  readonly agent: HostPort;
  /** `MEMQL_WORKER_TOKEN`, sent as `authorization: Bearer <token>`. */
  readonly token: string;
  /** `MEMQL_TLS_*`; `null` dials plaintext. */
  readonly tls: MeshTlsConfig | null;
  /** What the worker says first: its id, type `worker`, version and offer. */
  readonly hello: HelloFrame;
  /** Answers the calls. */
  readonly handler: RequestHandler;
  /** Calls running and waiting now, for Health frames. */
  readonly load: () => { running: number; queued: number };
  /** Calls run at once, for Health frames. */
  readonly capacity: number;
  readonly log: Logger;
  /** Default {@link DEFAULT_BACKOFF}. */
  readonly backoff?: BackoffOptions;
  /** Uniform draws in [0, 1) for backoff jitter. Default `Math.random`. */
  readonly random?: () => number;
  /** Health frame period, ms. Default {@link HEALTH_INTERVAL_MS}. */
  readonly healthIntervalMs?: number;
  /** Called once when the agent refuses the token, with what to tell the user. */
  readonly onRefused?: (message: string) => void;
  /** Called after each move of the lifecycle. */
  readonly onMove?: (from: WorkerLinkState, to: WorkerLinkState) => void;
}

/** What a stop did with the calls in flight. */
export interface LinkStopOutcome {
  /** Calls that answered within the grace period. */
  readonly finished: number;
  /** Calls aborted when it ended. */
  readonly aborted: number;
}

/** The message for a refused token: what happened and what to do. */
export function refusedTokenMessage(agent: string, details: string): string {
  return (
    `the agent node at ${agent} refused this worker's token (UNAUTHENTICATED: ${details || 'no detail'}): ` +
    'MEMQL_WORKER_TOKEN is wrong, revoked, or not an API token. Create a token for the user who owns this ' +
    'worker with `memql tokens create <userId>`, set MEMQL_WORKER_TOKEN to it, and start the worker again'
  );
}

/** The worker's stream to its agent, redialled until closed or refused. */
export class WorkerLink {
  /** `host:port` of the agent. */
  readonly key: string;
  private readonly machine: StateMachine<WorkerLinkState>;
  private readonly log: Logger;
  private attempt = 0;
  private generation = 0;
  private client: Client | undefined;
  private call: ClientDuplexStream<unknown, unknown> | undefined;
  private session: ServerSession | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticker: NodeJS.Timeout | undefined;
  private stopping = false;
  private readonly tasks = new Map<Promise<void>, AbortController>();

  constructor(private readonly options: WorkerLinkOptions) {
    this.key = endpointKey(options.agent);
    this.log = options.log.child({ agent: this.key });
    this.machine = new StateMachine(WORKER_LINK_LIFECYCLE, this.log, {
      level: 'info',
      ...(options.onMove ? { onMove: options.onMove } : {}),
    });
  }

  /** Where the link is in its lifecycle. */
  get state(): WorkerLinkState {
    return this.machine.state;
  }

  /** Calls in flight on the stream now. */
  get inFlight(): number {
    return this.tasks.size;
  }

  /** Dials for the first time and starts the Health period. */
  start(): void {
    const every = this.options.healthIntervalMs ?? HEALTH_INTERVAL_MS;
    this.ticker = setInterval(() => this.session?.sendHealth(), every);
    // The stream keeps the process alive while it is up, and the redial timer while not.
    this.ticker.unref();
    this.connect();
  }

  /**
   * Stops: new calls are answered `unavailable` and the agent is told the worker is
   * unhealthy; calls in flight get `graceMs` to answer, and are then aborted (a running
   * command's process tree is killed); the worker ends its side of the stream and the
   * link closes. Idempotent.
   */
  async close(graceMs = 0): Promise<LinkStopOutcome> {
    if (this.state === 'closed') return { finished: 0, aborted: 0 };
    this.stopping = true;
    clearTimeout(this.timer);
    clearInterval(this.ticker);
    this.session?.sendHealth();
    const started = this.tasks.size;
    await settleWithin([...this.tasks.keys()], graceMs);
    const left = [...this.tasks.entries()];
    for (const [, controller] of left)
      controller.abort(new NodeStoppingError(this.options.hello.nodeId));
    await settleWithin(
      left.map(([task]) => task),
      ABORT_SETTLE_MS,
    );
    this.machine.moveTo('closed');
    await this.endStream();
    return { finished: started - left.length, aborted: left.length };
  }

  private connect(): void {
    if (this.state === 'closed' || this.state === 'refused') return;
    this.generation += 1;
    const generation = this.generation;
    // The first dial finds the machine in `connecting` already: no move, no line.
    this.machine.moveTo('connecting', { attempt: this.attempt });
    const { client, call } = dialNodeStream(this.options.agent, {
      tls: this.options.tls,
      token: this.options.token,
    });
    this.client = client;
    this.call = call;
    call.on('status', (status: { code: number; details?: string }) => {
      if (generation === this.generation) this.onStatus(status);
    });
    this.session = new ServerSession(call, this.sessionHost(generation), false);
    this.session.start();
  }

  private sessionHost(generation: number): SessionHost {
    return {
      hello: this.options.hello,
      handler: this.options.handler,
      log: this.log,
      admit: () =>
        this.stopping
          ? {
              errorCode: 'unavailable',
              message: `unavailable: worker "${this.options.hello.nodeId}" is stopping and takes no new calls`,
            }
          : null,
      track: (task, controller) => {
        const running: Promise<void> = task(controller.signal).finally(() => {
          this.tasks.delete(running);
        });
        this.tasks.set(running, controller);
      },
      health: () => this.health(),
      closed: () => {
        // The stream's end is handled on its status, which says whether to redial.
      },
      peerHello: (frame) => {
        if (generation !== this.generation) return;
        if (frame.nodeType !== 'agent') {
          this.log.warn(
            { peerNodeType: frame.nodeType, peerNodeId: frame.nodeId },
            'the node at MEMQL_WORKER_AGENT is not an agent node',
          );
        }
        this.attempt = 0;
        this.machine.moveTo('ready', { agentId: frame.nodeId, version: frame.version });
      },
    };
  }

  private health(): HealthFrame {
    const load = this.options.load();
    return {
      kind: 'health',
      healthy: !this.stopping,
      running: load.running,
      queued: load.queued,
      capacity: this.options.capacity,
    };
  }

  private onStatus(status: { code: number; details?: string }): void {
    this.teardown();
    if (this.state === 'closed' || this.state === 'refused') return;
    if (status.code === GrpcStatus.UNAUTHENTICATED) {
      const message = refusedTokenMessage(this.key, status.details ?? '');
      this.machine.moveTo('refused', { code: 'UNAUTHENTICATED' });
      clearInterval(this.ticker);
      this.log.error({ variable: 'MEMQL_WORKER_TOKEN' }, message);
      this.options.onRefused?.(message);
      return;
    }
    const delay = nextBackoff(
      this.attempt,
      (this.options.random ?? Math.random)(),
      this.options.backoff ?? DEFAULT_BACKOFF,
    );
    this.attempt += 1;
    this.machine.moveTo('backoff', {
      reason: `${GrpcStatus[status.code] ?? status.code}: ${status.details ?? ''}`,
      retryInMs: delay,
    });
    this.timer = setTimeout(() => this.connect(), delay);
  }

  /** Drops the stream of this attempt; a status that arrives later is ignored. */
  private teardown(): void {
    this.generation += 1;
    this.session = undefined;
    this.call = undefined;
    this.client?.close();
    this.client = undefined;
  }

  /** Ends this side of the stream, waits a moment for the agent to end its own, then drops it. */
  private async endStream(): Promise<void> {
    const call = this.call;
    const session = this.session;
    if (call === undefined || session === undefined) {
      this.teardown();
      return;
    }
    const ended = new Promise<void>((resolve) => call.once('status', () => resolve()));
    session.end();
    await settleWithin([ended], END_WAIT_MS);
    call.cancel();
    this.teardown();
  }
}
