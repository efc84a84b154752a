import t from 'tap';
import type { ManifestFile, VersionedFile } from '../../../src/store/index.js';
import { applyAll, type LocalChange, planMerge } from '../../../src/workbench/sync/merge.js';

const entry = (path: string, hash: string): ManifestFile => ({
  path,
  hash,
  size: hash.length,
  mode: 0o644,
  mtimeMs: 1,
});
const head = (path: string, hash: string, version: number): VersionedFile => ({
  ...entry(path, hash),
  version,
});

const BASE = 5;

/** One path: what the base had, what the committer made of it, what the head holds. */
interface Case {
  name: string;
  change: LocalChange;
  head: VersionedFile | undefined;
  /** The plan when the committer holds the workspace, and when it is fenced. */
  holder: { upserts: string[]; deletes: string[]; lost: [string, string | null][] };
  fenced: { upserts: string[]; deletes: string[]; lost: [string, string | null][] };
}

const p = 'f.txt';
const cases: Case[] = [
  {
    name: 'new file, nobody else made it',
    change: { path: p, entry: entry(p, 'mine'), base: null },
    head: undefined,
    holder: { upserts: ['mine'], deletes: [], lost: [] },
    fenced: { upserts: ['mine'], deletes: [], lost: [] },
  },
  {
    name: 'edit of a file nobody else touched since the base',
    change: { path: p, entry: entry(p, 'mine'), base: entry(p, 'old') },
    head: head(p, 'old', 3),
    holder: { upserts: ['mine'], deletes: [], lost: [] },
    fenced: { upserts: ['mine'], deletes: [], lost: [] },
  },
  {
    name: 'delete of a file nobody else touched',
    change: { path: p, entry: null, base: entry(p, 'old') },
    head: head(p, 'old', BASE),
    holder: { upserts: [], deletes: [p], lost: [] },
    fenced: { upserts: [], deletes: [p], lost: [] },
  },
  {
    name: 'both wrote the same content: no conflict',
    change: { path: p, entry: entry(p, 'same'), base: entry(p, 'old') },
    head: head(p, 'same', 7),
    holder: { upserts: ['same'], deletes: [], lost: [] },
    fenced: { upserts: ['same'], deletes: [], lost: [] },
  },
  {
    name: 'both deleted it: nothing to do, no conflict',
    change: { path: p, entry: null, base: entry(p, 'old') },
    head: undefined,
    holder: { upserts: [], deletes: [p], lost: [] },
    fenced: { upserts: [], deletes: [p], lost: [] },
  },
  {
    name: 'both edited it differently',
    change: { path: p, entry: entry(p, 'mine'), base: entry(p, 'old') },
    head: head(p, 'theirs', 7),
    holder: { upserts: ['mine'], deletes: [], lost: [['head', 'theirs']] },
    fenced: { upserts: [], deletes: [], lost: [['committer', 'mine']] },
  },
  {
    name: 'both created it differently',
    change: { path: p, entry: entry(p, 'mine'), base: null },
    head: head(p, 'theirs', 6),
    holder: { upserts: ['mine'], deletes: [], lost: [['head', 'theirs']] },
    fenced: { upserts: [], deletes: [], lost: [['committer', 'mine']] },
  },
  {
    name: 'this side deleted what the other edited',
    change: { path: p, entry: null, base: entry(p, 'old') },
    head: head(p, 'theirs', 6),
    holder: { upserts: [], deletes: [p], lost: [['head', 'theirs']] },
    fenced: { upserts: [], deletes: [], lost: [['committer', null]] },
  },
  {
    name: 'this side edited what the other deleted',
    change: { path: p, entry: entry(p, 'mine'), base: entry(p, 'old') },
    head: undefined,
    holder: { upserts: ['mine'], deletes: [], lost: [['head', null]] },
    fenced: { upserts: [], deletes: [], lost: [['committer', 'mine']] },
  },
];

t.test('planMerge: one path at a time, as the holder and as a fenced writer', async (t) => {
  for (const c of cases) {
    const heads = new Map(c.head ? [[p, c.head]] : []);
    for (const [holds, want] of [
      [true, c.holder],
      [false, c.fenced],
    ] as const) {
      const plan = planMerge([c.change], heads, BASE, holds);
      const who = holds ? 'holder' : 'fenced';
      t.same(
        {
          upserts: plan.upserts.map((u) => u.hash),
          deletes: plan.deletes,
          lost: plan.conflicts.map((x) => [x.side, x.lost?.hash ?? null]),
        },
        want,
        `${c.name} (${who})`,
      );
      t.equal(plan.skipped, holds ? 0 : want.lost.length, `${c.name} (${who}): skipped`);
    }
  }
});

t.test('planMerge never touches a path the committer did not change', async (t) => {
  const heads = new Map([
    ['theirs-new.txt', head('theirs-new.txt', 'n', 8)],
    ['theirs-edit.txt', head('theirs-edit.txt', 'e2', 9)],
    ['mine.txt', head('mine.txt', 'm0', 2)],
  ]);
  const plan = planMerge(
    [{ path: 'mine.txt', entry: entry('mine.txt', 'm1'), base: entry('mine.txt', 'm0') }],
    heads,
    BASE,
    false,
  );
  t.same(
    plan.upserts.map((u) => u.path),
    ['mine.txt'],
  );
  t.same(plan.deletes, [], 'files others committed are never deleted');
  t.same(plan.conflicts, []);
});

t.test('applyAll takes every change as it is', async (t) => {
  const plan = applyAll([
    { path: 'a', entry: entry('a', 'x'), base: null },
    { path: 'b', entry: null, base: entry('b', 'y') },
  ]);
  t.same(
    plan.upserts.map((u) => u.path),
    ['a'],
  );
  t.same(plan.deletes, ['b']);
  t.same(plan.conflicts, []);
});
