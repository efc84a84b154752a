import t from 'tap';
import { WorkbenchError } from '../../src/contract/errors.js';
import {
  type AbortReason,
  decideRecovery,
  type ExecutionEnd,
  livenessRule,
  MAX_CLAIMS,
  RECONNECT_SLACK_MS,
  type RecoveryFacts,
  type RecoveryVerdict,
  recoveryBoundMs,
  recoveryPeriodMs,
  shouldRequeue,
} from '../../src/queue/index.js';

const L = 10_000;
const LEASE = 30_000;
const rule = livenessRule(L);

t.test('the settings the rule derives from the liveness window', async (t) => {
  t.same(rule, {
    livenessMs: L,
    heartbeatMs: 2000,
    gapMs: 4000,
    slackMs: RECONNECT_SLACK_MS,
    evidence: { steadyMs: L + RECONNECT_SLACK_MS, gapMs: 4000 },
  });
  t.equal(livenessRule(100).heartbeatMs, 50, 'never beats faster than every 50 ms');
  t.equal(recoveryPeriodMs(LEASE, L), 5000, 'half of min(lease, liveness)');
  t.equal(recoveryPeriodMs(4000, L), 2000);
  t.equal(recoveryBoundMs(L, recoveryPeriodMs(LEASE, L)), 15_000, 'defaults: 15 s');
});

/** A steady database: beaten without a gap for an hour, last beat a moment ago. */
const steady = { steadyMs: 3_600_000, lastBeatAgeMs: 300 };
const facts = (over: Partial<RecoveryFacts>): RecoveryFacts => ({
  began: true,
  leaseOverdueMs: -20_000,
  worker: { status: 'serving', heartbeatAgeMs: 500 },
  database: steady,
  ...over,
});
const silent = { status: 'serving' as const, heartbeatAgeMs: L + 1 };

const cases: { name: string; facts: RecoveryFacts; want: RecoveryVerdict }[] = [
  {
    name: 'a live worker with a current lease',
    facts: facts({}),
    want: { act: 'keep', why: 'worker_live' },
  },
  {
    name: 'a worker silent past the window, the database steady: lost',
    facts: facts({ worker: silent }),
    want: { act: 'lost', evidence: 'worker_silent' },
  },
  {
    name: 'the same, but it never began: queued again',
    facts: facts({ worker: silent, began: false }),
    want: { act: 'requeue', evidence: 'worker_silent' },
  },
  {
    name: 'silent exactly one window: still live',
    facts: facts({ worker: { status: 'serving', heartbeatAgeMs: L } }),
    want: { act: 'keep', why: 'worker_live' },
  },
  {
    name: 'a draining worker silent past the window is gone too',
    facts: facts({ worker: { status: 'draining', heartbeatAgeMs: L + 1 } }),
    want: { act: 'lost', evidence: 'worker_silent' },
  },
  {
    name: 'after a pause every heartbeat is old, and no beat has landed since',
    facts: facts({
      worker: { status: 'serving', heartbeatAgeMs: 12_000 },
      database: { steadyMs: 3_600_000, lastBeatAgeMs: 11_000 },
    }),
    want: { act: 'keep', why: 'database_not_steady' },
  },
  {
    name: 'after a pause, the first beat began a new stretch',
    facts: facts({
      worker: { status: 'serving', heartbeatAgeMs: 12_000 },
      database: { steadyMs: 200, lastBeatAgeMs: 200 },
    }),
    want: { act: 'keep', why: 'database_not_steady' },
  },
  {
    name: 'a stretch of one window is not enough: the reconnect slack too',
    facts: facts({ worker: silent, database: { steadyMs: L, lastBeatAgeMs: 100 } }),
    want: { act: 'keep', why: 'database_not_steady' },
  },
  {
    name: 'a stretch of the window plus the slack is',
    facts: facts({
      worker: silent,
      database: { steadyMs: L + RECONNECT_SLACK_MS, lastBeatAgeMs: 100 },
    }),
    want: { act: 'lost', evidence: 'worker_silent' },
  },
  {
    name: 'a last beat at the gap still counts as continuous',
    facts: facts({ worker: silent, database: { steadyMs: 60_000, lastBeatAgeMs: 4000 } }),
    want: { act: 'lost', evidence: 'worker_silent' },
  },
  {
    name: 'a last beat past the gap does not',
    facts: facts({ worker: silent, database: { steadyMs: 60_000, lastBeatAgeMs: 4001 } }),
    want: { act: 'keep', why: 'database_not_steady' },
  },
  {
    name: 'the database never beaten',
    facts: facts({ worker: silent, database: null }),
    want: { act: 'keep', why: 'database_not_steady' },
  },
  {
    name: 'a lapsed lease of a live worker, the database steady for a whole lease: lost',
    facts: facts({ leaseOverdueMs: 1 }),
    want: { act: 'lost', evidence: 'lease_lapsed' },
  },
  {
    name: 'a lease that lapsed during an outage is no evidence',
    facts: facts({ leaseOverdueMs: 5000, database: { steadyMs: 3000, lastBeatAgeMs: 100 } }),
    want: { act: 'keep', why: 'database_not_steady' },
  },
  {
    name: 'a lapsed lease needs the lease plus the slack of steadiness',
    facts: facts({
      leaseOverdueMs: 5000,
      database: { steadyMs: LEASE + RECONNECT_SLACK_MS - 1, lastBeatAgeMs: 100 },
    }),
    want: { act: 'keep', why: 'database_not_steady' },
  },
  {
    name: 'a stopped worker said it is gone: no evidence needed',
    facts: facts({ worker: { status: 'stopped', heartbeatAgeMs: 1 }, database: null }),
    want: { act: 'lost', evidence: 'worker_stopped' },
  },
  {
    name: 'a stopped worker whose command never began',
    facts: facts({ worker: { status: 'stopped', heartbeatAgeMs: 1 }, began: false }),
    want: { act: 'requeue', evidence: 'worker_stopped' },
  },
  {
    name: 'no worker row: nobody can finish it',
    facts: facts({ worker: null, database: null }),
    want: { act: 'lost', evidence: 'no_worker' },
  },
];

