#!/usr/bin/env bash
# bench_glue.sh: what the batch paths cost besides scoring: gpu_score_query
# and the aggregate with a one-split model (scoring is ~free), against a
# plain scan of the same columns, in a throwaway PostgreSQL 15.  This is the
# part of "scoring adds <= 10% to a plain SELECT" that no engine, CPU or
# GPU, can take away.
#
# Usage (as root; Debian 12 with the deps of .ci/lib.sh and python3-xgboost):
#
#   bash bench/bench_glue.sh                       # the build of this tree
#   GLUE_BUILDS="before=/tmp/old.so after=/tmp/new.so" bash bench/bench_glue.sh
#
# GLUE_BUILDS compares builds of pg_gpuscore.so of the same SQL version side
# by side: before every session the named library is installed as
# $libdir/pg_gpuscore.so (a new session loads it), and rounds alternate
# between the builds so that drift of the machine hits all alike.
# Environment: BENCH_ROWS (default 2,000,000), BENCH_REPEATS (rounds,
# default 5), GS_PORT (default 54359), GS_TMP.
#
# Models: stump (1 tree of depth 1 over 30 features, trained here with
# /usr/bin/python3's xgboost on synthetic rows) and, when present,
# bench/work/m100x6.json (bench/make_models.py).  Table: bench_tx of
# sql_common.sh.  Queries, timed in the server by bench_time, jit off, one
# backend (max_parallel_workers_per_gather = 0), device 'cpu', work_mem 1GB
# (the result tuplestore stays in memory):
#
#   plain         SELECT count(id), sum(f1+...+f30) FROM bench_tx
#   query_stump   gpu_score_query('stump', 'SELECT id, f1, ..., f30 FROM bench_tx')
#   agg_stump     gpu_scores((SELECT gpu_score_agg('stump', id, f1, ..., f30) FROM bench_tx))
#   query_m100x6  gpu_score_query('m100x6', ...)  (for scale: scoring on one core)
#
# Output: Markdown, per build the median of each query and its time over
# the plain scan's median of the same build.
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export GS_PORT=${GS_PORT:-54359}
export GS_TMP=${GS_TMP:-/tmp/pg_gpuscore-bench-glue-$$}
# shellcheck source=../.ci/lib.sh disable=SC1091
source "$BENCH_DIR/../.ci/lib.sh"
# shellcheck source=sql_common.sh disable=SC1091
source "$BENCH_DIR/sql_common.sh"

BENCH_ROWS=${BENCH_ROWS:-2000000}
BENCH_REPEATS=${BENCH_REPEATS:-5}
GLUE_BUILDS=${GLUE_BUILDS:-}

install_deps
build_install
LIBDIR=$(pg_config --pkglibdir)
if [ -z "$GLUE_BUILDS" ]; then
    cp "$LIBDIR/pg_gpuscore.so" "/tmp/pg_gpuscore-glue-this-$$.so"
    GLUE_BUILDS="this=/tmp/pg_gpuscore-glue-this-$$.so"
fi
for b in $GLUE_BUILDS; do
    [ -r "${b#*=}" ] || { echo "bench_glue: ${b#*=} missing" >&2; exit 1; }
done
start_cluster
trap 'stop_cluster; as_root install -m 755 "$GS_ROOT/pg_gpuscore.so" "$LIBDIR/"; rm -rf "$GS_TMP" /tmp/pg_gpuscore-glue-this-$$.so' EXIT

as_root mkdir -p "$GS_TMP/models"
/usr/bin/python3 - "$GS_TMP/models/stump.json" <<'PY'
import sys
import numpy as np
import xgboost as xgb
rng = np.random.default_rng(7)
X = rng.normal(size=(2000, 30)).astype(np.float32)
y = (X[:, 0] > 0).astype(int)
xgb.XGBClassifier(n_estimators=1, max_depth=1, tree_method="hist").fit(X, y) \
    .get_booster().save_model(sys.argv[1])
