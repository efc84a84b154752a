import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

/**
 * No TypeScript file under src/ or nodes/ grows past {@link MAX_LINES} lines: one
 * concept per file, and a file that outgrows that is split by concept (STYLE.md). The
 * checker is tested first on planted input, so a broken checker cannot pass the tree.
 */

/** The most lines a source file may have. */
const MAX_LINES = 450;

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** A file's path and text. */
interface SourceFile {
  readonly path: string;
  readonly text: string;
}

/** Lines as `wc -l` counts them, plus a last line without its newline. */
function lineCount(text: string): number {
  const newlines = text.split('\n').length - 1;
  return text === '' || text.endsWith('\n') ? newlines : newlines + 1;
}

/** `path: N lines` for every file over `limit`, largest first. */
function oversized(files: readonly SourceFile[], limit: number): string[] {
  return files
    .map((file) => ({ path: file.path, lines: lineCount(file.text) }))
    .filter((file) => file.lines > limit)
    .sort((a, b) => b.lines - a.lines || a.path.localeCompare(b.path))
    .map((file) => `${file.path}: ${file.lines} lines`);
}

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...tsFiles(path));
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

t.test('the checker counts lines as wc -l does and names each file over the limit', async (t) => {
  t.equal(lineCount(''), 0);
  t.equal(lineCount('a\n'), 1);
  t.equal(lineCount('a\nb'), 2);
  t.equal(lineCount('\n\n\n'), 3);
  const lines = (n: number) => 'x\n'.repeat(n);
  const planted = [
    { path: 'src/a/at-limit.ts', text: lines(450) },
    { path: 'src/a/one-over.ts', text: lines(451) },
    { path: 'nodes/b/no-final-newline.ts', text: `${lines(450)}x` },
    { path: 'src/c/far-over.ts', text: lines(900) },
    { path: 'src/c/small.ts', text: lines(3) },
  ];
  t.same(oversized(planted, 450), [
    'src/c/far-over.ts: 900 lines',
    'nodes/b/no-final-newline.ts: 451 lines',
    'src/a/one-over.ts: 451 lines',
  ]);
  t.same(oversized(planted, 900), []);
});

t.test(`no .ts file in src/ or nodes/ is over ${MAX_LINES} lines`, async (t) => {
  const files = ['src', 'nodes'].flatMap((part) =>
    tsFiles(join(root, part)).map((path) => ({
      path: relative(root, path),
      text: readFileSync(path, 'utf8'),
    })),
  );
  t.ok(files.length > 100, `found the sources (${files.length} files)`);
  t.same(oversized(files, MAX_LINES), [], 'split these by concept');
});
