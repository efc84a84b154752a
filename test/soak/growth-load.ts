/**
 * One loop of the growth soak's mixed load, through the HTTP API as a tool loop makes
 * it: a run is created, written, read, listed and given small commands, sometimes a
 * background process and a deliberate failure, then ended and deleted, so that
 * everything it made (rows, bytes, its warm copy and sandbox) should go.
 *
 * Every call is tallied by step and outcome. Each step names the outcome it expects:
 * `ok`, or the code of a deliberate failure (a refused command, a missing file). Any
 * other outcome is unexpected, and the soak fails on it.
 *
 * @module
 */

import {
  ClientError,
  type DispatchResult,
  type ProcessView,
  type WorkbenchClient,
} from '../../src/client/index.js';

/** Calls by step and outcome, and those that were not what the step expected. */
export class Tally {
  /** `<step>:<outcome>` → count, every call. */
  readonly calls: Record<string, number> = {};
  /** `<step>:<outcome>` → count, the calls whose outcome the step did not expect. */
  readonly unexpected: Record<string, number> = {};
  /** The first few unexpected outcomes with their messages, to read. */
  readonly examples: string[] = [];
  total = 0;

  note(step: string, outcome: string, expected: string, message = ''): void {
    const key = `${step}:${outcome}`;
    this.total += 1;
    this.calls[key] = (this.calls[key] ?? 0) + 1;
    if (outcome === expected) return;
    this.unexpected[key] = (this.unexpected[key] ?? 0) + 1;
    if (this.examples.length < 20) this.examples.push(`${key}: ${message.slice(0, 200)}`);
  }

  /** Unexpected outcomes, all steps together. */
  get unexpectedCount(): number {
    return Object.values(this.unexpected).reduce((a, b) => a + b, 0);
  }
}

/** The `exec` payload fields the load checks. */
interface ExecAnswer {
  status: string;
  exitCode: number | null;
  timedOut: boolean;
  stdout: string;
}

/** The outcome of an API call that throws on refusal: `ok`, the code, or `no_answer`. */
async function attempt<T>(
  tally: Tally,
  step: string,
  expected: string,
  call: () => Promise<T>,
): Promise<T | undefined> {
  try {
    const value = await call();
    tally.note(step, 'ok', expected);
    return value;
  } catch (err) {
    const code = err instanceof ClientError ? err.code : 'no_answer';
    tally.note(step, code, expected, (err as Error).message);
    return undefined;
  }
}

/** Drives one run after another through `client`; each call of {@link run} is one run. */
export class GrowthLoad {
  private task = 0;

  constructor(
    private readonly client: WorkbenchClient,
    readonly tally: Tally,
  ) {}

  /** One `workbenchHost` call; a call the API did not answer is tallied here and undefined. */
  private async send(
    step: string,
    runId: string,
    action: string,
    args: Record<string, unknown>,
    expected: string,
  ): Promise<DispatchResult | undefined> {
    this.task += 1;
    const request = { action, args, runId, agentId: 'soak', taskId: `task-${this.task}` };
    try {
      return await this.client.dispatch(request);
    } catch (err) {
      const code = err instanceof ClientError ? err.code : 'no_answer';
      this.tally.note(step, code, expected, (err as Error).message);
      return undefined;
    }
  }

  /** A dispatch, tallied: `ok` when the result is ok, else its code. */
  private async dispatch(
    step: string,
    runId: string,
    action: string,
    args: Record<string, unknown>,
    expected = 'ok',
  ): Promise<DispatchResult | undefined> {
    const r = await this.send(step, runId, action, args, expected);
    if (r?.ok) this.tally.note(step, 'ok', expected);
    else if (r) this.tally.note(step, r.errorCode, expected, r.message);
    return r;
  }

  /**
   * An `exec`, tallied by how it ended: `ok` for exit 0, `exit_<n>`, `timed_out`, or a
   * refusal's code.
   */
  private async exec(
    step: string,
    runId: string,
    command: string,
    expected = 'ok',
    extra: Record<string, unknown> = {},
  ): Promise<ExecAnswer | undefined> {
    const r = await this.send(step, runId, 'exec', { command, ...extra }, expected);
    if (r === undefined) return undefined;
    if (!r.ok) {
      this.tally.note(step, r.errorCode, expected, r.message);
      return undefined;
    }
    const answer = r.payload as ExecAnswer;
    const outcome = answer.timedOut
      ? 'timed_out'
      : answer.exitCode === 0
        ? 'ok'
        : `exit_${answer.exitCode ?? answer.status}`;
    this.tally.note(step, outcome, expected, JSON.stringify(answer).slice(0, 200));
    return answer;
  }

