import { execFileSync } from 'node:child_process';

/**
 * Makes `levels` nested directories named `name` under `dir` the way a command can,
 * each one relative to the last (`chdir` into each), so the tree may go deeper than
 * PATH_MAX, and writes `leaf.txt` at the bottom. Returns the relative path of the
 * deepest directory.
 */
export function makeDeepTree(dir: string, levels: number, name = 'd'.repeat(100)): string {
  const script = [
    'import os, sys',
    'os.chdir(sys.argv[1])',
    'for _ in range(int(sys.argv[2])):',
    '    os.mkdir(sys.argv[3])',
    '    os.chdir(sys.argv[3])',
    "open('leaf.txt', 'w').write('deep')",
  ].join('\n');
  execFileSync('python3', ['-c', script, dir, String(levels), name]);
  return Array.from({ length: levels }, () => name).join('/');
}
