/**
 * The host's side of `exec` and `build`: the call checked (the allowlist, or the build
 * gate on this node's toolchain) before any workspace is provisioned, refused while the
 * node drains, then queued as a durable command on the run's workspace (claimed here
 * when a slot is free) and its answer awaited (`command-answer.ts`).
 *
 * @module
 */

import { callDigest, type Envelope, type Toolchain } from '../contract/index.js';
import type { CommandQueue } from '../queue/index.js';
import type { Db } from '../store/index.js';
import type { Logger } from '../telemetry/index.js';
import { type ExecDeps, prepareBuild, prepareExec } from './actions/index.js';
import { awaitCommand } from './command-answer.js';
import type { DispatchOptions } from './host-deps.js';
import { nodeStoppingRefusal, type WorkspaceAccess } from './lifecycle/index.js';

/** A command's envelope. */
export type CommandEnvelope = Extract<Envelope, { action: 'exec' | 'build' }>;

/** What a command call needs of the host. */
export interface CommandCallsDeps {
  db: Db;
  nodeId: string;
  exec: ExecDeps;
  access: WorkspaceAccess;
  queue: CommandQueue;
  /** How often a handed-off command's row is read again, ms. */
  pollIntervalMs: number;
  /** How long a call follows a handed-off command, ms. */
  handoffWaitMs: number;
  /** What this node's sandbox can build with, once its probe has ended. */
  toolchainSettled(): Promise<Toolchain>;
  /** Whether the host still takes new work (not draining or stopped). */
  serving(): boolean;
  /** Starts the host's worker and sweeps (idempotent). */
  start(): void;
  log: Logger;
}

/** An `exec` or `build`: checked, enqueued as a durable command, and its answer awaited. */
export async function commandCall(
  deps: CommandCallsDeps,
  envelope: CommandEnvelope,
  options: DispatchOptions,
): Promise<unknown> {
  const { run, live } = await deps.access.look(envelope.runId);
  // Refusals that need no workspace come before one is provisioned. A build waits for
  // the toolchain probe (bounded) rather than refuse while it runs.
  const exec =
    envelope.action === 'exec'
      ? prepareExec(deps.exec, envelope.args)
      : prepareBuild(deps.exec, envelope.args, await deps.toolchainSettled(), deps.nodeId);
  if (!deps.serving()) throw nodeStoppingRefusal(deps.nodeId);
  const ws = await deps.access.ensure(run, 'call', live);
  deps.start();
  const { command } = await deps.queue.enqueue(
    {
      runId: run.id,
      workspaceId: ws.workspace.id,
      ownerUserId: run.ownerUserId,
      conversationId: run.conversationId,
      callId: envelope.callId ?? null,
      ...(envelope.callId === undefined
        ? {}
        : {
            call: {
              action: envelope.action,
              digest: callDigest(envelope),
              nodeId: deps.nodeId,
            },
          }),
      request: exec.request,
      timeoutMs: exec.timeoutMs,
    },
    { claimHere: true },
  );
  return awaitCommand(
    {
      queue: deps.queue,
      db: deps.db,
      nodeId: deps.nodeId,
      pollIntervalMs: deps.pollIntervalMs,
      handoffWaitMs: deps.handoffWaitMs,
      log: deps.log,
    },
    command,
    options,
  );
}
