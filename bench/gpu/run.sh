#!/bin/bash
# bench/gpu/run.sh: build and run the GPU kernel parity test (parity_kernel.cu)
# and the GPU kernel benchmark (bench_kernel.cu).
#
#   bench/gpu/run.sh [--build-only | --compile-only | --no-build] [bench_kernel options...]
#
# --compile-only builds the programs without making the models (CI runs it
# wherever nvcc exists, so that a change of the core or of a shared header
# cannot break the GPU kit unnoticed between GPU sessions).
# PARITY=0 skips the parity test, BENCH=0 the benchmark.
#
# Builds bench/work/gpu/parity_kernel and bench/work/gpu/bench_kernel
# (ignored by git) with
#   nvcc -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 -Xcompiler -Wall,-Wextra
# from bench/gpu/bench_kernel.cu, bench/gpu/fil_reference.cu and the kernels
# (cuda/forest_kernel.cu, cuda/forest_binned.cu: KERNEL_SRC below), plus the
# scoring core (src/core/*.c, compiled by the C compiler), jansson linked
# statically when libjansson.a exists so the binary also runs where jansson
# is not installed (the lent GPU machine).
# Makes the three models with bench/gpu/make_models.py when they are missing
# and /usr/bin/python3 has xgboost (the benchmark synthesises forests of the
# same shapes otherwise), records the git commit next to the binary, then
# runs the parity test (every fixture model, every plan, bit-exact margins
# against the CPU engine) and then the benchmark; the report goes to
# bench/results/<date>-gpu-<device>.md and, when $OUT is set (the lent
# device machine), is copied there too, with parity.log.
#
# Exit status: 0 when everything run passed, 77 when there is no CUDA
# device (nothing measured), 1 otherwise (a failed check or build).
#
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc),
# CC (default gcc), BUILD (default bench/work/gpu).
set -euo pipefail
cd "$(dirname "$0")/../.."

BUILD=${BUILD:-bench/work/gpu}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CC=${CC:-gcc}
NVFLAGS=(-O3 -std=c++17 -Isrc/core -gencode "arch=compute_90,code=sm_90" -Xcompiler "-Wall,-Wextra")
# The tree kernels' sources (the provider's CUDA_SRC of cuda/Makefile.inc
# less provider.cu and mlp_gemm.cu).
KERNEL_SRC=(cuda/forest_kernel.cu cuda/forest_binned.cu)
# The core's tree sources as the Makefile lists them (CORE_SRC), so a loader
# added there is linked here too; without PGXS (the device machine) the
# Makefile is read without PGXS (PG_CONFIG=false).
CORE_SRC=$(make -s --no-print-directory PG_CONFIG=false -f - print-var 2>/dev/null <<'MK' || true
include Makefile
print-var:
	@echo $(CORE_SRC)
MK
)
[ -n "$CORE_SRC" ] || { echo "run.sh: could not read CORE_SRC from the Makefile" >&2; exit 1; }

mode=run
models=yes
case "${1:-}" in
	--build-only) mode=build; shift ;;
	--compile-only) mode=build; models=no; shift ;;
	--no-build) mode=nobuild; shift ;;
esac
mkdir -p "$BUILD" bench/results

# Without jansson's header (the lent GPU machine) the core can not be built:
# use the binaries built elsewhere and carried in $BUILD.
if [ "$mode" = run ] && ! echo '#include <jansson.h>' | "$CC" -E -x c - >/dev/null 2>&1; then
	if [ -x "$BUILD/bench_kernel" ] && [ -x "$BUILD/parity_kernel" ]; then
		echo "run.sh: jansson.h not found here: using the prebuilt binaries in $BUILD"
		mode=nobuild
	else
		echo "run.sh: jansson.h not found and no prebuilt binaries in $BUILD:" \
			"build with 'bench/gpu/run.sh --build-only' where jansson is installed and carry $BUILD" >&2
		exit 1
	fi
fi

