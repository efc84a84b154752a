/**
 * A warm bwrap sandbox: one launch chain (`bwrap-launch.ts`) whose program is the
 * session agent (`session-agent.pl`, started by `session-agent.ts`) instead of a
 * command, kept after a command so the next command of the same workspace runs as the
 * agent's child instead of paying for a new chain, new namespaces, a new cgroup and a
 * new staging overlay. Everything a fresh
 * sandbox holds still holds per command: the namespaces, the seccomp filter, uid 10001
 * and the limits are the sandbox's; the agent gives each command a clean environment
 * and fresh pipes, kills every process the command left before it answers, and empties
 * `/tmp`, `/var/tmp` and `/dev/shm` before the next; a sandbox it cannot put back is ended.
 *
 * A sandbox of the warm pool (`warm-pool.ts`) starts over an empty directory of the
 * pool's, under no run's key, and is bound to a run once ({@link BwrapSession.adopt})
 * when that directory has been renamed into place as the run's workspace.
 *
 * A time limit, a cancel, a broken agent or an unexpected exit ends the whole sandbox
 * through the chain's tree kill, as for a one-shot sandbox.
 *
 * A sandbox made for them also hosts the run's background processes
 * (`session-processes.ts`) and the node's connections to their ports
 * (`session-ports.ts`); the agent carries both beside the bounded commands.
 *
 * Lifecycle: `starting -> idle -> busy -> tidying -> idle ...`, and `ended` from any of
 * them (final).
 *
 * @module
 */

import type { Duplex } from 'node:stream';
import type { Logger } from '../../telemetry/index.js';
import { defineStateMachine, StateMachine } from '../../telemetry/index.js';
import type { CommandCgroup } from '../cgroups/index.js';
import type { CommandOutput } from '../output-capture.js';
import { createCommandOutput } from '../output-capture.js';
import type { RunResult, RunSpec } from '../runner.js';
import { type AgentEvent, AgentEventReader } from './agent-events.js';
import { encodeAgentRequest } from './agent-requests.js';
import {
  type BwrapLaunch,
  type LaunchChain,
  sandboxDidNotStart,
  spawnLaunchChain,
} from './bwrap-launch.js';
import { AGENT_FDS } from './session-agent.js';
import { SessionPorts } from './session-ports.js';
import {
  type SessionProcess,
  SessionProcesses,
  type SessionProcessStart,
} from './session-processes.js';

/** Where a warm sandbox is in its life. */
export type SessionState = 'starting' | 'idle' | 'busy' | 'tidying' | 'ended';

/** A warm sandbox's moves, logged as `bwrap-session`. */
export const SESSION_LIFECYCLE = defineStateMachine<SessionState>('bwrap-session', 'starting', {
  starting: ['idle', 'ended'],
  idle: ['busy', 'ended'],
  busy: ['tidying', 'ended'],
  tidying: ['idle', 'ended'],
  ended: [],
});

/** What {@link BwrapSession.start} needs. */
export interface SessionOptions {
  /** The chain, with the agent as bwrap's program (`agentCommand()`); no spec. */
  readonly launch: Omit<BwrapLaunch, 'spec' | 'startedAt'>;
  /** The workspace directory it serves. */
  readonly workspaceDir: string;
  /** That directory's inode when the sandbox was made: the copy its view is of. */
  readonly inode: number;
  /** What the caller reuses it under (see `RunSpec.reuse`), with its limits; empty for the warm pool. */
  readonly key: string;
  /** The limits part of `key`. */
  readonly limitsKey: string;
  /**
   * Made for background processes: the workspace bound as it is (no staging overlay),
   * so the node's own writes reach it at once and a changed copy stamp does not end it.
   */
  readonly forProcesses: boolean;
  /** Made ahead of any run, for the warm pool: bound to one by {@link BwrapSession.adopt}. */
  readonly pooled?: boolean;
  /** Frees what the chain used (staging, cgroup) once nothing of it is left. */
  readonly release: () => Promise<void>;
  readonly log: Logger;
}

/** One command for a warm sandbox. */
export interface SessionCommand {
  readonly spec: RunSpec;
  /** The working directory inside the sandbox. */
  readonly cwd: string;
  /** The command's whole environment. */
  readonly env: Readonly<Record<string, string>>;
  /** `performance.now()` when the run began. */
  readonly startedAt: number;
}

const KILLED = { exitCode: null, signal: 'SIGKILL' } as const;

/** A warm sandbox serving one workspace's commands, one at a time. */
export class BwrapSession {
  private dir: string;
  readonly inode: number;
  private reuseKey: string;
  /** A pooled sandbox not yet bound to a run. */
  private unbound: boolean;
  readonly limitsKey: string;
  readonly forProcesses: boolean;
  private readonly chain: LaunchChain;
  private readonly cgroup: CommandCgroup | null;
  private readonly lifecycle: StateMachine<SessionState>;
  private readonly reader = new AgentEventReader();
  private readonly release: () => Promise<void>;
  private listener: ((event: AgentEvent | 'gone') => void) | null = null;
  /** Events that came while nobody listened, oldest first. */
  private readonly queued: (AgentEvent | 'gone')[] = [];
  private stderr = '';
  private ending: Promise<void> | null = null;
  private tidied: Promise<void> = Promise.resolve();
  private readonly processes: SessionProcesses;
  private readonly ports: SessionPorts;

