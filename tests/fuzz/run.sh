#!/usr/bin/env bash
# tests/fuzz/run.sh: build the libFuzzer targets of the model parsers and the
# validator (tests/fuzz/fuzz_*.c) with clang -fsanitize=fuzzer,address,undefined,
# replay their committed corpora and/or fuzz each one for a bounded time.
#
#   bash tests/fuzz/run.sh                 replay every corpus, then fuzz each target
#   bash tests/fuzz/run.sh replay          replay only (every file of tests/fuzz/corpus/<target>/)
#   bash tests/fuzz/run.sh fuzz [target..] fuzz only
#   GS_FUZZ_SECONDS=600 bash tests/fuzz/run.sh fuzz fuzz_xgb_ubj
#
# Environment: GS_FUZZ_SECONDS (seconds per target, default 60),
# GS_FUZZ_BUILD (build and work directory, default /tmp/pg_gpuscore-fuzz),
# CLANG (default clang-14, else clang).  Fuzzing writes new inputs and crash
# files under $GS_FUZZ_BUILD, never into the committed corpus: a crash file
# found there goes into tests/fuzz/corpus/<target>/ with the fix (see README).
# Prints one TAP line per step; exits non-zero when any step found a crash.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mode=${1:-all}
[ $# -gt 0 ] && shift
case "$mode" in
    all|replay|fuzz) ;;
    *) echo "usage: $0 [all|replay|fuzz] [target...]" >&2; exit 2 ;;
esac
seconds=${GS_FUZZ_SECONDS:-60}
build=${GS_FUZZ_BUILD:-/tmp/pg_gpuscore-fuzz}
if [ -z "${CLANG:-}" ]; then
    if command -v clang-14 >/dev/null; then CLANG=clang-14; else CLANG=clang; fi
fi

# The core's sources, as the Makefile lists them for the unit tests (so a
# loader added there is fuzzed with the rest): CORE_SRC for every target, and
# the neural-network part (NN_SRC, NN_CFLAGS, NN_LIBS) for targets that
# include model.h.
make_var() {
    make -s --no-print-directory -C "$root" -f - print-var VAR="$1" <<'EOF'
include Makefile
print-var:
	@echo $($(VAR))
EOF
}
core_src=$(make_var CORE_SRC)
nn_src=$(make_var NN_SRC)
nn_cflags=$(make_var NN_CFLAGS)
nn_libs=$(make_var NN_LIBS)

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for f in "$here"/fuzz_*.c; do
        targets+=("$(basename "$f" .c)")
    done
fi

mkdir -p "$build"
n=0
failed=0
tap() {     # tap OK|FAIL description
    n=$((n + 1))
    if [ "$1" = OK ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}

flags="-std=c11 -D_GNU_SOURCE -O1 -g -ffp-contract=off -Wall -Wextra -Werror
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
       -I$root/src/core -I$root/src"
for t in "${targets[@]}"; do
    exe="$build/$t"
    srcs=()
    libs="-ljansson -lm"
    extra=""
    for s in $core_src; do srcs+=("$root/$s"); done
    # the whole core: the frontend's table of formats names ONNX too;
    # generated sources (onnx.pb-c.c) come from their make rules
    for s in $nn_src; do
        [ -f "$root/$s" ] || make -s -C "$root" "$s" >/dev/null
        srcs+=("$root/$s")
    done
    libs="$libs $nn_libs"
    extra="$nn_cflags"
    if ! (cd "$root" && $CLANG $flags $extra -o "$exe" "tests/fuzz/$t.c" "${srcs[@]}" $libs) \
            > "$build/$t.build.log" 2>&1; then
        cat "$build/$t.build.log"
        tap FAIL "build $t"
        continue
    fi
    tap OK "build $t"
    corpus="$here/corpus/$t"
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0

    if [ "$mode" != fuzz ]; then
        mapfile -t files < <(find "$corpus" -type f ! -name '*.md' | sort)
        if [ ${#files[@]} -eq 0 ]; then
            tap FAIL "replay $t: no corpus in $corpus"
        elif "$exe" -rss_limit_mb=2048 -timeout=30 "${files[@]}" > "$build/$t.replay.log" 2>&1; then
            tap OK "replay $t (${#files[@]} inputs)"
        else
            tail -40 "$build/$t.replay.log"
            tap FAIL "replay $t (${#files[@]} inputs)"
        fi
    fi

    if [ "$mode" != replay ]; then
        work="$build/$t.corpus"
        art="$build/$t.artifacts"
        mkdir -p "$work" "$art"
        if "$exe" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
                -artifact_prefix="$art/" "$work" "$corpus" > "$build/$t.fuzz.log" 2>&1; then
            tap OK "fuzz $t for ${seconds}s ($(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build/$t.fuzz.log" | grep -o '[0-9]*$' || echo '?') runs)"
        else
            tail -60 "$build/$t.fuzz.log"
            tap FAIL "fuzz $t: crash saved in $art/ (log $build/$t.fuzz.log)"
        fi
    fi
done

echo "$((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
