#!/usr/bin/env bash
# Installs the independent gRPC client the mesh tests use to probe grpc.health.v1 on
# both node types: Debian's python3-grpcio, run as /usr/bin/python3 (the system
# interpreter, not a pyenv or venv python3 that may come first on PATH). Idempotent:
# installs only when the module is missing, then checks that it imports.
set -euo pipefail

say() { printf '[install-grpc-client] %s\n' "$*"; }
fail() {
  printf '[install-grpc-client] FATAL: %s\n' "$*" >&2
  exit 1
}

if /usr/bin/python3 -c 'import grpc' 2>/dev/null; then
  say "python3-grpcio already present"
else
  [ "$(id -u)" -eq 0 ] || fail "run as root (it installs python3-grpcio with apt-get)"
  say "installing python3-grpcio"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || fail "apt-get update failed"
  apt-get install -y -qq --no-install-recommends python3 python3-grpcio >/dev/null ||
    fail "apt-get install python3-grpcio failed"
fi
version=$(/usr/bin/python3 -c 'import grpc; print(grpc.__version__)') ||
  fail "/usr/bin/python3 cannot import grpc after the install"
say "grpcio ${version} on /usr/bin/python3"
