#!/usr/bin/env bash
# Installs the project's Node.js dependencies with `npm ci` when node_modules is
# missing or differs from package-lock.json (scripts/setup/node-modules-current.mjs);
# otherwise does nothing, in well under a second. Needs Node.js 22 or later
# (scripts/setup/install-node.sh installs it). Native add-ons are built against the
# headers of the `node` that runs, found beside it (<prefix>/include/node), not against
# whatever an npmrc's nodedir names, so a machine whose Node.js was just replaced builds
# them for the new one.
set -euo pipefail
cd "$(dirname "$0")/../.."

say() { printf '[install-node-modules] %s\n' "$*"; }
fail() {
  printf '[install-node-modules] FATAL: %s\n' "$*" >&2
  exit 1
}

command -v node >/dev/null 2>&1 || fail "node is missing: install Node.js 22 or later (as root: bash scripts/setup/install-node.sh)"
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 22 ? 0 : 1)' ||
  fail "Node.js $(node --version) is too old: install Node.js 22 or later (as root: bash scripts/setup/install-node.sh)"

prefix="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
if [ -f "$prefix/include/node/node_version.h" ]; then
  export npm_config_nodedir="$prefix"
fi

if reason=$(node scripts/setup/node-modules-current.mjs); then
  say "node_modules matches package-lock.json"
else
  say "${reason}: npm ci"
  npm ci --no-audit --no-fund || fail "npm ci failed"
  node -p 'process.versions.modules' >node_modules/.memql-node-abi
fi
