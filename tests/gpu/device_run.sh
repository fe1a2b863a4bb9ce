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
#   memcheck.txt, racecheck.txt   compute-sanitizer over the same (<= 33 rows)
#   bench_kernel.*      kernel benchmark vs the FIL-style reference (bench/gpu)
#   pg_gpu.txt          pg_regress in a portable PostgreSQL: tests/gpu/sql
#
# Each step runs even if an earlier one failed; the exit status is the
# number of failed steps.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
D=$ROOT/.device
failed=0
step() { echo "== $1"; }

# The portable PostgreSQL first: its lib/ holds the run-time libraries the
# test programs need too (jansson, protobuf-c, OpenBLAS); then the kernel
# benchmark's programs and models.
P=/tmp/gs-portable
rm -rf "$P" && mkdir -p "$P" && tar xJf "$D/pg.txz" -C "$P"
export LD_LIBRARY_PATH="$P/pg/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
tar xJf "$D/bench_gpu.txz" -C "$D"

step "device"
{ nvidia-smi; nvcc --version; git rev-parse HEAD 2>/dev/null || true; } > "$OUT/device.txt" 2>&1

step "server-free GPU parity"
(cd tests/gpu && "$D/bin/test_gpu") > "$OUT/test_gpu.txt" 2>&1 || failed=$((failed + 1))
tail -1 "$OUT/test_gpu.txt"

step "server-free GPU parity, neural networks"
(cd tests/gpu && "$D/bin/test_gpu_mlp") > "$OUT/test_gpu_mlp.txt" 2>&1 || failed=$((failed + 1))
tail -1 "$OUT/test_gpu_mlp.txt"

step "MLP benchmark"
"$D/bin/bench_mlp_gpu" > "$OUT/bench_mlp.txt" 2>&1 || failed=$((failed + 1))
tail -5 "$OUT/bench_mlp.txt"

SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ -x "$SAN" ]; then
    for tool in memcheck racecheck; do
        step "compute-sanitizer $tool"
        (cd tests/gpu && GS_GPU_TEST_MAX_ROWS=33 "$SAN" --tool "$tool" --error-exitcode 3 \
            "$D/bin/test_gpu") > "$OUT/$tool.txt" 2>&1 || failed=$((failed + 1))
        tail -2 "$OUT/$tool.txt"
    done
fi

step "kernel benchmark"
BUILD="$D/bench_gpu" OUT="$OUT" bash bench/gpu/run.sh --no-build > "$OUT/bench_kernel.txt" 2>&1 || failed=$((failed + 1))
tail -5 "$OUT/bench_kernel.txt"

step "pg_regress with the GPU in a portable PostgreSQL"
T=$(mktemp -d)
cp -r tests/gpu/sql tests/gpu/expected "$T/"
cp -r tests/fixtures "$T/fixtures"
chmod -R a+rX "$T"
bash "$D/run_portable.sh" "$P/pg" "$T" > "$OUT/pg_gpu.txt" 2>&1 || failed=$((failed + 1))
tail -5 "$OUT/pg_gpu.txt"

echo "$failed failed steps; results in $OUT"
exit "$failed"
