import t from 'tap';
import { type DispatchResult, userAuthority } from '../../src/contract/index.js';
import { enqueueCommand } from '../../src/store/index.js';
import { bwrapHost } from '../support/bwrap-host.js';
import { parsedEnvelope } from '../support/envelope.js';

/**
 * A `callId` names one call of a run, whatever its action: the same key with the same
 * action, arguments and hint replays the recorded outcome; with anything else it is
 * refused (`call_id_conflict`) and nothing runs. On one host over Postgres and bwrap.
 */

const RUN = 'run-call-keys';

t.test('keys of file actions and commands', async (t) => {
  const { host, db } = await bwrapHost(t, { nodeId: 'wb-keys', runId: RUN });
  let task = 0;
  const call = (action: string, args: Record<string, unknown>, callId?: string, env?: unknown) => {
    task += 1;
    return host.handleDispatch(
      parsedEnvelope({
        action,
        args,
        runId: RUN,
        agentId: 'a',
        // Who sends the call is not part of it: a retry may come from another task.
        taskId: `t${task}`,
        ...(callId === undefined ? {} : { callId }),
        ...(env === undefined ? {} : { environment: env }),
      }),
      userAuthority('user:alice'),
    );
  };
  const payloadOf = (r: DispatchResult) => {
    if (!r.ok) throw new Error(`${r.errorCode}: ${r.message}`);
    return r.payload as Record<string, unknown>;
  };
  const read = async (path: string) => payloadOf(await call('fs_read', { path })).content;

  t.test('an append replayed is appended once', async (t) => {
    const args = { path: 'log.txt', content: 'one\n', append: true };
    const first = await call('fs_write', args, 'w-1');
    t.same(await call('fs_write', args, 'w-1'), first, 'the recorded answer');
    t.equal(await read('log.txt'), 'one\n');
    const other = await call('fs_write', { ...args, content: 'two\n' }, 'w-1');
    t.match(other, { ok: false, errorCode: 'call_id_conflict' });
    t.match(other.ok ? {} : other.payload, { callId: 'w-1', recordedAction: 'fs_write' });
    t.equal(await read('log.txt'), 'one\n', 'the conflicting write did nothing');
    // Another hint is another call too.
    const hinted = await call('fs_write', args, 'w-1', { os: 'linux' });
    t.match(hinted, { ok: false, errorCode: 'call_id_conflict' });
  });

  t.test('a refusal a retry cannot change is replayed; a delete is not done twice', async (t) => {
    const missing = await call('fs_delete', { path: 'nothing-here' }, 'd-1');
    t.match(missing, { ok: false, errorCode: 'path_not_found' });
    await call('fs_write', { path: 'nothing-here', content: 'x' });
    t.same(await call('fs_delete', { path: 'nothing-here' }, 'd-1'), missing, 'replayed');
    t.equal(await read('nothing-here'), 'x', 'the replay deleted nothing');
    const gone = await call('fs_delete', { path: 'nothing-here' }, 'd-2');
    t.match(gone, { ok: true });
    t.same(await call('fs_delete', { path: 'nothing-here' }, 'd-2'), gone);
  });

  t.test('one key, one action: a file action key is not a command key, nor back', async (t) => {
    await call('fs_write', { path: 'k.txt', content: 'k' }, 'shared-1');
    const exec = await call('exec', { command: 'echo should-not-run' }, 'shared-1');
    t.match(exec, { ok: false, errorCode: 'call_id_conflict' });
    t.match(exec.ok ? {} : exec.payload, { recordedAction: 'fs_write' });
    const ran = payloadOf(await call('exec', { command: 'echo ran' }, 'shared-2'));
    const write = await call('fs_write', { path: 'k.txt', content: 'no' }, 'shared-2');
    t.match(write, { ok: false, errorCode: 'call_id_conflict' });
    t.match(write.ok ? {} : write.payload, { recordedAction: 'exec', commandId: ran.commandId });
    t.equal(await read('k.txt'), 'k');
    const rows = await db.query<{ call_id: string }>(
      'select call_id from workspace_command where run_id = $1 and call_id like $2',
      [RUN, 'shared-%'],
    );
    t.same(
      rows.map((r) => r.call_id),
      ['shared-2'],
      'the refused exec queued no command',
    );
  });

  t.test('a command replayed is the same command; other arguments are refused', async (t) => {
    const first = payloadOf(await call('exec', { command: 'echo $RANDOM' }, 'x-1'));
    const again = payloadOf(await call('exec', { command: 'echo $RANDOM' }, 'x-1'));
    t.equal(again.commandId, first.commandId);
    t.equal(again.stdout, first.stdout);
    const other = await call('exec', { command: 'echo $RANDOM', timeoutMs: 5000 }, 'x-1');
    t.match(other, { ok: false, errorCode: 'call_id_conflict' });
    const count = await db.query('select 1 from workspace_command where call_id = $1', ['x-1']);
    t.equal(count.length, 1);
  });

  t.test('reads keep their key and read again', async (t) => {
    await call('fs_write', { path: 'r.txt', content: 'before' });
    t.equal(payloadOf(await call('fs_read', { path: 'r.txt' }, 'r-1')).content, 'before');
    await call('fs_write', { path: 'r.txt', content: 'after' });
    t.equal(payloadOf(await call('fs_read', { path: 'r.txt' }, 'r-1')).content, 'after');
    t.match(await call('fs_read', { path: 'other.txt' }, 'r-1'), {
      ok: false,
      errorCode: 'call_id_conflict',
    });
  });

  t.test('the same call twice at once runs once', async (t) => {
    const args = { path: 'twice.txt', content: 'x', append: true };
    const [a, b] = await Promise.all([
      call('fs_write', args, 'c-1'),
      call('fs_write', args, 'c-1'),
    ]);
    t.same(a, b);
    t.equal(await read('twice.txt'), 'x');
  });

  t.test('a key recorded before digests replays whatever comes', async (t) => {
    // As a command queued by an earlier version is: its key carries no digest.
    const { command } = await enqueueCommand(db, {
      id: 'legacy-cmd',
      runId: RUN,
      ownerUserId: 'alice',
      callId: 'legacy-1',
      request: { command: 'echo legacy' },
      timeoutMs: 1000,
    });
    const again = await enqueueCommand(db, {
      id: 'legacy-cmd-2',
      runId: RUN,
      ownerUserId: 'alice',
      callId: 'legacy-1',
      call: { action: 'exec', digest: 'f'.repeat(64), nodeId: 'wb-keys' },
      request: { command: 'echo legacy' },
      timeoutMs: 1000,
    });
    t.equal(again.created, false);
    t.equal(again.command.id, command.id);
  });
});
