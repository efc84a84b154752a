import t from 'tap';
import type { ManifestFile } from '../../../src/store/index.js';
import {
  decideReconcile,
  type LocalFile,
  planReconcile,
  planSync,
  planUploads,
} from '../../../src/workbench/sync/diff.js';

const H1 = '1'.repeat(64);
const H2 = '2'.repeat(64);
const H3 = '3'.repeat(64);

function entry(path: string, hash = H1, size = 5, mtimeMs = 1000, mode = 0o644): ManifestFile {
  return { path, hash, size, mode, mtimeMs };
}

function local(path: string, size = 5, mtimeMs = 1000, mode = 0o644, hash?: string): LocalFile {
  return hash === undefined ? { path, size, mtimeMs, mode } : { path, size, mtimeMs, mode, hash };
}

t.test('planSync, one local file against one manifest entry', async (t) => {
  const cases: Array<{
    name: string;
    manifest: ManifestFile[];
    local: LocalFile[];
    want: { unchanged: string[]; needHash: string[]; upserts: ManifestFile[]; deletes: string[] };
  }> = [
    {
      name: 'same size, mtime and mode: unchanged without a hash',
      manifest: [entry('a')],
      local: [local('a')],
      want: { unchanged: ['a'], needHash: [], upserts: [], deletes: [] },
    },
    {
      name: 'mtime is compared in whole milliseconds, rounded',
      manifest: [entry('a')],
      local: [local('a', 5, 999.9999)],
      want: { unchanged: ['a'], needHash: [], upserts: [], deletes: [] },
    },
    {
      name: 'bits above the permission bits are ignored',
      manifest: [entry('a')],
      local: [local('a', 5, 1000, 0o100644)],
      want: { unchanged: ['a'], needHash: [], upserts: [], deletes: [] },
    },
    {
      name: 'new file without a hash: needs one',
      manifest: [],
      local: [local('new')],
      want: { unchanged: [], needHash: ['new'], upserts: [], deletes: [] },
    },
    {
      name: 'new file with a hash: upsert',
      manifest: [],
      local: [local('new', 5, 1000.4, 0o755, H2)],
      want: {
        unchanged: [],
        needHash: [],
        upserts: [entry('new', H2, 5, 1000, 0o755)],
        deletes: [],
      },
    },
    {
      name: 'size differs: needs a hash',
      manifest: [entry('a')],
      local: [local('a', 6)],
      want: { unchanged: [], needHash: ['a'], upserts: [], deletes: [] },
    },
    {
      name: 'mtime differs: needs a hash',
      manifest: [entry('a')],
      local: [local('a', 5, 2000)],
      want: { unchanged: [], needHash: ['a'], upserts: [], deletes: [] },
    },
    {
      name: 'mtime differs, same hash: metadata upsert keeps the hash',
      manifest: [entry('a')],
      local: [local('a', 5, 2000, 0o644, H1)],
      want: { unchanged: [], needHash: [], upserts: [entry('a', H1, 5, 2000)], deletes: [] },
    },
    {
      name: 'hashed and different: content upsert',
      manifest: [entry('a')],
      local: [local('a', 7, 2000, 0o644, H2)],
      want: { unchanged: [], needHash: [], upserts: [entry('a', H2, 7, 2000)], deletes: [] },
    },
    {
      name: 'quick check passes but a known hash differs: the hash wins',
      manifest: [entry('a')],
      local: [local('a', 5, 1000, 0o644, H2)],
      want: { unchanged: [], needHash: [], upserts: [entry('a', H2)], deletes: [] },
    },
    {
      name: 'only the mode changed: metadata upsert without reading',
      manifest: [entry('a')],
      local: [local('a', 5, 1000, 0o755)],
      want: {
        unchanged: [],
        needHash: [],
        upserts: [entry('a', H1, 5, 1000, 0o755)],
        deletes: [],
      },
    },
    {
      name: 'gone locally: delete',
      manifest: [entry('a'), entry('b')],
      local: [local('b')],
      want: { unchanged: ['b'], needHash: [], upserts: [], deletes: ['a'] },
    },
    {
      name: 'empty scan deletes everything',
      manifest: [entry('a'), entry('dir/b')],
      local: [],
      want: { unchanged: [], needHash: [], upserts: [], deletes: ['a', 'dir/b'] },
    },
  ];
  for (const c of cases) {
    const plan = planSync(c.manifest, c.local);
    t.same(
      {
        unchanged: plan.unchanged,
        needHash: plan.needHash.map((f) => f.path),
        upserts: plan.upserts,
        deletes: plan.deletes,
      },
      c.want,
      c.name,
    );
  }
});

