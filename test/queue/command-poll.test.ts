import t from 'tap';
import { CommandPoll } from '../../src/queue/command-poll.js';
import type { Command } from '../../src/store/index.js';
import { eventually } from './queue-support.js';

const row = (id: string, status: Command['status']) => ({ id, status }) as Command;

t.test('every followed command is read in one statement per poll', async (t) => {
  const reads: string[][] = [];
  let failNext = true;
  const poll = new CommandPoll({
    periodMs: 10,
    skip: (id) => id === 'running-here',
    read: async (ids) => {
      reads.push([...ids]);
      // The first read fails (the database is away): the next poll tries again.
      if (failNext) {
        failNext = false;
        throw new Error('unreachable');
      }
      return ids.filter((id) => id !== 'gone').map((id) => row(id, 'completed'));
    },
  });
  const seen = new Map<string, Command | null>();
  const stops = ['a', 'b', 'gone', 'running-here'].map((id) =>
    poll.follow(id, (r) => seen.set(id, r)),
  );
  t.teardown(() => {
    for (const stop of stops) stop();
  });
  await eventually(async () => (seen.size === 3 ? true : undefined), 10_000, 'three answers');
  t.same(reads[0], ['a', 'b', 'gone'], 'one read for all of them, without the one run here');
  t.ok(reads.length >= 2, 'a failed read is tried again');
  t.equal(seen.get('a')?.status, 'completed');
  t.equal(seen.get('gone'), null, 'a command without a row is reported as such');
  t.notOk(seen.has('running-here'));
});
