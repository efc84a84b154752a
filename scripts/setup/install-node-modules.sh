#!/usr/bin/env bash
# Installs the project's Node.js dependencies with `npm ci` when node_modules is
# missing or differs from package-lock.json (scripts/setup/node-modules-current.mjs);
# otherwise does nothing, in well under a second. Needs Node.js 20 or later.
set -euo pipefail
cd "$(dirname "$0")/../.."

say() { printf '[install-node-modules] %s\n' "$*"; }
fail() {
  printf '[install-node-modules] FATAL: %s\n' "$*" >&2
  exit 1
}

command -v node >/dev/null 2>&1 || fail "node is missing: install Node.js 20 or later"
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' ||
  fail "Node.js $(node --version) is too old: install Node.js 20 or later"

if reason=$(node scripts/setup/node-modules-current.mjs); then
  say "node_modules matches package-lock.json"
else
  say "${reason}: npm ci"
  npm ci --no-audit --no-fund || fail "npm ci failed"
fi
