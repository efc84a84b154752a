#!/usr/bin/env bash
# `npm run setup`: installs what `npm start` needs, the README's first command line
#
#   npm run setup && npm start
#
# As root, Node.js 24 when the machine's is older than 22 (scripts/setup/install-node.sh),
# then Node.js dependencies (`npm ci`, only when node_modules differs from
# package-lock.json) and, as root with apt-get, bubblewrap and what the sandbox runner
# uses beside it (scripts/setup/install-sandbox.sh --node). As an ordinary user it
# installs no system package: without bubblewrap it says what to run with sudo, and
# `npm start` still starts (`exec` answers no_sandbox, every other action works).
# Idempotent; with everything present it takes about a second.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[setup] %s\n' "$*"; }

if [ "$(id -u)" -eq 0 ]; then
  bash scripts/setup/install-node.sh
fi
bash scripts/setup/install-node-modules.sh

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  bash scripts/setup/install-sandbox.sh --node
elif [ -x /usr/bin/bwrap ]; then
  say "$(/usr/bin/bwrap --version) present"
elif command -v apt-get >/dev/null 2>&1; then
  say "bubblewrap is missing: exec will answer no_sandbox (every other action works). To install it, run:"
  say "    sudo bash scripts/setup/install-sandbox.sh --node"
else
  say "bubblewrap is missing: exec will answer no_sandbox (every other action works); install bubblewrap (/usr/bin/bwrap) with the system's package manager"
fi
