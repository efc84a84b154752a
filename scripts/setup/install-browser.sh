#!/usr/bin/env bash
# Installs the browser the operator console test drives through playwright-core:
# Debian's chromium at /usr/bin/chromium. playwright-core never downloads a browser;
# the test launches this one headless. Idempotent: installs only when it is missing,
# then checks that it starts.
set -euo pipefail

say() { printf '[install-browser] %s\n' "$*"; }
fail() {
  printf '[install-browser] FATAL: %s\n' "$*" >&2
  exit 1
}

if [ -x /usr/bin/chromium ]; then
  say "chromium already present"
else
  [ "$(id -u)" -eq 0 ] || fail "run as root (it installs chromium with apt-get)"
  say "installing chromium"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || fail "apt-get update failed"
  apt-get install -y -qq chromium >/dev/null || fail "apt-get install chromium failed"
fi
version=$(/usr/bin/chromium --headless --no-sandbox --disable-gpu --version 2>/dev/null) ||
  fail "/usr/bin/chromium does not start"
say "${version}"
