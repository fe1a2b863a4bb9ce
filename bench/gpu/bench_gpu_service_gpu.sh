#!/usr/bin/env bash
# bench/gpu/bench_gpu_service_gpu.sh: the GPU service on the GPU machine,
# against the per-session provider (pg_gpuscore.gpu_service = off):
#
#   1. parallel batched scoring: SELECT count(*) FILTER (WHERE gpu_score(m,
#      ARRAY[f1..f30]) > 0.9) FROM bench_tx with SV_WORKERS workers per
#      Gather on the GPU, through the service and with each worker's own
#      provider (a CUDA context and an upload per worker, every query),
#      against the same parallel scan without scoring;
#   2. SV_SESSIONS sessions at once, each gpu_score_query of the table: wall
#      time, every session's count and sum against the serial run, and the
#      device memory in use (nvidia-smi): through the service one process
#      holds one context; without it, every backend holds its own.
#
# Usage (as root, from the repo root, on the lent GPU machine; run by
# tests/gpu/device_run.sh's service step):
#
#   bash bench/gpu/bench_gpu_service_gpu.sh PG_ROOT MODEL_DIR > report.md
#
# PG_ROOT is the portable PostgreSQL of tests/gpu/prepare_device.sh;
# MODEL_DIR holds <model>.ubj or .json of SV_MODEL (bench/gpu/make_models.py).
# Environment: SV_ROWS (default 10,000,000), SV_SESSION_ROWS (default
# 1,000,000), SV_REPEATS (default 3), SV_MODEL (default m500x8), SV_WORKERS
# (default 8), SV_SESSIONS (default 16), SV_PORT (default 55437),
# GS_TEST_PROVIDER (testing only: e.g. the CPU mock, whose numbers then mean
# nothing).  Exit status 1 when a variant's result differs.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 PG_ROOT MODEL_DIR" >&2; exit 2; }
P=$(realpath "$1")
MODEL_DIR=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

SV_ROWS=${SV_ROWS:-10000000}
SV_SESSION_ROWS=${SV_SESSION_ROWS:-1000000}
SV_REPEATS=${SV_REPEATS:-3}
SV_MODEL=${SV_MODEL:-m500x8}
SV_WORKERS=${SV_WORKERS:-8}
SV_SESSIONS=${SV_SESSIONS:-16}
SV_PORT=${SV_PORT:-55437}
PROVIDER=${GS_TEST_PROVIDER:-}
m=$SV_MODEL

# shellcheck source=../sql_common.sh disable=SC1091
source "$ROOT/bench/sql_common.sh"
# shellcheck source=portable_cluster.sh disable=SC1091
source "$ROOT/bench/gpu/portable_cluster.sh"
log() { echo "bench_gpu_service_gpu: $*" >&2; }

SB_MB=$(( SV_ROWS / 5000 + 512 ))
portable_cluster_start "$P" "$SV_PORT" gs-svc -c shared_buffers=${SB_MB}MB -c max_wal_size=8GB \
    -c checkpoint_timeout=1h -c max_worker_processes=$((SV_WORKERS + 4)) \
    -c max_parallel_workers="$SV_WORKERS" -c max_connections=$((SV_SESSIONS + 20))
mkdir -p "$W/models"
f=$(ls "$MODEL_DIR/$m.ubj" "$MODEL_DIR/$m.json" 2>/dev/null | head -n1 || true)
[ -n "$f" ] || { echo "bench_gpu_service_gpu: no $m.ubj or $m.json in $MODEL_DIR" >&2; exit 1; }
cp "$f" "$W/models/"
chown -R "$U" "$W/models"

make_bench_tx "$SV_ROWS" 8 >&2
bpsql -c "ALTER TABLE bench_tx SET (parallel_workers = $SV_WORKERS)"
bpsql -c "SELECT gpu_load_model_file('$m', '$(ls "$W/models/$m".*)')" >/dev/null
SETP="SET pg_gpuscore.device = 'gpu';"
[ -n "$PROVIDER" ] && SETP+=" SET pg_gpuscore.provider = '$PROVIDER';"
PLAIN=""
for i in $(seq 1 30); do PLAIN+="${PLAIN:++}coalesce(f$i, 0)"; done
status=0

