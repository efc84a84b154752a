#!/usr/bin/env bash
# The mesh on one machine with plain `docker run` (no Compose plugin, no registry): one
# agent node and two workbench replicas from the locally built images, on this
# machine's PostgreSQL and a shared object directory.
#
#   bash scripts/mesh.sh up      # start it; prints the API address and a token
#   bash scripts/mesh.sh status  # the containers and the address
#   bash scripts/mesh.sh down    # stop it (add --purge to drop its database and files)
#
# Needs: a Docker daemon, the images `memql/agent` and `memql/workbench` built here
# (`sudo bash scripts/setup/install-images.sh`, which `npm run setup:test` runs), and
# PostgreSQL on 127.0.0.1:5432 with trust auth (`npm run setup:test` starts one).
# Settings (environment):
#   MEMQL_MESH_NAME          container name prefix              (memql-mesh)
#   MEMQL_MESH_DIR           its token, objects and files       (./.mesh)
#   MEMQL_MESH_TAG           the images' tag                    (ci)
#   MEMQL_MESH_DATABASE_URL  its database, made when missing    (postgres://postgres@127.0.0.1:5432/memql_mesh)
#   MEMQL_MESH_HTTP_PORT     the API and console, on 127.0.0.1  (8090: npm start keeps 8080)
#   MEMQL_MESH_GRPC_PORTS    the two replicas' ports            (50061,50062)
set -euo pipefail
cd "$(dirname "$0")/.."

name=${MEMQL_MESH_NAME:-memql-mesh}
dir=${MEMQL_MESH_DIR:-$PWD/.mesh}
tag=${MEMQL_MESH_TAG:-ci}
db_url=${MEMQL_MESH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/memql_mesh}
http_port=${MEMQL_MESH_HTTP_PORT:-8090}
IFS=, read -r grpc1 grpc2 <<<"${MEMQL_MESH_GRPC_PORTS:-50061,50062}"
replicas=("$name-wb1" "$name-wb2")

say() { printf '[mesh] %s\n' "$*"; }
fail() {
  printf '[mesh] FATAL: %s\n' "$*" >&2
  exit 1
}

# The workbench privileges of deploy/compose.yaml (equal to the Kubernetes base's).
workbench_privileges=(
  --user 0 --cap-drop ALL
  --cap-add SYS_ADMIN --cap-add SETUID --cap-add SETGID --cap-add CHOWN
  --cap-add DAC_OVERRIDE --cap-add FOWNER --cap-add KILL
  --security-opt seccomp=unconfined --security-opt apparmor=unconfined
  --security-opt systempaths=unconfined --tmpfs /tmp
)

