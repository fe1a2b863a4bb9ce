#!/usr/bin/env bash
# bench_cpu_peers.sh: pg_gpuscore's CPU engine against every CPU tree predictor
# a user could pick instead, one thread each, the same float32 rows (~5%
# missing) and the same model files, side by side in one run.  No server.
#
#   bash bench/bench_cpu_peers.sh          # 100,000 rows, median of 5
#   BENCH_ROWS=200000 BENCH_REPEATS=7 BENCH_MODELS="xgb500x8 cb1000x6" bash bench/bench_cpu_peers.sh
#
# Models (bench_cpu_peers.py trains them once into bench/work/cpu_peers, fixed
# seeds, 30 features): XGBoost 100x6, 500x8 and 2000x10 (binary:logistic), a
# 500-tree LightGBM model with three categorical features, CatBoost 1,000
# symmetric trees of depth 6.  Peers, each where it takes the model: the
# model's own library (XGBoost inplace_predict, LightGBM predict, CatBoost
# predict), onnxruntime on the ONNX-ML conversion, oneDAL's model builders
# (daal4py), TL2cgen (treelite's model compiled to C by gcc -O3), lleaves
# (LightGBM through LLVM).  Ours: bench_formats (the file loaded with format
# detection, 65,536-row chunks transposed to columns and scored by the CPU
# engine); our P(class 1) must equal the model's own library's within 1e-5
# on every row or the run fails; every peer's largest difference is reported.
#
# Timing: the median of BENCH_REPEATS after a warm-up, in CPU seconds of the
# process (the cores of a shared machine are taken by others; wall-clock
# rows/s are reported too).  Then instructions and data-cache misses per row
# of ours and of the best peer per model: perf stat where the CPU's counters
# are visible, else cachegrind (simulated caches: D1 48 KiB, LL 32 MiB; valgrind hides AVX-512, so
# the libraries' AVX2 paths), as the difference between scoring the rows
# three times and once (BENCH_COUNT_ROWS rows), so loading and start-up cancel
# (BENCH_COUNTS=0 skips them: under cachegrind the peers' Python start-up takes
# minutes).  Ours runs twice: on the vector path the CPU has (AVX-512) and on
# the portable C path (BENCH_SIMD=portable, bench_formats.c).
#
# The peers run in their own pinned venv (bench/requirements-cpu-peers.txt,
# made with PEERS_PYTHON, default python3, 3.11; PyPI access).  BENCH_PREPARE=0
# times what an earlier run prepared (a peer not built yet shows as n/a).  Writes
# bench/results/<date>-cpu-peers.md (BENCH_OUT) and prints it.  Not part of CI.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
rows=${BENCH_ROWS:-100000}
repeats=${BENCH_REPEATS:-5}
count_rows=${BENCH_COUNT_ROWS:-2000}
counts=${BENCH_COUNTS:-1}
models=${BENCH_MODELS:-xgb100x6 xgb500x8 xgb2000x10 lgb500cat cb1000x6}
work=${BENCH_WORK:-$here/work/cpu_peers}
venv=${VENV_DIR:-/tmp/pg_gpuscore-venv-cpu-peers}
python=${PEERS_PYTHON:-python3}
out=${BENCH_OUT:-$here/results/$(date -u +%F)-cpu-peers.md}
req=$here/requirements-cpu-peers.txt
py=$here/bench_cpu_peers.py
ours=$root/bench/bench_formats
# the commit measured, read once (a commit made during the run must not relabel it)
rev=$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- src bench || echo ' plus uncommitted changes')

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --disable-pip-version-check --quiet --only-binary=:all: -r "$req" >&2
fi
make -s -C "$root" NVCC= bench/bench_formats >&2
mkdir -p "$work"
if [ "${BENCH_PREPARE:-1}" = 1 ]; then
    echo "== training, converting and compiling (once)" >&2
    "$venv/bin/python" "$py" prepare "$work" "$rows" $models >&2
fi

file_of() {
    case $1 in
        lgb*) echo "$1.txt rows_cat.f32" ;;
        *) echo "$1.json rows.f32" ;;
    esac
}

