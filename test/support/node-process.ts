import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';

/** Compiled entry points, relative to this compiled file (dist/test/support/). */
const DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** `dist/nodes/<name>/main.js`. */
export const nodeMain = (name: 'agent' | 'workbench' | 'local' | 'worker' | 'cli') =>
  resolve(DIST, 'nodes', name, 'main.js');
/** A compiled test fixture, `dist/test/<path>`. */
export const fixture = (path: string) => resolve(DIST, 'test', path);

/** One pino line from a node's stdout. */
export type LogLine = Record<string, unknown> & { level: number; msg: string };

/** A node binary (or fixture) running as a child process. */
export class NodeProcess {
  readonly lines: LogLine[] = [];
  stderr = '';
  /** Non-JSON stdout lines (fixture replies). */
  readonly other: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly waiters = new Set<() => void>();
  private buffer = '';

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    child.stdout?.on('data', (c: Buffer) => this.onStdout(c.toString()));
    child.stderr?.on('data', (c: Buffer) => {
      this.stderr += c.toString();
      this.wake();
    });
    this.exited = new Promise((r) =>
      child.on('exit', (code, signal) => {
        this.wake();
        r({ code, signal });
      }),
    );
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Waits for a log line matching `pred`; throws if the process exits first. */
  waitForLog(pred: (l: LogLine) => boolean, ms = 30_000, from = 0): Promise<LogLine> {
    return this.waitFor(() => this.lines.slice(from).find(pred), 'a matching log line', ms);
  }

  /**
   * Waits until `check` returns a value other than undefined, checking again whenever
   * the process writes output or exits. Throws if the process exits first, or after `ms`.
   */
  async waitFor<T>(check: () => T | undefined, what: string, ms = 30_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = check();
      if (found !== undefined) return found;
      if (!this.alive) {
        throw new Error(`${this.name} exited before ${what}; stderr: ${this.stderr.slice(-2000)}`);
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.name}: no ${what} within ${ms} ms`);
      await new Promise<void>((r) => {
        const timer = setTimeout(done, Math.min(left, 500));
        function done() {
          clearTimeout(timer);
          r();
        }
        this.waiters.add(done);
      });
    }
  }

  /** Sends `signal` and waits for the exit (SIGKILL after `ms`). */
  async stop(signal: NodeJS.Signals = 'SIGTERM', ms = 15_000) {
    if (this.alive) this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), ms);
    const result = await this.exited;
    clearTimeout(timer);
    return result;
  }

  private onStdout(text: string): void {
    this.buffer += text;
    let nl = this.buffer.indexOf('\n');
    while (nl >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      try {
        const parsed: unknown = JSON.parse(line);
        if (typeof parsed === 'object' && parsed !== null && 'level' in parsed) {
          this.lines.push(parsed as LogLine);
        } else this.other.push(line);
      } catch {
        this.other.push(line);
      }
      nl = this.buffer.indexOf('\n');
    }
    this.wake();
  }

  private wake(): void {
    for (const w of [...this.waiters]) {
      this.waiters.delete(w);
      w();
    }
  }
}

/**
 * Spawns `script` with exactly `env` (plus PATH) and tracks it on `t`: at teardown a
 * process still running is killed and reported, so a leftover process fails the test.
 * `nodeArgs` go to node itself, before the script (`--trace-gc`, which `NODE_OPTIONS`
 * does not take).
 */
export function spawnNode(
  t: Test,
  name: string,
  script: string,
  env: Record<string, string>,
  args: string[] = [],
  nodeArgs: string[] = [],
): NodeProcess {
  const child = spawn(process.execPath, ['--enable-source-maps', ...nodeArgs, script, ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const node = new NodeProcess(name, child);
  t.teardown(async () => {
    if (!node.alive) return;
    child.kill('SIGKILL');
    await node.exited;
    throw new Error(`${name} (pid ${child.pid}) was left running at the end of the test`);
  });
  return node;
}

/** Whether a process with this pid still exists. */
export function pidAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
