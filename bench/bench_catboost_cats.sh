#!/usr/bin/env bash
# bench_catboost_cats.sh: a CatBoost model with categorical features (1,000 symmetric trees of
# depth 6; CTRs of categories and their combinations), scored by pg_gpuscore's core (the CTRs
# computed per row, then the trees) and by CatBoost itself, on the same rows, one thread each,
# side by side in one run.  No server.
#
#   bash bench/bench_catboost_cats.sh           # 100,000 rows, 5 repeats
#   BENCH_ROWS=200000 BENCH_REPEATS=7 bash bench/bench_catboost_cats.sh
#
# bench_catboost_cats.py trains the model once into bench/work/catboost_cats (a minute or two on
# 2 cores) and times CatBoost; bench/bench_formats (the same program as bench_formats.sh) times
# our loader and CPU engine on the rows as category codes and checks P(class 1) against
# CatBoost's within 1e-5.  Needs the venv of tests/fixtures/make_venv_onnx_trees.sh with
# tests/fixtures/requirements-catboost.txt.  Prints Markdown on stdout.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
rows=${BENCH_ROWS:-100000}
repeats=${BENCH_REPEATS:-5}
work=${BENCH_WORK:-$here/work/catboost_cats}
venv=${VENV_DIR:-/tmp/pg_gpuscore-venv-onnx-trees}

"$venv/bin/python" -c "import catboost" 2>/dev/null || {
    echo "needs CatBoost in $venv: $venv/bin/pip install -r tests/fixtures/requirements-catboost.txt" >&2
    exit 2
}
make -s -C "$root" bench/bench_formats >&2
mkdir -p "$work"
read -r lload ldf lpool ver n_ctrs n_names < <("$venv/bin/python" "$here/bench_catboost_cats.py" "$work" "$rows" "$repeats")
read -r oload opred orps diff < <("$root/bench/bench_formats" "$work/model.json" "$work/rows.f32" "$rows" \
                                  "$work/model.json.ref.f32" "$repeats")
size=$(du -h "$work/model.json" | cut -f1)
echo "### bench_catboost_cats: CatBoost $ver, 1,000 trees of depth 6, 20 numbers + 5 categorical features ($n_ctrs CTRs, $n_names category names), $rows rows, one thread, median of $repeats"
echo
echo "| | load | rows/s | ours / CatBoost | max abs diff |"
echo "|---|---:|---:|---:|---:|"
awk -v ll="$lload" -v ldf="$ldf" -v lp="$lpool" -v ol="$oload" -v orps="$orps" -v n="$rows" -v d="$diff" -v s="$size" 'BEGIN {
    printf "| CatBoost `predict(DataFrame)` (strings hashed in the call) | %.0f ms | %.0f | %.2fx | |\n", ll * 1000, n / ldf, orps / (n / ldf)
    printf "| CatBoost `predict(Pool)` (strings hashed before) | | %.0f | %.2fx | |\n", n / lp, orps / (n / lp)
    printf "| pg_gpuscore core (codes; the JSON file is %s) | %.0f ms | %.0f | | %s |\n", s, ol * 1000, orps, d
}'
echo
echo "Ours: gs_model_predict on 65,536-row column-major chunks of category codes (transposes"
echo "included); in SQL the glue turns each text value into its code first (bench_categories.sh"
echo "measures that).  CatBoost: its predict of probabilities, thread_count=1."
