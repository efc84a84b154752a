/**
 * A worker host, built from its settings: the process runner with the worker's base
 * environment, its slots, the handler of its calls and its link to the agent. The
 * binary (`nodes/worker/main.ts`) reads the settings and the machine and passes them
 * in; nothing here reads the environment.
 *
 * @module
 */

import type { HostPort, MeshTlsConfig } from '../config/index.js';
import type { Need, WorkerOffer } from '../contract/index.js';
import { MAX_READ_BYTES, MAX_WRITE_BYTES } from '../files/index.js';
import type { BackoffOptions } from '../mesh/index.js';
import { ProcessRunner } from '../sandbox/index.js';
import type { Logger } from '../telemetry/index.js';
import { CallSlots } from './call-slots.js';
import { commandBaseEnv } from './command-env.js';
import type { WorkerExecLimits } from './worker-exec.js';
import { createWorkerHandler } from './worker-handler.js';
import { type LinkStopOutcome, WorkerLink, type WorkerLinkState } from './worker-link.js';
import { workerOffer } from './worker-offer.js';

/** Options of {@link startWorkerNode}. */
export interface WorkerNodeOptions {
  /** The worker's node id, said in its hello. */
  readonly nodeId: string;
  /** The build's version, said in its hello. */
  readonly version: string;
  readonly agent: HostPort;
  readonly token: string;
  readonly tls: MeshTlsConfig | null;
  /** The user's root, absolute; checked to be a directory by the caller. */
  readonly root: string;
  /** What the worker offers (configured, else detected). */
  readonly provides: readonly Need[];
  /** Calls run at once. */
  readonly capacity: number;
  /** `process.platform`: the offer's OS. */
  readonly platform: string;
  /**
   * The worker process's environment. Only the session variables of
   * `command-env.ts` are read from it, for commands' base environment.
   */
  readonly sessionEnv: Readonly<Record<string, string | undefined>>;
  readonly exec: WorkerExecLimits;
  /** File action limits, bytes. Default the workbench's. */
  readonly files?: { readonly maxReadBytes: number; readonly maxWriteBytes: number };
  readonly log: Logger;
  readonly backoff?: BackoffOptions;
  readonly healthIntervalMs?: number;
  /** Called once when the agent refuses the token, with what to tell the user. */
  readonly onRefused?: (message: string) => void;
  /** Called after each move of the link's lifecycle. */
  readonly onMove?: (from: WorkerLinkState, to: WorkerLinkState) => void;
}

/** A started worker host. */
export interface WorkerNode {
  /** What it declared in its hello. */
  readonly offer: WorkerOffer;
  readonly link: WorkerLink;
  readonly slots: CallSlots;
  /** Stops taking calls, gives those in flight `graceMs`, ends the stream. */
  stop(graceMs?: number): Promise<LinkStopOutcome>;
}

/** Builds a worker host and dials its agent. */
export function startWorkerNode(options: WorkerNodeOptions): WorkerNode {
  const offer = workerOffer(options.provides, options.platform, options.capacity);
  const slots = new CallSlots(offer.capacity);
  const log = options.log.child({ component: 'worker' });
  const runner = new ProcessRunner({ baseEnv: commandBaseEnv(options.sessionEnv, offer.provides) });
  const handler = createWorkerHandler({
    offer,
    slots,
    runner,
    root: options.root,
    limits: options.exec,
    maxReadBytes: options.files?.maxReadBytes ?? MAX_READ_BYTES,
    maxWriteBytes: options.files?.maxWriteBytes ?? MAX_WRITE_BYTES,
    log,
  });
  const link = new WorkerLink({
    agent: options.agent,
    token: options.token,
    tls: options.tls,
    hello: {
      kind: 'hello',
      nodeId: options.nodeId,
      nodeType: 'worker',
      version: options.version,
      worker: offer,
    },
    handler,
    load: () => ({ running: slots.running, queued: slots.queued }),
    capacity: offer.capacity,
    log,
    ...(options.backoff ? { backoff: options.backoff } : {}),
    ...(options.healthIntervalMs !== undefined
      ? { healthIntervalMs: options.healthIntervalMs }
      : {}),
    ...(options.onRefused ? { onRefused: options.onRefused } : {}),
    ...(options.onMove ? { onMove: options.onMove } : {}),
  });
  log.info({ offer, root: options.root }, 'worker offer');
  link.start();
  return { offer, link, slots, stop: (graceMs) => link.close(graceMs) };
}