if [ "$mode" != nobuild ]; then
	jansson=-ljansson
	for j in /usr/lib/*/libjansson.a /usr/lib/libjansson.a; do
		if [ -f "$j" ]; then
			jansson=$j
			break
		fi
	done
	objs=()
	for c in $CORE_SRC; do
		o="$BUILD/$(basename "${c%.c}").o"
		"$CC" -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Isrc/core -c "$c" -o "$o"
		objs+=("$o")
	done
	# the frontend's dispatch without its ONNX rows (no protobuf-c, no BLAS here)
	"$CC" -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Isrc/core -DGS_FRONTEND_TREES_ONLY \
		-c src/core/frontend/frontend.c -o "$BUILD/frontend.o"
	objs+=("$BUILD/frontend.o")
	echo "run.sh: $NVCC ${NVFLAGS[*]} (parity_kernel.cu bench_kernel.cu fil_reference.cu ${KERNEL_SRC[*]##*/})"
	"$NVCC" "${NVFLAGS[@]}" -o "$BUILD/bench_kernel" \
		bench/gpu/bench_kernel.cu bench/gpu/fil_reference.cu "${KERNEL_SRC[@]}" \
		"${objs[@]}" "$jansson" -lm
	"$NVCC" "${NVFLAGS[@]}" -o "$BUILD/parity_kernel" \
		bench/gpu/parity_kernel.cu "${KERNEL_SRC[@]}" "${objs[@]}" "$jansson" -lm
	{
		c=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
		if [ "$c" != unknown ] && [ -n "$(git status --porcelain -- cuda bench/gpu src/core 2>/dev/null)" ]; then
			c="$c + uncommitted changes in cuda/, bench/gpu/ or src/core/"
		fi
		echo "$c"
	} > "$BUILD/COMMIT"
	"$NVCC" --version | tail -n1 > "$BUILD/NVCC_VERSION"
	echo "${NVFLAGS[*]}" > "$BUILD/BUILD_FLAGS"
	if [ "$models" = yes ] && [ ! -f "$BUILD/m500x8.ubj" ] && /usr/bin/python3 -c 'import xgboost' 2>/dev/null; then
		/usr/bin/python3 bench/gpu/make_models.py "$BUILD"
	fi
fi
[ "$mode" = build ] && exit 0

if [ ! -x "$BUILD/bench_kernel" ] || [ ! -x "$BUILD/parity_kernel" ]; then
	echo "run.sh: $BUILD/bench_kernel or parity_kernel is missing: build it first (bench/gpu/run.sh --build-only)" >&2
	exit 1
fi
GS_GIT_COMMIT=$(cat "$BUILD/COMMIT" 2>/dev/null || echo unknown)
GS_NVCC_VERSION=$(cat "$BUILD/NVCC_VERSION" 2>/dev/null || echo unknown)
GS_BUILD_FLAGS="nvcc $(cat "$BUILD/BUILD_FLAGS" 2>/dev/null || echo "${NVFLAGS[*]}")"
export GS_GIT_COMMIT GS_NVCC_VERSION GS_BUILD_FLAGS

touch "$BUILD/.start"
parity=0
bench=0
set +e
if [ "${PARITY:-1}" != 0 ]; then
	if [ -n "${OUT:-}" ] && [ -d "${OUT}" ]; then
		"$BUILD/parity_kernel" tests/fixtures > "$OUT/parity.log" 2>&1
		parity=$?
		tail -n 3 "$OUT/parity.log"
		grep '^not ok' "$OUT/parity.log" | head -n 20
	else
		"$BUILD/parity_kernel" tests/fixtures
		parity=$?
	fi
fi
if [ "${BENCH:-1}" != 0 ]; then
	"$BUILD/bench_kernel" --models "$BUILD" --results bench/results "$@"
	bench=$?
fi
set -e
if [ -n "${OUT:-}" ] && [ -d "${OUT}" ]; then
	find bench/results -name '*-gpu-*.md' -newer "$BUILD/.start" -exec cp {} "$OUT/" \;
fi
if [ $parity -eq 77 ] || [ $bench -eq 77 ]; then
	echo "run.sh: no CUDA device: nothing measured (exit 77)"
	exit 77
fi
[ $parity -eq 0 ] && [ $bench -eq 0 ]
