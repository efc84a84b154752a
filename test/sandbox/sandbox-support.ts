import { randomBytes } from 'node:crypto';
import { chown, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SANDBOX_UID } from '../../src/sandbox/runner.js';

/** The subset of a tap test these helpers use. */
interface Teardown {
  teardown(fn: () => unknown): void;
}

/**
 * A fresh workspace directory owned by the sandbox uid (as the workspace layer makes
 * them), removed at teardown. `subdirs` are created inside, also owned by the sandbox uid.
 */
export async function makeWorkspace(t: Teardown, subdirs: string[] = []): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'memql-sandbox-test-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await chown(dir, SANDBOX_UID, SANDBOX_UID);
  for (const sub of subdirs) {
    await mkdir(join(dir, sub), { recursive: true });
    await chown(join(dir, sub), SANDBOX_UID, SANDBOX_UID);
  }
  return dir;
}

/** A string unlikely to appear anywhere else, e.g. in a process's command line. */
export function uniqueMarker(): string {
  return randomBytes(6).toString('hex');
}

/** A unique `sleep` duration such as `60.<digits>`, findable in /proc/<pid>/cmdline. */
export function markedSleep(seconds: number): string {
  return `${seconds}.${Number.parseInt(randomBytes(4).toString('hex'), 16)}`;
}

/** Pids (other than this process) whose command line contains `marker`. */
export async function processesMatching(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const cmdline = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(marker)) found.push(Number(name));
  }
  return found;
}

/**
 * Waits until a `sleep <duration>` process of a {@link markedSleep} runs (the program
 * itself, not a shell whose command text mentions it); throws after `ms`.
 */
export async function sleepStarted(duration: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while ((await processesMatching(`sleep\0${duration}\0`)).length === 0) {
    if (Date.now() > deadline) throw new Error(`no "sleep ${duration}" started within ${ms} ms`);
    await sleep(25);
  }
}

/**
 * Pids still matching `marker` after letting the kernel finish a kill for up to
 * `settleMs`: an empty array means nothing was left behind.
 */
export async function leftovers(marker: string, settleMs = 2000): Promise<number[]> {
  const deadline = Date.now() + settleMs;
  for (;;) {
    const pids = await processesMatching(marker);
    if (pids.length === 0 || Date.now() > deadline) return pids;
    await sleep(50);
  }
}

/** Kills pids a failed test left behind, so one failure does not poison the next test. */
export function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}
