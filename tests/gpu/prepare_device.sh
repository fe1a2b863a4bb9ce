#!/usr/bin/env bash
# tests/gpu/prepare_device.sh: run HERE (Debian 12, root, in the repo) before
# using a lent GPU machine.  Builds what tests/gpu/device_run.sh runs there,
# into .device/ (git-ignored; carried with `run`'s carry: [".device"]):
#
#   .device/bin/pg_gpuscore_cuda.so   the CUDA provider, sm_90
#   .device/bin/test_gpu              server-free GPU-vs-CPU parity suite
#   .device/bin/libjansson.so.4       (the device machine may lack it)
#   .device/pg.txz                    portable PostgreSQL 15 with pg_gpuscore
#                                     installed (../shared/device/make_portable.sh)
#   .device/run_portable.sh           starts it and runs pg_regress
#   .device/bench_gpu/                kernel benchmark, parity check and models
#
# The GPU machine has CUDA and nvcc but no PostgreSQL, jansson or network, so
# everything host-side is built here.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
SHARED=${SHARED:-$ROOT/../shared/device}
ARCH="-gencode arch=compute_90,code=sm_90"
D=$ROOT/.device

rm -rf "$D" && mkdir -p "$D/bin"

echo "== building the extension and the provider for sm_90"
make -s -j2 CUDA_ARCH_FLAGS="$ARCH" >/dev/null
cp pg_gpuscore_cuda.so "$D/bin/"
cp -L /usr/lib/x86_64-linux-gnu/libjansson.so.4 "$D/bin/"

echo "== building the server-free GPU test"
CORE="src/core/forest.c src/core/gs_status.c src/core/utf8_valid.c src/core/ubj_decode.c \
      src/core/xgb_decode.c src/core/xgb_load.c src/core/cpu_engine.c"
gcc -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Isrc/core -o "$D/bin/test_gpu" \
    tests/gpu/test_gpu.c $CORE -L"$D/bin" -l:pg_gpuscore_cuda.so -Wl,-rpath,'$ORIGIN' -ljansson -lm

echo "== building the kernel benchmark and its models (bench/gpu)"
BUILD="$D/bench_gpu" bash bench/gpu/run.sh --build-only

echo "== portable PostgreSQL 15 with pg_gpuscore"
bash "$SHARED/make_portable.sh" "$D/pg" >/dev/null
cp pg_gpuscore.so pg_gpuscore_cuda.so "$D/pg/usr/lib/postgresql/15/lib/"
cp pg_gpuscore.control sql/pg_gpuscore--*.sql "$D/pg/usr/share/postgresql/15/extension/"
cp -L /usr/lib/x86_64-linux-gnu/libjansson.so.4 "$D/pg/lib/"
tar cJf "$D/pg.txz" -C "$D" pg && rm -rf "$D/pg"
cp "$SHARED/run_portable.sh" "$D/"
du -sh "$D"
echo "ready: run tests/gpu/device_run.sh on the device with carry [\".device\"]"
