import t from 'tap';
import {
  COMMAND_EVENT_TYPES,
  commandAuditEvent,
  commandAuditMetadata,
  commandEventType,
} from '../../src/queue/command-audit.js';
import type { Command } from '../../src/store/commands.js';

const canary = 'CANARY-audit-5e1d';

function command(over: Partial<Command> = {}): Command {
  return {
    id: 'cmd-1',
    runId: 'run-1',
    workspaceId: 'ws-1',
    ownerUserId: 'user-1',
    conversationId: 'conv-1',
    callId: `call-${canary}`,
    status: 'completed',
    request: { command: `echo ${canary}`, env: { K: canary }, stdin: canary },
    execRequest: { command: `echo ${canary}`, env: { K: canary }, stdin: canary },
    timeoutMs: 5000,
    attempts: 1,
    leaseOwner: null,
    leaseExpiresAt: null,
    cancelRequested: false,
    exitCode: 0,
    errorCode: null,
    errorCategory: null,
    stdout: Buffer.from(`${canary}\n`),
    stderr: Buffer.from(canary),
    stdoutTruncated: true,
    stderrTruncated: false,
    signal: null,
    oomKilled: false,
    execDurationMs: 180,
    queuedAt: new Date('2030-01-01T00:00:00.000Z'),
    queuePlace: new Date('2030-01-01T00:00:00.000Z'),
    startedAt: new Date('2030-01-01T00:00:01.500Z'),
    finishedAt: new Date('2030-01-01T00:00:01.750Z'),
    ...over,
  };
}

t.test('metadata is the allow-list and nothing else', async (t) => {
  const md = commandAuditMetadata(command());
  t.same(md, {
    commandId: 'cmd-1',
    workspaceId: 'ws-1',
    runId: 'run-1',
    conversationId: 'conv-1',
    status: 'completed',
    timeoutMs: 5000,
    attempts: 1,
    cancelRequested: false,
    errorCode: null,
    errorCategory: null,
    exitCode: 0,
    signal: null,
    oomKilled: false,
    queueWaitMs: 1500,
    durationMs: 250,
    execDurationMs: 180,
    stdoutBytes: canary.length + 1,
    stderrBytes: canary.length,
    stdoutTruncated: true,
    stderrTruncated: false,
  });
  t.notMatch(JSON.stringify(md), canary, 'no request, output or callId text');
  for (const v of Object.values(md)) {
    t.ok(v === null || ['string', 'number', 'boolean'].includes(typeof v), 'scalars only');
  }
});

t.test('a field added to the row later stays out', async (t) => {
  const row = { ...command(), futureSecret: canary } as Command;
  t.notMatch(JSON.stringify(commandAuditEvent('workspace_command.completed', row)), canary);
});

t.test('counts are numbers under plain names, and never replace a field', async (t) => {
  const md = commandAuditMetadata(command(), {
    queued: 3,
    attempts: 99,
    'bad name': 1,
    [canary]: 2,
    huge: Number.POSITIVE_INFINITY,
  });
  t.equal(md.queued, 3);
  t.equal(md.attempts, 1);
  t.notOk('bad name' in md);
  t.notOk('huge' in md);
  t.notMatch(JSON.stringify(md), canary);
});

t.test('a queued command has no wait or duration yet; odd signals are dropped', async (t) => {
  const md = commandAuditMetadata(
    command({ status: 'queued', startedAt: null, finishedAt: null, signal: `SIG ${canary}` }),
  );
  t.equal(md.queueWaitMs, null);
  t.equal(md.durationMs, null);
  t.equal(md.signal, null);
  t.equal(commandAuditMetadata(command({ signal: 'SIGKILL' })).signal, 'SIGKILL');
});

t.test('event types and the event row', async (t) => {
  t.same(COMMAND_EVENT_TYPES.length, 7);
  t.equal(commandEventType('timed_out'), 'workspace_command.timed_out');
  const ev = commandAuditEvent('workspace_command.completed', command());
  t.match(ev, {
    eventType: 'workspace_command.completed',
    runId: 'run-1',
    workspaceId: 'ws-1',
    commandId: 'cmd-1',
    ownerUserId: 'user-1',
  });
});
