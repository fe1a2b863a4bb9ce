#!/usr/bin/env bash
# tests/gpu/device_run.sh: run ON the lent GPU machine, from the repo root,
# after tests/gpu/prepare_device.sh has filled .device/ here (and, where the
# tracked tree was hidden for the call, `tar xJf .device/tree.txz` there).
# Each step writes its results into a work folder; at the end they are packed
# into $OUT/results.tgz (run brings back at most 8 files), with steps.txt
# beside it:
#
#   device.txt          nvidia-smi, driver and CUDA versions
#   test_gpu.txt        server-free GPU-vs-CPU parity, every fixture model,
#                       batches of 1 ... 65,536 rows (GS_GPU_TEST_MAX_ROWS=0:
#                       also 1,000,003, ~4 minutes more of CPU reference),
#                       sync and pipeline
#   test_gpu_mlp.txt    the same for the ONNX networks (vs onnxruntime too)
#   crossover.md        batch size from which the GPU beats the CPU engine
#                       (bench/gpu/bench_crossover.c): gpu_min_rows' default
#   pg_gpu.txt          pg_regress in a portable PostgreSQL: tests/gpu/sql
#   bench_kernel.*, parity.log   kernel parity (every fixture, every plan) and
#                       the kernel benchmark vs the FIL-style reference
#                       (bench/gpu; KERNEL_ARGS, default --no-sweep)
#   bench_mlp.txt       MLP rows/s, CPU engine (OpenBLAS) vs GPU (cuBLAS)
#   e2e.md              end to end in PostgreSQL, 10M rows: GPU vs CPU engine
#                       vs plain SELECT (bench/gpu/bench_e2e.sh; E2E_* knobs)
#   batch_calls.md      batched gpu_score calls in PostgreSQL, 10M rows, serial
#                       and 8 workers, vs the query without scoring
#                       (bench/gpu/bench_batch_calls_gpu.sh; BC_* knobs)
#   gpu_service.md      the GPU service vs per-session providers: 8 workers,
#                       16 sessions at once with the device memory used
#                       (bench/gpu/bench_gpu_service_gpu.sh; SV_* knobs)
#   pg_checks.md        in PostgreSQL, 10M rows: per-row parity GPU vs CPU,
#                       cancel (time, device memory after), 8 sessions at once
#                       (device memory per backend), pg_regress with 'gpu'
#                       forced (tests/gpu/pg_checks.sh; PGC_* knobs)
#   memcheck.txt, racecheck.txt   compute-sanitizer over test_gpu (<= 33 rows)
#   steps.txt           each step's exit status and seconds
#
#   OUT=$OUT DEADLINE=450 bash tests/gpu/device_run.sh [STEP...]
#
# STEPs, in the order they run: device parity mlp crossover pg kernel
# mlpbench e2e batchcalls service pgchecks sanitizer; none given means all.  Each step runs even if an
# earlier one failed, under `timeout`: STEP_TIMEOUT seconds (default 300),
# cut to what is left of DEADLINE (seconds from the start, default 540) so
# that the packing still happens inside run's limit; a step with less than
# 20 s left is not started (logged as rc=skipped).  The exit status is the
# number of failed steps.  Seconds each step took on an H100 (2026-11-27):
# device 0, parity 36, crossover 80 (8 sizes; now 10), pg 26, kernel ~190, e2e 137 with
# E2E_CPU=m100x6 E2E_BATCHES= E2E_REPEATS=2 E2E_MODELS="m100x6 m500x8";
# see tests/gpu/README.md for a plan that fits a 15-minute lease.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
RESULTS=${OUT:-/tmp/gpu-out}
mkdir -p "$RESULTS"
OUT=$(mktemp -d /tmp/gpu-steps.XXXXXX)
D=$ROOT/.device
STEP_TIMEOUT=${STEP_TIMEOUT:-300}
DEADLINE=${DEADLINE:-540}
T0=$(date +%s)
ALL="device parity mlp crossover pg kernel mlpbench e2e batchcalls service pgchecks sanitizer"
STEPS=${*:-$ALL}
for s in $STEPS; do
    [[ " $ALL " == *" $s "* ]] || { echo "device_run: unknown step '$s' (steps: $ALL)" >&2; exit 2; }
done
failed=0

# The portable PostgreSQL first: its lib/ holds the run-time libraries the
# test programs need too (jansson, protobuf-c, OpenBLAS); then the kernel
# benchmark's programs and models (also the models of bench_e2e).
P=/tmp/gs-portable
if [ ! -x "$P/pg/usr/lib/postgresql/15/bin/postgres" ]; then
    rm -rf "$P" && mkdir -p "$P" && tar xJf "$D/pg.txz" -C "$P"
fi
# (and the CUDA provider the test programs link, in the server's library directory)
export LD_LIBRARY_PATH="$P/pg/lib:$P/pg/usr/lib/postgresql/15/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -d "$D/bench_gpu" ] || tar xJf "$D/bench_gpu.txz" -C "$D"
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)

