#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the fleet tests, from Debian's postgresql package: owned by an unprivileged
# user (postgres when run as root), listening only on a Unix socket in its own temporary directory, trust
# authentication, superuser `passbridge`.
#   eval "$(bash Tests/postgres-cluster.sh start)"   prints the exports PASSBRIDGE_TEST_POSTGRES_DIR and
#                                                    PASSBRIDGE_TEST_POSTGRES_URL (database `passbridge`)
#   bash Tests/postgres-cluster.sh stop DIR          stops it and removes DIR
#   bash Tests/postgres-cluster.sh restart DIR       restarts its server (`pg_ctl restart -m fast`, as a failover
#                                                    or a minor upgrade does), every connection cut; waits for it
#   bash Tests/postgres-cluster.sh halt DIR          stops its server, keeping DIR (the database is down)
#   bash Tests/postgres-cluster.sh resume DIR        starts a halted server again
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || { echo "postgres-cluster.sh: Debian's postgresql package is not installed" >&2; exit 1; }
run=()
if [ "$(id -u)" = 0 ]; then run=(runuser -u postgres --); fi
# Every path below is absolute; from /, the postgres user never starts in a directory it cannot enter (a clone
# under /root), which pg_ctl and postgres would report on every command.
cd /
# The server's options (pg_ctl restart keeps them; start needs them again).
options() { echo "-c listen_addresses='' -c unix_socket_directories='$1' -c max_connections=200"; }
# DIR, checked to be a cluster of this script.
cluster() {
  local dir=${1:?usage: postgres-cluster.sh stop|restart|halt|resume DIR}
  case "$dir" in /tmp/passbridge-pg.*) ;; *) echo "postgres-cluster.sh: not a cluster of this script: $dir" >&2; exit 2 ;; esac
  echo "$dir"
}
case "${1:-}" in
start)
  dir=$(mktemp -d /tmp/passbridge-pg.XXXXXX)
  [ ${#run[@]} -eq 0 ] || chown postgres: "$dir"
  "${run[@]}" "$bin/initdb" -D "$dir/data" -U passbridge --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1
  "${run[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -s -o "$(options "$dir")" start >&2
  "${run[@]}" "$bin/createdb" -h "$dir" -U passbridge passbridge
  echo "export PASSBRIDGE_TEST_POSTGRES_DIR='$dir'"
  echo "export PASSBRIDGE_TEST_POSTGRES_URL='postgresql:///passbridge?host=$dir&user=passbridge'"
  ;;
stop)
  dir=$(cluster "${2:-}")
  "${run[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w -s stop >&2 || true
  rm -rf "$dir"
  ;;
restart)
  dir=$(cluster "${2:-}")
  "${run[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m fast -w -s restart >&2
  ;;
halt)
  dir=$(cluster "${2:-}")
  "${run[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w -s stop >&2
  ;;
resume)
  dir=$(cluster "${2:-}")
  "${run[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -s -o "$(options "$dir")" start >&2
  ;;
*)
  echo "usage: postgres-cluster.sh start | stop DIR | restart DIR | halt DIR | resume DIR" >&2
  exit 2
  ;;
esac
