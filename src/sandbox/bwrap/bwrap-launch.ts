/**
 * Starting one command's sandbox and seeing it through: the launch chain of the bwrap
 * runner (see `bwrap-runner.ts`), supervision of its time limit and cancel, the tree
 * kill, and the result.
 *
 * @module
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { WorkbenchError } from '../../contract/index.js';
import type { CommandCgroup } from '../cgroups/index.js';
import { createCommandOutput } from '../output-capture.js';
import { type RunResult, type RunSpec, SANDBOX_UID } from '../runner.js';
import { superviseChild, waitUntilGone, withinMs } from '../supervise.js';
import {
  BWRAP_FDS,
  type BwrapCommandLine,
  bwrapArgv,
  encodeBwrapOptions,
  sandboxEtcFiles,
} from './bwrap-args.js';

/**
 * Checks that its parent is still the node (pid first), joins the cgroups named as
 * arguments (count next), then execs the rest under `env -i`. The node spawns it with an
 * empty environment already; `env -i` makes that hold even when something in the node
 * (a preload, an instrumentation hook) adds variables to every spawn, as test harnesses
 * do. Exits 125, without the "started" byte, when the node is already gone or joining a
 * cgroup fails.
 *
 * As root the launcher runs under `setpriv --pdeathsig KILL`, so it dies with the node;
 * the parent check covers a node that died before that was armed. The rest of the chain
 * then runs in {@link LAUNCH_NAMESPACE}.
 */
const LAUNCHER =
  '[ "$PPID" = "$1" ] || exit 125; n=$2; shift 2; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n - 1)); done; exec /usr/bin/env -i "$@"';

/** util-linux `unshare`, which makes {@link LAUNCH_NAMESPACE}. */
export const LAUNCH_UNSHARE = '/usr/bin/unshare';

/**
 * As root, everything after the launcher runs in a pid and mount namespace of its own:
 * `unshare --fork` waits outside it, and its child, the namespace's init, goes on to
 * stage the workspace, drop to uid 10001 and exec bwrap. Killing that init ends every
 * process in the namespace, bwrap's sandbox included, at whatever step bwrap's own
 * setup is (bwrap arms `--die-with-parent` in its sandbox only late in that setup, and
 * a sandbox whose bwrap died before then lives on); and the chain exits only once the
 * namespace is empty. `--kill-child` and the re-armed `--pdeathsig` of the uid drop
 * make the init die with the launcher, which dies with the node. The namespace gets a
 * /proc of its own (`--mount-proc`): bwrap looks its children up there by pid, and the
 * node's /proc names another namespace's processes by those numbers.
 */
const LAUNCH_NAMESPACE = [
  LAUNCH_UNSHARE,
  '--mount',
  '--pid',
  '--mount-proc',
  '--fork',
  '--kill-child',
  '--propagation',
  'private',
];

/** One sandbox to start. */
export interface BwrapLaunch {
  spec: RunSpec;
  /** bwrap's command line (see `bwrapCommandLine`): its options go on {@link BWRAP_FDS.args}. */
  line: BwrapCommandLine;
  /** The command's groups, joined before anything else runs; null without cgroups. */
  cgroup: CommandCgroup | null;
  /** `performance.now()` when the run began, for the duration. */
  startedAt: number;
  /** The bwrap binary. */
  bwrapPath: string;
  /** setpriv, to drop from root to the sandbox uid; null when the node does not drop. */
  setprivPath: string | null;
  /** The encoded seccomp filter for `--seccomp`, or null when the args ask for none. */
  seccompFilter: Uint8Array | null;
  /**
   * Argv that runs as root in the launch namespace before privileges drop and execs the
   * rest (the workspace staging, see `workspace-staging.ts`); empty for none. Only with
   * `setprivPath`, which is what puts the chain in {@link LAUNCH_NAMESPACE}.
   */
  stage: readonly string[];
}

