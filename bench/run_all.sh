#!/usr/bin/env bash
# run_all.sh: run every CPU benchmark of pg_gpuscore and write the results to
# bench/results/YYYY-MM-DD-cpu-<machine tag>.md.
#
# Usage (as root, from anywhere):   bash bench/run_all.sh
#
# Steps:
#   1. bench/make_models.py (with /usr/bin/python3) when bench/work lacks its
#      files: the two models and 1,000,000 rows
#   2. make bench/bench_core (from the repository root, -O2 like the extension)
#   3. bench/bench_core on m100x6 and m500x8, BENCH_CORE_ROWS rows
#      (default 1,000,000), BENCH_REPEATS runs (default 5)
#   4. bench/bench_sql.sh with BENCH_ROWS rows (default here 1,000,000, not
#      the script's 2,000,000, so that the whole run stays within about 10-15
#      minutes on a 2-core machine: per-row gpu_score with the 500x8 model
#      runs at ~40k rows/s, and each query runs 5 times)
#
# The machine tag is made from the CPU model and the core count (never the
# host name), e.g. "intel-xeon-processor-2c".  Progress goes to stderr and
# the full log to bench/work/run_all.log.

set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_DIR/.." && pwd)
WORK=$BENCH_DIR/work
BENCH_CORE_ROWS=${BENCH_CORE_ROWS:-1000000}
BENCH_REPEATS=${BENCH_REPEATS:-5}
export BENCH_ROWS=${BENCH_ROWS:-1000000}
export BENCH_REPEATS
MODELS=(m100x6 m500x8)

# Print a progress line on stderr.
say() {
    echo "[run_all $(date +%T)] $*" >&2
}

# Value of a "Key: value" line of lscpu.
lscpu_field() {
    LC_ALL=C lscpu | sed -n "s/^$1:[[:space:]]*//p" | head -n 1
}

START=$(date +%s)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
# the commit (and uncommitted changes) the benchmarks are built from
COMMIT=$(git -C "$ROOT" rev-parse --short HEAD)
DIRTY=$(git -C "$ROOT" status --porcelain -- src sql Makefile cuda | awk '{print $2}' | tr '\n' ' ')
mkdir -p "$WORK" "$BENCH_DIR/results"
LOG=$WORK/run_all.log
: >"$LOG"

# 1. models and rows
if [ ! -s "$WORK/rows.f32" ] || [ ! -s "$WORK/rows.meta" ] ||
   [ ! -s "$WORK/m100x6.json" ] || [ ! -s "$WORK/m500x8.json" ]; then
    say "training models (bench/make_models.py)"
    /usr/bin/python3 "$BENCH_DIR/make_models.py" "$WORK" | tee -a "$LOG" >&2
fi
read -r FILE_ROWS _ <"$WORK/rows.meta"
if [ "$BENCH_CORE_ROWS" -gt "$FILE_ROWS" ]; then
    echo "run_all: BENCH_CORE_ROWS=$BENCH_CORE_ROWS but rows.f32 has $FILE_ROWS rows" >&2
    exit 1
fi

# 2. bench_core
say "building bench/bench_core"
make -C "$ROOT" -s bench/bench_core >&2

# 3. core benchmark
CORE_OUT=""
for m in "${MODELS[@]}"; do
    say "bench_core $m.json, $BENCH_CORE_ROWS rows, $BENCH_REPEATS runs"
    out=$("$BENCH_DIR/bench_core" "$WORK/$m.json" "$WORK/rows.f32" "$BENCH_CORE_ROWS" "$BENCH_REPEATS")
    printf '%s\n' "$out" | tee -a "$LOG" >&2
    CORE_OUT+="$out"$'\n\n'
done

# 4. SQL benchmark
say "bench_sql.sh, BENCH_ROWS=$BENCH_ROWS"
if ! SQL_ALL=$(bash "$BENCH_DIR/bench_sql.sh" 2>&1 | tee -a "$LOG"); then
    echo "run_all: bench_sql.sh failed; the end of its output ($LOG):" >&2
    tail -n 20 <<<"$SQL_ALL" >&2
    exit 1
