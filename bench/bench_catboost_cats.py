#!/usr/bin/env python3
"""bench_catboost_cats.py WORK N_ROWS REPEATS -- for bench_catboost_cats.sh: trains (once, fixed
seeds) a CatBoost classifier of 1,000 symmetric trees of depth 6 over 20 numbers and 5
categorical features (mcc 400 categories, merchant 5,000, country 60, device 8, channel 4: CTRs
of single categories and of combinations, one-hot channel), saved as JSON with its pool; writes
N_ROWS held-out rows as codes (rows.f32, NaN for a name the file lacks) and times CatBoost's
predict of P(class 1), one thread: on a DataFrame of the strings (what a user calls) and on a
Pool built beforehand (its hashing of the strings not timed).  Prints
"load_s predict_df_s predict_pool_s" and writes model.json.ref.f32."""
import json
import os
import sys

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures"))
from bench_formats import median_time  # noqa: E402
from catboost_known import feature_names  # noqa: E402

N_NUM = 20
CATS = [("mcc", 400), ("merchant", 5000), ("country", 60), ("device", 8), ("channel", 4)]


def synth(n, rng):
    df = pd.DataFrame({"x%d" % j: rng.normal(size=n).astype(np.float32) for j in range(N_NUM)})
    df["x0"] = np.abs(df["x0"]) * 120.0
    codes = {}
    for name, k in CATS:
        # skewed, as real categories are: a few frequent, a long tail
        c = np.minimum(rng.zipf(1.3, n) - 1, k - 1)
        codes[name] = c
        df[name] = ["%s%d" % (name[0], v) for v in c]
    logit = (0.01 * df["x0"] - 1.5 + 0.6 * df["x1"] * df["x2"] + 0.8 * (codes["mcc"] % 7 == 3)
             + 1.2 * ((codes["country"] == 5) & (codes["device"] == 2)) + 0.5 * (codes["merchant"] % 11 == 0))
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    df.loc[rng.random(n) < 0.05, "x3"] = np.nan
    return df, y


def main():
    import catboost as cb
    out, n_rows, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "model.json")
    names = [c for c, _ in CATS]
    if not os.path.exists(path):
        df, y = synth(60000, np.random.default_rng(7))
        pool = cb.Pool(df, y, cat_features=names)
        m = cb.CatBoostClassifier(iterations=1000, depth=6, learning_rate=0.05, one_hot_max_size=4,
                                  thread_count=2, random_seed=1, verbose=0, allow_writing_files=False)
        m.fit(pool)
        m.save_model(path, format="json", pool=pool)
    doc = json.load(open(path))
    # each category its code among its feature's names, as gpu_category_code gives it
    per = feature_names(doc)
    index = {f["feature_name"]: f["feature_index"] for f in doc["features_info"]["categorical_features"]}
    te, _ = synth(n_rows, np.random.default_rng(20261127))
    X = np.zeros(te.shape, np.float32)
    for j, col in enumerate(te.columns):
        if col in names:
            code = {n: i for i, n in enumerate(per[index[col]])}
            X[:, j] = [code.get(v, np.nan) for v in te[col]]
        else:
            X[:, j] = te[col].astype(np.float32)
    X.tofile(os.path.join(out, "rows.f32"))

    def load():
        m = cb.CatBoost()
        m.load_model(path, format="json")
        return m
    load_s = median_time(load, repeats)
    m = load()
    ref = m.predict(te, prediction_type="Probability", thread_count=1)[:, 1]
    np.asarray(ref, np.float32).tofile(path + ".ref.f32")
    df_s = median_time(lambda: m.predict(te, prediction_type="Probability", thread_count=1), repeats)
    pool = cb.Pool(te, cat_features=names)
    pool_s = median_time(lambda: m.predict(pool, prediction_type="Probability", thread_count=1), repeats)
    print("%.6f %.6f %.6f %s %d %d" % (load_s, df_s, pool_s, cb.__version__,
                                       len(doc["features_info"]["ctrs"]),
                                       len(doc["features_info"]["cat_features_hash"])))


if __name__ == "__main__":
    main()
