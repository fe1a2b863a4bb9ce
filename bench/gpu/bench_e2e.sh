#!/usr/bin/env bash
# bench/gpu/bench_e2e.sh: end to end in PostgreSQL on the GPU machine:
# gpu_score_query over a 10-million-row table on the GPU, against the CPU
# engine and against a plain SELECT of the same columns, plus the parallel
# aggregate on the GPU against a parallel plain scan.
#
# Usage (as root, from the repo root, on the lent GPU machine; run by
# tests/gpu/device_run.sh's e2e step):
#
#   bash bench/gpu/bench_e2e.sh PG_ROOT MODEL_DIR > report.md
#
# PG_ROOT is a portable PostgreSQL 15 with pg_gpuscore installed (the
# unpacked .device/pg.txz of tests/gpu/prepare_device.sh); MODEL_DIR holds
# <model>.ubj or <model>.json for every model of E2E_MODELS (bench/gpu/
# make_models.py: m100x6, m500x8, m2000x10).  Without a GPU it can be tried
# against the CPU mock provider: GS_TEST_PROVIDER=/path/to/mock.so
# E2E_DEVICE=gpu (the numbers then mean nothing, and the report says so).
#
# Environment:
#   E2E_ROWS      rows of bench_tx (default 10,000,000)
#   E2E_REPEATS   timed runs of each GPU and plain query (default 3)
#   E2E_JOBS      sessions filling the table at once (default 8)
#   E2E_MODELS    models to time (default "m100x6 m500x8 m2000x10")
#   E2E_CPU       models also timed on the CPU engine, once each, since a
#                 single backend scores 10M rows of m500x8 in about a minute
#                 (default "m100x6 m500x8"; "" for none)
#   E2E_BATCHES   extra batch sizes tried on the GPU with the first model,
#                 once each (default "262144 1048576"; the default is 65536)
#   E2E_WORKERS   parallel workers of the aggregate runs (default 8; 0 skips)
#   E2E_WORK_MEM  work_mem of the timed session (default 1GB, so that
#                 gpu_score_query's result tuplestore of 10M rows stays in
#                 memory as it would for a job that sized it)
#   E2E_PORT      port of the throwaway cluster (default 55434)
#   GS_TEST_PROVIDER  pg_gpuscore.provider for the session (testing only)
#
# Table: bench_tx of bench/sql_common.sh (id bigint, f1..f30 real, 5% NULL,
# the distributions of bench/make_models.py), shared_buffers large enough
# to hold it, VACUUM ANALYZE'd; a warm-up scan precedes the timed runs.
# Every query is timed inside the server (bench_time: clock_timestamp()
# around EXECUTE, no rows sent to the client), jit = off, serial queries
# with max_parallel_workers_per_gather = 0:
#
#   plain        SELECT count(id), sum(f1+...+f30) FROM bench_tx
#   gpu          SELECT count(*), round(sum(score::float8)::numeric, 1) FROM gpu_score_query(m, 'SELECT id, f1, ..., f30 FROM bench_tx')
#                with pg_gpuscore.device = 'gpu' (an ERROR if there is no GPU: nothing falls back)
#   cpu          the same with pg_gpuscore.device = 'cpu'
#   gpu_par      gpu_score_query on the GPU with its query scanned by E2E_WORKERS
#                workers (the scoring stays in the calling backend)
#   agg (parallel)   gpu_scores((SELECT gpu_score_agg(m, id, f1, ..., f30) FROM bench_tx)),
#                against the plain query, both with E2E_WORKERS workers
#
# The GPU, CPU and aggregate runs must return the same count and sum (the
# scores summed in float8, rounded to 0.1, so the order rows come in does
# not matter);
# gpu_engine_stats() after the GPU runs must show every row on the GPU.
# Output: Markdown on stdout (progress on stderr); exit status 1 when a
# check failed.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 PG_ROOT MODEL_DIR" >&2; exit 2; }
P=$(realpath "$1")
MODEL_DIR=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

E2E_ROWS=${E2E_ROWS:-10000000}
E2E_REPEATS=${E2E_REPEATS:-3}
E2E_JOBS=${E2E_JOBS:-8}
E2E_MODELS=${E2E_MODELS:-m100x6 m500x8 m2000x10}
E2E_CPU=${E2E_CPU-m100x6 m500x8}
E2E_BATCHES=${E2E_BATCHES-262144 1048576}
E2E_WORKERS=${E2E_WORKERS:-8}
E2E_WORK_MEM=${E2E_WORK_MEM:-1GB}
E2E_PORT=${E2E_PORT:-55434}
PROVIDER=${GS_TEST_PROVIDER:-}

# shellcheck source=../sql_common.sh disable=SC1091
source "$ROOT/bench/sql_common.sh"