fi
SQL_OUT=$(sed -n '/^### bench_sql/,$p' <<<"$SQL_ALL")
[ -n "$SQL_OUT" ] || { echo "run_all: bench_sql.sh produced no results" >&2; exit 1; }
END=$(date +%s)
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# machine description and tag
CPU_MODEL=$(lscpu_field "Model name")
CORES=$(nproc)
RAM=$(awk '/^MemTotal:/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)
HYPERVISOR=$(lscpu_field "Hypervisor vendor")
TAG=$(printf '%s' "$CPU_MODEL" | tr '[:upper:]' '[:lower:]' |
      sed -e 's/([rR])//g; s/(tm)//g; s/@.*//; s/ cpu / /g; s/[^a-z0-9]\{1,\}/-/g; s/^-//; s/-$//')-${CORES}c
DATE=$(date +%F)
RESULT=$BENCH_DIR/results/$DATE-cpu-$TAG.md
COMMIT_END=$(git -C "$ROOT" rev-parse --short HEAD)
PG_VERSION=$(sed -n 's/^### bench_sql: PostgreSQL \(.*\), [0-9]* rows,.*/\1/p' <<<"$SQL_OUT")
XGB_VERSION=$(dpkg-query -W -f='${Version}' libxgboost0 2>/dev/null || echo unknown)
CC_VERSION=$(${CC:-cc} --version | head -n 1)

# summary: "ours vs XGBoost" from bench_core, ratios vs plain from bench_sql
SUMMARY=$(
    printf '%s\n' "$CORE_OUT" | awk -F'|' '
        function t(s) { gsub(/^ +| +$/, "", s); return s }
        /^### bench_core:/ { n = split($0, p, "/"); model = p[n]; sub(/\.json$/, "", model) }
        /^\| ours: transpose \+ gs_cpu_predict/ { ours[model] = t($4); ratio[model] = t($5) }
        /^\| XGBoost PredictFromDense/ { printf "| %s | ours (transpose + score) vs XGBoost predictor, 1 thread | %s rows/s vs %s rows/s | %s |\n",
                                          model, ours[model], t($4), ratio[model] }'
    printf '%s\n' "$SQL_OUT" | awk -F'|' '
        function t(s) { gsub(/^ +| +$/, "", s); return s }
        /^#### model/ { model = $0; sub(/^#### model /, "", model); sub(/ .*/, "", model) }
        /^\| plain SELECT/ { plain = t($4) }
        /^\| gpu_score_query/ { printf "| %s | gpu_score_query vs plain SELECT | %s rows/s vs %s rows/s | %s |\n", model, t($4), plain, t($5) }
        /^\| per-row gpu_score/ { printf "| %s | per-row gpu_score vs plain SELECT | %s rows/s vs %s rows/s | %s |\n", model, t($4), plain, t($5) }'
)

{
    echo "# pg_gpuscore CPU benchmarks, $DATE"
    echo
    echo "- date: $(date -u '+%F %T UTC')"
    echo "- git commit: $COMMIT${DIRTY:+ (working tree has uncommitted changes in: ${DIRTY% })}"
    if [ "$COMMIT_END" != "$COMMIT" ]; then
        echo "  (HEAD moved to $COMMIT_END during the run)"
    fi
    echo "- machine: $CPU_MODEL, $CORES cores${HYPERVISOR:+ ($HYPERVISOR VM)}, $RAM RAM, $(uname -sr); no GPU used"
    echo "- PostgreSQL: $PG_VERSION"
    echo "- XGBoost: $XGB_VERSION (libxgboost0, C API; models trained with python3-xgboost of the same version)"
    echo "- compiler: $CC_VERSION, bench_core built with -O2 -g (as the extension)"
    echo "- load average (1/5/15 min) at start: $LOAD_START, at end: $LOAD_END (other processes share the $CORES cores)"
    echo "- total run time: $(( (END - START) / 60 )) min $(( (END - START) % 60 )) s"
    echo
    echo "Commands (run_all.sh):"
    echo
    echo '```'
    echo "/usr/bin/python3 bench/make_models.py bench/work   # only when bench/work lacks its files"
    echo "make bench/bench_core"
    for m in "${MODELS[@]}"; do
        echo "bench/bench_core bench/work/$m.json bench/work/rows.f32 $BENCH_CORE_ROWS $BENCH_REPEATS"
    done
    echo "BENCH_ROWS=$BENCH_ROWS BENCH_REPEATS=$BENCH_REPEATS bash bench/bench_sql.sh"
    echo '```'
    echo
    if [ "$BENCH_ROWS" -lt 2000000 ]; then
        echo "bench_sql.sh ran with BENCH_ROWS=$BENCH_ROWS (its default is 2,000,000) to keep the whole run"
        echo "within about 15 minutes on this machine."
        echo
    fi
    echo "## Summary"
    echo
    echo "Ratios are in rows/s, measured side by side in this run (>1 means the first is faster)."
    echo
    echo "| model | comparison | rows/s | ratio |"
    echo "|---|---|---|---:|"
    printf '%s\n' "$SUMMARY"
    echo
    echo "Absolute GPU numbers come only from GPU runs; this is a CPU-only run."
    echo
    echo "## Core engine vs XGBoost (bench_core, no server)"
    echo
    printf '%s' "$CORE_OUT"
    echo "## In the database (bench_sql.sh)"
    echo
    printf '%s\n' "$SQL_OUT"
} >"$RESULT"

say "wrote $RESULT"
echo "$RESULT"