/** A launch chain started by {@link spawnLaunchChain}: the sandbox on its way up, or running. */
export interface LaunchChain {
  /** The first process of the chain (the launcher), whose exit ends the sandbox's run. */
  readonly child: ChildProcess;
  /** The chain's descriptor `fd` (a pipe), if the chain was given one. */
  fd(fd: number): (Readable & Writable) | undefined;
  /** True once the sandbox wrote its started byte: the program is about to run. */
  started(): boolean;
  /** Resolves once the sandbox started, or the chain exited without starting. */
  readonly startedOrExited: Promise<void>;
  /** The whole tree kill: safe to call repeatedly, and after everything is gone. */
  killTree(): Promise<void>;
  /**
   * After the chain exited: waits (bounded) until nothing of the sandbox is left, then
   * closes the chain's descriptors.
   */
  settle(): Promise<void>;
  /** What bwrap wrote on its info descriptor so far (its init's pid). */
  info(): string;
}

/** Descriptors of a one-shot sandbox's chain: bwrap's own (0 to {@link BWRAP_FDS.args}). */
export const BWRAP_FD_COUNT = BWRAP_FDS.args + 1;

/**
 * Spawns the launch chain of one sandbox (see the module comment of `bwrap-runner.ts`)
 * with `fds` descriptors (0..fds-1; at least bwrap's own), feeds bwrap its options,
 * `/etc` files and seccomp filter, and returns the handle that watches and kills it.
 */
export function spawnLaunchChain(
  launch: Omit<BwrapLaunch, 'spec' | 'startedAt'>,
  fds = BWRAP_FD_COUNT,
): LaunchChain {
  const { line, cgroup } = launch;
  // Encoded before anything starts: an option bwrap would misread stops the launch here.
  const options = encodeBwrapOptions(line.options);
  const procsFiles = cgroup?.procsFiles ?? [];
  const setpriv = launch.setprivPath;
  const drop =
    setpriv !== null
      ? [
          setpriv,
          '--pdeathsig',
          'KILL',
          `--reuid=${SANDBOX_UID}`,
          `--regid=${SANDBOX_UID}`,
          '--clear-groups',
        ]
      : [];
  const ownNamespace = setpriv !== null;
  const shell = ['/bin/sh', '-c', LAUNCHER];
  const [file, ...head] = ownNamespace ? [setpriv, '--pdeathsig', 'KILL', ...shell] : shell;
  const child = spawn(
    file!,
    [
      ...head,
      'memql-launch',
      String(process.pid),
      String(procsFiles.length),
      ...procsFiles,
      ...(ownNamespace ? [...LAUNCH_NAMESPACE, ...launch.stage] : []),
      ...drop,
      launch.bwrapPath,
      ...bwrapArgv(line),
    ],
    { cwd: '/', env: {}, stdio: Array.from({ length: fds }, () => 'pipe' as const) },
  );
  const extra = child.stdio as unknown as (Readable & Writable)[];
  // A pipe that breaks because the sandbox died is expected; never an unhandled error.
  for (let fd = 3; fd < fds; fd++) extra[fd]?.on('error', () => {});
  let started = false;
  const startedPipe = extra[BWRAP_FDS.started];
  // Resolves once the command is about to run (or bwrap is gone). Before that, bwrap's
  // init may not have armed --die-with-parent yet: killing bwrap then can orphan it.
  const startedOrExited = new Promise<void>((resolve) => {
    startedPipe?.once('data', () => resolve());
    child.once('exit', () => resolve());
  });
  startedPipe?.on('data', () => {
    started = true;
  });
  let info = '';
  extra[BWRAP_FDS.info]?.on('data', (chunk: Buffer) => {
    if (info.length < 4096) info += chunk.toString();
  });
  // EOF comes once every holder (bwrap, its init, the prelude) is gone.
  const startedEnd = new Promise<void>((resolve) => {
    if (!startedPipe) return resolve();
    startedPipe.once('end', resolve).once('close', resolve).once('error', resolve);
  });
  const etc = sandboxEtcFiles(SANDBOX_UID);
  for (const [fd, text] of [
    [BWRAP_FDS.passwd, etc.passwd],
    [BWRAP_FDS.group, etc.group],
    [BWRAP_FDS.hosts, etc.hosts],
  ] as const) {
    extra[fd]?.end(text);
  }
  // A few hundred bytes: far below a pipe's buffer, so this never waits on bwrap.
  extra[BWRAP_FDS.seccomp]?.end(launch.seccompFilter ?? '');
  // bwrap reads these to EOF before it does anything else; a chain that dies first
  // breaks the pipe, which the error listener above absorbs.
  extra[BWRAP_FDS.args]?.end(options);

  /** Host pids of launch-namespace inits the tree kill killed, to wait for. */
  const namespaceInits: number[] = [];
  const initPid = () => /"child-pid":\s*(\d+)/.exec(info)?.[1];
  return {
    child,
    fd: (fd) => extra[fd],
    started: () => started,
    startedOrExited,
    info: () => info,
    async killTree() {
      if (ownNamespace) {
        // Killing the namespace's init ends everything in it (waited for below). The
        // chain goes first: unshare (util-linux 2.38) would answer its child's SIGKILL
        // with exit 1 and a message of its own. Before the chain has forked the init,
        // killing the chain is enough (--kill-child).
        const inits = child.pid === undefined ? [] : await childPids(child.pid);
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        for (const pid of inits) killQuietly(pid);
        namespaceInits.push(...inits);
        await cgroup?.killAll();
        return;
      }
      // bwrap dies → its sandbox init gets SIGKILL (--die-with-parent) → the pid
      // namespace goes with it. The cgroup sweep covers anything in between.
      // Under heavy load the setup can take seconds; waiting long here is cheaper than
      // an orphaned sandbox.
      await withinMs(startedOrExited, 30_000);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      // If bwrap still had not armed --die-with-parent, its init survives bwrap: kill it
      // directly (killing a pid namespace's init ends everything inside it).
      const init = initPid();
      if (init !== undefined && !started) killQuietly(Number(init));
      await cgroup?.killAll();
    },
    async settle() {
      await withinMs(startedEnd, 2000);
      // Killing a pid namespace's init tears the namespace down asynchronously; the init
      // is gone (or a zombie) only once every process in it is. Without cgroups this is
      // the only way to know nothing is left. In the launch namespace, a chain that
      // exited by itself already says so (unshare waits for the init), and bwrap's pid
      // there is not a host pid.
      const inits = ownNamespace ? namespaceInits : [initPid()];
      for (const pid of inits) if (pid !== undefined) await waitUntilGone(Number(pid), 5000);
      for (let fd = 3; fd < fds; fd++) extra[fd]?.destroy();
    },
  };
}

