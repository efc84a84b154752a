import { randomBytes } from 'node:crypto';
import t from 'tap';
import type { ExecuteCommand } from '../../src/queue/index.js';
import { BwrapRunner } from '../../src/sandbox/bwrap/index.js';
import { getCommand } from '../../src/store/index.js';
import {
  captureLog,
  eventually,
  makeQueue,
  newRun,
  runnerExecutor,
  setupDb,
} from '../queue/queue-support.js';
import { makeWorkspace } from '../sandbox/sandbox-support.js';

/**
 * Command text, env, stdin, stdout and stderr never reach an audit row or a log line:
 * a canary goes into each, through a real bwrap sandbox, and is looked for everywhere.
 */
t.test('the canary is in no audit row and no log line', async (t) => {
  const { db } = await setupDb(t);
  const run = await newRun(db);
  const ws = await makeWorkspace(t);
  const canary = `CANARY${randomBytes(10).toString('hex')}`;
  const captured = captureLog('node-canary');
  const inner = runnerExecutor(new BwrapRunner(), ws);
  const execute: ExecuteCommand = (command, ctx) => {
    if ((command.request as { fail?: boolean }).fail) {
      // An executor whose error quotes what it was asked to run.
      throw new Error(`could not start: ${String(command.request.command)}`);
    }
    return inner(command, ctx);
  };
  const queue = makeQueue(t, { db, execute, log: captured.log, concurrency: 2 });
  queue.start();

  const request = {
    command: `cat; echo "env=$CANARY_VALUE"; echo "err-${canary}" >&2; : ${canary}`,
    env: { CANARY_VALUE: `${canary}-env` },
    stdin: `stdin-${canary}\n`,
  };
  const ok = await queue.enqueue({ ...run, request, timeoutMs: 20_000 });
  const failing = await queue.enqueue({
    ...run,
    request: { ...request, fail: true },
    timeoutMs: 20_000,
  });
  const timing = await queue.enqueue({
    ...run,
    request: { ...request, command: `echo ${canary}; sleep 30` },
    timeoutMs: 500,
  });
  const cancelling = await queue.enqueue({
    ...run,
    request: { ...request, command: `echo ${canary}; sleep 30` },
    timeoutMs: 20_000,
  });
  const ends = Promise.all([
    queue.waitForTerminal(ok.command.id),
    queue.waitForTerminal(failing.command.id),
    queue.waitForTerminal(timing.command.id),
    queue.waitForTerminal(cancelling.command.id),
  ]);
  // Cancel it while it runs, so the cancelling path is logged too.
  await eventually(async () =>
    (await queue.get(cancelling.command.id))?.status === 'running' ? true : undefined,
  );
  await queue.cancel(cancelling.command.id);
  const done = await ends;
  t.same(
    done.map((c) => c.status),
    ['completed', 'failed', 'timed_out', 'cancelled'],
  );

  const row = await getCommand(db, ok.command.id);
  const out = row?.stdout?.toString() ?? '';
  t.match(out, `stdin-${canary}`, 'stdin reached the command');
  t.match(out, `env=${canary}-env`, 'env reached the command');
  t.match(row?.stderr?.toString() ?? '', `err-${canary}`, 'stderr carried it');

  const audit = await db.query('select * from audit_event');
  t.ok(audit.length >= 12, `audit rows were written (${audit.length})`);
  t.notMatch(JSON.stringify(audit), canary, 'no audit row holds the canary');

  const expected = [
    'workspace_command.queued',
    'workspace_command.running',
    'workspace_command.completed',
    'workspace_command.failed',
    'workspace_command.timed_out',
    'workspace_command.cancelled',
    'workspace_command.cancelling',
    'workspace_command.error',
  ];
  // A terminal line may be written just after the waiters were told: wait for the
  // lines rather than for a tick.
  const seen = () => new Set(captured.lines().map((l) => l.event));
  await eventually(
    async () => {
      captured.log.flush();
      return expected.every((e) => seen().has(e)) ? true : undefined;
    },
    10_000,
    'every event line',
  ).catch(() => undefined);
  const lines = captured.lines();
  const events = seen();
  for (const e of expected) {
    t.ok(events.has(e), `a ${e} line was logged`);
  }
  t.ok(
    lines.some(
      (l) => l.event === 'workspace_command.error' && String(l.errorMessage).includes('[redacted]'),
    ),
    "the executor's error is logged with the command cut out",
  );
  t.notMatch(captured.text(), canary, 'no log line holds the canary');
});
