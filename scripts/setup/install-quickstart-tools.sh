#!/usr/bin/env bash
# Installs what the curl quickstart (docs/quickstart.md) uses, which the quickstart test runs
# as written: curl and jq. Idempotent: installs only what is missing.
set -euo pipefail

say() { printf '[install-quickstart-tools] %s\n' "$*"; }
fail() {
  printf '[install-quickstart-tools] FATAL: %s\n' "$*" >&2
  exit 1
}

missing=()
for tool in curl jq; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ "${#missing[@]}" -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || fail "run as root (it installs ${missing[*]} with apt-get)"
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || fail "apt-get update failed"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    fail "apt-get install ${missing[*]} failed"
fi
say "$(curl --version | head -n1)"
say "$(jq --version)"
