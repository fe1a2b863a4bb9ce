#!/usr/bin/env bash
# bench/gpu/bench_batch_calls_gpu.sh: batched gpu_score calls end to end in
# PostgreSQL on the GPU machine: the shapes of bench/batch_calls_common.sh
# (an aggregate with FILTER, INSERT ... SELECT, ORDER BY ... LIMIT) on the
# GPU, serially and with parallel workers, against the same queries without
# scoring and gpu_score_query.  The goal (issue "batched calls"): with 8
# workers, scoring adds at most 10% to the parallel query without scoring.
#
# Usage (as root, from the repo root, on the lent GPU machine; run by
# tests/gpu/device_run.sh's batchcalls step):
#
#   bash bench/gpu/bench_batch_calls_gpu.sh PG_ROOT MODEL_DIR > report.md
#
# PG_ROOT is the portable PostgreSQL of tests/gpu/prepare_device.sh;
# MODEL_DIR holds <model>.ubj or .json of BC_MODELS (bench/gpu/make_models.py).
# Environment: BC_ROWS (default 10,000,000), BC_REPEATS (default 3),
# BC_MODELS (default "m100x6 m500x8"), BC_WORKERS (default 8), BC_DEVICE
# (default gpu; an ERROR if there is no GPU), BC_PORT (default 55436),
# GS_TEST_PROVIDER (testing only: e.g. the CPU mock, whose numbers then mean
# nothing).  Row by row is not timed here (10M rows in one backend take
# minutes; bench/bench_batch_calls.sh times it on the CPU).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 PG_ROOT MODEL_DIR" >&2; exit 2; }
P=$(realpath "$1")
MODEL_DIR=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

BENCH_ROWS=${BC_ROWS:-10000000}
BENCH_REPEATS=${BC_REPEATS:-3}
BENCH_PERROW_REPEATS=0
BC_MODELS=${BC_MODELS:-m100x6 m500x8}
BC_WORKERS=${BC_WORKERS:-8}
BENCH_DEVICE=${BC_DEVICE:-gpu}
BC_PORT=${BC_PORT:-55436}
PROVIDER=${GS_TEST_PROVIDER:-}
export BENCH_ROWS BENCH_REPEATS BENCH_PERROW_REPEATS BENCH_DEVICE

# shellcheck source=../sql_common.sh disable=SC1091
source "$ROOT/bench/sql_common.sh"
# shellcheck source=../batch_calls_common.sh disable=SC1091
source "$ROOT/bench/batch_calls_common.sh"
# shellcheck source=portable_cluster.sh disable=SC1091
source "$ROOT/bench/gpu/portable_cluster.sh"

SB_MB=$(( BENCH_ROWS / 5000 + 512 ))
portable_cluster_start "$P" "$BC_PORT" gs-calls -c shared_buffers=${SB_MB}MB -c max_wal_size=8GB \
    -c checkpoint_timeout=1h -c max_worker_processes=$((BC_WORKERS + 4)) -c max_parallel_workers="$BC_WORKERS"
mkdir -p "$W/models"
for m in $BC_MODELS; do
    f=$(ls "$MODEL_DIR/$m.ubj" "$MODEL_DIR/$m.json" 2>/dev/null | head -n1 || true)
    [ -n "$f" ] || { echo "bench_batch_calls_gpu: no $m.ubj or $m.json in $MODEL_DIR" >&2; exit 1; }
    cp "$f" "$W/models/"
done
chown -R "$U" "$W/models"

make_bench_tx "$BENCH_ROWS" 8 >&2
batch_calls_setup
bpsql -c "ALTER TABLE bench_tx SET (parallel_workers = $BC_WORKERS)"
[ -n "$PROVIDER" ] && GS_SET_PROVIDER="SET pg_gpuscore.provider = '$PROVIDER';"
export GS_SET_PROVIDER=${GS_SET_PROVIDER:-}
for m in $BC_MODELS; do
    bpsql -c "SELECT gpu_load_model_file('$m', '$(ls "$W/models/$m".*)')" >/dev/null
done

MOCK=""
[ -n "$PROVIDER" ] && MOCK=" **(provider $PROVIDER: not a GPU, the numbers mean nothing)**"
INFO=$(bpsql -F ' | ' -c "$GS_SET_PROVIDER SELECT provider_loaded, coalesce(reason, ''), coalesce(device_name, ''),
    coalesce(driver_version::text, '') FROM gpu_device_info()")
echo "### bench_batch_calls_gpu: batched gpu_score calls in PostgreSQL$MOCK"
echo
echo "- PostgreSQL $(bpsql -c 'SHOW server_version'), $TABLE_INFO, shared_buffers ${SB_MB}MB, jit off"
echo "- device policy '$BENCH_DEVICE'; GPU as the backend sees it (loaded | reason | name | driver): $INFO"
echo "- CPU: $(awk -F: '/model name/ {gsub(/^ +/, "", $2); print $2; exit}' /proc/cpuinfo), $(nproc) cores;"
echo "  commit $(cat "$ROOT/.device/COMMIT" 2>/dev/null || git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "- median of $BENCH_REPEATS rounds after a warm-up; w$BC_WORKERS = $BC_WORKERS workers per Gather"
echo
status=0
for m in $BC_MODELS; do
    echo "bench_batch_calls_gpu: model $m" >&2
    out=$(batch_calls_run "$m" "serial w$BC_WORKERS")
    echo "#### $m ($(bpsql -c "SELECT n_trees || ' trees, max_depth ' || max_depth FROM gpu_models WHERE name = '$m'"))"
    echo
    batch_calls_table "$m" "$out"
    echo
    batch_calls_check "$out" || status=1
    echo '```'
    bpsql -c "SET pg_gpuscore.device = '$BENCH_DEVICE'" -c "$GS_SET_PROVIDER SET max_parallel_workers_per_gather = $BC_WORKERS" \
        -c "SET parallel_setup_cost = 0" -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) $(batch_calls_query agg batched "$m")" \
        | sed 's/^/    /' | cut -c1-140
    echo '```'
    echo
done
exit $status
