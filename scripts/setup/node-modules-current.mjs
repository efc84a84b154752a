// Whether node_modules holds what package-lock.json lists: every package at its
// locked version (an optional one, such as another platform's binary, may be absent).
// Compares contents, not times, so a checkout that touches the lock file without
// changing it costs no reinstall. node_modules must also have been installed by the
// Node.js release line that runs now (its ABI, `process.versions.modules`, recorded by
// install-node-modules.sh), so native add-ons match. Exits 0 when current; otherwise
// prints why and exits 1.
import { existsSync, readFileSync } from 'node:fs';

function installedVersion(dir) {
  try {
    return JSON.parse(readFileSync(`${dir}/package.json`, 'utf8')).version;
  } catch {
    return undefined;
  }
}

function stale(reason) {
  console.log(reason);
  process.exit(1);
}

if (!existsSync('node_modules')) stale('node_modules is missing');
const ABI_MARK = 'node_modules/.memql-node-abi';
const installedAbi = existsSync(ABI_MARK) ? readFileSync(ABI_MARK, 'utf8').trim() : undefined;
if (installedAbi !== process.versions.modules)
  stale(
    `node_modules was installed for Node.js ABI ${installedAbi ?? '(unrecorded)'}, this is ${process.version} (ABI ${process.versions.modules})`,
  );
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
if (lock.packages === undefined) stale('package-lock.json lists no packages (lockfileVersion 1)');
for (const [path, entry] of Object.entries(lock.packages)) {
  if (!path.startsWith('node_modules/') || entry.link) continue;
  const version = installedVersion(path);
  if (version === undefined) {
    if (entry.optional) continue;
    stale(`${path} is missing`);
  }
  if (version !== entry.version)
    stale(`${path} is ${version}, package-lock.json has ${entry.version}`);
}