  private constructor(options: SessionOptions) {
    this.dir = options.workspaceDir;
    this.inode = options.inode;
    this.reuseKey = options.key;
    this.unbound = options.pooled === true;
    this.limitsKey = options.limitsKey;
    this.forProcesses = options.forProcesses;
    this.cgroup = options.launch.cgroup;
    this.release = options.release;
    this.lifecycle = new StateMachine(SESSION_LIFECYCLE, options.log);
    this.chain = spawnLaunchChain(options.launch, AGENT_FDS.events + 1);
    this.chain.child.stdin?.end();
    this.processes = new SessionProcesses(this.chain.fd(AGENT_FDS.requests));
    this.ports = new SessionPorts(this.chain.fd(AGENT_FDS.requests));
    // The agent's own messages (and bwrap's, if it fails), kept short for errors.
    for (const stream of [this.chain.child.stdout, this.chain.child.stderr]) {
      stream?.on('data', (chunk: Buffer) => {
        if (this.stderr.length < 4096) this.stderr += chunk.toString();
      });
    }
    this.chain.fd(AGENT_FDS.events)?.on('data', (chunk: Buffer) => {
      let events: AgentEvent[];
      try {
        events = this.reader.push(chunk);
      } catch {
        this.deliver('gone');
        void this.end();
        return;
      }
      for (const event of events) this.deliver(event);
    });
    this.chain.child.once('exit', () => this.deliver('gone'));
  }

  /**
   * Starts a warm sandbox and waits until its agent is ready. Throws `no_sandbox`, as a
   * one-shot sandbox does, when it never starts.
   */
  static async start(options: SessionOptions): Promise<BwrapSession> {
    const session = new BwrapSession(options);
    const first = await session.nextEvent();
    if (first === 'gone' || first.kind !== 'ready') {
      const code = session.chain.child.exitCode ?? session.chain.child.signalCode;
      await session.end();
      throw sandboxDidNotStart(code, session.stderr);
    }
    session.lifecycle.moveTo('idle');
    return session;
  }

  /** Where it is in its life. */
  get state(): SessionState {
    return this.lifecycle.state;
  }

  /** The workspace directory it serves (its view follows the directory through a rename). */
  get workspaceDir(): string {
    return this.dir;
  }

  /** What it is reused under (see `RunSpec.reuse`), with its limits. */
  get key(): string {
    return this.reuseKey;
  }

  /**
   * Idle, its agent alive, and nothing came from it unasked: a sandbox that waited long
   * (the warm pool's) may have been killed meanwhile.
   */
  get usable(): boolean {
    const child = this.chain.child;
    return (
      this.state === 'idle' &&
      child.exitCode === null &&
      child.signalCode === null &&
      this.queued.length === 0
    );
  }

  /**
   * Whether the sandbox keeps the node's event loop alive. A pooled sandbox waiting for
   * a run does not: the node may exit under it (its launch chain dies with the node).
   */
  keepAlive(on: boolean): void {
    const child = this.chain.child;
    if (on) child.ref();
    else child.unref();
    for (const stream of child.stdio) {
      const handle = stream as { ref?: () => void; unref?: () => void } | null;
      if (on) handle?.ref?.();
      else handle?.unref?.();
    }
  }

  /**
   * Binds a pooled sandbox to the run whose workspace its directory now is (renamed
   * into place at `workspaceDir`; the inode, so the sandbox's view, is the same), under
   * the run's key. Once: a sandbox is never bound to a second run.
   */
  adopt(workspaceDir: string, key: string): void {
    if (!this.unbound) throw new Error('only an unbound sandbox of the warm pool can be adopted');
    this.unbound = false;
    this.dir = workspaceDir;
    this.reuseKey = key;
  }

  /** How many background processes live in it. */
  get liveProcesses(): number {
    return this.processes.size;
  }

  /**
   * Starts a background process (see {@link SessionProcess}); resolves once it runs.
   * Works while the sandbox is idle or runs a bounded command.
   */
  startProcess(start: SessionProcessStart): Promise<SessionProcess> {
    const state = this.state;
    if (state === 'ended' || state === 'starting') {
      return Promise.reject(new Error(`a ${state} sandbox cannot start a process`));
    }
    return this.processes.start(start);
  }

  /** Resolves once the sandbox is tidy after its last command (idle or ended). */
  settled(): Promise<void> {
    return this.tidied;
  }

