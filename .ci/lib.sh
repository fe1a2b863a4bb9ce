# .ci/lib.sh: shared steps of .ci/test and .ci/demo (sourced, not run).
#
# install_deps   apt-get what building and testing need (Debian 12, as root)
# build_install  build and install the extension (PGXS)
# start_cluster  initdb + start a throwaway PostgreSQL as user postgres in $GS_TMP
# stop_cluster   stop it (also done by the EXIT trap start_cluster sets)

set -euo pipefail

GS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
GS_TMP=${GS_TMP:-/tmp/pg_gpuscore-$$}
GS_PORT=${GS_PORT:-54329}
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}

# Run a command as root: directly when root (the scripts are run as root,
# or with sudo by a user), through sudo otherwise.
as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

install_deps() {
    local pkgs="build-essential postgresql-15 postgresql-server-dev-15 postgresql-contrib
                libjansson-dev libxgboost-dev tzdata clang-14 libclang-rt-14-dev
                libprotobuf-c-dev protobuf-c-compiler libonnx-dev libopenblas-dev libopenblas-serial-dev
                postgresql-15-cron libipc-run-perl valgrind python3-xgboost python3-sklearn"
    local missing=""
    for p in $pkgs; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        echo "== installing:$missing"
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
        # postgresql-server-dev-15 may upgrade the server: install before any cluster starts
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
    fi
}

build_install() {
    echo "== building pg_gpuscore"
    make -C "$GS_ROOT" -s -j2 >/dev/null
    as_root make -C "$GS_ROOT" -s install >/dev/null
}

start_cluster() {
    as_root mkdir -p "$GS_TMP"
    as_root chown postgres "$GS_TMP"
    as_root chmod 755 "$GS_TMP"
    trap stop_cluster EXIT
    echo "== starting a throwaway PostgreSQL 15 in $GS_TMP (port $GS_PORT)"
    as_root runuser -u postgres -- "$PG_BIN/initdb" -D "$GS_TMP/data" -A trust -U postgres >/dev/null
    as_root runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$GS_TMP/data" -w -l "$GS_TMP/server.log" \
        -o "-p $GS_PORT -k $GS_TMP -c listen_addresses='' -c max_parallel_workers_per_gather=2" start >/dev/null
    export PGHOST=$GS_TMP PGPORT=$GS_PORT PGUSER=postgres
}

stop_cluster() {
    if [ -f "$GS_TMP/data/postmaster.pid" ]; then
        as_root runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$GS_TMP/data" -m fast stop >/dev/null 2>&1 || true
        as_root rm -rf "$GS_TMP/data"
    fi
}