t.test('planSync runs in two passes: the second has nothing to hash', async (t) => {
  const manifest = [entry('keep'), entry('edit'), entry('gone')];
  const scan = [local('edit', 9, 3000), local('keep'), local('new', 2, 4000)];
  const first = planSync(manifest, scan);
  t.same(
    first.needHash.map((f) => f.path),
    ['edit', 'new'],
  );
  const hashes: Record<string, string> = { edit: H2, new: H3 };
  const second = planSync(
    manifest,
    scan.map((f) => (hashes[f.path] ? { ...f, hash: hashes[f.path] } : f)),
  );
  t.same(second.needHash, []);
  t.same(second.unchanged, ['keep']);
  t.same(second.upserts, [entry('edit', H2, 9, 3000), entry('new', H3, 2, 4000)]);
  t.same(second.deletes, ['gone']);
});

t.test('planUploads: one per new hash, none for content the manifest holds', async (t) => {
  const manifest = [entry('old', H1)];
  const upserts = [
    entry('copy-of-old', H1),
    entry('x', H2, 3),
    entry('y', H2, 3),
    entry('z', H3, 4),
  ];
  t.same(planUploads(manifest, upserts), [
    { hash: H2, path: 'x', size: 3 },
    { hash: H3, path: 'z', size: 4 },
  ]);
  t.same(planUploads([], []), []);
});

t.test('planReconcile', async (t) => {
  const manifest = [
    entry('same'),
    entry('mode', H1, 5, 1000, 0o755),
    entry('stale', H2, 5, 1000),
    entry('missing', H3),
    entry('hashed-same', H1, 5, 1000),
    entry('at-a-link'),
  ];
  const scan = [
    local('same'),
    local('mode'),
    local('stale', 5, 2000),
    local('hashed-same', 5, 2000),
    local('extra'),
  ];
  const others = ['at-a-link', 'link-out'];
  const first = planReconcile(manifest, scan, others);
  t.same(first.keep, ['same']);
  t.same(
    first.needHash.map((f) => f.path),
    ['stale', 'hashed-same'],
  );
  t.same(
    first.fixMetadata.map((f) => f.path),
    ['mode'],
  );
  t.same(first.remove, ['extra', 'link-out'], 'a link at a manifest path is written over');
  const second = planReconcile(
    manifest,
    scan.map((f) =>
      f.path === 'stale' ? { ...f, hash: H3 } : f.path === 'hashed-same' ? { ...f, hash: H1 } : f,
    ),
    others,
  );
  t.same(second.needHash, []);
  t.same(
    second.download.map((f) => f.path),
    ['stale', 'missing', 'at-a-link'],
  );
  t.same(
    second.fixMetadata.map((f) => f.path),
    ['mode', 'hashed-same'],
  );
  t.same(second.remove, ['extra', 'link-out']);
});

t.test('decideReconcile', async (t) => {
  const cases: Array<[string, Parameters<typeof decideReconcile>, 'current' | 'full']> = [
    [
      'this node wrote the head it last synced',
      [
        { version: 4, updatedByNode: 'a' },
        { nodeId: 'a', lastSyncedVersion: 4 },
      ],
      'current',
    ],
    [
      'nothing known locally',
      [
        { version: 4, updatedByNode: 'a' },
        { nodeId: 'a', lastSyncedVersion: undefined },
      ],
      'full',
    ],
    [
      'the head moved on',
      [
        { version: 5, updatedByNode: 'a' },
        { nodeId: 'a', lastSyncedVersion: 4 },
      ],
      'full',
    ],
    [
      'same number, another writer (manifest recreated)',
      [
        { version: 4, updatedByNode: 'b' },
        { nodeId: 'a', lastSyncedVersion: 4 },
      ],
      'full',
    ],
    [
      'hydrated from another node and nothing since',
      [
        { version: 4, updatedByNode: 'b' },
        { nodeId: 'a', lastSyncedVersion: 4, lastSyncedBy: 'b' },
      ],
      'current',
    ],
    [
      'empty manifest hydrated',
      [
        { version: 0, updatedByNode: null },
        { nodeId: 'a', lastSyncedVersion: 0, lastSyncedBy: null },
      ],
      'current',
    ],
  ];
  for (const [name, args, want] of cases) t.equal(decideReconcile(...args), want, name);
});
