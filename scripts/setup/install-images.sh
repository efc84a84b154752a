#!/usr/bin/env bash
# Builds the four images of deploy/Dockerfile (agent, workbench, workbench-runtime,
# runner) on the machine's Docker daemon, as root, for the deploy tests.
#
# No image registry is reachable on CI machines, so the Dockerfile's NODE_BASE (the
# official Node.js image by default) is replaced by a local base: Debian bookworm from
# `debootstrap --variant=minbase` with this machine's own Node.js and npm copied in
# (the same layout as the official image: node and npm on PATH, apt working). Builds
# run with host networking, which reaches the Debian mirror and the npm registry.
#
# The Python package index is not reachable either, so the runner is built without
# its pip packages (python-pptx); the tests read that from the image's label.
#
# Idempotent: the base is made only when missing or when its Node.js is not this
# machine's; docker's build cache makes a rebuild of unchanged stages cheap. Needs
# scripts/setup/install-docker.sh to have started dockerd.
set -euo pipefail
cd "$(dirname "$0")/../.."

BASE="${MEMQL_IMAGE_BASE:-memql/ci-base:bookworm-node}"
TAG="${MEMQL_IMAGE_TAG:-ci}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

say() { printf '[install-images] %s\n' "$*"; }
fail() {
  printf '[install-images] FATAL: %s\n' "$*" >&2
  exit 1
}
[ "$(id -u)" -eq 0 ] || fail "run as root (debootstrap and docker)"
docker info >/dev/null 2>&1 || fail "dockerd does not answer: run scripts/setup/install-docker.sh first"

started=$(date +%s)

# The base works when it runs node, npm and apt-get, and its Node.js is this machine's
# (scripts/setup/install-node.sh may have replaced it since the base was made).
base_works() {
  local want
  want="$(node --version)"
  docker run --rm --network none -e "WANT=$want" "$BASE" sh -c \
    'test "$(node --version)" = "$WANT" && npm --version && apt-get --version && test -f /usr/local/etc/npmrc && test "$(stat -c %a /)" = 755' \
    >/dev/null 2>&1
}

make_base() {
  command -v debootstrap >/dev/null 2>&1 || {
    say "installing debootstrap"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
  }
  local node_bin npm_dir rootfs
  node_bin="$(readlink -f "$(command -v node)")"
  npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
  [ -f "$npm_dir/package.json" ] || fail "npm's package folder not found (looked at $npm_dir)"
  rootfs="$(mktemp -d /var/tmp/memql-base.XXXXXX)"
  chmod 755 "$rootfs" # it becomes the image's /
  # shellcheck disable=SC2064  # expand now: the variable is local
  trap "rm -rf '$rootfs'" EXIT
  say "debootstrap bookworm (minbase) from $MIRROR"
  debootstrap --variant=minbase --include=ca-certificates bookworm "$rootfs" "$MIRROR" \
    >/var/log/memql-debootstrap.log 2>&1 || {
    tail -n 30 /var/log/memql-debootstrap.log >&2
    fail "debootstrap failed"
  }
  # debootstrap leaves proc mounted on some hosts.
  umount "$rootfs/proc" 2>/dev/null || true
  printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb http://deb.debian.org/debian-security bookworm-security main\n' \
    "$MIRROR" "$MIRROR" >"$rootfs/etc/apt/sources.list"
  say "copying Node.js $(node --version) and npm $(npm --version) into the base"
  install -m 755 "$node_bin" "$rootfs/usr/local/bin/node"
  mkdir -p "$rootfs/usr/local/lib/node_modules"
  cp -a "$npm_dir" "$rootfs/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  # This machine reaches the registries through its own trusted certificates (a TLS
  # proxy's CA among them); the base trusts what the machine trusts, and npm is told
  # so in its global config (no variable in the images' environment).
  cp /etc/ssl/certs/ca-certificates.crt "$rootfs/usr/local/share/ca-certificates/memql-ci-host.crt"
  chroot "$rootfs" update-ca-certificates >/dev/null 2>&1
  mkdir -p "$rootfs/usr/local/etc"
  printf 'cafile=/etc/ssl/certs/ca-certificates.crt\n' >"$rootfs/usr/local/etc/npmrc"
  rm -rf "$rootfs/var/cache/apt/archives/"*.deb "$rootfs/var/lib/apt/lists/"*
  tar -C "$rootfs" --numeric-owner -c . |
    docker import \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'CMD ["node"]' - "$BASE" >/dev/null
  rm -rf "$rootfs"
  trap - EXIT
}

if docker image inspect "$BASE" >/dev/null 2>&1 && base_works; then
  say "base $BASE already present"
else
  make_base
  base_works || fail "base $BASE does not run node, npm and apt-get"
  say "base $BASE made in $(($(date +%s) - started)) s"
fi

for target in runner agent workbench workbench-runtime; do
  t0=$(date +%s)
  say "building target $target as memql/$target:$TAG"
  if ! docker build --network host -f deploy/Dockerfile --target "$target" \
    --build-arg NODE_BASE="$BASE" --build-arg RUNNER_PIP_PACKAGES= \
    -t "memql/$target:$TAG" . >"/var/log/memql-build-$target.log" 2>&1; then
    tail -n 40 "/var/log/memql-build-$target.log" >&2
    fail "docker build of $target failed (log: /var/log/memql-build-$target.log)"
  fi
  say "memql/$target:$TAG built in $(($(date +%s) - t0)) s"
done
say "images ready in $(($(date +%s) - started)) s"
