/**
 * The stages of uploads (`fs_write` in parts, see `upload.ts`): where they are, what
 * they weigh, and everything that removes them, so that no staged byte outlives the
 * upload, the run or the node process that staged it.
 *
 * A stage is `<workbench root>/.uploads/<runId>/<upload id>`: the node's own folder
 * (mode 0700, never mounted into a sandbox), one regular file per upload. Its bytes
 * count against the run's workspace quota (`MEMQL_WORKSPACE_MAX_BYTES`) as if they
 * were in the workspace already. A stage goes:
 *
 * - when its upload completes (placed by one rename), is refused (over the quota,
 *   over the upload limit, a size that does not add up) or is aborted (the part with
 *   `abort: true`; the file route sends one when its caller goes away or a part fails);
 * - when it has sat untouched for longer than `MEMQL_UPLOAD_IDLE_MS` (the sweep);
 * - with its run: when the run ends or is deleted, and in the sweep once this node
 *   holds no live workspace of the run;
 * - when the node stops, and at node start: a stage written by an earlier process of
 *   the node (one killed, say) can never be completed by this one.
 *
 * @module
 */

import { existsSync } from 'node:fs';
import { lstat, readdir, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { checkRunId } from '../../contract/index.js';

/** Default of `MEMQL_UPLOAD_IDLE_MS`: how long a stage may sit untouched, ms (one hour). */
export const UPLOAD_IDLE_MS = 60 * 60 * 1000;

/** The folder under the workbench root holding the stages of every run's uploads. */
export const UPLOADS_DIR = '.uploads';

/** The stage folder of one run's uploads. */
export function uploadStageDir(workbenchRoot: string, runId: string): string {
  return join(workbenchRoot, UPLOADS_DIR, runId);
}

/** The stage files of a folder, with their sizes and last changes; none when it is gone. */
async function stagesIn(dir: string): Promise<{ name: string; size: number; mtimeMs: number }[]> {
  // Most runs stage nothing: the common answer costs no thread-pool hop (this folder is
  // the node's own, never a command's).
  if (!existsSync(dir)) return [];
  const names = await readdir(dir).catch(() => [] as string[]);
  const found = [];
  for (const name of names) {
    const st = await lstat(join(dir, name)).catch(() => null);
    if (st?.isFile()) found.push({ name, size: st.size, mtimeMs: st.mtimeMs });
  }
  return found;
}

/**
 * Bytes the run's stages hold, but for `exceptUploadId`'s (the upload whose next part
 * is being checked, which counts at the size that part takes it to).
 */
export async function stagedBytes(stageDir: string, exceptUploadId?: string): Promise<number> {
  let bytes = 0;
  for (const stage of await stagesIn(stageDir)) {
    if (stage.name !== exceptUploadId) bytes += stage.size;
  }
  return bytes;
}

/** Removes one upload's stage, and the run's folder when it is left empty. */
export async function removeUploadStage(stageDir: string, uploadId: string): Promise<void> {
  await rm(join(stageDir, uploadId), { force: true });
  // Only an empty folder goes: another upload of the run may be staging.
  await rmdir(stageDir).catch(() => {});
}

/** Removes every stage of a run (it ended, was deleted, or is no longer held here). */
export async function removeRunStages(workbenchRoot: string, runId: string): Promise<void> {
  // Only a run id is ever joined to the folder, so nothing else can be named.
  if (checkRunId(runId) !== null) return;
  await rm(uploadStageDir(workbenchRoot, runId), { recursive: true, force: true });
}

/** What one pass over the stages removed. */
export interface StageSweep {
  /** Stage files removed. */
  removed: number;
  /** Their bytes. */
  bytes: number;
}

/**
 * Removes stages that `gone` picks (by run id and last change), and run folders that are
 * left empty or whose run `gone` picks whole (`mtimeMs` null). A folder or file that
 * vanishes meanwhile is skipped.
 */
async function removeStages(
  workbenchRoot: string,
  gone: (runId: string, mtimeMs: number | null) => boolean | Promise<boolean>,
): Promise<StageSweep> {
  const root = join(workbenchRoot, UPLOADS_DIR);
  const runs = await readdir(root).catch(() => [] as string[]);
  const result: StageSweep = { removed: 0, bytes: 0 };
  for (const runId of runs) {
    const dir = join(root, runId);
    const stages = await stagesIn(dir);
    const whole = await gone(runId, null);
    for (const stage of stages) {
      if (!whole && !(await gone(runId, stage.mtimeMs))) continue;
      await rm(join(dir, stage.name), { force: true });
      result.removed += 1;
      result.bytes += stage.size;
    }
    // Whole: whatever else is in the folder goes with it (the folder is the node's own).
    if (whole) await rm(dir, { recursive: true, force: true });
    else await rmdir(dir).catch(() => {});
  }
  return result;
}

/**
 * Removes the stages an earlier process of this node left: every stage last written
 * before `startedAtMs` (the host's start; no part of this process is older).
 */
export function removeStagesBefore(
  workbenchRoot: string,
  startedAtMs: number,
): Promise<StageSweep> {
  return removeStages(workbenchRoot, (_, mtimeMs) => mtimeMs !== null && mtimeMs < startedAtMs);
}

/**
 * The sweep's pass: removes stages idle for longer than `idleMs`, and every stage of a
 * run for which this node holds no live workspace. `liveRuns` is read after the stages
 * are listed: a stage is written only while its run's workspace is held here (its row
 * committed first), so a stage listed here whose run is not in that set is left over.
 */
export async function sweepUploads(
  workbenchRoot: string,
  now: number,
  idleMs: number,
  liveRuns: () => Promise<ReadonlySet<string>>,
): Promise<StageSweep> {
  let live: ReadonlySet<string> | null = null;
  return removeStages(workbenchRoot, async (runId, mtimeMs) => {
    if (mtimeMs !== null) return now - mtimeMs > idleMs;
    live ??= await liveRuns();
    return !live.has(runId);
  });
}