PY
MODELS=(stump)
if [ -r "$BENCH_DIR/work/m100x6.json" ]; then
    as_root cp "$BENCH_DIR/work/m100x6.json" "$GS_TMP/models/"
    MODELS+=(m100x6)
fi
as_root chown -R postgres "$GS_TMP/models"

make_bench_tx "$BENCH_ROWS" 2 >&2
for m in "${MODELS[@]}"; do
    bpsql -c "SELECT gpu_load_model_file('$m', '$GS_TMP/models/$m.json')" >/dev/null
done

declare -A Q
Q[plain]="SELECT count(id), sum($SUMEXPR) FROM bench_tx"
Q[query_stump]="SELECT count(*), sum(score) FROM gpu_score_query('stump', 'SELECT id, $COLS FROM bench_tx')"
Q[agg_stump]="SELECT count(*), sum(score) FROM gpu_scores((SELECT gpu_score_agg('stump', id, $COLS) FROM bench_tx))"
KINDS=(plain query_stump agg_stump)
if [[ " ${MODELS[*]} " == *" m100x6 "* ]]; then
    Q[query_m100x6]="SELECT count(*), sum(score) FROM gpu_score_query('m100x6', 'SELECT id, $COLS FROM bench_tx')"
    KINDS+=(query_m100x6)
fi

# One session of one build: a warm-up of every query, then each once.
session() {
    local label=$1 so=$2 r=$3 script k
    as_root install -m 755 "$so" "$LIBDIR/pg_gpuscore.so"
    script="SET jit = off;
SET max_parallel_workers_per_gather = 0;
SET pg_gpuscore.device = 'cpu';
SET work_mem = '1GB';
"
    for k in "${KINDS[@]}"; do
        script+="SELECT 'warmup', '$label', 0, * FROM bench_time(\$q\$${Q[$k]}\$q\$);
"
    done
    for k in "${KINDS[@]}"; do
        script+="SELECT '$k', '$label', $r, * FROM bench_time(\$q\$${Q[$k]}\$q\$);
"
    done
    printf '%s' "$script" | bpsql -F ' '
}

out=""
for r in $(seq 1 "$BENCH_REPEATS"); do
    for b in $GLUE_BUILDS; do
        echo "== round $r, build ${b%%=*}" >&2
        out+=$(session "${b%%=*}" "${b#*=}" "$r")$'\n'
    done
done

echo
echo "### bench_glue: PostgreSQL $(bpsql -c 'SHOW server_version'), $TABLE_INFO"
echo
echo "One backend, jit off, device 'cpu', work_mem 1GB; median of $BENCH_REPEATS rounds (builds alternate"
echo "round by round; each round is a new session with a warm-up of every query). CPU: $(awk -F: '/model name/ {gsub(/^ +/, "", $2); print $2; exit}' /proc/cpuinfo), $(nproc) cores."
echo
echo "| build | query | median s | runs (s) | time vs plain | result |"
echo "|---|---|---:|---|---:|---|"
for b in $GLUE_BUILDS; do
    label=${b%%=*}
    # shellcheck disable=SC2046
    p=$(median $(awk -v k=plain -v b="$label" '$1 == k && $2 == b {print $4}' <<<"$out"))
    for k in "${KINDS[@]}"; do
        # shellcheck disable=SC2046
        s=$(median $(awk -v k="$k" -v b="$label" '$1 == k && $2 == b {print $4}' <<<"$out"))
        runs=$(awk -v k="$k" -v b="$label" '$1 == k && $2 == b {printf "%s%.3f", (n++ ? " " : ""), $4}' <<<"$out")
        res=$(awk -v k="$k" -v b="$label" '$1 == k && $2 == b {r = $6} END {print r}' <<<"$out")
        awk -v b="$label" -v k="$k" -v s="$s" -v p="$p" -v runs="$runs" -v res="$res" \
            'BEGIN { printf "| %s | %s | %.3f | %s | %+.1f%% | `%s` |\n", b, k, s, runs, 100 * (s - p) / p, res }'
    done
done