/** The `no_sandbox` refusal of a sandbox that never started, with what it said. */
export function sandboxDidNotStart(exit: number | string | null, stderr: string): WorkbenchError {
  const detail = stderr.trim().slice(0, 2000);
  return new WorkbenchError(
    'no_sandbox',
    `no_sandbox: the bwrap sandbox did not start (exit ${exit}): ${detail || 'no message'}` +
      ` (bwrap runs as uid ${SANDBOX_UID}: the workspace directory and its parents must be searchable by it)`,
  );
}

/**
 * Starts the sandbox, streams its output within the caps, enforces the time limit and
 * the cancel signal by killing the whole tree, and waits until nothing of it is left.
 * Throws `no_sandbox` when the sandbox never started.
 */
export async function launchBwrap(launch: BwrapLaunch): Promise<RunResult> {
  const { spec, cgroup, startedAt } = launch;
  const chain = spawnLaunchChain(launch);
  const output = createCommandOutput(spec.outputLimitBytes, spec.onOutput);
  const end = await superviseChild(chain.child, {
    output,
    stdin: spec.stdin,
    timeoutMs: spec.timeoutMs,
    signal: spec.signal,
    killTree: () => chain.killTree(),
  });
  await chain.settle();

  if (!chain.started() && !end.timedOut && !end.cancelled) {
    throw sandboxDidNotStart(end.exitCode ?? end.signal, output.stderr.bytes().toString());
  }
  // A child the OOM killer took while the command still succeeded did not end the command.
  const oomKilled = cgroup !== null && end.exitCode !== 0 && (await cgroup.oomKilled());
  return {
    ...end,
    oomKilled,
    stdout: output.stdout.bytes(),
    stderr: output.stderr.bytes(),
    stdoutTruncated: output.stdout.truncated,
    stderrTruncated: output.stderr.truncated,
    durationMs: Math.round(performance.now() - startedAt),
  };
}

/** Host pids of the children of `pid` (none when it is gone). */
async function childPids(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return text
    .split(/\s+/)
    .filter((p) => p !== '')
    .map(Number);
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
