#!/usr/bin/env bash
# tests/gpu/prepare_device.sh: run HERE (Debian 12, root, in the repo) before
# using a lent GPU machine.  Builds what tests/gpu/device_run.sh runs there,
# into .device/ (git-ignored; carried with `run`'s carry: [".device"]):
#
#   .device/bin/test_gpu              server-free GPU-vs-CPU parity suite (trees)
#   .device/bin/test_gpu_mlp          the same for neural networks (cuBLAS)
#   .device/bin/bench_mlp_gpu         MLP benchmark, CPU engine vs GPU engine
#   .device/bin/bench_crossover       GPU vs CPU engine per batch size (gpu_min_rows)
#                                     (they load the run-time libraries the
#                                     device machine lacks, jansson,
#                                     protobuf-c, serial OpenBLAS and its
#                                     Fortran runtime, from the portable
#                                     PostgreSQL's lib/: device_run.sh sets
#                                     LD_LIBRARY_PATH; one copy keeps .device
#                                     under run's 64 MiB carry limit)
#   .device/pg.txz                    portable PostgreSQL 15 with pg_gpuscore
#                                     installed (../shared/device/make_portable.sh);
#                                     its lib/postgresql/15/lib holds the one copy
#                                     of the CUDA provider (sm_90, ~25 MB), which
#                                     the test programs above load from there too
#                                     (device_run.sh sets LD_LIBRARY_PATH)
#   .device/run_portable.sh           starts it and runs pg_regress
#   .device/bench_gpu.txz             kernel benchmark, parity check and models
#                                     (the models serve bench/gpu/bench_e2e.sh too)
#   .device/COMMIT                    the commit the kit was built from
#   .device/tree.txz                  every tracked file (tests/gpu/device_tree.sh pack):
#                                     the tracked tree and .device together are
#                                     over run's 64 MiB, so the tree travels
#                                     packed and is hidden from git for the
#                                     calls (device_tree.sh hide / restore)
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
# The commit the kit is built from (the device's copy of the tree has no .git).
{
    c=$(git rev-parse --short HEAD)
    [ -z "$(git status --porcelain --untracked-files=no)" ] || c="$c + uncommitted changes"
    echo "$c"
} > "$D/COMMIT"

# The core's sources and the network part's flags, as the Makefile lists
# them (so a loader added there is built here too).
make_var() {
    make -s --no-print-directory -f - print-var VAR="$1" <<'EOF'
include Makefile
print-var:
	@echo $($(VAR))
EOF
}
CORE=$(make_var CORE_SRC)
NN=$(make_var NN_SRC)
NN_CFLAGS=$(make_var NN_CFLAGS)
# The libraries pg_gpuscore.so and the test programs load that a bare
# machine lacks; they go into the portable PostgreSQL's lib/ (found through
# LD_LIBRARY_PATH there); the test programs link against these copies.
MA=$(gcc -print-multiarch)
RUNTIME_LIBS="/usr/lib/$MA/libjansson.so.4 /usr/lib/$MA/libprotobuf-c.so.1
    /usr/lib/$MA/openblas-serial/libopenblas.so.0 /usr/lib/$MA/libgfortran.so.5
    /usr/lib/$MA/libquadmath.so.0"

echo "== building the extension and the provider for sm_90"
make -s -j2 CUDA_ARCH_FLAGS="$ARCH" >/dev/null
make -s src/core/frontend/onnx/onnx.pb-c.c >/dev/null
cp pg_gpuscore_cuda.so "$D/bin/"
mkdir -p "$D/lib"
for l in $RUNTIME_LIBS; do cp -L "$l" "$D/lib/"; done

echo "== building the server-free GPU tests, the MLP and crossover benchmarks"
CFLAGS="-std=c11 -D_GNU_SOURCE -O2 -g -ffp-contract=off -Wall -Wextra -Werror -Isrc/core -Isrc"
LINK="-L$D/bin -L$D/lib -l:pg_gpuscore_cuda.so -Wl,-rpath,\$ORIGIN -ljansson -lm"
NN_LINK="-l:libprotobuf-c.so.1 -l:libopenblas.so.0"
# shellcheck disable=SC2086
gcc $CFLAGS $NN_CFLAGS -o "$D/bin/test_gpu" tests/gpu/test_gpu.c $CORE $NN $LINK $NN_LINK
# shellcheck disable=SC2086
gcc $CFLAGS $NN_CFLAGS -o "$D/bin/test_gpu_mlp" tests/gpu/test_gpu_mlp.c $CORE $NN $LINK $NN_LINK
# shellcheck disable=SC2086
gcc $CFLAGS $NN_CFLAGS -DGS_BENCH_GPU -o "$D/bin/bench_mlp_gpu" bench/bench_mlp.c $CORE $NN $LINK $NN_LINK
# shellcheck disable=SC2086
gcc $CFLAGS $NN_CFLAGS -o "$D/bin/bench_crossover" bench/gpu/bench_crossover.c $CORE $NN $LINK $NN_LINK

echo "== building the kernel benchmark and its models (bench/gpu)"
BUILD="$D/bench_gpu" bash bench/gpu/run.sh --build-only
tar cJf "$D/bench_gpu.txz" -C "$D" bench_gpu && rm -rf "$D/bench_gpu"

echo "== portable PostgreSQL 15 with pg_gpuscore"
bash "$SHARED/make_portable.sh" "$D/pg" >/dev/null
cp pg_gpuscore.so pg_gpuscore_cuda.so "$D/pg/usr/lib/postgresql/15/lib/"
# the SQL scripts make install installs: the first version's, the update
# scripts and the current version's, built by make from sql/pg_gpuscore.sql.in
# shellcheck disable=SC2046
cp pg_gpuscore.control $(make_var DATA) $(make_var DATA_built) "$D/pg/usr/share/postgresql/15/extension/"
mv "$D"/lib/* "$D/pg/lib/" && rmdir "$D/lib"
tar cJf "$D/pg.txz" -C "$D" pg && rm -rf "$D/pg"
# the provider the test programs linked against: pg.txz has it
rm "$D/bin/pg_gpuscore_cuda.so"
cp "$SHARED/run_portable.sh" "$D/"
bash tests/gpu/device_tree.sh pack
du -sh "$D"
# run carries at most 64 MiB in all
kib=$(du -sk "$D" | cut -f1)
if [ "$kib" -gt $((60 * 1024)) ]; then
    echo "prepare_device: .device is $((kib / 1024)) MiB, too close to run's 64 MiB carry limit" >&2
    exit 1
fi
echo "ready: bash tests/gpu/device_tree.sh hide, then run calls with carry [\".device\"] (tests/gpu/README.md)"
