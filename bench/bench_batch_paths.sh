#!/usr/bin/env bash
# bench_batch_paths.sh: the batch paths of pg_gpuscore side by side on the
# same table, serial and with parallel workers, in a throwaway PostgreSQL 15.
#
# Usage (as root; Debian 12 with the deps of .ci/lib.sh):
#
#   bash bench/bench_batch_paths.sh                 # 10,000,000 rows, 3 runs each
#   BENCH_ROWS=1000000 BENCH_REPEATS=5 BENCH_MODEL=m500x8 bash bench/bench_batch_paths.sh
#
# Needs bench/work/<model>.json (bench/make_models.py).  Environment:
# BENCH_ROWS (default 10,000,000), BENCH_REPEATS (default 3), BENCH_MODEL
# (default m100x6), BENCH_WORKERS (parallel workers, default 2), BENCH_WORK,
# GS_PORT (default 54349), GS_TMP, PG_BIN (server binaries).
#
# Table: bench_tx of bench/sql_common.sh (id bigint, f1..f30 real, 5% NULL).
# Queries, each timed inside the server (bench_time: clock_timestamp()
# around EXECUTE, no rows sent to the client), jit = off, device 'cpu':
#
#   plain        SELECT count(id), sum(f1+...+f30) FROM bench_tx   (baseline)
#   score_query  gpu_score_query('m', 'SELECT id, f1, ..., f30 FROM bench_tx')
#   agg_array    gpu_scores((SELECT gpu_score_agg('m', id, ARRAY[f1, ..., f30]) ...))
#   agg_cols     gpu_scores((SELECT gpu_score_agg('m', id, f1, ..., f30) ...))
#   per_row      SELECT sum(gpu_score('m', ARRAY[f1, ..., f30])) FROM bench_tx, row by row
#                (pg_gpuscore.batch_calls = off; batched: bench_batch_calls.sh)
#
# Each scoring query returns the row count and the sum of the scores in
# float8 rounded to 0.1, so every path and mode must print the same result
# (a float4 sum of 10M scores depends on the order rows arrive in).
#
# "serial" runs with max_parallel_workers_per_gather = 0, "parallel" with
# BENCH_WORKERS (gpu_score_query is timed serially only: its scoring runs in
# the calling backend whatever its query's plan).  Each round runs every query once, in turn; the median of
# BENCH_REPEATS rounds is reported after a warm-up.  Then gpu_score_table
# scores the whole table into a results table (one timed run: it writes
# BENCH_ROWS rows), and EXPLAIN ANALYZE VERBOSE of the parallel aggregate
# shows the workers doing the scoring.  Output: Markdown on stdout.

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export GS_PORT=${GS_PORT:-54349}
export GS_TMP=${GS_TMP:-/tmp/pg_gpuscore-bench-paths-$$}
# shellcheck source=../.ci/lib.sh disable=SC1091
source "$BENCH_DIR/../.ci/lib.sh"
# shellcheck source=sql_common.sh disable=SC1091
source "$BENCH_DIR/sql_common.sh"

BENCH_ROWS=${BENCH_ROWS:-10000000}
BENCH_REPEATS=${BENCH_REPEATS:-3}
BENCH_MODEL=${BENCH_MODEL:-m100x6}
BENCH_WORKERS=${BENCH_WORKERS:-2}
BENCH_WORK=${BENCH_WORK:-$BENCH_DIR/work}
m=$BENCH_MODEL

[ -r "$BENCH_WORK/$m.json" ] || { echo "bench_batch_paths: $BENCH_WORK/$m.json missing; run bench/make_models.py" >&2; exit 1; }

install_deps
build_install
start_cluster
trap 'stop_cluster; rm -rf "$GS_TMP"' EXIT
as_root mkdir -p "$GS_TMP/models"
as_root cp "$BENCH_WORK/$m.json" "$GS_TMP/models/"
as_root chown -R postgres "$GS_TMP/models"

make_bench_tx "$BENCH_ROWS" >&2
bpsql -c "ALTER TABLE bench_tx ADD PRIMARY KEY (id)" -c "VACUUM ANALYZE bench_tx"
bpsql -c "SELECT gpu_load_model_file('$m', '$GS_TMP/models/$m.json')" >/dev/null

Q_plain="SELECT count(id), sum($SUMEXPR) FROM bench_tx"
Q_score_query="SELECT count(*), round(sum(score::float8)::numeric, 1) FROM gpu_score_query('$m', 'SELECT id, $COLS FROM bench_tx')"
Q_agg_array="SELECT count(*), round(sum(score::float8)::numeric, 1) FROM gpu_scores((SELECT gpu_score_agg('$m', id, ARRAY[$COLS]) FROM bench_tx))"
Q_agg_cols="SELECT count(*), round(sum(score::float8)::numeric, 1) FROM gpu_scores((SELECT gpu_score_agg('$m', id, $COLS) FROM bench_tx))"
Q_per_row="SELECT count(*), round(sum(gpu_score('$m', ARRAY[$COLS])::float8)::numeric, 1) FROM bench_tx"
# per_row is the row-by-row call: without batch_calls
KINDS=(plain score_query agg_array agg_cols per_row)

