#!/usr/bin/env bash
# Installs the X display the worker host tests run a worker under: Xvfb (a virtual X
# server) and xdpyinfo (x11-utils), which a rerouted command runs to prove it reached
# the display. Idempotent: installs only what is missing, then checks that Xvfb starts.
set -euo pipefail

say() { printf '[install-display] %s\n' "$*"; }
fail() {
  printf '[install-display] FATAL: %s\n' "$*" >&2
  exit 1
}

missing=()
command -v Xvfb >/dev/null 2>&1 || missing+=(xvfb)
command -v xdpyinfo >/dev/null 2>&1 || missing+=(x11-utils)
if [ "${#missing[@]}" -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || fail "run as root (it installs ${missing[*]} with apt-get)"
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || fail "apt-get update failed"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    fail "apt-get install ${missing[*]} failed"
else
  say "Xvfb and xdpyinfo already present"
fi

# A display number nothing else uses (no lock file, no socket), started and asked
# once, then stopped.
n=$((200 + RANDOM % 500))
while [ -e "/tmp/.X${n}-lock" ] || [ -e "/tmp/.X11-unix/X${n}" ]; do n=$((n + 1)); done
display=":${n}"
Xvfb "$display" -screen 0 640x480x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
trap 'kill "$xvfb" 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do
  if xdpyinfo -display "$display" >/dev/null 2>&1; then
    say "Xvfb answers on $display"
    exit 0
  fi
  sleep 0.2
done
fail "Xvfb did not answer on $display"
