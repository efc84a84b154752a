// `npm run test:one -- <file or folder>...`: runs some test files (after the build
// `npm run test:one` does first). tap runs the compiled files under dist/, so a source
// path (`test/api/api-versions.test.ts`) is run as its build (`dist/test/...test.js`).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const args = process.argv.slice(2);
if (args.length === 0) {
  process.stderr.write(
    'usage: npm run test:one -- test/<path>.test.ts [more files or folders] (tap options after --)\n',
  );
  process.exit(2);
}
const targets = args.map((arg) => {
  if (arg.startsWith('-')) return arg;
  const built = arg
    .replace(/^(\.\/)?test\//, 'dist/test/')
    .replace(/\.ts$/, '.js')
    .replace(/^(\.\/)?src\//, 'dist/src/');
  if (!existsSync(built)) {
    process.stderr.write(`test:one: ${arg} has no build at ${built}\n`);
    process.exit(2);
  }
  return built;
});
const tap = spawnSync('npx', ['tap', ...targets], { stdio: 'inherit' });
process.exit(tap.status ?? 1);
