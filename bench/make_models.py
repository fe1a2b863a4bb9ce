#!/usr/bin/python3
"""make_models.py: models and input rows for pg_gpuscore's benchmarks.

Run with Debian's /usr/bin/python3 (it has xgboost 1.7.4 and numpy):

    /usr/bin/python3 bench/make_models.py [OUT_DIR]     (default bench/work)

Writes, into OUT_DIR (ignored by git, regenerated on demand):

    m100x6.json   100 trees, max_depth 6, binary:logistic
    m500x8.json   500 trees, max_depth 8, binary:logistic
    rows.f32      1,000,000 rows x 30 features, float32, row-major,
                  little-endian, about 5% NaN (missing)
    rows.meta     one line: "<n_rows> <n_features>"

Both models are trained with tree_method hist and nthread 2 on 50,000
synthetic rows of the same distribution as rows.f32 (30 features, about 5%
NaN, a label that depends non-linearly on a dozen features plus noise).
Every random draw comes from fixed seeds, so the files are the same on every
run with the same numpy/xgboost versions.
"""
import os
import sys

import numpy as np
import xgboost as xgb

N_FEATURES = 30
N_TRAIN = 50_000
N_ROWS = 1_000_000
NAN_RATE = 0.05
SEED_TRAIN = 20240601
SEED_ROWS = 20240602
SEED_XGB = 7

MODELS = [
    # (file name, number of trees, max_depth)
    ("m100x6.json", 100, 6),
    ("m500x8.json", 500, 8),
]


def features(rng, n):
    """n rows of 30 float32 features: mixed scales, about NAN_RATE NaN."""
    x = np.empty((n, N_FEATURES), dtype=np.float32)
    x[:, :10] = rng.normal(0.0, 1.0, size=(n, 10))
    x[:, 10:20] = rng.uniform(-5.0, 5.0, size=(n, 10))
    x[:, 20:25] = rng.exponential(100.0, size=(n, 5))
    x[:, 25:30] = rng.integers(0, 12, size=(n, 5))
    x[rng.random(size=x.shape) < NAN_RATE] = np.nan
    return x


def labels(rng, x):
    """Binary label from a non-linear function of some features plus noise."""
    z = np.nan_to_num(x, nan=0.0).astype(np.float64)
    logit = (1.2 * z[:, 0] - 0.8 * z[:, 1] * z[:, 2]
             + np.sin(z[:, 10]) + 0.3 * np.abs(z[:, 11])
             - 0.01 * z[:, 20] + 0.5 * (z[:, 25] > 6)
             + 0.4 * np.tanh(z[:, 3] * z[:, 12])
             - 0.2 * z[:, 26] + 0.7 * (z[:, 21] > 150) + z[:, 4] ** 2 * 0.2
             - 1.0)
    logit += rng.normal(0.0, 1.0, size=len(z))
    return (logit > 0).astype(np.float32)


def main():
    """Train both models and write them and the benchmark rows."""
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "work")
    os.makedirs(out, exist_ok=True)

    rng = np.random.default_rng(SEED_TRAIN)
    x = features(rng, N_TRAIN)
    y = labels(rng, x)
    dtrain = xgb.DMatrix(x, label=y, missing=np.nan)
    for name, n_trees, depth in MODELS:
        params = {
            "objective": "binary:logistic",
            "tree_method": "hist",
            "max_depth": depth,
            "eta": 0.1,
            "nthread": 2,
            "seed": SEED_XGB,
        }
        booster = xgb.train(params, dtrain, num_boost_round=n_trees)
        path = os.path.join(out, name)
        booster.save_model(path)
        print(f"wrote {path} ({n_trees} trees, max_depth {depth})")

    rows = features(np.random.default_rng(SEED_ROWS), N_ROWS)
    path = os.path.join(out, "rows.f32")
    rows.astype("<f4").tofile(path)
    with open(os.path.join(out, "rows.meta"), "w") as f:
        f.write(f"{N_ROWS} {N_FEATURES}\n")
    print(f"wrote {path} ({N_ROWS} rows x {N_FEATURES} features, "
          f"{np.isnan(rows).mean() * 100:.1f}% NaN)")


if __name__ == "__main__":
    main()
