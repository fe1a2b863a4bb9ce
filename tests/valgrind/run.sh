#!/usr/bin/env bash
# tests/valgrind/run.sh: the pg_regress suite against a PostgreSQL whose every
# process (postmaster, backends, parallel workers) runs under valgrind's
# memcheck, with the installed pg_gpuscore loaded in them.
#
#   bash tests/valgrind/run.sh                 every file of REGRESS (Makefile)
#   bash tests/valgrind/run.sh load score      only these files
#
# Run as root (the server runs as user postgres) after `make install`.
# Environment: GS_VG_DIR (work directory, default /tmp/pg_gpuscore-valgrind),
# GS_VG_PORT (default 54359), PG_BIN (default /usr/lib/postgresql/15/bin).
#
# What it finds: invalid reads and writes outside heap blocks, use of
# uninitialised values in conditions and system calls, bad frees, in our
# code and in what it calls (jansson, protobuf-c, OpenBLAS, libxgboost).
# What it cannot find: Debian's PostgreSQL is not built with USE_VALGRIND,
# so an overrun inside a palloc'd block that stays within its memory
# context's chunk is invisible here; the core's unit tests under ASan
# (tests/unit/*_asan) cover the scoring core itself.  Leaks are not checked
# (backends free by memory context at exit; tests/sql/memory.sql checks that
# nothing grows across statements).
#
# Prints one TAP line per step and exits non-zero when pg_regress fails or
# valgrind reports an error; the reports are printed, with the log file.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
work=${GS_VG_DIR:-/tmp/pg_gpuscore-valgrind}
port=${GS_VG_PORT:-54359}
if [ $# -gt 0 ]; then tests="$*"; else tests=$(sed -n 's/^REGRESS = //p' "$root/Makefile"); fi

n=0
failed=0
tap() {     # tap OK|FAIL description
    n=$((n + 1))
    if [ "$1" = OK ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}

command -v valgrind >/dev/null || { echo "not ok 1 - valgrind is not installed"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "tests/valgrind/run.sh: run as root" >&2; exit 2; }

stop_server() {
    if [ -f "$work/data/postmaster.pid" ]; then
        runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$work/data" -m fast -t 300 stop >/dev/null 2>&1 || true
    fi
}
trap stop_server EXIT

rm -rf "$work"
mkdir -p "$work/vg" "$work/stage/tests"
cp -r "$root/sql" "$root/expected" "$work/stage/"
cp -r "$root/tests/fixtures" "$root/tests/mock_provider" "$work/stage/tests/"
cp "$root/tests/valgrind/postgres.supp" "$work/"
chown -R postgres "$work"
chmod -R a+rX "$work"

runuser -u postgres -- "$PG_BIN/initdb" -D "$work/data" -A trust -U postgres >/dev/null
# Everything the server starts is forked from the postmaster, so all of it
# runs under the same valgrind; one log file per process.
runuser -u postgres -- valgrind --quiet --error-limit=no --num-callers=40 \
    --leak-check=no --trace-children=yes --child-silent-after-fork=no \
    --suppressions="$work/postgres.supp" --log-file="$work/vg/%p.log" \
    "$PG_BIN/postgres" -D "$work/data" -p "$port" -k "$work" -c listen_addresses='' \
    -c max_parallel_workers_per_gather=2 -c log_min_messages=warning \
    > "$work/server.log" 2>&1 &

for _ in $(seq 1 240); do
    "$PG_BIN/pg_isready" -q -h "$work" -p "$port" && break
    sleep 0.5
done
if "$PG_BIN/pg_isready" -q -h "$work" -p "$port"; then
    tap OK "PostgreSQL started under valgrind (port $port)"
else
    tail -20 "$work/server.log"
    tap FAIL "PostgreSQL started under valgrind"
    echo "$((n - failed)) passed, $failed failed"
    exit 1
fi

set +e
runuser -u postgres -- "$(dirname "$("$PG_BIN/pg_config" --pgxs 2>/dev/null || pg_config --pgxs)")/../test/regress/pg_regress" \
    --inputdir="$work/stage" --outputdir="$work/out" --bindir="$PG_BIN" \
    --host="$work" --port="$port" --user=postgres --dbname=contrib_regression \
    --load-extension=pg_gpuscore $tests > "$work/regress.log" 2>&1
status=$?
set -e
while read -r line; do
    t=$(echo "$line" | awk '{print $2}')
    case "$line" in
        *"... ok"*) tap OK "pg_regress under valgrind: $t" ;;
        *) tap FAIL "pg_regress under valgrind: $t" ;;
    esac
done < <(grep -E '^(test| ) *[a-z_]+ +\.\.\. ' "$work/regress.log")
if [ "$status" -ne 0 ]; then
    [ -s "$work/out/regression.diffs" ] && head -100 "$work/out/regression.diffs"
    grep -qE '\.\.\. FAILED' "$work/regress.log" || tap FAIL "pg_regress exited with status $status"
fi

stop_server
# valgrind writes an error report as lines "==PID== <kind>", then the stack
reports=$(grep -lE '^==[0-9]+== (Invalid|Conditional jump|Use of uninitialised|Syscall param|Mismatched|Source and destination|Argument|Process terminating)' "$work"/vg/*.log 2>/dev/null || true)
if [ -z "$reports" ]; then
    tap OK "valgrind: no error in $(find "$work/vg" -name '*.log' | wc -l) server processes"
else
    for f in $(echo "$reports" | head -3); do
        echo "# --- $f (first report; the others are in the same directory)"
        head -60 "$f" | sed 's/^/# /'
    done
    tap FAIL "valgrind: errors in $(echo "$reports" | wc -w) processes (logs in $work/vg)"
fi

echo "$((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
