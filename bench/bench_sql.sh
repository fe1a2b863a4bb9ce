#!/usr/bin/env bash
# bench_sql.sh: in-database benchmark of pg_gpuscore (CPU engine) against a
# plain scan of the same table, in a throwaway PostgreSQL 15 cluster.
#
# Usage (as root, from anywhere; Debian 12 with the deps of .ci/lib.sh):
#
#   bash bench/bench_sql.sh             # BENCH_ROWS=2000000 rows, 5 runs each
#   BENCH_ROWS=500000 BENCH_REPEATS=5 bash bench/bench_sql.sh
#
# Needs bench/work/m100x6.json and m500x8.json (bench/make_models.py).
# Environment: BENCH_ROWS (rows of bench_tx, default 2,000,000),
# BENCH_REPEATS (timed runs per query, default 5), BENCH_WORK (model dir,
# default bench/work), GS_PORT (default 54339, not the test suite's 54329),
# GS_TMP (cluster dir, default /tmp/pg_gpuscore-bench-PID).
#
# What it does: install_deps, build_install and start_cluster from
# .ci/lib.sh; creates bench_tx(id bigint, f1..f30 real) with BENCH_ROWS rows
# generated in SQL with setseed(0.42) from the same distributions as
# make_models.py (f1-f10 normal, f11-f20 uniform(-5,5), f21-f25
# exponential(100), f26-f30 integers 0-11, each value NULL with
# probability 0.05); VACUUM ANALYZE; loads both models with
# gpu_load_model_file; then, per model, in ONE session (so the backend's
# model cache and shared buffers are warm, as in a real workload):
#
#   plain        SELECT count(id), sum(f1+f2+...+f30) FROM bench_tx
#                The baseline: every column is read and deformed (the
#                expression references all 30 features, so nothing can be
#                pruned) with a trivial per-row computation.  A count(*)
#                over an OFFSET 0 subquery would not do: the planner
#                replaces unreferenced subquery outputs with NULLs.
#   score_query  SELECT count(*), sum(score)
#                  FROM gpu_score_query('m', 'SELECT id, f1, ..., f30 FROM bench_tx')
#   per_row      SELECT sum(gpu_score('m', ARRAY[f1, ..., f30])) FROM bench_tx,
#                row by row (pg_gpuscore.batch_calls = off; the batched calls:
#                bench_batch_calls.sh)
#
# gpu_score_query keeps its result in a tuplestore, which spills to a
# temporary file past work_mem (default 4MB, so at these row counts): that is
# part of what it costs and is measured as such.
#
# All three run with jit = off, pg_gpuscore.device = 'cpu' and
# max_parallel_workers_per_gather = 0 for all three (gpu_score_query scores
# in the calling backend, so the baseline is a single backend too).
# A warm-up (one plain scan, one gpu_score call to load the model) precedes
# BENCH_REPEATS rounds that run the three queries in turn.  Each query is
# timed inside the server by bench_time() below (clock_timestamp() around
# EXECUTE, so planning is included and no rows travel to the client).  The
# medians, rows/s and ratios against the plain scan are printed as Markdown,
# with the median CPU/wall of the backend (CPU seconds from /proc/self/stat,
# 10 ms ticks, read with pg_read_file: meaningful for runs of 0.5 s and
# more; well below 1.0 means other processes took the core).
# The cluster is stopped and removed on exit.

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export GS_PORT=${GS_PORT:-54339}
export GS_TMP=${GS_TMP:-/tmp/pg_gpuscore-bench-$$}
# shellcheck source=../.ci/lib.sh disable=SC1091
source "$BENCH_DIR/../.ci/lib.sh"

BENCH_ROWS=${BENCH_ROWS:-2000000}
BENCH_REPEATS=${BENCH_REPEATS:-5}
BENCH_WORK=${BENCH_WORK:-$BENCH_DIR/work}
MODELS=(m100x6 m500x8)

# shellcheck source=sql_common.sh disable=SC1091
source "$BENCH_DIR/sql_common.sh"

for m in "${MODELS[@]}"; do
    [ -r "$BENCH_WORK/$m.json" ] || { echo "bench_sql: $BENCH_WORK/$m.json missing; run bench/make_models.py" >&2; exit 1; }
done

install_deps
build_install
start_cluster
trap 'stop_cluster; rm -rf "$GS_TMP"' EXIT