# instructions, D1 misses, last-level misses of a command, by perf or cachegrind
if perf stat -x, -e instructions true 2>&1 >/dev/null | grep -q '^[0-9]'; then
    counter="perf stat (hardware counters)"
    count_note=""
    count() {
        perf stat -x, -e instructions,L1-dcache-load-misses,cache-misses "$@" 2>&1 >/dev/null |
            awk -F, '/instructions/ { i = $1 } /L1-dcache-load-misses/ { d = $1 } /cache-misses/ && !/L1/ { l = $1 }
                     END { print i + 0, d + 0, l + 0 }'
    }
else
    count_note=" (the portable path: valgrind hides AVX-512)"
    counter="cachegrind (valgrind $(valgrind --version | sed 's/valgrind-//'); this VM's perf has no hardware counters)"
    count() {
        valgrind --tool=cachegrind --cache-sim=yes --D1=49152,12,64 --LL=33554432,16,64 --cachegrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
            awk '{ gsub(",", ""); for (k = 1; k < NF; k++) if ($k == "refs:" || $k == "misses:") v = $(k + 1) }
                 / I +refs:/ { i = v } / D1 +misses:/ { d = v } / LLd +misses:/ { l = v }
                 END { print i + 0, d + 0, l + 0 }'
    }
fi
# per row: (count of 3 scorings - count of 1) / (2 x rows)
per_row() {
    local a b
    a=$(count "$@" 1) || return 1
    b=$(count "$@" 3) || return 1
    awk -v a="$a" -v b="$b" -v n="$count_rows" 'BEGIN { split(a, x, " "); split(b, y, " ");
        if (y[1] <= x[1]) exit 1;
        printf "%.0f %.2f %.3f\n", (y[1] - x[1]) / (2 * n), (y[2] - x[2]) / (2 * n), (y[3] - x[3]) / (2 * n) }'
}

tsv=$out.tsv          # the raw lines, kept next to the results
: >"$tsv"
for m in $models; do
    read -r file rowsf < <(file_of "$m")
    echo "== $m: the peers" >&2
    "$venv/bin/python" "$py" time "$work" "$rows" "$repeats" "$m" >>"$tsv"
    echo "== $m: ours" >&2
    read -r _ _ cpu diff < <(BENCH_CLOCK=cpu "$ours" "$work/$file" "$work/$rowsf" "$rows" "$work/$file.ref.f32" "$repeats")
    read -r _ _ wall _ < <("$ours" "$work/$file" "$work/$rowsf" "$rows" "$work/$file.ref.f32" "$repeats")
    printf '%s\tours\t%s\t%s\t%s\t%s\n' "$m" "$cpu" "$wall" "$diff" "pg_gpuscore $rev" >>"$tsv"
    read -r _ _ cpu diff < <(BENCH_SIMD=portable BENCH_CLOCK=cpu "$ours" "$work/$file" "$work/$rowsf" "$rows" "$work/$file.ref.f32" "$repeats")
    read -r _ _ wall _ < <(BENCH_SIMD=portable "$ours" "$work/$file" "$work/$rowsf" "$rows" "$work/$file.ref.f32" "$repeats")
    printf '%s\tours, portable C path (BENCH_SIMD=portable)\t%s\t%s\t%s\t%s\n' "$m" "$cpu" "$wall" "$diff" "pg_gpuscore $rev" >>"$tsv"
done

