/**
 * Watches a workspace while a command runs, so a command that fills it past its quota
 * is stopped, not merely refused at the sync after it (by when the disk may be full).
 * Each look counts the regular files and their bytes with `find` (which walks any
 * depth through directory descriptors); looks are spaced by twice the last one's
 * duration, at least {@link MIN_INTERVAL_MS} apart, so a big tree costs at most about
 * a third of a core. The first look comes {@link MIN_INTERVAL_MS} after the start, so
 * a short command costs no process at all. A helper process starts `find`
 * (`hostHelpers`), so a look does not fork the node; when every helper is busy, the
 * node starts it itself.
 *
 * @module
 */

import { spawn } from 'node:child_process';
import { firstExecutable, HelperLost, hostHelpers } from '../files/index.js';
import type { Logger } from '../telemetry/index.js';
import { overQuota, type WorkspaceQuota, type WorkspaceUsage } from './sync/index.js';

/** Where GNU findutils' `find` (for `-printf`) lives on the distributions the images use. */
const FIND_CANDIDATES = ['/usr/bin/find', '/bin/find'];

let findBinary: Promise<string | null> | undefined;

function findFind(): Promise<string | null> {
  findBinary ??= firstExecutable(FIND_CANDIDATES);
  return findBinary;
}

/** The shortest pause between two looks, ms. */
const MIN_INTERVAL_MS = 250;

/** A running watch. */
export interface QuotaWatch {
  /** Ends the watch; resolves once no look is in flight. */
  stop(): Promise<void>;
}

/** What a watch found over the quota. */
export interface QuotaExceeded {
  over: 'bytes' | 'files';
  usage: WorkspaceUsage;
}

/** A look in flight, which the watch's stop ends at once. */
type Looking = { cancel(): void };

/**
 * Counts `dir`'s files until the count passes `quota` (then resolves with what was
 * counted so far, and stops counting) or the walk ends. Null when `find` is missing.
 * A helper process runs `find` (`hostHelpers`); when none is free, the node does.
 */
async function look(
  dir: string,
  quota: WorkspaceQuota,
  reservedBytes: number,
  track: (looking: Looking | null) => void,
): Promise<{ usage: WorkspaceUsage; over: 'bytes' | 'files' | null } | null> {
  const find = await findFind();
  if (find === null) return null;
  const job = await hostHelpers
    .count(find, dir, { bytes: reservedBytes, ...quota })
    .catch(() => null);
  if (job !== null) {
    track(job);
    const answer = await job.answer.catch((err: unknown) => {
      // A helper that died is replaced at the next look; this one runs from here.
      if (err instanceof HelperLost) return null;
      throw err;
    });
    track(null);
    if (answer !== null) {
      const usage = { bytes: answer.bytes, files: answer.files };
      return { usage, over: overQuota(usage, quota) };
    }
  }
  return spawnLook(find, dir, quota, reservedBytes, track);
}

/** {@link look} with `find` started by the node itself. */
function spawnLook(
  find: string,
  dir: string,
  quota: WorkspaceQuota,
  reservedBytes: number,
  track: (looking: Looking | null) => void,
): Promise<{ usage: WorkspaceUsage; over: 'bytes' | 'files' | null } | null> {
  return new Promise((resolve) => {
    const usage: WorkspaceUsage = { bytes: reservedBytes, files: 0 };
    let over: 'bytes' | 'files' | null = null;
    let rest = '';
    const child = spawn(find, [dir, '-xdev', '-type', 'f', '-printf', '%s\\n'], {
      stdio: ['ignore', 'pipe', 'ignore'],
      env: {},
    });
    track({ cancel: () => child.kill('SIGKILL') });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        usage.files += 1;
        usage.bytes += Number(line) || 0;
      }
      over ??= overQuota(usage, quota);
      if (over) child.kill('SIGKILL');
    });
    child.once('error', () => {
      track(null);
      resolve(null);
    });
    child.once('close', () => {
      track(null);
      resolve({ usage, over });
    });
  });
}

/**
 * Watches `dir` until stopped; calls `onExceeded` once, the first time the files
 * there, with `reservedBytes` held elsewhere (the run's staged uploads), are over
 * `quota`.
 */
export function watchQuota(
  dir: string,
  quota: WorkspaceQuota,
  onExceeded: (found: QuotaExceeded) => void,
  log?: Logger,
  reservedBytes = 0,
): QuotaWatch {
  let stopped = false;
  let current: Looking | null = null;
  // A plain timer that stop() ends early: no abort signal, so stopping the watch of
  // every command creates no error object.
  let pending: { timer: NodeJS.Timeout; wake: () => void } | null = null;
  const pause = (ms: number) =>
    new Promise<void>((wake) => {
      pending = { timer: setTimeout(wake, ms), wake };
    });
  const loop = (async () => {
    // The first look is one pause in: one at the start would count only what was there
    // before the command wrote anything, and a command that ends sooner is checked at
    // its sync, which refuses it over the quota just the same.
    let interval = MIN_INTERVAL_MS;
    for (;;) {
      await pause(interval);
      pending = null;
      if (stopped) return;
      const began = performance.now();
      const found = await look(dir, quota, reservedBytes, (looking) => {
        current = looking;
        // A stop that came while the look was being set up ends it as it starts.
        if (stopped) looking?.cancel();
      });
      if (found === null) {
        log?.warn({ dir }, 'find is missing: the workspace quota is checked at sync only');
        return;
      }
      if (found.over && !stopped) {
        onExceeded({ over: found.over, usage: found.usage });
        return;
      }
      interval = Math.max(MIN_INTERVAL_MS, 2 * (performance.now() - began));
    }
  })();
  return {
    async stop() {
      stopped = true;
      const waiting = pending as { timer: NodeJS.Timeout; wake: () => void } | null;
      if (waiting) {
        clearTimeout(waiting.timer);
        waiting.wake();
      }
      (current as Looking | null)?.cancel();
      await loop;
    },
  };
}
