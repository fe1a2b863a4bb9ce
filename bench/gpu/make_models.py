#!/usr/bin/python3
"""make_models.py: the models of the GPU kernel benchmark (bench_kernel.cu).

Run with Debian's /usr/bin/python3 (it has xgboost 1.7.4 and numpy):

    /usr/bin/python3 bench/gpu/make_models.py [OUT_DIR]   (default bench/work/gpu)

Writes, into OUT_DIR (ignored by git, regenerated on demand), in XGBoost's
UBJSON format (about half the size of JSON, so the three files can travel
to the lent GPU machine together, well under its 64 MiB limit):

    m100x6.ubj     100 trees, max_depth 6,  binary:logistic
    m500x8.ubj     500 trees, max_depth 8,  binary:logistic
    m2000x10.ubj  2000 trees, max_depth 10, binary:logistic

All three are trained exactly as bench/make_models.py trains its models
(same 30-feature synthetic distribution, about 5% NaN, the same label, the
same fixed seeds, tree_method hist, eta 0.1, nthread 2); the functions that
draw the data are imported from that script so the two can not drift apart.
The benchmark generates its input rows itself, on the device, from the same
distribution (see bench_kernel.cu), so no row file is needed.
"""
import os
import sys

import numpy as np
import xgboost as xgb

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import make_models as base  # noqa: E402  (bench/make_models.py)

MODELS = [
    # (file name, number of trees, max_depth)
    ("m100x6.ubj", 100, 6),
    ("m500x8.ubj", 500, 8),
    ("m2000x10.ubj", 2000, 10),
]


def main():
    """Train the three models and write them as UBJSON."""
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "work", "gpu")
    out = os.path.normpath(out)
    os.makedirs(out, exist_ok=True)

    rng = np.random.default_rng(base.SEED_TRAIN)
    x = base.features(rng, base.N_TRAIN)
    y = base.labels(rng, x)
    dtrain = xgb.DMatrix(x, label=y, missing=np.nan)
    for name, n_trees, depth in MODELS:
        path = os.path.join(out, name)
        params = {
            "objective": "binary:logistic",
            "tree_method": "hist",
            "max_depth": depth,
            "eta": 0.1,
            "nthread": 2,
            "seed": base.SEED_XGB,
        }
        booster = xgb.train(params, dtrain, num_boost_round=n_trees)
        booster.save_model(path)
        print(f"wrote {path} ({n_trees} trees, max_depth {depth}, "
              f"{os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
