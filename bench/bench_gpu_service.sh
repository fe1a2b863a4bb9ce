#!/usr/bin/env bash
# bench_gpu_service.sh: the GPU service against the per-session provider on
# this machine, with the CPU mock of the GPU provider (tests/mock_provider)
# standing in for the GPU, side by side in one throwaway PostgreSQL 15:
#
#   1. the round trip: gpu_score_query with pg_gpuscore.device = 'gpu' over
#      BENCH_ROWS rows in batches of 256, 4096 and 65536 rows, through the
#      service (its GPU process scores each batch) and in-process
#      (pg_gpuscore.gpu_service = off: the session's own mock scores it);
#      the difference per batch is what a round trip through the service
#      costs, or saves: through the service the session builds batch k+1
#      while the GPU process scores batch k, as with a real GPU, where the
#      in-process mock scores at the wait;
#   2. throughput with 1, 4 and 16 sessions at once, each scoring
#      BENCH_SESSION_ROWS rows with gpu_score_query on the "GPU", through the
#      service and in-process: rows per second of all sessions together.
#
# What the mock means here: it scores with the CPU engine, so the service's
# one GPU process is one CPU core doing every session's scoring, where each
# in-process session uses its own core.  On this 2-core machine that caps
# the service at one core's throughput; on a GPU the device does the work
# for every session (bench/gpu/bench_gpu_service_gpu.sh measures that).
# So part 2 measures the service's plumbing under load (no lost or slow
# wake-ups, fair turns), not a GPU's throughput.
#
# Usage (as root; Debian 12 with the deps of .ci/lib.sh):
#
#   bash bench/bench_gpu_service.sh
#
# Environment: BENCH_ROWS (default 1,000,000), BENCH_SESSION_ROWS (default
# 200,000), BENCH_REPEATS (default 5), BENCH_MODEL (default the fixture
# fraud_binary.json: 60 trees, 30 features), GS_PORT (default 54352),
# GS_TMP, PG_BIN.  Output: Markdown on stdout; exit status 1 when a variant's
# scores differ from the CPU engine's.
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export GS_PORT=${GS_PORT:-54352}
export GS_TMP=${GS_TMP:-/tmp/pg_gpuscore-bench-svc-$$}
# shellcheck source=../.ci/lib.sh disable=SC1091
source "$BENCH_DIR/../.ci/lib.sh"
# shellcheck source=sql_common.sh disable=SC1091
source "$BENCH_DIR/sql_common.sh"

BENCH_ROWS=${BENCH_ROWS:-1000000}
BENCH_SESSION_ROWS=${BENCH_SESSION_ROWS:-200000}
BENCH_REPEATS=${BENCH_REPEATS:-5}
MODEL_FILE=${BENCH_MODEL:-$BENCH_DIR/../tests/fixtures/models/fraud_binary.json}

install_deps
build_install
start_cluster
trap 'stop_cluster; rm -rf "$GS_TMP"' EXIT
as_root mkdir -p "$GS_TMP/models"
as_root cp "$MODEL_FILE" "$GS_TMP/models/model.json"
as_root cp "$GS_ROOT/tests/mock_provider/pg_gpuscore_mock_provider.so" "$GS_TMP/models/mock.so"
as_root chown -R postgres "$GS_TMP/models"
as_root chmod -R a+rX "$GS_TMP/models"
MOCK=$GS_TMP/models/mock.so

make_bench_tx "$BENCH_ROWS" 2 >&2
bpsql -c "SELECT gpu_load_model_file('m', '$GS_TMP/models/model.json')" >/dev/null
SET_P="SET jit = off; SET pg_gpuscore.provider = '$MOCK'; SET pg_gpuscore.device = 'gpu';"
Q="SELECT id, $COLS FROM bench_tx"
CHECK="SELECT count(*) || ' ' || round(sum(score::float8)::numeric, 3) FROM gpu_score_query('m', \$q\$$Q\$q\$)"
want=$(bpsql -c "SET pg_gpuscore.device = 'cpu'" -c "SELECT result FROM bench_time(\$b\$$CHECK\$b\$)")
status=0

