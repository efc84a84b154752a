/**
 * The background processes of one warm sandbox (`bwrap-session.ts`): each started by
 * a request to the agent in a session of its own, spoken to through the agent (its
 * input, signals, terminal size) and followed through the agent's events until it
 * ends, or the sandbox does.
 *
 * @module
 */

import { constants } from 'node:os';
import type { Writable } from 'node:stream';
import type { OutputSink } from '../../contract/index.js';
import type { AgentEvent } from './agent-events.js';
import {
  encodeProcessResize,
  encodeProcessSignal,
  encodeProcessStdin,
  encodeProcessStdinEnd,
  encodeStartProcess,
} from './agent-requests.js';

/** How a background process ended. */
export interface ProcessExit {
  /** Its exit code; null when a signal ended it or it was lost. */
  readonly exitCode: number | null;
  /** The signal that ended it (`SIGTERM`), or null. */
  readonly signal: string | null;
  /** True when the sandbox ended under it: it did not end on its own. */
  readonly lost: boolean;
}

/** What {@link SessionProcesses.start} starts (through `BwrapSession.startProcess`). */
export interface SessionProcessStart {
  readonly command: string;
  /** The working directory inside the sandbox. */
  readonly cwd: string;
  /** Its whole environment. */
  readonly env: Readonly<Record<string, string>>;
  /**
   * A terminal of this size as its stdin, stdout and stderr: its output (echo included)
   * comes as `stdout`, and the end of its input is a Ctrl-D.
   */
  readonly pty?: { readonly cols: number; readonly rows: number };
  /** Receives its output as it comes, in order. */
  readonly onOutput: OutputSink;
}

/**
 * A background process in a warm sandbox: started in a session of its own, it outlives
 * the sandbox's bounded commands (which end everything else they leave) and ends with
 * its own end (its session's other processes are killed then) or the sandbox's.
 */
export interface SessionProcess {
  /** The session's id for it. */
  readonly id: number;
  /** Its pid inside the sandbox. */
  readonly pid: number;
  /** Writes bytes to its standard input. */
  write(bytes: Uint8Array): void;
  /** Closes its standard input once what was written is delivered. */
  endInput(): void;
  /** Sends a signal to its process group. */
  signal(name: NodeJS.Signals): void;
  /** Resizes its terminal (nothing for a process without one). */
  resize(cols: number, rows: number): void;
  /** Resolves once it has ended and all its output was delivered. */
  readonly ended: Promise<ProcessExit>;
}

/** A process the node follows, from its start request to its end. */
interface LiveProcess {
  readonly onOutput: OutputSink;
  started: ((pid: number) => void) | null;
  readonly exited: (exit: ProcessExit) => void;
}

/** The name of a signal's number (`SIGTERM`), as a one-shot sandbox reports it. */
function signalName(signal: number | null): string | null {
  if (signal === null) return null;
  const found = Object.entries(constants.signals).find(([, n]) => n === signal);
  return found ? found[0] : `SIG${signal}`;
}

/** The background processes of one sandbox, by the session's id for each. */
export class SessionProcesses {
  private readonly processes = new Map<number, LiveProcess>();
  private nextProcessId = 1;

  /** `requests`: the agent's requests descriptor. */
  constructor(private readonly requests: Writable | undefined) {}

  /** How many live. */
  get size(): number {
    return this.processes.size;
  }

  /** Asks the agent to start a process; resolves once it runs. */
  start(start: SessionProcessStart): Promise<SessionProcess> {
    const id = this.nextProcessId++;
    let exited!: (exit: ProcessExit) => void;
    const ended = new Promise<ProcessExit>((resolve) => {
      exited = resolve;
    });
    const requests = this.requests;
    return new Promise((resolve, reject) => {
      const live: LiveProcess = {
        onOutput: start.onOutput,
        started: (pid) =>
          resolve({
            id,
            pid,
            write: (bytes) => {
              if (this.processes.has(id)) requests?.write(encodeProcessStdin(id, bytes));
            },
            endInput: () => {
              if (this.processes.has(id)) requests?.write(encodeProcessStdinEnd(id));
            },
            signal: (name) => {
              const n = constants.signals[name];
              if (this.processes.has(id) && n !== undefined) {
                requests?.write(encodeProcessSignal(id, n));
              }
            },
            resize: (cols, rows) => {
              if (this.processes.has(id)) requests?.write(encodeProcessResize(id, cols, rows));
            },
            ended,
          }),
        exited: (exit) => {
          this.processes.delete(id);
          if (live.started !== null)
            reject(new Error('the sandbox ended before the process started'));
          exited(exit);
        },
      };
      this.processes.set(id, live);
      requests?.write(
        encodeStartProcess({
          id,
          command: start.command,
          cwd: start.cwd,
          env: start.env,
          ...(start.pty ? { pty: start.pty } : {}),
        }),
      );
    });
  }

  /** Takes an event of a process (its start, output or end); false for any other event. */
  take(event: AgentEvent): boolean {
    if (event.kind === 'process_started') {
      const live = this.processes.get(event.id);
      const started = live?.started;
      if (live && started) {
        live.started = null;
        started(event.pid);
      }
      return true;
    }
    if (event.kind === 'process_output') {
      this.processes.get(event.id)?.onOutput(event.stream, event.chunk);
      return true;
    }
    if (event.kind === 'process_exit') {
      this.processes.get(event.id)?.exited({
        exitCode: event.code,
        signal: signalName(event.signal),
        lost: false,
      });
      return true;
    }
    return false;
  }

  /** The sandbox ended: every process still live is lost. */
  loseAll(): void {
    for (const live of [...this.processes.values()]) {
      live.exited({ exitCode: null, signal: null, lost: true });
    }
  }
}
