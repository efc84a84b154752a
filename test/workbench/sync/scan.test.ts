import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { removeTree } from '../../../src/files/index.js';
import {
  MAX_REPORTED_REFUSALS,
  type RefusedEntry,
  reportRefusals,
  scanWorkspace,
} from '../../../src/workbench/sync/scan.js';
import { makeDeepTree } from '../../support/deep-tree.js';
import { writeTree } from './fixtures.js';

t.test(
  'a tree deeper than PATH_MAX is refused where it leaves reach; the rest is scanned',
  async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'memql-scan-'));
    t.teardown(() => removeTree(dir));
    await writeTree(dir, { 'a.txt': 'a', 'sub/b.txt': 'b' });
    await mkdir(join(dir, 'deep'));
    makeDeepTree(join(dir, 'deep'), 45);
    execFileSync('mkfifo', [join(dir, 'pipe')]);
    await symlink('a.txt', join(dir, 'link'));

    const scan = await scanWorkspace(dir);
    t.equal(scan.exists, true);
    t.same(
      scan.files.map((f) => f.path),
      ['a.txt', 'sub/b.txt'],
    );
    t.same(scan.others, ['link', 'pipe'], 'FIFOs and links are listed, never opened');
    t.equal(scan.refused.length, 1, 'one refusal for the whole too-deep branch');
    const refused = scan.refused[0]!;
    t.equal(refused.reason, 'path_too_long');
    t.ok(refused.path.startsWith('deep/'));
    t.ok(Buffer.byteLength(join(dir, refused.path)) >= 4096, 'its host path is over PATH_MAX');
    const parent = refused.path.slice(0, refused.path.lastIndexOf('/'));
    t.ok(Buffer.byteLength(join(dir, parent)) < 4096, 'and its parent is within reach');
  },
);

t.test('a report names the first refusals with short paths, and counts them all', async (t) => {
  const many: RefusedEntry[] = Array.from({ length: 30 }, (_, i) => ({
    path: `${String(i).padStart(2, '0')}/${'x'.repeat(300)}`,
    reason: 'path_too_long',
  }));
  const report = reportRefusals(many);
  t.equal(report.total, 30);
  t.equal(report.entries.length, MAX_REPORTED_REFUSALS);
  t.ok(report.entries.every((e) => e.path.length < 250 && e.reason === 'path_too_long'));
  t.match(report.entries[0]!.path, /^00\/x+…x+$/);
  t.same(reportRefusals([]), { total: 0, entries: [] });
});
