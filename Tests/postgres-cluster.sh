#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the fleet tests, from Debian's postgresql package: owned by an unprivileged
# user (postgres when run as root), listening only on a Unix socket in its own temporary directory, trust
# authentication, superuser `passbridge`.
#   eval "$(bash Tests/postgres-cluster.sh start)"   prints the exports PASSBRIDGE_TEST_POSTGRES_DIR and
#                                                    PASSBRIDGE_TEST_POSTGRES_URL (database `passbridge`)
#   bash Tests/postgres-cluster.sh stop DIR          stops it and removes DIR
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || { echo "postgres-cluster.sh: Debian's postgresql package is not installed" >&2; exit 1; }
run=()
if [ "$(id -u)" = 0 ]; then run=(runuser -u postgres --); fi
case "${1:-}" in
start)
  dir=$(mktemp -d /tmp/passbridge-pg.XXXXXX)
  [ ${#run[@]} -eq 0 ] || chown postgres: "$dir"
  "${run[@]}" "$bin/initdb" -D "$dir/data" -U passbridge --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1
  "${run[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -s \
    -o "-c listen_addresses='' -c unix_socket_directories='$dir' -c max_connections=200" start >&2
  "${run[@]}" "$bin/createdb" -h "$dir" -U passbridge passbridge
  echo "export PASSBRIDGE_TEST_POSTGRES_DIR='$dir'"
  echo "export PASSBRIDGE_TEST_POSTGRES_URL='postgresql:///passbridge?host=$dir&user=passbridge'"
  ;;
stop)
  dir=${2:?usage: postgres-cluster.sh stop DIR}
  case "$dir" in /tmp/passbridge-pg.*) ;; *) echo "postgres-cluster.sh: not a cluster of this script: $dir" >&2; exit 2 ;; esac
  "${run[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w -s stop >&2 || true
  rm -rf "$dir"
  ;;
*)
  echo "usage: postgres-cluster.sh start | stop DIR" >&2
  exit 2
  ;;
esac