# run_step NAME: run step_NAME under timeout, log its status and duration.
run_step() {
    local name=$1 t0 rc limit
    limit=$(( DEADLINE - ($(date +%s) - T0) - 15 ))
    if [ "$limit" -lt 20 ]; then
        echo "$name rc=skipped seconds=0 (DEADLINE)" | tee -a "$OUT/steps.txt"
        failed=$((failed + 1))
        return
    fi
    [ "$limit" -le "$STEP_TIMEOUT" ] || limit=$STEP_TIMEOUT
    echo "== $name"
    t0=$(date +%s)
    timeout -k 5 "$limit" bash -c "$(declare -f "step_$name"); step_$name"
    rc=$?
    echo "$name rc=$rc seconds=$(( $(date +%s) - t0 ))" | tee -a "$OUT/steps.txt"
    [ "$rc" = 0 ] || failed=$((failed + 1))
}
export ROOT OUT D P SAN

# pack the results however the steps end (run brings back at most 8 files)
# shellcheck disable=SC2317  # called by the EXIT trap
pack() {
    tar czf "$RESULTS/results.tgz" -C "$OUT" . && cp "$OUT/steps.txt" "$RESULTS/" 2>/dev/null
    echo "results: $RESULTS/results.tgz"
}
trap pack EXIT

step_device() {
    { nvidia-smi; nvcc --version; cat "$D/COMMIT" 2>/dev/null; } > "$OUT/device.txt" 2>&1
}

step_parity() {
    (cd tests/gpu && GS_GPU_TEST_MAX_ROWS=${GS_GPU_TEST_MAX_ROWS-65536} "$D/bin/test_gpu") > "$OUT/test_gpu.txt" 2>&1
    local rc=$?
    tail -1 "$OUT/test_gpu.txt"
    return $rc
}

step_mlp() {
    local rc=0
    (cd tests/gpu && "$D/bin/test_gpu_mlp") > "$OUT/test_gpu_mlp.txt" 2>&1 || rc=1
    tail -1 "$OUT/test_gpu_mlp.txt"
    return $rc
}

step_mlpbench() {
    # 8192-row batches, median of 3 (the naive loop is slow on a fallback BLAS)
    "$D/bin/bench_mlp_gpu" 8192 3 > "$OUT/bench_mlp.txt" 2>&1
    local rc=$?
    tail -5 "$OUT/bench_mlp.txt"
    return $rc
}

step_crossover() {
    GS_XOVER_RUNS=${GS_XOVER_RUNS:-5} "$D/bin/bench_crossover" "$D"/bench_gpu/m100x6.ubj "$D"/bench_gpu/m500x8.ubj \
        "$D"/bench_gpu/m2000x10.ubj tests/fixtures/onnx/mlp_sigmoid.onnx > "$OUT/crossover.md" 2>&1
    local rc=$?
    tail -3 "$OUT/crossover.md"
    return $rc
}

step_pg() {
    local T rc
    T=$(mktemp -d)
    cp -r tests/gpu/sql tests/gpu/expected "$T/"
    cp -r tests/fixtures "$T/fixtures"
    chmod -R a+rX "$T"
    bash "$D/run_portable.sh" "$P/pg" "$T" > "$OUT/pg_gpu.txt" 2>&1
    rc=$?
    tail -5 "$OUT/pg_gpu.txt"
    return $rc
}

step_kernel() {
    # shellcheck disable=SC2086
    BUILD="$D/bench_gpu" bash bench/gpu/run.sh --no-build ${KERNEL_ARGS---no-sweep} > "$OUT/bench_kernel.txt" 2>&1
    local rc=$?
    tail -5 "$OUT/bench_kernel.txt"
    return $rc
}

step_e2e() {
    bash bench/gpu/bench_e2e.sh "$P/pg" "$D/bench_gpu" > "$OUT/e2e.md" 2> "$OUT/e2e.log"
    local rc=$?
    tail -5 "$OUT/e2e.log"
    return $rc
}

step_batchcalls() {
    bash bench/gpu/bench_batch_calls_gpu.sh "$P/pg" "$D/bench_gpu" > "$OUT/batch_calls.md" 2> "$OUT/batch_calls.log"
    local rc=$?
    grep -E '^\| agg \| w' "$OUT/batch_calls.md"
    tail -3 "$OUT/batch_calls.log"
    return $rc
}

step_service() {
    bash bench/gpu/bench_gpu_service_gpu.sh "$P/pg" "$D/bench_gpu" > "$OUT/gpu_service.md" 2> "$OUT/gpu_service.log"
    local rc=$?
    grep -E '^\| (plain|service|backend) \|' "$OUT/gpu_service.md"
    tail -3 "$OUT/gpu_service.log"
    return $rc
}

step_pgchecks() {
    bash tests/gpu/pg_checks.sh "$P/pg" "$D/bench_gpu" > "$OUT/pg_checks.md" 2> "$OUT/pg_checks.log"
    local rc=$?
    grep -E -A2 '^[0-9]\. ' "$OUT/pg_checks.md" | grep -v '^-- \|^ *- test'
    return $rc
}

step_sanitizer() {
    local tool rc=0
    [ -x "$SAN" ] || { echo "no compute-sanitizer"; return 1; }
    for tool in memcheck racecheck; do
        (cd tests/gpu && GS_GPU_TEST_MAX_ROWS=33 "$SAN" --tool "$tool" --error-exitcode 3 \
            "$D/bin/test_gpu") > "$OUT/$tool.txt" 2>&1 || rc=1
        tail -2 "$OUT/$tool.txt"
    done
    return $rc
}

for s in $ALL; do
    [[ " $STEPS " == *" $s "* ]] && run_step "$s"
done
echo "$failed failed steps"
exit "$failed"
