/**
 * Workspaces of many files for cases 5 and 6: `files` files of `fileBytes` random
 * bytes each, 100 to a directory, and a bare stat of such a tree (the baseline of
 * sync scaling).
 *
 * @module
 */

import { randomBytes } from 'node:crypto';
import { lstatSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Files per directory of a generated workspace. */
const PER_DIR = 100;

/** The relative path of file `i`. */
export function fixturePath(i: number): string {
  return `d${String(Math.floor(i / PER_DIR)).padStart(4, '0')}/f${String(i).padStart(6, '0')}.bin`;
}

/** Writes the files into `dir` (which exists). */
export async function writeFixture(dir: string, files: number, fileBytes: number): Promise<void> {
  for (let d = 0; d * PER_DIR < files; d++) {
    await mkdir(join(dir, fixturePath(d * PER_DIR).split('/')[0]!), { recursive: true });
  }
  const batch = 64;
  for (let i = 0; i < files; i += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, files - i) }, (_, j) =>
        writeFile(join(dir, fixturePath(i + j)), randomBytes(fileBytes)),
      ),
    );
  }
}

/**
 * Walks `dir` and lstat's every entry the way sync's own scan does (readdir through
 * the thread pool, lstat on the loop's thread): the least any change detection by
 * metadata must do. Returns the file count.
 */
export async function statTree(dir: string): Promise<number> {
  const pending = [dir];
  const paths: string[] = [];
  while (pending.length > 0) {
    const d = pending.pop()!;
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) pending.push(p);
      paths.push(p);
    }
  }
  return paths.filter((p) => lstatSync(p).isFile()).length;
}
