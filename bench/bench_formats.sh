#!/usr/bin/env bash
# bench_formats.sh: a 2,000-tree model in each format users bring, loaded and
# scored by pg_gpuscore's core and by the format's own library, on the same
# rows, one thread each, side by side in one run.  No server.
#
#   bash bench/bench_formats.sh            # 100,000 rows, 5 repeats
#   BENCH_ROWS=200000 BENCH_REPEATS=7 bash bench/bench_formats.sh
#
# Formats: XGBoost JSON and UBJ (XGBoost 3.2), LightGBM text (LightGBM 4.7; also
# a 500-tree model with linear trees),
# ONNX-ML TreeEnsembleClassifier (the LightGBM model converted by onnxmltools,
# scored by onnxruntime), a scikit-learn IsolationForest of 500 trees converted
# by skl2onnx (its anomaly score, scored by onnxruntime), CatBoost JSON (symmetric trees of depth 8; CatBoost
# 1.2, when the venv has it: tests/fixtures/requirements-catboost.txt).  bench_formats.py trains the models once into
# bench/work/formats (fixed seeds; a few minutes on 2 cores) and times the
# libraries; bench_formats.c times our loader and CPU engine and checks that
# our P(class 1) equals the library's within 1e-5 on every row.  Needs the
# venv of tests/fixtures/make_venv_onnx_trees.sh (made here when missing;
# PyPI access).  Prints Markdown on stdout.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
rows=${BENCH_ROWS:-100000}
repeats=${BENCH_REPEATS:-5}
work=${BENCH_WORK:-$here/work/formats}
venv=${VENV_DIR:-/tmp/pg_gpuscore-venv-onnx-trees}

[ -x "$venv/bin/python" ] || bash "$root/tests/fixtures/make_venv_onnx_trees.sh" "$venv" >&2
make -s -C "$root" bench/bench_formats >&2
mkdir -p "$work"

echo "== training (once) and timing the libraries" >&2
libs=$("$venv/bin/python" "$here/bench_formats.py" "$work" "$rows" "$repeats")

echo "### bench_formats: 2,000 trees (the linear-tree and IsolationForest models 500), $rows rows x 30 features (~5% NaN), one thread, median of $repeats"
echo
echo "| model file | size | library | load: library | load: ours | rows/s: library | rows/s: ours | ours / library | max abs diff |"
echo "|---|---:|---|---:|---:|---:|---:|---:|---:|"
while read -r name lload lpred lrps lib; do
    f=$work/$name
    read -r oload opred orps diff < <("$root/bench/bench_formats" "$f" "$work/rows.f32" "$rows" "$f.ref.f32" "$repeats")
    size=$(du -h "$f" | cut -f1)
    lib=${lib//\"/}
    awk -v n="$name" -v s="$size" -v lib="$lib" -v ll="$lload" -v ol="$oload" -v lr="$lrps" -v orr="$orps" -v d="$diff" \
        'BEGIN { printf "| `%s` | %s | %s | %.0f ms | %.0f ms | %.0f | %.0f | %.2fx | %s |\n", n, s, lib, ll * 1000, ol * 1000, lr, orr, orr / lr, d }'
done <<<"$libs"
echo
echo "Loading: the library's constructor on the file (XGBoost Booster, LightGBM Booster,"
echo "onnxruntime InferenceSession); ours: bytes in memory to a validated model, as gpu_load_model"
echo "and each backend's first use do.  Scoring: the library gets all rows in one call"
echo "(inplace_predict / predict / run, 1 thread; CatBoost's predict of probabilities); ours scores 65,536-row chunks, each transposed"
echo "to the column-major batch gpu_score_query builds (transposes included)."
