#!/usr/bin/env bash
# Makes the PostgreSQL server the tests use answer on 127.0.0.1:$MEMQL_SETUP_PG_PORT
# (5432 by default), with database "test" and user postgres let in over local TCP
# without a password. Idempotent, on a Debian machine:
#
#   - a server already answers: nothing is installed or started;
#   - a cluster on that port exists (/etc/postgresql): it is started;
#   - no cluster at all: `apt-get install postgresql`, its cluster moved to the port,
#     trust auth for 127.0.0.1 and ::1 put first in its pg_hba.conf, then started;
#
# then database "test" is created when missing. Installing and starting need root; as
# an ordinary user it says what to run with sudo and exits non-zero. Nothing to do when
# MEMQL_TEST_DATABASE_URL points the tests at another server.
set -euo pipefail

PORT=${MEMQL_SETUP_PG_PORT:-5432}
HOST=127.0.0.1
DATABASE=test
WAIT_SECONDS=60

say() { printf '[install-postgres] %s\n' "$*"; }
fail() {
  printf '[install-postgres] FATAL: %s\n' "$*" >&2
  exit 1
}

if [ -n "${MEMQL_TEST_DATABASE_URL:-}" ]; then
  say "MEMQL_TEST_DATABASE_URL is set: the tests use that server; nothing to set up"
  exit 0
fi

answers() { command -v pg_isready >/dev/null 2>&1 && pg_isready -h "$HOST" -p "$PORT" -q; }
listening() { (exec 3<>"/dev/tcp/$HOST/$PORT") 2>/dev/null; }

wait_until_up() {
  for _ in $(seq 1 "$WAIT_SECONDS"); do
    answers && return 0
    sleep 1
  done
  answers
}

# The "<version> <name>" of the cluster configured on $PORT, if any.
cluster_on_port() {
  command -v pg_lsclusters >/dev/null 2>&1 || return 0
  pg_lsclusters -h 2>/dev/null | awk -v p="$PORT" '$3 == p { print $1, $2; exit }'
}

start_cluster() {
  local version=$1 name=$2
  say "starting cluster $version/$name"
  # Without systemd (containers, CI machines) pg_ctlcluster runs pg_ctl itself.
  # It exits 2 when the cluster already runs: the wait below decides.
  if [ -d /run/systemd/system ]; then
    pg_ctlcluster "$version" "$name" start || true
  else
    pg_ctlcluster --skip-systemctl-redirect "$version" "$name" start || true
  fi
  wait_until_up || fail "cluster $version/$name did not answer on $HOST:$PORT within ${WAIT_SECONDS}s; see /var/log/postgresql/postgresql-$version-$name.log"
}

need_root() {
  local port_env=""
  [ "$PORT" = 5432 ] || port_env="MEMQL_SETUP_PG_PORT=$PORT "
  printf '[install-postgres] FATAL: nothing answers on %s:%s, and %s needs root. Run:\n\n' \
    "$HOST" "$PORT" "$1" >&2
  printf '    sudo %sbash %s\n\n' "$port_env" "$0" >&2
  printf '[install-postgres] It installs postgresql with apt-get when missing, lets local TCP\n' >&2
  printf '[install-postgres] connections in without a password, starts the cluster on port %s\n' "$PORT" >&2
  printf '[install-postgres] and creates database "%s". Or set MEMQL_TEST_DATABASE_URL to a server of yours.\n' "$DATABASE" >&2
  exit 1
}

# A fresh cluster from the package, moved to $PORT and opened to local TCP without a
# password. The package's own start is held back (policy-rc.d) so that the cluster
# never starts on a port another server already holds.
install_postgresql() {
  command -v apt-get >/dev/null 2>&1 || fail "no apt-get here: install PostgreSQL yourself, or set MEMQL_TEST_DATABASE_URL"
  local policy=/usr/sbin/policy-rc.d placed=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    placed=1
    # shellcheck disable=SC2064  # expand now
    trap "rm -f '$policy'" EXIT
  fi
  say "installing postgresql"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || fail "apt-get update failed"
  apt-get install -y -qq --no-install-recommends postgresql >/dev/null ||
    fail "apt-get install postgresql failed"
  if [ "$placed" = 1 ]; then
    rm -f "$policy"
    trap - EXIT
  fi

  local version
  version=$(find /usr/lib/postgresql -mindepth 1 -maxdepth 1 -printf '%f\n' | sort -V | tail -n1)
  [ -n "$version" ] || fail "no server under /usr/lib/postgresql after installing postgresql"
  if [ -z "$(pg_lsclusters -h | awk -v v="$version" '$1 == v && $2 == "main"')" ]; then
    pg_createcluster --port "$PORT" "$version" main >/dev/null
  fi
  pg_conftool "$version" main set port "$PORT"
  local hba="/etc/postgresql/$version/main/pg_hba.conf"
  if ! grep -Eq '^host[[:space:]]+all[[:space:]]+all[[:space:]]+127\.0\.0\.1/32[[:space:]]+trust' "$hba"; then
    # First match wins: these lines go before the package's scram-sha-256 ones.
    sed -i '1i # memql-workbench tests: local TCP connections need no password\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
  fi
  say "cluster $version/main on port $PORT, trust auth for local TCP"
  start_cluster "$version" main
}

if answers; then
  say "a server already answers on $HOST:$PORT"
else
  if ! command -v pg_isready >/dev/null 2>&1 && listening; then
    fail "something listens on $HOST:$PORT, but pg_isready is missing to check it is PostgreSQL: install postgresql-client"
  fi
  cluster=$(cluster_on_port)
  if [ -n "$cluster" ]; then
    [ "$(id -u)" -eq 0 ] || need_root "starting cluster ${cluster/ //}"
    # shellcheck disable=SC2086  # "<version> <name>"
    start_cluster $cluster
  elif [ -d /etc/postgresql ] && [ -n "$(pg_lsclusters -h 2>/dev/null)" ]; then
    fail "no cluster is configured on port $PORT (pg_lsclusters: $(pg_lsclusters -h | awk '{ printf "%s/%s on %s; ", $1, $2, $3 }')set MEMQL_SETUP_PG_PORT to one of those ports and MEMQL_TEST_DATABASE_URL to match"
  else
    [ "$(id -u)" -eq 0 ] || need_root "installing PostgreSQL"
    install_postgresql
  fi
fi

# Database "test", reached the way the tests reach it: user postgres over TCP, no password.
command -v psql >/dev/null 2>&1 || fail "psql is missing: install postgresql-client"
query() { psql -h "$HOST" -p "$PORT" -U postgres -d postgres -w -XtAq -c "$1"; }
found=$(query "select 1 from pg_database where datname = '$DATABASE'") ||
  fail "user postgres cannot connect to $HOST:$PORT without a password: put 'host all all 127.0.0.1/32 trust' first in the cluster's pg_hba.conf and reload it, or set MEMQL_TEST_DATABASE_URL"
if [ "$found" != 1 ]; then
  query "create database $DATABASE" || fail "cannot create database $DATABASE"
  say "created database $DATABASE"
fi
say "ready: postgres://postgres@$HOST:$PORT/$DATABASE"
if [ "$PORT" != 5432 ]; then
  say "the tests use 5432 unless told: export MEMQL_TEST_DATABASE_URL=postgres://postgres@$HOST:$PORT/$DATABASE"
fi