  /**
   * Runs one command in the warm sandbox. Resolves with its result once every process
   * it started is gone; the sandbox then tidies itself for the next one, or ends.
   */
  async run(command: SessionCommand): Promise<RunResult> {
    const { spec } = command;
    if (this.unbound)
      throw new Error('a sandbox of the warm pool runs nothing before it is adopted');
    if (!this.lifecycle.moveTo('busy'))
      throw new Error(`a ${this.state} sandbox cannot run a command`);
    const output = createCommandOutput(spec.outputLimitBytes, spec.onOutput);
    const oomBefore = (await this.cgroup?.oomEvents()) ?? 0;
    let settle: () => void = () => {};
    this.tidied = new Promise((resolve) => {
      settle = resolve;
    });
    const end = await this.execute(command, output);
    if (end.how === 'exited') {
      this.lifecycle.moveTo('tidying');
      void this.nextEvent().then((event) => {
        if (event !== 'gone' && event.kind === 'done' && event.reusable)
          this.lifecycle.moveTo('idle');
        else void this.end();
        settle();
      });
    } else {
      await this.end();
      settle();
    }
    const exitCode = end.exitCode;
    const oomKilled =
      this.cgroup !== null && exitCode !== 0 && (await this.cgroup.oomEvents()) > oomBefore;
    return {
      exitCode,
      signal: end.signal,
      timedOut: end.how === 'timed_out',
      cancelled: end.how === 'cancelled',
      oomKilled,
      stdout: output.stdout.bytes(),
      stderr: output.stderr.bytes(),
      stdoutTruncated: output.stdout.truncated,
      stderrTruncated: output.stderr.truncated,
      durationMs: Math.round(performance.now() - command.startedAt),
    };
  }

  /**
   * Ends the sandbox: the tree kill, the wait until nothing of it is left, and the
   * release of its staging and cgroup. Idempotent.
   */
  end(): Promise<void> {
    this.ending ??= (async () => {
      this.lifecycle.moveTo('ended');
      this.deliver('gone');
      await this.chain.killTree();
      if (this.chain.child.exitCode === null && this.chain.child.signalCode === null) {
        await new Promise<void>((resolve) => this.chain.child.once('exit', () => resolve()));
      }
      await this.chain.settle();
      await this.release();
    })();
    return this.ending;
  }

  /** Sends the command and follows it to its end, the time limit or the cancel. */
  private async execute(
    command: SessionCommand,
    output: CommandOutput,
  ): Promise<{
    how: 'exited' | 'timed_out' | 'cancelled' | 'lost';
    exitCode: number | null;
    signal: string | null;
  }> {
    const { spec } = command;
    return new Promise((resolve) => {
      let done = false;
      const finish = (value: Parameters<typeof resolve>[0]) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        spec.signal?.removeEventListener('abort', onAbort);
        this.listener = null;
        resolve(value);
      };
      const timer = setTimeout(() => finish({ how: 'timed_out', ...KILLED }), spec.timeoutMs);
      const onAbort = () => finish({ how: 'cancelled', ...KILLED });
      spec.signal?.addEventListener('abort', onAbort, { once: true });
      const onEvent = (event: AgentEvent | 'gone') => {
        if (event === 'gone') return finish({ how: 'lost', ...KILLED });
        if (event.kind === 'output') output[event.stream].write(event.chunk);
        else if (event.kind === 'exit') {
          // As a one-shot sandbox reports it: bwrap's init exits 128 + the signal.
          const exitCode = event.code ?? 128 + (event.signal ?? 0);
          finish({ how: 'exited', exitCode, signal: null });
        } else finish({ how: 'lost', ...KILLED });
      };
      if (spec.signal?.aborted) return onAbort();
      this.listen(onEvent);
      this.chain.fd(AGENT_FDS.requests)?.write(
        encodeAgentRequest({
          command: spec.command,
          cwd: command.cwd,
          stdin: spec.stdin ?? '',
          env: command.env,
        }),
      );
    });
  }

  /** The next event, or `gone` when the agent is. */
  private nextEvent(): Promise<AgentEvent | 'gone'> {
    return new Promise((resolve) => {
      this.listen((event) => {
        this.listener = null;
        resolve(event);
      });
    });
  }

  /** Hands events to `fn`, those that came while nobody listened first. */
  private listen(fn: (event: AgentEvent | 'gone') => void): void {
    this.listener = fn;
    while (this.listener === fn && this.queued.length > 0) fn(this.queued.shift()!);
  }

  /**
   * Opens a connection to `port` of the sandbox's loopback (a server a background
   * process runs), carried by the agent. Rejects with `port_not_listening` when nothing
   * listens there. Ending the stream's write side half-closes the connection; destroying
   * it closes it.
   */
  connectPort(port: number): Promise<Duplex> {
    if (this.state === 'ended' || this.state === 'starting') {
      return Promise.reject(new Error(`a ${this.state} sandbox has no ports`));
    }
    return this.ports.connect(port);
  }

  /** Hands an event to the process or connection it is of, else to the listener. */
  private deliver(event: AgentEvent | 'gone'): void {
    if (event === 'gone') {
      this.processes.loseAll();
      this.ports.closeAll();
    } else if (this.processes.take(event) || this.ports.take(event)) {
      return;
    }
    if (this.listener) this.listener(event);
    else this.queued.push(event);
  }
}