{
    echo "# The CPU engine against the CPU tree predictors ($(date -u +%F))"
    echo
    echo "\`bash bench/bench_cpu_peers.sh\` (BENCH_ROWS=$rows, BENCH_REPEATS=$repeats, BENCH_COUNT_ROWS=$count_rows),"
    echo "commit $rev."
    echo
    echo "## Machine"
    echo
    echo "- CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores visible; $(lscpu | sed -n 's/^Hypervisor vendor: *//p' | sed 's/./& VM/;s/^\(.\) VM/\1/' | head -1)"
    echo "- SIMD flags: $(grep -m1 -o -w -E 'avx2|avx512f|avx512bw|avx512vl|avx512_vnni|avx512vbmi' /proc/cpuinfo | sort -u | tr '\n' ' ')"
    echo "- caches: L1d $(lscpu | sed -n 's/^L1d cache: *//p'), L2 $(lscpu | sed -n 's/^L2 cache: *//p'), L3 $(lscpu | sed -n 's/^L3 cache: *//p')"
    echo "- load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (the cores are shared: rows/s are per CPU second of the process)"
    echo "- $(uname -sr); $(gcc --version | head -1) (ours: -O2, as the extension; TL2cgen's C: -O3); Python $("$venv/bin/python" -c 'import platform; print(platform.python_version())')"
    echo "- counts per row: $counter"
    echo
    echo "## Rows/s, one thread, $rows rows x 30 float32 features (~5% NaN), median of $repeats"
    echo
    echo "max diff: the largest |P(class 1) - the model's own library's| over all rows (inf: a NaN or a missing row)."
    echo
    echo "| model | predictor | version | rows/s (CPU time) | rows/s (wall) | max diff | ours / it |"
    echo "|---|---|---|---:|---:|---:|---:|"
    awk -F'\t' '{ m[NR] = $1; p[NR] = $2; c[NR] = $3; w[NR] = $4; d[NR] = $5; v[NR] = $6;
                  if ($2 == "ours") o[$1] = $3 }
        END { for (i = 1; i <= NR; i++)
                  printf "| %s | %s | %s | %s | %s | %s | %s |\n", m[i], p[i], v[i],
                         c[i] == "-" ? "-" : sprintf("%\047d", c[i]), w[i] == "-" ? "-" : sprintf("%\047d", w[i]), d[i],
                         (c[i] == "-" || p[i] ~ /^ours/) ? "" : sprintf("%.2fx", o[m[i]] / c[i]) }' "$tsv"
    echo
    echo "## Ours against the best peer per model (goal: 1.5x)"
    echo
    echo "| model | ours rows/s | best peer | its rows/s | ours / best | goal |"
    echo "|---|---:|---|---:|---:|---|"
    awk -F'\t' '$3 != "-" { if ($2 == "ours") o[$1] = $3; else if ($2 !~ /^ours/ &&  (!($1 in b) || $3 + 0 > b[$1] + 0)) { b[$1] = $3; n[$1] = $2; d[$1] = $5 }
                            if (!($1 in seen)) { seen[$1] = 1; order[++k] = $1 } }
        END { for (i = 1; i <= k; i++) { m = order[i]; r = o[m] / b[m];
                  printf "| %s | %\047d | %s%s | %\047d | **%.2fx** | %s |\n", m, o[m], n[m],
                         ((d[m] + 0 > 1e-5) ? " (outputs differ: " d[m] ")" : ""), b[m], r,
                         ((r >= 1.5) ? "met" : ((r >= 1) ? "ahead, goal not met" : "behind")) } }' "$tsv"
    echo
    [ "$counts" = 1 ] && echo "## Instructions and data-cache misses per row ($count_rows rows, one thread)" &&
    echo && echo "| model | predictor | instructions / row | D1 misses / row | LL data misses / row |" &&
    echo "|---|---|---:|---:|---:|"
    [ "$counts" = 1 ] && for m in $models; do
        read -r file rowsf < <(file_of "$m")
        best=$(awk -F'\t' -v m="$m" '$1 == m && $3 != "-" && $2 !~ /^ours/ && $3 + 0 > b { b = $3 + 0; n = $2 } END { print n }' "$tsv")
        if c=$(per_row "$ours" --loop "$work/$file" "$work/$rowsf" "$count_rows"); then
            read -r i d l <<<"$c"
            echo "| $m | ours$count_note | $i | $d | $l |"
        else
            echo "| $m | ours | (count failed) | | |"
        fi
        if c=$(per_row "$venv/bin/python" "$py" loop "$work" "$count_rows" "$m" "${best%% (*}"); then
            read -r i d l <<<"$c"
            echo "| $m | $best | $i | $d | $l |"
        else
            echo "| $m | $best | (count failed under the counter) | | |"
        fi
    done
    echo
    echo "Peers' inputs are prepared outside the timing where a peer needs its own"
    echo "container (CatBoost's Pool, TL2cgen's DMatrix, lleaves' float64 copy); ours"
    echo "includes the transpose of every 65,536-row chunk to columns.  TL2cgen is"
    echo "compiled with branch annotations from the training rows and quantized"
    echo "thresholds (its fastest documented settings)."
} >"$out"
cat "$out"
