// `npm start`'s build step: compiles src/ and nodes/ (tsconfig.start.json, incremental)
// only when a source or a build setting is newer than the last such build, so a start
// with nothing changed runs the compiled node at once instead of rebuilding everything;
// copies the files the compiled code reads (the sandbox agent's Perl program) when they
// changed; and makes the empty PGlite cluster new data directories start from, when missing.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';

const STAMP = 'dist/.start.tsbuildinfo';

function newest(path) {
  const st = statSync(path, { throwIfNoEntry: false });
  if (st === undefined) return 0;
  if (!st.isDirectory()) return path.endsWith('.ts') || path.endsWith('.json') ? st.mtimeMs : 0;
  let latest = 0;
  for (const name of readdirSync(path)) latest = Math.max(latest, newest(join(path, name)));
  return latest;
}

const built = statSync(STAMP, { throwIfNoEntry: false })?.mtimeMs ?? 0;
const sources = Math.max(
  ...['src', 'nodes', 'tsconfig.json', 'tsconfig.start.json', 'package.json'].map(newest),
);
if (built === 0 || sources > built) {
  const tsc = spawnSync(
    process.execPath,
    ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.start.json'],
    { stdio: 'inherit' },
  );
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
  // tsc leaves its build info untouched when nothing needed emitting: stamp the check.
  utimesSync(STAMP, new Date(), new Date());
}

// The assets beside the compiled code (scripts/copy-assets.mjs): a changed agent program
// is copied even when no TypeScript changed.
await import('./copy-assets.mjs');
// An empty database cluster for new data directories (made once per PGlite version).
await import('./pglite-template.mjs');
