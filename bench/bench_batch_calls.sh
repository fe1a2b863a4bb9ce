#!/usr/bin/env bash
# bench_batch_calls.sh: plain gpu_score calls, batched (the GpuScore node),
# against the same calls row by row, gpu_score_query and the same query
# without scoring, serially and with parallel workers, side by side in one
# throwaway PostgreSQL 15 on this machine (CPU engine).
#
# Usage (as root; Debian 12 with the deps of .ci/lib.sh):
#
#   bash bench/bench_batch_calls.sh                           # m100x6, 10,000,000 rows
#   BENCH_MODEL=m500x8 BENCH_ROWS=2000000 bash bench/bench_batch_calls.sh
#
# Needs bench/work/<model>.json (bench/make_models.py).  Environment:
# BENCH_ROWS (default 10,000,000), BENCH_REPEATS (default 3),
# BENCH_PERROW_REPEATS (default 1), BENCH_MODEL (default m100x6),
# BENCH_MODES (default "serial w1 w2": parallel workers per Gather),
# BENCH_WORK, GS_PORT (default 54351), GS_TMP, PG_BIN.
#
# Table: bench_tx of bench/sql_common.sh (id bigint, f1..f30 real, 5% NULL).
# The shapes, variants and modes: bench/batch_calls_common.sh.  Every query
# is timed inside the server (no rows sent to the client), jit = off,
# pg_gpuscore.device = 'cpu', batch_size 65536.  Output: Markdown on stdout;
# exit status 1 when two variants of a shape disagree.

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export GS_PORT=${GS_PORT:-54351}
export GS_TMP=${GS_TMP:-/tmp/pg_gpuscore-bench-calls-$$}
# shellcheck source=../.ci/lib.sh disable=SC1091
source "$BENCH_DIR/../.ci/lib.sh"
# shellcheck source=sql_common.sh disable=SC1091
source "$BENCH_DIR/sql_common.sh"
# shellcheck source=batch_calls_common.sh disable=SC1091
source "$BENCH_DIR/batch_calls_common.sh"

BENCH_ROWS=${BENCH_ROWS:-10000000}
BENCH_REPEATS=${BENCH_REPEATS:-3}
BENCH_PERROW_REPEATS=${BENCH_PERROW_REPEATS:-1}
BENCH_MODEL=${BENCH_MODEL:-m100x6}
BENCH_MODES=${BENCH_MODES:-serial w1 w2}
BENCH_WORK=${BENCH_WORK:-$BENCH_DIR/work}
m=$BENCH_MODEL

[ -r "$BENCH_WORK/$m.json" ] || { echo "bench_batch_calls: $BENCH_WORK/$m.json missing; run bench/make_models.py" >&2; exit 1; }

install_deps
build_install
start_cluster
trap 'stop_cluster; rm -rf "$GS_TMP"' EXIT
as_root mkdir -p "$GS_TMP/models"
as_root cp "$BENCH_WORK/$m.json" "$GS_TMP/models/"
as_root chown -R postgres "$GS_TMP/models"

make_bench_tx "$BENCH_ROWS" 2 >&2
batch_calls_setup
bpsql -c "SELECT gpu_load_model_file('$m', '$GS_TMP/models/$m.json')" >/dev/null

echo "== timing: $BENCH_REPEATS rounds of 3 shapes x 4 variants, modes $BENCH_MODES" >&2
out=$(batch_calls_run "$m" "$BENCH_MODES")

CPU_MODEL=$(awk -F: '/model name/ {gsub(/^ +/, "", $2); print $2; exit}' /proc/cpuinfo)
MODEL_INFO=$(bpsql -c "SELECT n_trees || ' trees, max_depth ' || max_depth FROM gpu_models WHERE name = '$m'")
echo "### bench_batch_calls: model $m ($MODEL_INFO), $TABLE_INFO"
echo
echo "- PostgreSQL $(bpsql -c 'SHOW server_version'), CPU: $CPU_MODEL, $(nproc) cores; commit $(git -C "$BENCH_DIR/.." rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "- jit off, pg_gpuscore.device = 'cpu', batch_size 65536; wN = N parallel workers per Gather (plus"
echo "  the leader); median of $BENCH_REPEATS rounds after a warm-up (per_row: $BENCH_PERROW_REPEATS), each round"
echo "  running every query once, in turn, in one session"
echo
batch_calls_table "$m" "$out"
echo
status=0
batch_calls_check "$out" || status=1
echo "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) of the aggregate with 2 workers:"
echo
echo '```'
bpsql -c "SET jit = off" -c "SET pg_gpuscore.device = 'cpu'" -c "SET max_parallel_workers_per_gather = 2" \
    -c "SET parallel_setup_cost = 0" \
    -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $(batch_calls_query agg batched "$m")" | sed 's/^/    /' | cut -c1-140
echo '```'
exit $status
