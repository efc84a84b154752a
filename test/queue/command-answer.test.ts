import t from 'tap';
import { outputText } from '../../src/contract/index.js';
import { commandAnswer, expectedOutputs } from '../../src/queue/command-answer.js';
import type { Command } from '../../src/store/index.js';

t.test('output is text when it is UTF-8, else base64', async (t) => {
  t.same(outputText(Buffer.from('héllo\n'), false), { text: 'héllo\n' });
  t.same(outputText(Buffer.alloc(0), false), { text: '' });
  const binary = Buffer.from([0x00, 0xff, 0x41]);
  t.same(outputText(binary, false), { text: binary.toString('base64'), encoding: 'base64' });
  // Output cut at its limit inside a character: the partial character goes, the rest is text.
  const euro = Buffer.from('ab€');
  t.same(outputText(euro.subarray(0, 4), true), { text: 'ab' });
  t.same(outputText(euro.subarray(0, 3), true), { text: 'ab' });
  t.same(
    outputText(euro.subarray(0, 4), false),
    { text: euro.subarray(0, 4).toString('base64'), encoding: 'base64' },
    'uncut output ending mid-character is not text',
  );
  const early = Buffer.concat([Buffer.from([0xff]), Buffer.from('abc')]);
  t.same(
    outputText(early, true),
    { text: early.toString('base64'), encoding: 'base64' },
    'a bad byte before the cut is binary',
  );
});

t.test('expected outputs: as recorded, else command_failed once the command ended', async (t) => {
  const named = {
    command: 'x',
    outputs: [
      { path: 'a.txt', name: 'a.txt' },
      { path: 'b', name: 'b' },
    ],
  };
  const base: Command = {
    id: 'c1',
    runId: 'r',
    workspaceId: null,
    ownerUserId: 'u',
    conversationId: null,
    callId: null,
    status: 'completed',
    request: named,
    execRequest: named,
    timeoutMs: 1000,
    attempts: 1,
    leaseOwner: null,
    leaseExpiresAt: null,
    cancelRequested: false,
    exitCode: 2,
    errorCode: null,
    errorCategory: null,
    stdout: null,
    stderr: null,
    stdoutTruncated: false,
    stderrTruncated: false,
    signal: null,
    oomKilled: false,
    execDurationMs: 5,
    outputs: null,
    queuedAt: new Date(),
    queuePlace: new Date(),
    startedAt: new Date(),
    finishedAt: new Date(),
  };
  const noneNamed = { request: { command: 'x' }, execRequest: { command: 'x' } };
  t.match(expectedOutputs(base), [
    { path: 'a.txt', error: { code: 'command_failed', message: /exited with code 2/ } },
    { path: 'b', error: { code: 'command_failed' } },
  ]);
  t.match(expectedOutputs({ ...base, status: 'timed_out', exitCode: null }), [
    { error: { message: /timed out/ } },
    {},
  ]);
  t.match(expectedOutputs({ ...base, status: 'cancelled' }), [
    { error: { message: /cancelled/ } },
    {},
  ]);
  t.match(expectedOutputs({ ...base, status: 'failed', errorCode: 'command_lost' }), [
    { error: { message: /failed \(command_lost\)/ } },
    {},
  ]);
  t.equal(expectedOutputs({ ...base, status: 'running' }), undefined, 'not before it ends');
  t.equal(expectedOutputs({ ...base, ...noneNamed }), undefined, 'none named');
  const recorded = [{ path: 'a.txt', error: { code: 'path_not_found', message: 'm' } }];
  t.same(expectedOutputs({ ...base, exitCode: 0, outputs: recorded }), recorded, 'as recorded');
  t.same(commandAnswer({ ...base, exitCode: 0, outputs: recorded }).outputs, recorded);
  t.notOk('outputs' in commandAnswer({ ...base, ...noneNamed }));
});
