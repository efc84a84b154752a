// Copies the files the compiled code reads from beside itself into dist/, at the same
// paths: the warm sandbox's agent (src/sandbox/bwrap/session-agent.pl, run as `perl -e`
// by session-agent.ts). tsc emits only JavaScript, so without this a compiled tree run
// away from the sources (an image, a package) would have no agent. Run by `npm run
// build`, by `npm start` (scripts/build-if-changed.mjs) and by deploy/Dockerfile; a file
// is written only when its content differs, so a run with nothing changed touches nothing.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** What counts as an asset: a Perl program under src/ or nodes/. */
const ASSET = /\.pl$/;

function assetsUnder(dir) {
  if (statSync(dir, { throwIfNoEntry: false })?.isDirectory() !== true) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return assetsUnder(path);
    return entry.isFile() && ASSET.test(entry.name) ? [path] : [];
  });
}

for (const source of ['src', 'nodes'].flatMap((part) => assetsUnder(join(root, part)))) {
  const target = join(root, 'dist', relative(root, source));
  const content = readFileSync(source);
  const existing = statSync(target, { throwIfNoEntry: false }) ? readFileSync(target) : null;
  if (existing?.equals(content)) continue;
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, content);
}