# shellcheck source=portable_cluster.sh disable=SC1091
source "$ROOT/bench/gpu/portable_cluster.sh"
log() { echo "bench_e2e: $*" >&2; }
fail=0

# A cluster sized for the table: shared_buffers holds bench_tx (~160 bytes
# a row) so every query reads it from memory.
SB_MB=$(( E2E_ROWS / 5000 + 512 ))
portable_cluster_start "$P" "$E2E_PORT" gs-e2e -c shared_buffers=${SB_MB}MB -c max_wal_size=8GB \
    -c checkpoint_timeout=1h -c max_worker_processes=$((E2E_WORKERS + 4)) -c max_parallel_workers="$E2E_WORKERS"

# Models where the server (user nobody) can read them.
mkdir -p "$W/models"
for m in $E2E_MODELS; do
    f=$(ls "$MODEL_DIR/$m.ubj" "$MODEL_DIR/$m.json" 2>/dev/null | head -n1 || true)
    [ -n "$f" ] || { echo "bench_e2e: no $m.ubj or $m.json in $MODEL_DIR" >&2; exit 1; }
    cp "$f" "$W/models/"
done
chown -R "$U" "$W/models"

make_bench_tx "$E2E_ROWS" "$E2E_JOBS" >&2
for m in $E2E_MODELS; do
    bpsql -c "SELECT gpu_load_model_file('$m', '$(ls "$W/models/$m".*)')" >/dev/null
done

SET_PROVIDER=""
[ -n "$PROVIDER" ] && SET_PROVIDER="SET pg_gpuscore.provider = '$PROVIDER';"
SESSION="SET jit = off;
SET work_mem = '$E2E_WORK_MEM';
SET max_parallel_workers_per_gather = 0;
$SET_PROVIDER"
Q_PLAIN="SELECT count(id), sum($SUMEXPR) FROM bench_tx"
SUMS="count(*), round(sum(score::float8)::numeric, 1)"
sq() { echo "SELECT $SUMS FROM gpu_score_query('$1', 'SELECT id, $COLS FROM bench_tx')"; }

INFO=$(bpsql -F ' | ' -c "$SET_PROVIDER SELECT provider_loaded, coalesce(reason, ''), device_count, coalesce(device_name, ''),
    coalesce(compute_capability, ''), coalesce(pg_size_pretty(total_memory), ''), coalesce(driver_version::text, ''),
    coalesce(runtime_version::text, '') FROM gpu_device_info()")
CPU_MODEL=$(awk -F: '/model name/ {gsub(/^ +/, "", $2); print $2; exit}' /proc/cpuinfo)
MOCK=""
[ -n "$PROVIDER" ] && MOCK=" **(provider $PROVIDER: not a GPU, the GPU numbers mean nothing)**"

echo "### bench_e2e: gpu_score_query end to end in PostgreSQL$MOCK"
echo
echo "- PostgreSQL $(bpsql -c 'SHOW server_version'), $TABLE_INFO, shared_buffers ${SB_MB}MB, work_mem $E2E_WORK_MEM, jit off"
echo "- GPU as the backend sees it (provider loaded | reason | devices | name | cc | memory | driver | runtime): $INFO"
echo "- CPU: $CPU_MODEL, $(nproc) cores; commit $(cat "$ROOT/.device/COMMIT" 2>/dev/null || git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "- serial queries (max_parallel_workers_per_gather = 0), batch_size 65536 (default) unless said;"
echo "  median of $E2E_REPEATS runs after a warm-up for plain and GPU; the CPU engine once (slow)"
echo

# One session per model: warm-up (model load, upload, CUDA init), then the
# timed rounds; prints "kind run secs cpu_secs result" lines.
run_model() {
    local m=$1 script r b
    script="$SESSION
SELECT 'warmup', 0, * FROM bench_time(\$q\$$Q_PLAIN\$q\$);
SET pg_gpuscore.device = 'gpu';
SELECT 'warmup', 0, * FROM bench_time(\$q\$$(sq "$m") LIMIT 1\$q\$);
SELECT 'stats0_' || engine, 0, batches, fallbacks, rows FROM gpu_engine_stats();
"
    for r in $(seq 1 "$E2E_REPEATS"); do
        script+="SET pg_gpuscore.device = 'gpu';
SELECT 'plain', $r, * FROM bench_time(\$q\$$Q_PLAIN\$q\$);
SELECT 'gpu', $r, * FROM bench_time(\$q\$$(sq "$m")\$q\$);
"
    done
    script+="SELECT 'stats_' || engine, 0, batches, fallbacks, rows FROM gpu_engine_stats();
"
    if [ "$m" = "${E2E_MODELS%% *}" ]; then
        for b in $E2E_BATCHES; do
            script+="SET pg_gpuscore.batch_size = $b;
SELECT 'gpu_b$b', 1, * FROM bench_time(\$q\$$(sq "$m")\$q\$);
RESET pg_gpuscore.batch_size;
"
        done
    fi
    if [[ " $E2E_CPU " == *" $m "* ]]; then
        script+="SET pg_gpuscore.device = 'cpu';
SELECT 'cpu', 1, * FROM bench_time(\$q\$$(sq "$m")\$q\$);
"
    fi
    if [ "$E2E_WORKERS" -gt 0 ]; then
        script+="SET pg_gpuscore.device = 'gpu';
SET max_parallel_workers_per_gather = $E2E_WORKERS;
SET parallel_setup_cost = 0;
SET min_parallel_table_scan_size = 0;
ALTER TABLE bench_tx SET (parallel_workers = $E2E_WORKERS);
"
        for r in $(seq 1 "$E2E_REPEATS"); do
            script+="SELECT 'plain_par', $r, * FROM bench_time(\$q\$$Q_PLAIN\$q\$);
SELECT 'gpu_par', $r, * FROM bench_time(\$q\$$(sq "$m")\$q\$);
SELECT 'agg_par', $r, * FROM bench_time(\$q\$SELECT $SUMS FROM gpu_scores((SELECT gpu_score_agg('$m', id, $COLS) FROM bench_tx))\$q\$);
"
        done
    fi
    printf '%s' "$script" | bpsql -F ' '
}

# row LABEL KIND BASE: a table row for KIND's median against BASE's.
row() {
    local label=$1 kind=$2 base=$3 s p runs res
    # shellcheck disable=SC2046
    s=$(median $(awk -v k="$kind" '$1 == k {print $3}' <<<"$out"))
    # shellcheck disable=SC2046
    p=$(median $(awk -v k="$base" '$1 == k {print $3}' <<<"$out"))
    runs=$(awk -v k="$kind" '$1 == k {printf "%s%.3f", (n++ ? " " : ""), $3}' <<<"$out")
    res=$(awk -v k="$kind" '$1 == k {r=$5} END {print r}' <<<"$out")
    awk -v l="$label" -v s="$s" -v p="$p" -v n="$E2E_ROWS" -v runs="$runs" -v res="$res" \
        'BEGIN { printf "| %s | %.3f | %.0f | %.3fx | %+.1f%% | %s | `%s` |\n",
                 l, s, n / s, s / p, 100 * (s - p) / p, runs, res }'
}

