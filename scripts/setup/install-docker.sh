#!/usr/bin/env bash
# Makes a Docker daemon available, as root. Idempotent: installs docker.io only when
# missing, starts dockerd only when its socket does not answer. The images the tests
# run (the docker runner's among them) come from scripts/setup/install-images.sh.
#
# The daemon runs with the overlay2 storage driver where the kernel mounts overlayfs on
# the filesystem of /var/lib/docker, and with vfs (a full copy of the image for every
# container: seconds per container for a large image) only where it does not; without
# iptables and without the default bridge: sandbox containers use network "none", and
# the deploy tests' containers use the host's network.
set -euo pipefail

SOCKET=/var/run/docker.sock
LOG=/var/log/dockerd-ci.log
WAIT_SECONDS=60

say() { printf '[install-docker] %s\n' "$*"; }
fail() {
  printf '[install-docker] FATAL: %s\n' "$*" >&2
  if [ -f "$LOG" ]; then
    printf '[install-docker] last lines of %s:\n' "$LOG" >&2
    tail -n 40 "$LOG" >&2 || true
  fi
  exit 1
}

if [ "$(id -u)" -ne 0 ]; then
  fail "run as root (it installs packages and starts dockerd)"
fi

# --- packages -------------------------------------------------------------------
missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  say "dockerd already installed"
fi
command -v dockerd >/dev/null 2>&1 || fail "dockerd still missing after installing docker.io"

# --- daemon ---------------------------------------------------------------------
daemon_up() { docker -H "unix://$SOCKET" info >/dev/null 2>&1; }
# A live dockerd process with this pid (not a zombie, not a recycled pid).
dockerd_alive() {
  [ -r "/proc/$1/status" ] || return 1
  grep -q '^Name:[[:space:]]*dockerd$' "/proc/$1/status" || return 1
  ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status"
}
# A live process with this pid, whatever its name (not a zombie).
child_alive() {
  [ -r "/proc/$1/status" ] || return 1
  ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status"
}

# overlay2 when an overlay mount works beside /var/lib/docker, else vfs.
storage_driver() {
  local probe
  mkdir -p /var/lib/docker
  probe="$(mktemp -d /var/lib/docker/overlay-probe.XXXXXX)"
  mkdir -p "$probe/lower" "$probe/upper" "$probe/work" "$probe/merged"
  if mount -t overlay overlay \
    -o "lowerdir=$probe/lower,upperdir=$probe/upper,workdir=$probe/work" "$probe/merged" 2>/dev/null; then
    umount "$probe/merged"
    rm -rf "$probe"
    echo overlay2
  else
    rm -rf "$probe"
    echo vfs
  fi
}

if daemon_up; then
  say "dockerd already answers on $SOCKET"
else
  # A daemon that died leaves its pid file behind, and dockerd refuses to start over it.
  if [ -f /var/run/docker.pid ] && ! dockerd_alive "$(cat /var/run/docker.pid)"; then
    say "removing stale /var/run/docker.pid"
    rm -f /var/run/docker.pid
  fi
  driver=$(storage_driver)
  say "starting dockerd ($driver storage, no iptables, no bridge); log: $LOG"
  nohup dockerd --host="unix://$SOCKET" --storage-driver="$driver" --iptables=false --bridge=none \
    >>"$LOG" 2>&1 </dev/null &
  dockerd_pid=$!
  for i in $(seq 1 "$WAIT_SECONDS"); do
    if daemon_up; then
      say "dockerd (pid $dockerd_pid) answered after ${i}s"
      break
    fi
    # Our own child: alive while it runs, whatever its name shows yet (the forked shell
    # and nohup come before dockerd's exec).
    child_alive "$dockerd_pid" || fail "dockerd exited during startup"
    sleep 1
  done
  daemon_up || fail "dockerd did not answer on $SOCKET within ${WAIT_SECONDS}s"
fi

say "ready: $(docker -H "unix://$SOCKET" version --format 'server {{.Server.Version}}')"
