#!/usr/bin/env bash
# bench_first_use.sh: what a session pays at its first use of a stored
# tree-ensemble model: parsing the model's bytes, or reading the image of its
# validated forest that gpu_load_model stores beside them (what sessions and
# parallel workers do since forest images exist; src/core/forest/forest_image.h).
# Both sides in one run, by the same program (bench_formats --load-only),
# one thread, median of BENCH_REPEATS.  No server.
#
#   bash bench/bench_first_use.sh            # 5 repeats
#   bash bench/bench_first_use.sh MODEL...   # and these model files too
#
# Models: the fraud-sized shapes of the GPU benchmark (100 trees of depth 6,
# 500 of depth 8, 2,000 of depth 8) on 30 features, trained once by Debian's
# XGBoost (python3-xgboost) into bench/work/first_use and saved as JSON and
# UBJ.  Prints Markdown on stdout.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
repeats=${BENCH_REPEATS:-5}
work=${BENCH_WORK:-$here/work/first_use}
py=${PYTHON:-/usr/bin/python3}

make -s -C "$root" bench/bench_formats >&2
mkdir -p "$work"
echo "== training (once) with $("$py" -c 'import xgboost; print("xgboost", xgboost.__version__)')" >&2
"$py" - "$work" <<'PY' >&2
import os, sys
import numpy as np
import xgboost as xgb
work = sys.argv[1]
rng = np.random.default_rng(7)
X = rng.normal(size=(20000, 30)).astype(np.float32)
y = (X[:, 0] + 0.5 * X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=20000) > 1.2).astype(int)
for trees, depth in ((100, 6), (500, 8), (2000, 8)):
    name = f"xgb_{trees}x{depth}"
    if os.path.exists(f"{work}/{name}.ubj"):
        continue
    b = xgb.train({"objective": "binary:logistic", "max_depth": depth, "eta": 0.05,
                   "tree_method": "hist", "nthread": 2, "seed": 7},
                  xgb.DMatrix(X, label=y), num_boost_round=trees)
    b.save_model(f"{work}/{name}.json")
    b.save_model(f"{work}/{name}.ubj")
    print("trained", name, file=sys.stderr)
PY

echo "### First use of a stored model in a session: parse vs forest image (one thread, median of $repeats)"
echo
echo "| model | file | size | parse | read image | image size | parse / image |"
echo "|---|---|---:|---:|---:|---:|---:|"
files=()
for m in xgb_100x6 xgb_500x8 xgb_2000x8; do
    files+=("$work/$m.json" "$work/$m.ubj")
done
for f in "${files[@]}" "$@"; do
    m=$(basename "${f%.*}")
    read -r parse image bytes < <("$root/bench/bench_formats" --load-only "$f" "$repeats")
    awk -v m="$m" -v f="$(basename "$f")" -v s="$(du -h "$f" | cut -f1)" -v p="$parse" -v i="$image" -v b="$bytes" \
        'BEGIN { printf "| %s | `%s` | %s | %.1f ms | %.2f ms | %.1f MB | %.0fx |\n", m, f, s, p * 1e3, i * 1e3, b / 1e6, p / i }'
done