# 1. parallel: plain scan, through the service, per-worker providers
declare -A med res
for v in plain service backend; do
    case $v in
        plain) q="SELECT count(*) FILTER (WHERE (($PLAIN) / 30)::real > 0.9) FROM bench_tx"; svc=on ;;
        service) q="SELECT count(*) FILTER (WHERE gpu_score('$m', ARRAY[$COLS]) > 0.9) FROM bench_tx"; svc=on ;;
        backend) q="SELECT count(*) FILTER (WHERE gpu_score('$m', ARRAY[$COLS]) > 0.9) FROM bench_tx"; svc=off ;;
    esac
    log "1. parallel, $v"
    args=()
    for _ in $(seq 1 "$SV_REPEATS"); do args+=(-c "SELECT secs || ' ' || result FROM bench_time(\$q\$$q\$q\$)"); done
    out=$(bpsql -c "$SETP SET pg_gpuscore.gpu_service = $svc; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
                    SET max_parallel_workers_per_gather = $SV_WORKERS;" \
        -c "SELECT result FROM bench_time(\$q\$$q\$q\$)" "${args[@]}")
    res[$v]=$(sed -n 1p <<<"$out")
    # shellcheck disable=SC2046
    med[$v]=$(median $(sed -n '2,$p' <<<"$out" | awk '{print $1}'))
    if [ "$v" != plain ] && sed -n '2,$p' <<<"$out" | awk '{print $2}' | grep -vqx "${res[$v]}"; then status=1; fi
done
[ "${res[service]}" = "${res[backend]}" ] || { log "service ${res[service]} != backend ${res[backend]}"; status=1; }

# 2. sessions at once
Q="SELECT id, $COLS FROM bench_tx WHERE id <= $SV_SESSION_ROWS"
CHECK="SELECT count(*) || ' ' || round(sum(score::float8)::numeric, 1) FROM gpu_score_query('$m', \$q\$$Q\$q\$)"
want=$(bpsql -c "$SETP" -c "$CHECK")
declare -A wall mem same
for v in service backend; do
    svc=on; [ $v = backend ] && svc=off
    log "2. $SV_SESSIONS sessions, $v"
    smi=$W/smi-$v.csv
    : > "$smi"
    SMI_PID=""
    if command -v nvidia-smi >/dev/null; then
        ( while :; do nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits >> "$smi" 2>/dev/null; sleep 0.2; done ) &
        SMI_PID=$!
    fi
    t0=$(date +%s.%N)
    pids=()
    for s in $(seq 1 "$SV_SESSIONS"); do
        bpsql -c "$SETP SET pg_gpuscore.gpu_service = $svc;" -c "$CHECK" > "$W/$v-s$s.out" 2>&1 &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || true; done
    t1=$(date +%s.%N)
    [ -n "$SMI_PID" ] && kill "$SMI_PID" 2>/dev/null
    wall[$v]=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
    same[$v]=$(cat "$W/$v"-s*.out | grep -cx "$want" || true)
    [ "${same[$v]}" = "$SV_SESSIONS" ] || { status=1; head -3 "$W/$v"-s*.out >&2; }
    mem[$v]=$(sort -n "$smi" | tail -1)
    mem[$v]=${mem[$v]:-n/a}
done
svcinfo=$(bpsql -c "SELECT batches || ' batches, ' || launches || ' launches, ' || merged_batches || ' merged; '
                    || resident_models || ' model version(s) resident' FROM gpu_service_info()")

MOCK=""
[ -n "$PROVIDER" ] && MOCK=" **(provider $PROVIDER: not a GPU, the numbers mean nothing)**"
INFO=$(bpsql -F ' | ' -c "$SETP SELECT provider_loaded, coalesce(device_name, ''), coalesce(driver_version::text, ''), mode FROM gpu_device_info()")
echo "### bench_gpu_service_gpu: the GPU service against per-session providers$MOCK"
echo
echo "- PostgreSQL $(bpsql -c 'SHOW server_version'), $TABLE_INFO, shared_buffers ${SB_MB}MB, jit off"
echo "- model $m ($(bpsql -c "SELECT n_trees || ' trees, max_depth ' || max_depth FROM gpu_models WHERE name = '$m'")); pg_gpuscore.device = 'gpu'"
echo "- GPU (loaded | name | driver | mode): $INFO"
echo "- CPU: $(awk -F: '/model name/ {gsub(/^ +/, "", $2); print $2; exit}' /proc/cpuinfo), $(nproc) cores;"
echo "  commit $(cat "$ROOT/.device/COMMIT" 2>/dev/null || git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo
echo "#### 1. Parallel batched calls, $SV_WORKERS workers per Gather (median of $SV_REPEATS after a warm-up)"
echo
echo "| variant | median s | rows/s | vs plain | result |"
echo "|---|---:|---:|---:|---|"
for v in plain service backend; do
    awk -v v="$v" -v s="${med[$v]}" -v p="${med[plain]}" -v n="$SV_ROWS" -v r="${res[$v]}" \
        'BEGIN {printf "| %s | %.3f | %.0f | %.2fx | %s |\n", v, s, n / s, s / p, r}'
done
echo
echo "#### 2. $SV_SESSIONS sessions at once, gpu_score_query of $SV_SESSION_ROWS rows each"
echo
echo "| variant | wall s | rows/s | sessions with the serial result | device memory used, peak (MiB) |"
echo "|---|---:|---:|---:|---:|"
for v in service backend; do
    awk -v v="$v" -v s="${wall[$v]}" -v n="$((SV_SESSIONS * SV_SESSION_ROWS))" -v ok="${same[$v]}" -v k="$SV_SESSIONS" -v mm="${mem[$v]}" \
        'BEGIN {printf "| %s | %.2f | %.0f | %d of %d | %s |\n", v, s, n / s, ok, k, mm}'
done
echo
echo "Service after the runs: $svcinfo."
exit $status
