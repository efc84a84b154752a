#!/usr/bin/env bash
# Installs what the bwrap sandbox and its tests need, as root, on a fresh Debian machine
# of this kind. Idempotent: installs only what is missing (one `apt-get update` at most),
# then checks that an unprivileged sandbox really runs and that per-command cgroups can
# be created. Docker is not here: see scripts/setup/install-docker.sh.
#
#   bubblewrap  bwrap itself (>= 0.8: --disable-userns, --size)
#   util-linux  setpriv, to drop from root to uid 10001 before bwrap; unshare, for the
#               private mount namespace the workspace is staged in
#   mount       mount, for the overlay that keeps host paths out of the sandbox's mount table
#   coreutils   env -i, to start the sandbox with an empty environment
#   python3     used by the sandbox tests (network, fork and memory probes, and the
#               seccomp probes, which call syscalls through ctypes)
#   linux-libc-dev  the kernel's syscall headers, which the seccomp tables are checked against
#
# With --node (`npm run setup`), only what a node's `exec` needs: the first four, and the
# checks below only warn, since the node runs without them (an `exec` that answers
# no_sandbox, or commands without per-command limits, which it logs at start).
set -euo pipefail

say() { printf '[install-sandbox] %s\n' "$*"; }
fail() {
  printf '[install-sandbox] FATAL: %s\n' "$*" >&2
  exit 1
}

MODE=tests
case "${1:-}" in
--node) MODE=node ;;
'') ;;
*) fail "unknown argument '$1' (only --node)" ;;
esac

# A failed check: fatal for the tests, a warning for a node.
check_failed() {
  if [ "$MODE" = node ]; then
    printf '[install-sandbox] WARNING: %s\n' "$*" >&2
  else
    fail "$*"
  fi
}

if [ "$(id -u)" -ne 0 ]; then
  fail "run as root (it installs packages, and the sandbox tests drop from root to uid 10001)"
fi

# --- packages -------------------------------------------------------------------
missing=()
[ -x /usr/bin/bwrap ] || missing+=(bubblewrap)
[ -x /usr/bin/setpriv ] && [ -x /usr/bin/unshare ] || missing+=(util-linux)
[ -x /usr/bin/mount ] || missing+=(mount)
[ -x /usr/bin/env ] || missing+=(coreutils)
if [ "$MODE" = tests ]; then
  [ -x /usr/bin/python3 ] || missing+=(python3)
  [ -r /usr/include/asm-generic/unistd.h ] || missing+=(linux-libc-dev)
fi
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || fail "apt-get update failed"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    fail "apt-get install ${missing[*]} failed"
elif [ "$MODE" = node ]; then
  say "bubblewrap, setpriv, unshare, mount and env already present"
else
  say "bubblewrap, setpriv, env, python3 and linux-libc-dev already present"
fi
say "$(/usr/bin/bwrap --version)"

# --- an unprivileged sandbox runs ---------------------------------------------------
# The same shape as the runner: empty environment, root -> uid 10001, new namespaces.
if ! out=$(env -i /usr/bin/setpriv --reuid=10001 --regid=10001 --clear-groups \
  /usr/bin/bwrap --unshare-all --unshare-user --disable-userns --die-with-parent \
  --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
  --proc /proc --dev /dev --size 1048576 --tmpfs /tmp /bin/sh -c 'id -u' 2>&1); then
  sysctl_hint=""
  [ -r /proc/sys/user/max_user_namespaces ] &&
    sysctl_hint=" (user.max_user_namespaces=$(cat /proc/sys/user/max_user_namespaces))"
  [ -r /proc/sys/kernel/unprivileged_userns_clone ] &&
    sysctl_hint="$sysctl_hint (kernel.unprivileged_userns_clone=$(cat /proc/sys/kernel/unprivileged_userns_clone))"
  check_failed "an unprivileged bwrap sandbox does not start: $out$sysctl_hint; unprivileged user namespaces must be enabled (until then exec answers no_sandbox)"
elif [ "$out" = "10001" ]; then
  say "an unprivileged sandbox runs as uid 10001"
else
  check_failed "the sandbox ran as uid '$out', expected 10001"
fi

# --- workspace staging ------------------------------------------------------------------
# The runner mounts an overlay over each workspace in a private mount namespace, so the
# sandbox's mount table shows no host path (src/sandbox/workspace-staging.ts).
stage=$(mktemp -d)
mkdir "$stage/lower" "$stage/upper" "$stage/work" "$stage/target"
if ! out=$(/usr/bin/unshare --mount --propagation private /bin/sh -c \
  'cd "$1" && /usr/bin/mount -n -t overlay memql-workspace -o lowerdir=lower,upperdir=upper,workdir=work "$1/target"' \
  memql-stage "$stage" 2>&1); then
  check_failed "cannot mount an overlay in a private mount namespace: $out"
else
  say "an overlay mounts in a private mount namespace"
fi
rm -rf "$stage"

# --- per-command cgroups --------------------------------------------------------------
# The runner creates <controller>/<own cgroup>/memql/<id>; the limit tests need both.
for controller in pids memory; do
  own=$(awk -F: -v c="$controller" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' /proc/self/cgroup)
  dir="/sys/fs/cgroup/$controller${own%/}/memql-install-check-$$"
  if mkdir "$dir" 2>/dev/null; then
    rmdir "$dir"
    say "cgroup v1 $controller is writable"
  else
    if [ "$MODE" = node ]; then
      check_failed "cannot create $dir: commands will run without per-command memory, process and CPU limits"
    else
      fail "cannot create $dir: the sandbox limit tests need writable cgroup v1 pids and memory controllers"
    fi
  fi
done

say "done"
