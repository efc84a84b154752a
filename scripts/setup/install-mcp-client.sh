#!/usr/bin/env bash
# Installs the independent MCP client the MCP server test runs: the Python `mcp`
# package, in a virtualenv of its own at /opt/memql-mcp-client (so nothing else's
# Python packages are touched). Needs a python3 of 3.10 or later on PATH. Idempotent:
# installs only when the virtualenv cannot import mcp, then checks that it does. No
# retries: where the public index is unreachable, the configured mirrors answer at once.
set -euo pipefail

VENV=${MEMQL_MCP_CLIENT_VENV:-/opt/memql-mcp-client}
MCP_VERSION=2.3.0

say() { printf '[install-mcp-client] %s\n' "$*"; }
fail() {
  printf '[install-mcp-client] FATAL: %s\n' "$*" >&2
  exit 1
}

if "$VENV/bin/python" -c 'import mcp' 2>/dev/null; then
  say "mcp already present in $VENV"
else
  python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' ||
    fail "the Python mcp package needs python3 >= 3.10; found $(python3 --version 2>&1)"
  say "creating $VENV with $(python3 --version 2>&1)"
  python3 -m venv "$VENV" || fail "python3 -m venv $VENV failed"
  say "installing mcp==$MCP_VERSION"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --retries 0 "mcp==$MCP_VERSION" ||
    fail "pip install mcp==$MCP_VERSION failed"
fi
version=$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))') ||
  fail "$VENV/bin/python cannot import mcp after the install"
say "mcp ${version} in $VENV"