for m in $E2E_MODELS; do
    log "model $m"
    out=$(run_model "$m")
    desc=$(bpsql -c "SELECT n_trees || ' trees, max_depth ' || max_depth FROM gpu_models WHERE name = '$m'")
    echo "#### $m ($desc)"
    echo
    echo "| query | median s | rows/s | time vs plain | scoring adds | runs (s) | result |"
    echo "|---|---:|---:|---:|---:|---|---|"
    row "plain SELECT (serial)" plain plain
    row "gpu_score_query, GPU" gpu plain
    for b in $E2E_BATCHES; do
        grep -q "^gpu_b$b " <<<"$out" && row "gpu_score_query, GPU, batch_size $b" "gpu_b$b" plain
    done
    grep -q "^cpu " <<<"$out" && row "gpu_score_query, CPU engine" cpu plain
    if grep -q "^agg_par " <<<"$out"; then
        row "plain SELECT, $E2E_WORKERS workers" plain_par plain_par
        row "gpu_score_query, GPU, its query with $E2E_WORKERS workers" gpu_par plain_par
        row "gpu_score_agg, GPU, $E2E_WORKERS workers" agg_par plain_par
    fi
    echo
    # rows and fallbacks of each engine during the timed serial GPU runs
    delta() { awk -v e="$1" -v c="$2" '$1 == "stats_" e {a = $c} $1 == "stats0_" e {b = $c} END {print a - b}' <<<"$out"; }
    gpu_rows=$(delta gpu 5)
    cpu_rows=$(delta cpu 5)
    fallbacks=$(delta gpu 4)
    echo "gpu_engine_stats() after the serial GPU runs: gpu ${gpu_rows:-0} rows, cpu ${cpu_rows:-0} rows, ${fallbacks:-0} fallbacks."
    if [ "${gpu_rows:-0}" != $((E2E_ROWS * E2E_REPEATS)) ] || [ "${cpu_rows:-0}" != 0 ] || [ "${fallbacks:-0}" != 0 ]; then
        echo "**FAILED: not every row of the GPU runs was scored on the GPU.**"
        fail=1
    fi
    results=$(awk '$1 ~ /^(gpu|gpu_b[0-9]+|cpu|gpu_par|agg_par)$/ {print $5}' <<<"$out" | sort -u)
    if [ "$(wc -l <<<"$results")" != 1 ]; then
        echo "**FAILED: the runs returned different results:** $(tr '\n' ' ' <<<"$results")"
        fail=1
    fi
    echo
done
exit $fail