t.test('decideRecovery', async (t) => {
  for (const c of cases) t.same(decideRecovery(c.facts, rule, LEASE), c.want, c.name);
});

const refused = (code: string): ExecutionEnd => ({
  kind: 'error',
  error: new WorkbenchError(code as 'unavailable', `${code}: refused`),
});
const ranResult: ExecutionEnd = {
  kind: 'result',
  result: {
    exitCode: 0,
    signal: null,
    timedOut: false,
    cancelled: false,
    oomKilled: false,
    stdout: new Uint8Array(0),
    stderr: new Uint8Array(0),
    stdoutTruncated: false,
    stderrTruncated: false,
    durationMs: 1,
  },
};

const requeueCases: {
  name: string;
  end: ExecutionEnd;
  reason: AbortReason | null;
  began: boolean;
  attempts?: number;
  want: boolean;
}[] = [
  {
    name: 'refused before it began: the workspace moved to a live node',
    end: refused('unavailable'),
    reason: null,
    began: false,
    want: true,
  },
  {
    name: 'a node stopping cut it before it began',
    end: refused('internal'),
    reason: 'shutdown',
    began: false,
    want: true,
  },
  {
    name: 'refused for good (the run ended)',
    end: refused('run_ended'),
    reason: null,
    began: false,
    want: false,
  },
  {
    name: 'it began: whatever happened is its outcome',
    end: refused('unavailable'),
    reason: null,
    began: true,
    want: false,
  },
  {
    name: 'a cancel before it began is a cancel',
    end: refused('unavailable'),
    reason: 'cancel',
    began: false,
    want: false,
  },
  {
    name: 'a result is never queued again',
    end: ranResult,
    reason: null,
    began: false,
    want: false,
  },
  {
    name: 'refused on its last claim: recorded',
    end: refused('unavailable'),
    reason: null,
    began: false,
    attempts: MAX_CLAIMS,
    want: false,
  },
];

t.test('shouldRequeue', async (t) => {
  for (const c of requeueCases) {
    t.equal(shouldRequeue(c.end, c.reason, c.began, c.attempts ?? 1), c.want, c.name);
  }
});