up() {
  command -v docker >/dev/null || fail "docker is missing: install Docker (Debian: apt-get install docker.io)"
  docker info >/dev/null 2>&1 || fail "the Docker daemon does not answer: start it (sudo bash scripts/setup/install-docker.sh)"
  for target in agent workbench; do
    docker image inspect "memql/$target:$tag" >/dev/null 2>&1 ||
      fail "image memql/$target:$tag is missing: build the images here with 'sudo bash scripts/setup/install-images.sh' (no registry needed; about 8 minutes the first time)"
  done
  [ -x node_modules/.bin/tsc ] || fail "node_modules is missing: run npm run setup first"
  mkdir -p "$dir/objects"
  # The replicas (root) write the objects, the agent (root here too) reads and deletes
  # them: one directory, shared by bind mount.
  chmod 0755 "$dir"
  if [ ! -s "$dir/mesh-token" ]; then
    node -e "process.stdout.write(require('node:crypto').randomBytes(24).toString('hex'))" >"$dir/mesh-token"
    chmod 0600 "$dir/mesh-token"
  fi
  mesh_token=$(cat "$dir/mesh-token")
  say "database $db_url"
  MEMQL_MESH_DATABASE_URL=$db_url node --input-type=module -e '
    import postgres from "postgres";
    const url = new URL(process.env.MEMQL_MESH_DATABASE_URL);
    const name = url.pathname.slice(1);
    const admin = postgres({ host: url.hostname, port: Number(url.port || 5432),
      user: decodeURIComponent(url.username) || "postgres", password: decodeURIComponent(url.password) || undefined,
      database: "postgres", max: 1, onnotice: () => {} });
    try {
      const found = await admin`select 1 from pg_database where datname = ${name}`;
      if (found.length === 0) await admin.unsafe(`create database "${name.replaceAll("\"", "")}"`);
    } catch (err) {
      console.error(`[mesh] FATAL: PostgreSQL at ${url.host} does not answer (${err.message}): start it (sudo npm run setup:test starts one), or set MEMQL_MESH_DATABASE_URL`);
      process.exit(1);
    } finally { await admin.end(); }
  '
  local common=(
    -e "MEMQL_DATABASE_URL=$db_url"
    -e "MEMQL_OBJECT_STORE_DIR=/var/lib/memql/objects"
    -e "MEMQL_MESH_TOKEN=$mesh_token"
    --mount "type=bind,src=$dir/objects,dst=/var/lib/memql/objects"
    --network host --restart unless-stopped
  )
  local port
  for i in 0 1; do
    port=$([ "$i" = 0 ] && echo "$grpc1" || echo "$grpc2")
    docker rm -f "${replicas[$i]}" >/dev/null 2>&1 || true
    docker run -d --name "${replicas[$i]}" "${common[@]}" "${workbench_privileges[@]}" \
      --mount "type=volume,src=${replicas[$i]},dst=/var/lib/memql/workbenches" \
      -e "MEMQL_NODE_ID=${replicas[$i]}" -e "MEMQL_GRPC_LISTEN=127.0.0.1:$port" \
      -e MEMQL_WORKBENCH_ROOT=/var/lib/memql/workbenches -e MEMQL_RUNNER=bwrap \
      "memql/workbench:$tag" --shutdown-grace-ms=10000 >/dev/null
    say "replica ${replicas[$i]} on 127.0.0.1:$port"
  done
  docker rm -f "$name-agent" >/dev/null 2>&1 || true
  docker run -d --name "$name-agent" "${common[@]}" --user 0 \
    -e "MEMQL_NODE_ID=$name-agent" -e "MEMQL_HTTP_LISTEN=127.0.0.1:$http_port" \
    -e MEMQL_GRPC_LISTEN=127.0.0.1:0 -e MEMQL_WORKBENCH_REMOTE=1 \
    -e "MEMQL_WORKER_PEERS=workbench=127.0.0.1:$grpc1,workbench=127.0.0.1:$grpc2" \
    "memql/agent:$tag" >/dev/null
  say "agent $name-agent on http://127.0.0.1:$http_port"
  # Ready once the API answers and sees both replicas healthy.
  local deadline=$((SECONDS + 120))
  until node -e "
    fetch('http://127.0.0.1:$http_port/readyz').then(async (r) => {
      const b = await r.json();
      process.exit(r.ok && b.ready ? 0 : 1);
    }, () => process.exit(1));" 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      docker logs --tail 20 "$name-agent" >&2 || true
      fail "the agent did not get ready in 120 s (its last lines above)"
    fi
    sleep 1
  done
  if [ ! -s "$dir/dev-token" ]; then
    docker exec "$name-agent" node /app/dist/nodes/agent/main.js create-token dev >"$dir/dev-token"
    chmod 0600 "$dir/dev-token"
  fi
  say "ready. In another terminal:"
  printf '  export MEMQL_URL=http://127.0.0.1:%s MEMQL_TOKEN=%s\n' "$http_port" "$(cat "$dir/dev-token")"
  printf '  console: http://127.0.0.1:%s/console\n' "$http_port"
  printf '  stop:    bash scripts/mesh.sh down\n'
}

status() {
  docker ps -a --filter "name=^$name-" --format '{{.Names}}\t{{.Status}}'
  printf 'API: http://127.0.0.1:%s/v1\n' "$http_port"
}

down() {
  docker rm -f "$name-agent" "${replicas[@]}" >/dev/null 2>&1 || true
  docker volume rm "${replicas[@]}" >/dev/null 2>&1 || true
  say "stopped"
  if [ "${1:-}" = "--purge" ]; then
    MEMQL_MESH_DATABASE_URL=$db_url node --input-type=module -e '
      import postgres from "postgres";
      const url = new URL(process.env.MEMQL_MESH_DATABASE_URL);
      const admin = postgres({ host: url.hostname, port: Number(url.port || 5432),
        user: decodeURIComponent(url.username) || "postgres", database: "postgres", max: 1, onnotice: () => {} });
      await admin.unsafe(`drop database if exists "${url.pathname.slice(1).replaceAll("\"", "")}" with (force)`);
      await admin.end();
    '
    # The replicas wrote the objects as root: a container of their image removes them.
    if [ -d "$dir/objects" ]; then
      docker run --rm --user 0 --entrypoint /bin/rm \
        --mount "type=bind,src=$dir/objects,dst=/objects" "memql/workbench:$tag" -rf /objects/runs /objects/artifacts >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    say "its database and $dir removed"
  fi
}

case "${1:-}" in
up) up ;;
status) status ;;
down) down "${2:-}" ;;
*)
  printf 'usage: bash scripts/mesh.sh up | status | down [--purge]\n' >&2
  exit 2
  ;;
esac