  /** One whole run, numbered `i` (which picks its process and its failure); its id. */
  async run(i: number): Promise<string | undefined> {
    const created = await attempt(this.tally, 'create_run', 'ok', () => this.client.createRun());
    if (created === undefined) return undefined;
    const runId = created.id;
    // Every other run starts with a command on its empty workspace (a warm pool's
    // sandbox can take its place), the others with files (it cannot).
    if (i % 2 === 1) await this.exec('exec', runId, 'echo first');
    for (const [path, content] of [
      ['a.txt', `alpha ${i}\n`],
      ['dir/b.txt', `beta ${i}\n`],
      ['dir/c.txt', 'gamma\n'.repeat(64)],
    ] as const) {
      await this.dispatch('fs_write', runId, 'fs_write', { path, content });
    }
    for (const path of ['a.txt', 'dir/b.txt']) {
      const r = await this.dispatch('fs_read', runId, 'fs_read', { path });
      const content = r?.ok ? (r.payload as { content: string }).content : null;
      if (r?.ok && !content?.endsWith(`${i}\n`)) this.tally.note('fs_read', 'wrong_content', 'ok');
    }
    await this.dispatch('fs_list', runId, 'fs_list', { path: '.', recursive: true });
    await this.exec('exec', runId, `echo hello ${i}`);
    await this.exec('exec', runId, 'ls -la dir');
    await this.exec('exec', runId, `echo shell ${i} > dir/shell.txt`);
    const sums = await this.exec('exec', runId, 'sha256sum a.txt dir/shell.txt');
    if (sums && sums.stdout.split('\n').filter(Boolean).length !== 2) {
      this.tally.note('exec', 'wrong_output', 'ok', sums.stdout);
    }
    if (i % 4 === 0) await this.backgroundProcess(runId, i % 8 === 0);
    await this.failure(runId, i % 4);
    await attempt(this.tally, 'end_run', 'ok', () => this.client.endRun(runId, 'succeeded'));
    await attempt(this.tally, 'delete_run', 'ok', () => this.client.deleteRun(runId));
    return runId;
  }

  /**
   * A background process: one that ends by itself (its output read to the end, then
   * waited for), or one that would sleep ten minutes (read, then killed and waited for).
   */
  private async backgroundProcess(runId: string, ends: boolean): Promise<void> {
    const { processes } = this.client;
    const command = ends ? 'echo started; sleep 0.3; echo done' : 'echo up; sleep 600';
    const started = await attempt(this.tally, 'process_start', 'ok', () =>
      processes.start(runId, { command }),
    );
    if (started === undefined) return;
    const { processId } = started;
    // Read until the first line is there (or the process ended), at most 30 s.
    const until = Date.now() + 30_000;
    let data = '';
    while (Date.now() < until && !data.includes('\n')) {
      const piece = await attempt(this.tally, 'process_output', 'ok', () =>
        processes.output(runId, processId),
      );
      if (piece === undefined || piece.complete) break;
      data = piece.data;
      if (!data.includes('\n')) await new Promise((r) => setTimeout(r, 50));
    }
    if (!ends) {
      await attempt(this.tally, 'process_signal', 'ok', () =>
        processes.signal(runId, processId, 'SIGKILL'),
      );
    }
    const ended = await attempt<ProcessView>(this.tally, 'process_wait', 'ok', () =>
      processes.wait(runId, processId, 60_000),
    );
    const want = ends ? 'exited' : 'killed';
    if (ended && ended.status !== want) {
      this.tally.note('process_wait', `status_${ended.status}`, 'ok', JSON.stringify(ended));
    }
    if (ends) {
      const all = await attempt(this.tally, 'process_output', 'ok', () =>
        processes.output(runId, processId),
      );
      if (all && all.data !== 'started\ndone\n') {
        this.tally.note('process_output', 'wrong_output', 'ok', all.data);
      }
    }
  }

  /**
   * A deliberate failure, by `kind`: a command that exits 2, one cut at its time limit,
   * one the allowlist refuses, a read of a file that is not there.
   */
  private async failure(runId: string, kind: number): Promise<void> {
    if (kind === 0) await this.exec('exec_fails', runId, 'ls no-such-file', 'exit_2');
    else if (kind === 1) {
      await this.exec('exec_times_out', runId, 'sleep 5', 'timed_out', { timeoutMs: 300 });
    } else if (kind === 2) {
      await this.exec('exec_refused', runId, 'sudo ls', 'command_not_allowed');
    } else {
      await this.dispatch(
        'fs_read_missing',
        runId,
        'fs_read',
        { path: 'nope.txt' },
        'path_not_found',
      );
    }
  }
}
