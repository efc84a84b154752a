import t from 'tap';
import { WorkbenchError } from '../../src/contract/errors.js';
import {
  type AbortReason,
  decideOutcome,
  type ExecutionEnd,
  type ExecutionResult,
} from '../../src/queue/index.js';

function result(over: Partial<ExecutionResult> = {}): ExecutionEnd {
  return {
    kind: 'result',
    result: {
      exitCode: 0,
      signal: null,
      timedOut: false,
      cancelled: false,
      oomKilled: false,
      stdout: Buffer.from('out'),
      stderr: Buffer.from('err'),
      stdoutTruncated: false,
      stderrTruncated: false,
      durationMs: 12,
      ...over,
    },
  };
}
const thrown = (error: unknown): ExecutionEnd => ({ kind: 'error', error });

const cases: {
  name: string;
  end: ExecutionEnd;
  reason: AbortReason | null;
  want: Record<string, unknown> | null;
}[] = [
  { name: 'exit 0', end: result(), reason: null, want: { status: 'completed', exitCode: 0 } },
  {
    name: 'a non-zero exit is still a result',
    end: result({ exitCode: 2 }),
    reason: null,
    want: { status: 'completed', exitCode: 2, errorCode: undefined },
  },
  {
    name: 'killed by the memory limit: a result, flagged',
    end: result({ exitCode: null, signal: 'SIGKILL', oomKilled: true }),
    reason: null,
    want: { status: 'completed', exitCode: null, signal: 'SIGKILL', oomKilled: true },
  },
  {
    name: 'its own limit',
    end: result({ exitCode: null, timedOut: true }),
    reason: null,
    want: { status: 'timed_out', errorCategory: 'command_timeout' },
  },
  {
    name: 'its own limit wins over a cancel that came late',
    end: result({ exitCode: null, timedOut: true }),
    reason: 'cancel',
    want: { status: 'timed_out', errorCategory: 'command_timeout' },
  },
  {
    name: 'cancelled',
    end: result({ exitCode: null, cancelled: true }),
    reason: 'cancel',
    want: { status: 'cancelled', errorCode: 'cancelled', errorCategory: 'cancelled' },
  },
  {
    name: 'cancelled, executor rejected',
    end: thrown(new Error('aborted')),
    reason: 'cancel',
    want: { status: 'cancelled', errorCategory: 'cancelled' },
  },
  {
    name: 'worker backstop',
    end: thrown(new Error('aborted')),
    reason: 'worker_timeout',
    want: { status: 'timed_out', errorCategory: 'worker_timeout' },
  },
  { name: 'lease lost: record nothing', end: result(), reason: 'lease_lost', want: null },
  {
    name: 'shutdown, killed: node_stopping, with what it printed',
    end: result({ cancelled: true, exitCode: null, signal: 'SIGKILL' }),
    reason: 'shutdown',
    want: {
      status: 'failed',
      errorCode: 'node_stopping',
      errorCategory: 'shutdown',
      signal: 'SIGKILL',
    },
  },
  {
    name: 'shutdown, executor gave up: node_stopping',
    end: thrown(new Error('gone')),
    reason: 'shutdown',
    want: { status: 'failed', errorCode: 'node_stopping', errorCategory: 'shutdown' },
  },
  {
    name: 'ran, but its files could not be kept: the real exit beside the sync code',
    end: result({
      exitCode: 0,
      filesNotSaved: { errorCode: 'run_ended', reason: 'run_ended' },
    }),
    reason: null,
    want: {
      status: 'failed',
      exitCode: 0,
      errorCode: 'run_ended',
      errorCategory: 'files_not_saved',
    },
  },
  {
    name: 'shutdown, but it finished first: record it',
    end: result({ exitCode: 1 }),
    reason: 'shutdown',
    want: { status: 'completed', exitCode: 1 },
  },
  {
    name: 'a workbench error keeps its code',
    end: thrown(new WorkbenchError('no_sandbox', 'no_sandbox: none')),
    reason: null,
    want: { status: 'failed', errorCode: 'no_sandbox', errorCategory: 'environment' },
  },
  {
    name: 'a store error with a contract code keeps it',
    end: thrown(Object.assign(new Error('db down'), { code: 'unavailable' })),
    reason: null,
    want: { status: 'failed', errorCode: 'unavailable', errorCategory: 'dependency' },
  },
  {
    name: 'anything else is internal',
    end: thrown(new TypeError('bug')),
    reason: null,
    want: { status: 'failed', errorCode: 'internal', errorCategory: 'internal' },
  },
];

t.test('decideOutcome', async (t) => {
  for (const c of cases) {
    const got = decideOutcome(c.end, c.reason, 1024);
    if (c.want === null) t.equal(got, null, c.name);
    else t.match(got, c.want, c.name);
  }
});

t.test('output is capped again as a backstop and flagged truncated', async (t) => {
  const got = decideOutcome(result({ stdout: Buffer.alloc(10, 97) }), null, 4);
  t.equal(Buffer.from(got!.stdout!).toString(), 'aaaa');
  t.equal(got!.stdoutTruncated, true);
  t.equal(got!.stderrTruncated, false);
  t.equal(got!.execDurationMs, 12);
});

t.test('promoted outputs are recorded with a completed command only', async (t) => {
  const artifact = {
    id: 'art_1',
    runId: 'r',
    ownerUserId: 'u',
    name: 'a.txt',
    contentType: 'text/plain',
    size: 1,
    hash: 'h',
    objectKey: 'artifacts/art_1',
    sourcePath: 'a.txt',
  };
  const outputs = {
    results: [{ path: 'a.txt', error: { code: 'path_not_found', message: 'm' } }],
    artifacts: [artifact],
  };
  t.match(decideOutcome(result({ outputs }), null, 1024), {
    status: 'completed',
    outputs: outputs.results,
    artifacts: [artifact],
  });
  for (const [name, end, reason] of [
    ['cancelled', result({ outputs, cancelled: true }), 'cancel'],
    ['timed out', result({ outputs, timedOut: true }), null],
    [
      'files not saved',
      result({ outputs, filesNotSaved: { errorCode: 'unavailable', reason: 'x' } }),
      null,
    ],
    ['shutdown', result({ outputs, cancelled: true }), 'shutdown'],
  ] as const) {
    const outcome = decideOutcome(end, reason, 1024);
    t.not(outcome?.status, 'completed', name);
    t.notOk(outcome && 'artifacts' in outcome, `${name}: no artifacts`);
    t.notOk(outcome && 'outputs' in outcome, `${name}: no outputs`);
  }
});