script="SET jit = off;
SET pg_gpuscore.batch_calls = off;
SET pg_gpuscore.device = 'cpu';
SET max_parallel_workers_per_gather = 0;
SELECT 'warmup', 'serial', 0, * FROM bench_time(\$q\$$Q_plain\$q\$);
SELECT 'warmup', 'serial', 0, * FROM bench_time(\$q\$SELECT gpu_score('$m', ARRAY[$COLS]) FROM bench_tx LIMIT 1\$q\$);
"
for r in $(seq 1 "$BENCH_REPEATS"); do
    for mode in serial parallel; do
        w=0; [ $mode = parallel ] && w=$BENCH_WORKERS
        script+="SET max_parallel_workers_per_gather = $w;
"
        for k in "${KINDS[@]}"; do
            [ $mode = parallel ] && [ $k = score_query ] && continue
            q="Q_$k"
            script+="SELECT '$k', '$mode', $r, * FROM bench_time(\$q\$${!q}\$q\$);
"
        done
    done
done
echo "== timing ${#KINDS[@]} queries x 2 modes x $BENCH_REPEATS rounds" >&2
out=$(printf '%s' "$script" | bpsql -F ' ')

PG_VERSION=$(bpsql -c "SHOW server_version")
MODEL_INFO=$(bpsql -c "SELECT n_trees || ' trees, max_depth ' || max_depth || ', saved by ' || saved_by FROM gpu_models WHERE name = '$m'")
echo "### bench_batch_paths: PostgreSQL $PG_VERSION, $TABLE_INFO, model $m ($MODEL_INFO)"
echo
echo "jit = off, pg_gpuscore.device = 'cpu', batch_size 65536 (default); parallel = $BENCH_WORKERS workers"
echo "per Gather (plus the leader). Median of $BENCH_REPEATS rounds after a warm-up; each round runs"
echo "every query once, in turn, in one session."
echo
echo "| path | mode | median s | rows/s | time vs plain (same mode) | runs (s) | result |"
echo "|---|---|---:|---:|---:|---|---|"
for mode in serial parallel; do
    # shellcheck disable=SC2046
    base=$(median $(awk -v k=plain -v m=$mode '$1 == k && $2 == m {print $4}' <<<"$out"))
    for k in "${KINDS[@]}"; do
        [ $mode = parallel ] && [ $k = score_query ] && continue
        # shellcheck disable=SC2046
        med=$(median $(awk -v k=$k -v m=$mode '$1 == k && $2 == m {print $4}' <<<"$out"))
        runs=$(awk -v k=$k -v m=$mode '$1 == k && $2 == m {printf "%s%.2f", (n++ ? " " : ""), $4}' <<<"$out")
        res=$(awk -v k=$k -v m=$mode '$1 == k && $2 == m {r=$6} END {print r}' <<<"$out")
        awk -v k=$k -v m=$mode -v s="$med" -v b="$base" -v n="$BENCH_ROWS" -v runs="$runs" -v res="$res" \
            'BEGIN { printf "| %s | %s | %.2f | %.0f | %.2fx | %s | `%s` |\n", k, m, s, n / s, s / b, runs, res }'
    done
done
echo

# gpu_score_table into a results table: one run over the whole table.
bpsql -c "CREATE TABLE bench_scores (id bigint PRIMARY KEY, score real NOT NULL)"
t0=$(date +%s%N)
bpsql -c "SET pg_gpuscore.device = 'cpu'" -c "CALL gpu_score_table('$m', 'bench_tx', 'id', target => 'bench_scores', features => string_to_array('$COLS', ', ')::name[])" 2>/dev/null
t1=$(date +%s%N)
st=$(bpsql -F ' ' -c "SELECT status, rows_scored, batches, round(extract(epoch FROM duration)::numeric, 2) FROM gpu_score_runs ORDER BY run_id DESC LIMIT 1")
echo "gpu_score_table into a results table (INSERT of every row, batch_size 50000, committed per"
echo "batch): $st (status, rows, batches, seconds in the run log); wall $(( (t1 - t0) / 1000000 )) ms,"
awk -v n="$BENCH_ROWS" -v t="$(( (t1 - t0) / 1000000 ))" 'BEGIN { printf "%.0f rows/s.\n", n / (t / 1000) }'
echo

echo "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) of the parallel aggregate: each worker runs a"
echo "Partial Aggregate, which scores its own rows (gpu_score_agg's transition function)"
echo "and serializes only the (id, score) pairs for the leader."
echo
echo '```'
bpsql -c "SET jit = off" -c "SET max_parallel_workers_per_gather = $BENCH_WORKERS" -c "SET pg_gpuscore.device = 'cpu'" \
    -c "EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF) SELECT gpu_score_agg('$m', id, $COLS) FROM bench_tx" \
    | sed 's/^/    /' | cut -c1-160
echo '```'