# 1. the round trip: one session per variant and batch size, BENCH_REPEATS runs
declare -A secs
for b in 256 4096 65536; do
    for v in service backend; do
        svc=on; [ $v = backend ] && svc=off
        echo "== round trip: batch $b, $v" >&2
        args=()
        for _ in $(seq 1 "$BENCH_REPEATS"); do
            args+=(-c "SELECT secs || ' ' || result FROM bench_time(\$b\$$CHECK\$b\$)")
        done
        out=$(bpsql -c "$SET_P SET pg_gpuscore.gpu_service = $svc; SET pg_gpuscore.batch_size = $b;" \
            -c "SELECT mode FROM gpu_device_info()" \
            -c "SELECT result FROM bench_time(\$b\$$CHECK\$b\$)" "${args[@]}")
        mode=$(sed -n 1p <<<"$out")
        [ "$mode" = "$v" ] || { echo "bench_gpu_service: wanted mode $v, the session has $mode" >&2; status=1; }
        got=$(sed -n 2p <<<"$out")
        [ "$got" = "$want" ] || { echo "bench_gpu_service: batch $b $v: $got, the CPU engine: $want" >&2; status=1; }
        times=$(sed -n '3,$p' <<<"$out" | awk '{print $1}')
        while read -r r; do
            [ "$(cut -d' ' -f2- <<<"$r")" = "$want" ] || status=1
        done < <(sed -n '3,$p' <<<"$out")
        # shellcheck disable=SC2086
        secs[$b,$v]=$(median $times)
    done
done

# 2. throughput: N sessions at once, each BENCH_SESSION_ROWS rows
QS="SELECT id, $COLS FROM bench_tx WHERE id <= $BENCH_SESSION_ROWS"
CHECKS="SELECT count(*) || ' ' || round(sum(score::float8)::numeric, 3) FROM gpu_score_query('m', \$q\$$QS\$q\$)"
want_s=$(bpsql -c "SET pg_gpuscore.device = 'cpu'; $CHECKS")
declare -A tput
for n in 1 4 16; do
    for v in service backend; do
        svc=on; [ $v = backend ] && svc=off
        runs=()
        for r in $(seq 1 "$BENCH_REPEATS"); do
            echo "== throughput: $n sessions, $v, run $r" >&2
            t0=$(date +%s.%N)
            pids=()
            for s in $(seq 1 "$n"); do
                bpsql -c "$SET_P SET pg_gpuscore.gpu_service = $svc; SET pg_gpuscore.batch_size = 16384;" \
                    -c "$CHECKS" > "$GS_TMP/s$s.out" 2>&1 &
                pids+=($!)
            done
            for p in "${pids[@]}"; do wait "$p" || status=1; done
            t1=$(date +%s.%N)
            for s in $(seq 1 "$n"); do
                [ "$(cat "$GS_TMP/s$s.out")" = "$want_s" ] || { echo "session $s: $(cat "$GS_TMP/s$s.out")" >&2; status=1; }
            done
            runs+=("$(awk -v a="$t0" -v b="$t1" -v n="$n" -v r="$BENCH_SESSION_ROWS" 'BEGIN {printf "%.0f", n * r / (b - a)}')")
        done
        tput[$n,$v]=$(median "${runs[@]}")
    done
done
info=$(bpsql -c "SELECT batches || ' batches in ' || launches || ' launches, ' || merged_batches || ' of them merged' FROM gpu_service_info()")

CPU_MODEL=$(awk -F: '/model name/ {gsub(/^ +/, "", $2); print $2; exit}' /proc/cpuinfo)
echo "### bench_gpu_service: the GPU service against the per-session provider, CPU mock as the GPU"
echo
echo "- PostgreSQL $(bpsql -c 'SHOW server_version'), CPU: $CPU_MODEL, $(nproc) cores; commit $(git -C "$BENCH_DIR/.." rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "- model $(basename "$MODEL_FILE") ($(bpsql -c "SELECT n_trees || ' trees, max_depth ' || max_depth FROM gpu_models WHERE name = 'm'")), $TABLE_INFO"
echo "- gpu_score_query with pg_gpuscore.device = 'gpu', the mock provider; median of $BENCH_REPEATS runs after a warm-up"
echo "- service: pg_gpuscore.gpu_service = on (its GPU process scores); backend: off (the session's own mock scores)"
echo
echo "#### 1. Round trip: $BENCH_ROWS rows in one session"
echo
echo "| batch rows | batches | service s | backend s | service - backend per batch (µs) |"
echo "|---:|---:|---:|---:|---:|"
for b in 256 4096 65536; do
    nb=$(( (BENCH_ROWS + b - 1) / b ))
    awk -v b="$b" -v nb="$nb" -v s="${secs[$b,service]}" -v k="${secs[$b,backend]}" \
        'BEGIN {printf "| %d | %d | %.3f | %.3f | %+.1f |\n", b, nb, s, k, (s - k) * 1e6 / nb}'
done
echo
echo "#### 2. Throughput: N sessions at once, $BENCH_SESSION_ROWS rows each, batches of 16384"
echo
echo "| sessions | service rows/s | backend rows/s | service / backend |"
echo "|---:|---:|---:|---:|"
for n in 1 4 16; do
    awk -v n="$n" -v s="${tput[$n,service]}" -v k="${tput[$n,backend]}" \
        'BEGIN {printf "| %d | %d | %d | %.2f |\n", n, s, k, s / k}'
done
echo
echo "Service after the runs: $info. Every run's count and sum equal the CPU engine's: $([ $status = 0 ] && echo yes || echo NO)."
exit $status
