/**
 * The queue's executor on a workbench node: one claimed command, run in its
 * workspace as the holder, then its file changes kept.
 *
 * The two halves fail differently. Before the sandbox starts (taking the workspace
 * on, reconciling the copy), a failure means the command could not run: one that may
 * pass (`unavailable`: the workspace moved to another live node, a dependency did not
 * answer) puts it back in the queue, any other is recorded. The command is marked
 * begun (`ctx.begin()`) right before its sandbox starts. Once the sandbox has ended the command has run: its sync is retried
 * through outages of the database or the object store for as long as the worker
 * keeps the command, and a sync that cannot succeed (the run ended meanwhile, say)
 * is reported beside the command's real exit and output, never as "could not run".
 * A command that succeeded then has its expected outputs stored as artifacts, whose
 * rows the queue records with its outcome.
 *
 * @module
 */

import { setTimeout as delay } from 'node:timers/promises';
import { isErrorCode, WorkbenchError } from '../contract/index.js';
import type { FileContext } from '../files/index.js';
import type { ObjectStore } from '../objects/index.js';
import type { ExecuteContext, ExecutionResult, FilesNotSaved } from '../queue/index.js';
import { runInSandbox } from '../sandbox/index.js';
import type { Command, Run } from '../store/index.js';
import type { Logger } from '../telemetry/index.js';
import { type ExecDeps, storeExpectedOutputs } from './actions/index.js';
import type { WorkbenchEgress } from './egress/index.js';
import type { HeldCopy, WorkspaceAccess } from './lifecycle/index.js';
import { type QuotaExceeded, watchQuota } from './quota-watch.js';
import type { SyncResult, WorkspaceQuota } from './sync/index.js';

/** The longest pause between two sync attempts after a command, ms. */
const SYNC_BACKOFF_MAX_MS = 2000;

/** What the executor needs. */
export interface CommandExecutorDeps {
  access: WorkspaceAccess;
  exec: ExecDeps;
  /** Reads the command's run (when this node must take its workspace on). */
  resolveRun: (runId: string) => Promise<Run>;
  /** What one workspace may hold; a command that fills it past this is stopped. */
  quota?: WorkspaceQuota;
  /** Bytes of a run's staged uploads, which its quota counts too. */
  stagedBytes?: (runId: string) => Promise<number>;
  /** Where the bytes of expected outputs go. */
  objects: ObjectStore;
  /** How the node's file actions open files (the workspace root is the held copy's). */
  files: Omit<FileContext, 'root'>;
  /** The node's egress; absent: no command has network. */
  egress?: WorkbenchEgress;
  log: Logger;
}

/** Whether a command succeeded, so its expected outputs are promoted: exit 0, on its own. */
function succeeded(result: ExecutionResult): boolean {
  return result.exitCode === 0 && !result.timedOut && !result.cancelled;
}

function notSaved(err: unknown): FilesNotSaved {
  if (err instanceof WorkbenchError) {
    const reason = (err.payload as { reason?: unknown } | undefined)?.reason;
    return { errorCode: err.code, reason: typeof reason === 'string' ? reason : err.code };
  }
  const code = (err as { code?: unknown } | null)?.code;
  return { errorCode: isErrorCode(code) ? code : 'internal', reason: 'sync_failed' };
}

/**
 * Syncs a copy after its command ran, retrying `unavailable` (a dependency down) with
 * backoff until it succeeds or the worker gives the command up. Returns the sync's
 * result when the changes are kept, else why they were not.
 */
async function keepFiles(
  deps: CommandExecutorDeps,
  held: HeldCopy,
  ctx: ExecuteContext,
  command: Command,
): Promise<{ synced: SyncResult } | { notSaved: FilesNotSaved }> {
  const commandId = command.id;
  for (let attempt = 1; ; attempt++) {
    try {
      return {
        synced: await deps.access.sync(held, {
          source: 'command',
          commandId: command.id,
          ...(command.callId === null ? {} : { callId: command.callId }),
        }),
      };
    } catch (err) {
      const retry = err instanceof WorkbenchError && err.code === 'unavailable';
      if (!retry || ctx.stopping()) {
        deps.log.warn(
          { runId: held.runId, commandId, errorCode: (err as { code?: unknown }).code },
          'command ran but its file changes could not be saved',
        );
        return { notSaved: notSaved(err) };
      }
      ctx.recordingDelayed(err);
      if (attempt === 1) {
        deps.log.warn(
          { runId: held.runId, commandId, reason: (err.payload as { reason?: string })?.reason },
          'sync after a command failed; retrying until it succeeds',
        );
      }
      await delay(Math.min(SYNC_BACKOFF_MAX_MS, 100 * 2 ** Math.min(attempt, 10)));
    }
  }
}

/**
 * Runs one claimed command in its workspace, as the workspace's holder. Its request
 * is the one the row was read with (`execRequest`, parsed where the store reads the
 * row); a row holding anything else could not run, and takes no workspace.
 */
export async function executeCommand(
  deps: CommandExecutorDeps,
  command: Command,
  ctx: ExecuteContext,
): Promise<ExecutionResult> {
  const request = command.execRequest;
  if (request === null) {
    throw new WorkbenchError(
      'internal',
      `internal: command ${command.id} holds no exec request (a row written by something other than exec); it cannot run`,
    );
  }
  return deps.access.use(
    command.runId,
    {
      mutating: false,
      resolveRun: () => deps.resolveRun(command.runId),
      ...(command.claimedHead ? { seen: command.claimedHead } : {}),
    },
    async (held) => {
      // Stopped early if it fills the workspace past its quota.
      const limit = new AbortController();
      let exceeded: QuotaExceeded | null = null;
      const watch = deps.quota
        ? watchQuota(
            held.dir,
            deps.quota,
            (found) => {
              exceeded = found;
              limit.abort();
            },
            deps.log,
            (await deps.stagedBytes?.(held.runId)) ?? 0,
          )
        : null;
      let result: ExecutionResult;
      // The run's network, as its policy is now (none for most runs).
      const network = await deps.egress?.forCommand(command);
      try {
        // Everything that may refuse the command is behind it: from here it begins,
        // and is never queued again.
        await ctx.begin();
        result = await runInSandbox(deps.exec, held.dir, request, command.timeoutMs, {
          ...ctx,
          signal: AbortSignal.any([ctx.signal, limit.signal]),
          reuse: held.stamp,
          ...(network ? { egress: network.egress } : {}),
        });
      } finally {
        network?.finish();
        await watch?.stop();
      }
      if (network) result = { ...result, egress: network.finish() };
      ctx.ran(result.exitCode);
      if (exceeded !== null) {
        const { over, usage } = exceeded as QuotaExceeded;
        deps.log.info(
          { runId: held.runId, commandId: command.id, over, usage },
          'command stopped: workspace over its quota',
        );
        await deps.access.reset(held);
        return {
          ...result,
          filesNotSaved: { errorCode: 'workspace_quota_exceeded', reason: `over_${over}` },
        };
      }
      const kept = await keepFiles(deps, held, ctx, command);
      if ('notSaved' in kept) return { ...result, filesNotSaved: kept.notSaved };
      // Entries the sync could not keep (too deep to reach) are told with the answer.
      const refused = kept.synced.refused;
      const synced = { ...result, workspaceVersion: kept.synced.version };
      const ended = refused.total > 0 ? { ...synced, filesRefused: refused } : synced;
      if (!request.outputs || !succeeded(result)) return ended;
      const outputs = await storeExpectedOutputs(
        deps,
        { ...deps.files, root: held.dir },
        command,
        request.outputs,
      );
      return { ...ended, outputs };
    },
  );
}