# models where the postgres user can read them
as_root mkdir -p "$GS_TMP/models"
for m in "${MODELS[@]}"; do
    as_root cp "$BENCH_WORK/$m.json" "$GS_TMP/models/"
done
as_root chown -R postgres "$GS_TMP/models"

make_bench_tx "$BENCH_ROWS"

for m in "${MODELS[@]}"; do
    bpsql -c "SELECT gpu_load_model_file('$m', '$GS_TMP/models/$m.json')" >/dev/null
done

PG_VERSION=$(bpsql -c "SHOW server_version")
SHARED_BUFFERS=$(bpsql -c "SHOW shared_buffers")
XGB_VERSION=$(bpsql -c "SELECT saved_by FROM gpu_models WHERE name = '${MODELS[0]}'")

echo
echo "### bench_sql: PostgreSQL $PG_VERSION, $TABLE_INFO, shared_buffers $SHARED_BUFFERS"
echo
echo "Settings: jit = off, max_parallel_workers_per_gather = 0, pg_gpuscore.device = 'cpu',"
echo "pg_gpuscore.batch_size = 65536 (default). Median of $BENCH_REPEATS runs after a warm-up, one session per model;"
echo "models saved by $XGB_VERSION."
echo

for m in "${MODELS[@]}"; do
    Q_PLAIN="SELECT count(id), sum($SUMEXPR) FROM bench_tx"
    Q_SQ="SELECT count(*), sum(score) FROM gpu_score_query('$m', 'SELECT id, $COLS FROM bench_tx')"
    Q_ROW="SELECT sum(gpu_score('$m', ARRAY[$COLS])) FROM bench_tx"
    script="SET jit = off;
SET max_parallel_workers_per_gather = 0;
SET pg_gpuscore.batch_calls = off;
SET pg_gpuscore.device = 'cpu';
SELECT 'warmup', 0, * FROM bench_time(\$q\$$Q_PLAIN\$q\$);
SELECT 'warmup', 0, * FROM bench_time(\$q\$SELECT gpu_score('$m', ARRAY[$COLS]) FROM bench_tx LIMIT 1\$q\$);
"
    for r in $(seq 1 "$BENCH_REPEATS"); do
        script+="SELECT 'plain', $r, * FROM bench_time(\$q\$$Q_PLAIN\$q\$);
SELECT 'score_query', $r, * FROM bench_time(\$q\$$Q_SQ\$q\$);
SELECT 'per_row', $r, * FROM bench_time(\$q\$$Q_ROW\$q\$);
"
    done
    out=$(printf '%s' "$script" | bpsql -F ' ')

    declare -A MED=() CPU=() RES=() RUNS=()
    for kind in plain score_query per_row; do
        # shellcheck disable=SC2046
        MED[$kind]=$(median $(awk -v k="$kind" '$1 == k {print $3}' <<<"$out"))
        # shellcheck disable=SC2046
        CPU[$kind]=$(median $(awk -v k="$kind" '$1 == k {print $4 / $3}' <<<"$out"))
        RES[$kind]=$(awk -v k="$kind" '$1 == k {r=$5} END {print r}' <<<"$out")
        RUNS[$kind]=$(awk -v k="$kind" '$1 == k {printf "%s%.3f", (n++ ? " " : ""), $3}' <<<"$out")
    done

    echo "#### model $m ($(bpsql -c "SELECT n_trees || ' trees, max_depth ' || max_depth FROM gpu_models WHERE name = '$m'"))"
    echo
    echo "| query | median s | rows/s | rows/s vs plain | time vs plain | CPU/wall | runs (s) | result |"
    echo "|---|---:|---:|---:|---:|---:|---|---|"
    for kind in plain score_query per_row; do
        case $kind in
            plain) label="plain SELECT sum(f1+...+f30)" ;;
            score_query) label="gpu_score_query (device cpu)" ;;
            per_row) label="per-row gpu_score" ;;
        esac
        awk -v l="$label" -v s="${MED[$kind]}" -v p="${MED[plain]}" -v n="$BENCH_ROWS" \
            -v runs="${RUNS[$kind]}" -v res="${RES[$kind]}" -v cpu="${CPU[$kind]}" \
            'BEGIN { printf "| %s | %.3f | %.0f | %.4fx | %.1fx | %.2f | %s | `%s` |\n",
                     l, s, n / s, p / s, s / p, cpu, runs, res }'
    done
    echo
done
