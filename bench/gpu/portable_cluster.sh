# shellcheck shell=bash
# bench/gpu/portable_cluster.sh: a throwaway cluster of the portable
# PostgreSQL (the unpacked .device/pg.txz of tests/gpu/prepare_device.sh),
# run as nobody; sourced by bench/gpu/bench_e2e.sh and tests/gpu/pg_checks.sh.
#
#   portable_cluster_start PG_ROOT PORT NAME [SERVER OPTIONS...]
#
# Sets U (the server's user), B (its bin/), W (a new /tmp/NAME.XXXXXX folder
# owned by U: socket, data, log) and RUN (the command prefix that runs as U);
# exports PATH, LD_LIBRARY_PATH, PGHOST, PGPORT and PGUSER for psql; starts
# the server with jit off and the given options ("-c name=value ..."); stops
# it and removes W on exit.
portable_cluster_start() {
    local p=$1 port=$2 name=$3
    shift 3
    U=nobody
    B=$p/usr/lib/postgresql/15/bin
    W=$(mktemp -d "/tmp/$name.XXXXXX")
    chown "$U" "$W"
    chmod 755 "$W"
    RUN=(runuser -u "$U" -- env "LD_LIBRARY_PATH=$p/lib")
    export PATH="$B:$PATH" LD_LIBRARY_PATH="$p/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export PGHOST=$W PGPORT=$port PGUSER=postgres
    "${RUN[@]}" "$B/initdb" -D "$W/data" -U postgres --auth=trust --no-sync -E UTF8 --locale=C.UTF-8 >"$W/initdb.log"
    "${RUN[@]}" "$B/pg_ctl" -D "$W/data" -l "$W/log" -w \
        -o "-p $port -k $W -c listen_addresses='' -c jit=off $*" start >/dev/null
    trap '"${RUN[@]}" "$B/pg_ctl" -D "$W/data" -m fast -w stop >/dev/null 2>&1; rm -rf "$W"' EXIT
}
