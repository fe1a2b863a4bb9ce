#!/usr/bin/env bash
# tests/gpu/device_run.sh: run ON the lent GPU machine, from the repo root,
# after tests/gpu/prepare_device.sh has filled .device/ here.  Writes every
# result into $OUT (default /tmp/gpu-out):
#
#   device.txt          nvidia-smi, driver and CUDA versions
#   test_gpu.txt        server-free GPU-vs-CPU parity, every fixture model,
#                       batches of 1 ... 1,000,003 rows, sync and pipeline
#   test_gpu_mlp.txt    the same for the ONNX networks (vs onnxruntime too)
#   bench_mlp.txt       MLP rows/s, CPU engine (OpenBLAS) vs GPU (cuBLAS)
#   crossover.md        batch size from which the GPU beats the CPU engine
#                       (bench/gpu/bench_crossover.c): gpu_min_rows' default
#   pg_gpu.txt          pg_regress in a portable PostgreSQL: tests/gpu/sql
#   bench_kernel.*      kernel benchmark vs the FIL-style reference (bench/gpu)
#   e2e.md              end to end in PostgreSQL, 10M rows: GPU vs CPU engine
#                       vs plain SELECT (bench/gpu/bench_e2e.sh)
#   memcheck.txt, racecheck.txt   compute-sanitizer over test_gpu (<= 33 rows)
#   steps.txt           each step's exit status and seconds
#
#   OUT=$OUT bash tests/gpu/device_run.sh [STEP...]
#
# STEPs, in the order they run: device parity mlp crossover pg kernel e2e
# sanitizer; none given means all.  `run` allows 10 minutes per command and
# 30 minutes of device time per session, so run them in a few calls, most
# important first, e.g.
#   1. device parity mlp crossover pg     (correctness, short)
#   2. kernel                             (the kernel benchmark)
#   3. e2e sanitizer                      (10M rows in PostgreSQL; slow tools)
# Each step runs even if an earlier one failed, under `timeout` (STEP_TIMEOUT
# seconds, default 570, so a hung step still leaves the others' results); the
# exit status is the number of failed steps.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
D=$ROOT/.device
STEP_TIMEOUT=${STEP_TIMEOUT:-570}
ALL="device parity mlp crossover pg kernel e2e sanitizer"
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
    local name=$1 t0 rc
    echo "== $name"
    t0=$(date +%s)
    timeout -k 10 "$STEP_TIMEOUT" bash -c "$(declare -f "step_$name"); step_$name"
    rc=$?
    echo "$name rc=$rc seconds=$(( $(date +%s) - t0 ))" | tee -a "$OUT/steps.txt"
    [ "$rc" = 0 ] || failed=$((failed + 1))
}
export ROOT OUT D P SAN

step_device() {
    { nvidia-smi; nvcc --version; cat "$D/COMMIT" 2>/dev/null; } > "$OUT/device.txt" 2>&1
}

step_parity() {
    (cd tests/gpu && "$D/bin/test_gpu") > "$OUT/test_gpu.txt" 2>&1
    local rc=$?
    tail -1 "$OUT/test_gpu.txt"
    return $rc
}

step_mlp() {
    local rc=0
    (cd tests/gpu && "$D/bin/test_gpu_mlp") > "$OUT/test_gpu_mlp.txt" 2>&1 || rc=1
    tail -1 "$OUT/test_gpu_mlp.txt"
    "$D/bin/bench_mlp_gpu" > "$OUT/bench_mlp.txt" 2>&1 || rc=1
    tail -5 "$OUT/bench_mlp.txt"
    return $rc
}

step_crossover() {
    GS_XOVER_RUNS=${GS_XOVER_RUNS:-11} "$D/bin/bench_crossover" "$D"/bench_gpu/m100x6.ubj "$D"/bench_gpu/m500x8.ubj \
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
    BUILD="$D/bench_gpu" bash bench/gpu/run.sh --no-build > "$OUT/bench_kernel.txt" 2>&1
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
echo "$failed failed steps; results in $OUT"
exit "$failed"
