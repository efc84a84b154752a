/**
 * The baseline of cases 1 and 4: bubblewrap spawned directly with the argv the
 * bwrap runner builds (`bwrapArgs`, same system dirs, same tmpfs sizes, same seccomp
 * filter, same uid drop through setpriv when root), and nothing else: no launcher shell, no cgroups,
 * no supervision beyond waiting for exit.
 *
 * @module
 */

import { spawn } from 'node:child_process';
import { chown } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import {
  BWRAP_FDS,
  bwrapArgs,
  findSystemDirs,
  sandboxEtcFiles,
} from '../../src/sandbox/bwrap/index.js';
import { SANDBOX_PATH } from '../../src/sandbox/command-env.js';
import { SANDBOX_UID } from '../../src/sandbox/runner.js';
import { encodeFilter, seccompFilterFor } from '../../src/sandbox/seccomp/index.js';

const MiB = 1024 * 1024;

/** A prepared raw spawner for one workspace directory. */
export interface RawBwrap {
  /** Runs `command` once; rejects on a non-zero exit. */
  run(command: string): Promise<void>;
}

/**
 * Options of {@link rawBwrap}: for attributing the runner's gap, a `/bin/sh` launcher
 * in front (as the runner has), optionally writing its pid into cgroup `procs` files
 * first (as the runner does for per-command cgroups).
 */
export interface RawBwrapOptions {
  launcher?: { cgroupProcsFiles: readonly string[] };
}

/** Joins the cgroups named as arguments (count first), then execs the rest. */
const LAUNCH =
  'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n - 1)); done; exec "$@"';

/** Builds the argv once (as the runner caches its system dirs) for `workspaceDir`. */
export async function rawBwrap(
  workspaceDir: string,
  options: RawBwrapOptions = {},
): Promise<RawBwrap> {
  const root = process.getuid?.() === 0;
  if (root) await chown(workspaceDir, SANDBOX_UID, SANDBOX_UID);
  const systemDirs = await findSystemDirs();
  const etc = sandboxEtcFiles(SANDBOX_UID);
  const filter = seccompFilterFor(process.arch);
  const seccomp = filter.ok ? encodeFilter(filter.program) : null;
  const argvFor = (command: string) => {
    const args = bwrapArgs({
      workspaceDir,
      cwd: '.',
      env: { PATH: SANDBOX_PATH, HOME: '/tmp', LANG: 'C.UTF-8' },
      command,
      systemDirs,
      tmpSizeBytes: 256 * MiB,
      shmSizeBytes: 64 * MiB,
      mapToUid: root ? undefined : SANDBOX_UID,
      seccomp: seccomp !== null,
    });
    return root
      ? {
          file: '/usr/bin/setpriv',
          args: [
            `--reuid=${SANDBOX_UID}`,
            `--regid=${SANDBOX_UID}`,
            '--clear-groups',
            '/usr/bin/bwrap',
            ...args,
          ],
        }
      : { file: '/usr/bin/bwrap', args };
  };
  return {
    run(command) {
      const direct = argvFor(command);
      const procs = options.launcher?.cgroupProcsFiles;
      const { file, args } =
        procs === undefined
          ? direct
          : {
              file: '/bin/sh',
              args: [
                '-c',
                LAUNCH,
                'raw-launch',
                String(procs.length),
                ...procs,
                direct.file,
                ...direct.args,
              ],
            };
      return new Promise((resolve, reject) => {
        const child = spawn(file, args, {
          cwd: '/',
          env: {},
          stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'],
        });
        const extra = child.stdio as unknown as (Readable & Writable)[];
        for (const fd of Object.values(BWRAP_FDS)) extra[fd]?.on('error', () => {});
        extra[BWRAP_FDS.started]?.resume();
        extra[BWRAP_FDS.info]?.resume();
        extra[BWRAP_FDS.passwd]?.end(etc.passwd);
        extra[BWRAP_FDS.group]?.end(etc.group);
        extra[BWRAP_FDS.hosts]?.end(etc.hosts);
        extra[BWRAP_FDS.seccomp]?.end(seccomp ?? '');
        child.stdout?.resume();
        let stderr = '';
        child.stderr?.on('data', (c: Buffer) => {
          stderr += c.toString();
        });
        child.once('error', reject);
        child.once('close', (code) => {
          if (code === 0) resolve();
          else reject(new Error(`raw bwrap exited ${code}: ${stderr.slice(0, 500)}`));
        });
      });
    },
  };
}
