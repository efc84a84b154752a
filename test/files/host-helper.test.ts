import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { HostHelpers, MAX_HELPERS } from '../../src/files/host-helper.js';
import { makeDeepTree } from '../support/deep-tree.js';

const FIND = '/usr/bin/find';
const NO_LIMIT = { bytes: 0, maxBytes: Number.MAX_SAFE_INTEGER, maxFiles: Number.MAX_SAFE_INTEGER };

const base = await mkdtemp(join(tmpdir(), 'memql-helper-'));
t.teardown(() => rm(base, { recursive: true, force: true }));

const stragglers: string[] = [];
t.teardown(async () => {
  // A stand-in whose helper was killed outlives it: ended here.
  for (const file of stragglers) {
    const pid = Number(await readFile(file, 'utf8').catch(() => ''));
    try {
      if (pid > 0) process.kill(pid, 'SIGKILL');
    } catch {
      // Ended with its helper's cancel or kill already.
    }
  }
});

/**
 * A stand-in for `find` that writes its parent's pid (and its own), prints `lines`
 * sizes of 10 bytes, then sleeps.
 */
async function slowFind(name: string, lines: number): Promise<{ path: string; ppid: string }> {
  const path = join(base, name);
  const ppid = join(base, `${name}.ppid`);
  const pid = join(base, `${name}.pid`);
  stragglers.push(pid);
  const sizes = Array.from({ length: lines }, () => 'echo 10').join('; ');
  await writeFile(
    path,
    `#!/bin/sh\necho $$ > ${pid}\necho $PPID > ${ppid}\n${sizes}\nexec sleep 1000\n`,
  );
  await chmod(path, 0o755);
  return { path, ppid };
}

/** The pid of the helper that started a stand-in, once the stand-in is running. */
async function parentOf(slow: { ppid: string }): Promise<number> {
  for (;;) {
    const ppid = (await readFile(slow.ppid, 'utf8').catch(() => '')).trim();
    if (ppid !== '') return Number(ppid);
    await new Promise((wake) => setTimeout(wake, 5));
  }
}

t.test('a count adds up regular files and bytes at any depth, from a helper', async (t) => {
  const helpers = new HostHelpers();
  t.teardown(() => helpers.killAll());
  const dir = join(base, 'tree');
  await mkdir(join(dir, 'a', 'b'), { recursive: true });
  await writeFile(join(dir, 'one'), 'x'.repeat(100));
  await writeFile(join(dir, 'a', 'two'), 'y'.repeat(2000));
  await writeFile(join(dir, 'a', 'b', 'three'), '');
  // Deeper than PATH_MAX: find walks through directory descriptors.
  makeDeepTree(join(dir, 'a'), 40);
  const job = await helpers.count(FIND, dir, { ...NO_LIMIT, bytes: 7 });
  t.ok(job, 'a helper took it');
  const answer = await job!.answer;
  t.equal(answer.code, 0);
  t.equal(answer.cancelled, false);
  t.ok(answer.files >= 3, `every regular file, the deep tree's included (${answer.files})`);
  t.ok(answer.bytes >= 7 + 100 + 2000, 'their bytes, from the starting bytes');
});

t.test('a count stops once it passes a limit', async (t) => {
  const helpers = new HostHelpers();
  t.teardown(() => helpers.killAll());
  const dir = join(base, 'many');
  await mkdir(dir);
  for (let i = 0; i < 40; i++) await writeFile(join(dir, `f${i}`), 'z');
  const byFiles = await (await helpers.count(FIND, dir, { ...NO_LIMIT, maxFiles: 10 }))!.answer;
  t.ok(byFiles.files > 10, 'past the file limit');
  const unlimited = await (await helpers.count(FIND, dir, {
    bytes: 0,
    maxBytes: Number.POSITIVE_INFINITY,
    maxFiles: Number.POSITIVE_INFINITY,
  }))!.answer;
  t.match(unlimited, { code: 0, files: 40, bytes: 40 }, 'an infinite limit is none');
  const byBytes = await (await helpers.count(FIND, dir, { ...NO_LIMIT, bytes: 95, maxBytes: 100 }))!
    .answer;
  t.ok(byBytes.bytes > 100, 'past the byte limit');
  t.ok(byBytes.files <= 40);

  // One that never ends by itself is stopped by the limit, not left running.
  const slow = await slowFind('slow-limit', 12);
  const job = await helpers.count(slow.path, dir, { ...NO_LIMIT, maxFiles: 10 });
  const answer = await job!.answer;
  t.ok(answer.files > 10);
  t.equal(answer.code, 128 + 9, 'killed');
});

