#!/usr/bin/env bash
# Makes a Docker daemon and the docker runner's test image available, as root.
# Idempotent: installs docker.io and busybox-static only when missing, starts dockerd
# only when its socket does not answer, imports the image only when it is absent or
# cannot run a shell as uid 10001.
#
# No registry is reachable on CI machines, so the test image is imported from a
# busybox-static rootfs rather than pulled. The daemon runs with the vfs storage
# driver (no overlay inside this VM), without iptables and without the default
# bridge: sandbox containers use network "none" and need neither.
set -euo pipefail

IMAGE="${MEMQL_TEST_DOCKER_IMAGE:-memql/test-runner:busybox}"
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
[ -x /bin/busybox ] || missing+=(busybox-static)
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  say "dockerd and busybox already installed"
fi
command -v dockerd >/dev/null 2>&1 || fail "dockerd still missing after installing docker.io"
[ -x /bin/busybox ] || fail "/bin/busybox still missing after installing busybox-static"
# busybox-static must really be static: it runs in an image with no libc.
if command -v file >/dev/null 2>&1 && ! file -L /bin/busybox | grep -q 'statically linked'; then
  fail "/bin/busybox is not statically linked; install busybox-static, not busybox"
fi

# --- daemon ---------------------------------------------------------------------
daemon_up() { docker -H "unix://$SOCKET" info >/dev/null 2>&1; }
# A live dockerd process with this pid (not a zombie, not a recycled pid).
dockerd_alive() {
  [ -r "/proc/$1/status" ] || return 1
  grep -q '^Name:[[:space:]]*dockerd$' "/proc/$1/status" || return 1
  ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status"
}

if daemon_up; then
  say "dockerd already answers on $SOCKET"
else
  # A daemon that died leaves its pid file behind, and dockerd refuses to start over it.
  if [ -f /var/run/docker.pid ] && ! dockerd_alive "$(cat /var/run/docker.pid)"; then
    say "removing stale /var/run/docker.pid"
    rm -f /var/run/docker.pid
  fi
  say "starting dockerd (vfs storage, no iptables, no bridge); log: $LOG"
  nohup dockerd --host="unix://$SOCKET" --storage-driver=vfs --iptables=false --bridge=none \
    >>"$LOG" 2>&1 </dev/null &
  dockerd_pid=$!
  for i in $(seq 1 "$WAIT_SECONDS"); do
    if daemon_up; then
      say "dockerd (pid $dockerd_pid) answered after ${i}s"
      break
    fi
    dockerd_alive "$dockerd_pid" || fail "dockerd exited during startup"
    sleep 1
  done
  daemon_up || fail "dockerd did not answer on $SOCKET within ${WAIT_SECONDS}s"
fi

# --- test image -----------------------------------------------------------------
# A usable image runs /bin/sh as uid 10001; an image that fails this is rebuilt.
image_works() {
  docker -H "unix://$SOCKET" run --rm --network none --user 10001:10001 "$IMAGE" \
    /bin/sh -c 'test "$(id -u)" = 10001' >/dev/null 2>&1
}

build_image() {
  local rootfs
  rootfs="$(mktemp -d)"
  # shellcheck disable=SC2064  # expand now: the variable is local
  trap "rm -rf '$rootfs'" EXIT
  chmod 755 "$rootfs"
  mkdir -p "$rootfs/bin" "$rootfs/workspace" "$rootfs/tmp" "$rootfs/proc" "$rootfs/sys" \
    "$rootfs/dev" "$rootfs/etc"
  chmod 1777 "$rootfs/tmp"
  cp /bin/busybox "$rootfs/bin/busybox"
  # Relative links, so they resolve inside the image (busybox --install -s would
  # point them at the host path of this temporary rootfs).
  local applet
  for applet in $("$rootfs/bin/busybox" --list); do
    [ "$applet" = busybox ] || ln -sf busybox "$rootfs/bin/$applet"
  done
  printf 'root:x:0:0:root:/root:/bin/sh\nsandbox:x:10001:10001:sandbox:/workspace:/bin/sh\n' \
    >"$rootfs/etc/passwd"
  printf 'root:x:0:\nsandbox:x:10001:\n' >"$rootfs/etc/group"
  tar -C "$rootfs" --numeric-owner --owner=0 --group=0 -c . |
    docker -H "unix://$SOCKET" import \
      --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' --change 'WORKDIR /workspace' \
      - "$IMAGE" >/dev/null
}

if docker -H "unix://$SOCKET" image inspect "$IMAGE" >/dev/null 2>&1 && image_works; then
  say "image $IMAGE already present and working"
else
  say "building $IMAGE from busybox-static"
  stale="$(docker -H "unix://$SOCKET" image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)"
  build_image
  # A broken image of the same tag is left dangling by the import: drop it.
  if [ -n "$stale" ]; then docker -H "unix://$SOCKET" image rm "$stale" >/dev/null 2>&1 || true; fi
  image_works || fail "image $IMAGE does not run /bin/sh as uid 10001 after docker import"
  say "image $IMAGE built"
fi

say "ready: $(docker -H "unix://$SOCKET" version --format 'server {{.Server.Version}}'), image $IMAGE"