t.test('a count runs in the helper, and a cancel ends it at once', async (t) => {
  const helpers = new HostHelpers();
  t.teardown(() => helpers.killAll());
  const slow = await slowFind('slow-cancel', 3);
  const job = await helpers.count(slow.path, base, NO_LIMIT);
  const ppid = await parentOf(slow);
  t.same([ppid], helpers.pids(), "find's parent is the helper, not this process");
  t.not(ppid, process.pid);
  job!.cancel();
  const answer = await job!.answer;
  t.equal(answer.cancelled, true);
  t.equal(answer.code, 128 + 9);
  t.equal(answer.files, 3, 'what was counted before the cancel');
  // The helper serves the next request, and a late cancel is answered with nothing.
  job!.cancel();
  const dir = join(base, 'after-cancel');
  await mkdir(dir);
  await writeFile(join(dir, 'f'), 'abc');
  const next = await (await helpers.count(FIND, dir, NO_LIMIT))!.answer;
  t.match(next, { code: 0, files: 1, bytes: 3, cancelled: false });
  t.same(helpers.pids(), [ppid], 'the same helper');
});

t.test('a count has a helper to itself; rm never waits behind one', async (t) => {
  const helpers = new HostHelpers();
  t.teardown(() => helpers.killAll());
  const jobs = [];
  for (let i = 0; i < MAX_HELPERS; i++) {
    const slow = await slowFind(`busy${i}`, 1);
    jobs.push(await helpers.count(slow.path, base, NO_LIMIT));
  }
  t.ok(
    jobs.every((j) => j !== null),
    'every helper counts',
  );
  t.equal(helpers.pids().length, MAX_HELPERS);
  t.equal(await helpers.count(FIND, base, NO_LIMIT), null, 'no helper free: the caller runs find');
  t.equal(
    await helpers.rm('/usr/bin/rm', base, ['nothing-here']),
    null,
    'every helper counting: the caller runs rm',
  );
  for (const j of jobs) j!.cancel();
  const answers = await Promise.all(jobs.map((j) => j!.answer));
  t.ok(answers.every((a) => a.cancelled));
  t.same(await helpers.rm('/usr/bin/rm', base, ['nothing-here']), { code: 0, stderr: '' });
});

t.test('counts started together each get a helper of their own', async (t) => {
  const helpers = new HostHelpers();
  t.teardown(() => helpers.killAll());
  const slows = await Promise.all([0, 1, 2].map((i) => slowFind(`together${i}`, i + 1)));
  const jobs = await Promise.all(slows.map((s) => helpers.count(s.path, base, NO_LIMIT)));
  const ppids = await Promise.all(slows.map(parentOf));
  t.equal(new Set(ppids).size, 3, 'three helpers');
  for (const j of jobs) j!.cancel();
  const answers = await Promise.all(jobs.map((j) => j!.answer));
  t.same(
    answers.map((a) => a.files),
    [1, 2, 3],
    'each answer is its own count',
  );
});

t.test("a helper's death fails its count, and the next one starts a new helper", async (t) => {
  const helpers = new HostHelpers();
  t.teardown(() => helpers.killAll());
  const slow = await slowFind('slow-death', 1);
  const job = await helpers.count(slow.path, base, NO_LIMIT);
  const ppid = await parentOf(slow);
  helpers.killAll();
  await t.rejects(job!.answer, /ended before it answered/);
  const dir = join(base, 'after-death');
  await mkdir(dir);
  await writeFile(join(dir, 'f'), 'abcd');
  t.match(await (await helpers.count(FIND, dir, NO_LIMIT))!.answer, { files: 1, bytes: 4 });
  t.notOk(helpers.pids().includes(ppid), 'a new helper');
});
