"""bench_formats.py: the libraries' side of bench/bench_formats.sh.

Run in the venv of tests/fixtures/make_venv_onnx_trees.sh (XGBoost 3.2,
LightGBM 4.7, onnxmltools, onnxruntime; pinned there):

    VENV/bin/python bench/bench_formats.py OUT_DIR N_ROWS REPEATS

1. Trains, from fixed seeds, on 50,000 synthetic rows of bench/make_models.py's
   distribution (30 features, ~5% NaN), one 2,000-tree binary:logistic model
   per library: XGBoost (max_depth 8, hist) saved as JSON and UBJ, LightGBM
   (num_leaves 64, max_depth 8) saved as text and converted to ONNX-ML
   (TreeEnsembleClassifier) with onnxmltools; and a 500-tree LightGBM model
   with linear trees (linear_tree=true, the same shape).  Skipped when
   OUT_DIR has them.
2. Writes N_ROWS scoring rows (rows.f32, row-major float32, ~5% NaN).
3. Times each format's own library, one thread: loading the file (median of
   REPEATS) and scoring all N_ROWS rows in one call (median of REPEATS, after
   one warm-up), and writes its predictions of P(class 1) to
   <model>.ref.f32 for the C side to compare against.
Prints one line per format: "name load_s predict_s rows/s library".
"""
import json
import os
import statistics
import sys
import time

import numpy as np

N_FEATURES = 30
N_TRAIN = 50_000
NAN_RATE = 0.05
N_TREES = 2000
N_LINEAR_TREES = 500           # LightGBM linear trees: slower to train and to score


try:
    import catboost  # noqa: F401  (CatBoost is in the venv only with requirements-catboost.txt)
    HAVE_CATBOOST = True
except ImportError:
    HAVE_CATBOOST = False


def synth(n, rng):
    """Rows and labels of bench/make_models.py's kind of data."""
    x = rng.normal(size=(n, N_FEATURES)).astype(np.float32)
    x[:, 0] = np.abs(x[:, 0]) * 120.0          # an amount
    x[:, 1] = rng.integers(0, 24, size=n)      # an hour
    logit = (0.015 * x[:, 0] - 1.5 + 0.8 * np.sin(x[:, 2]) + 0.6 * x[:, 3] * x[:, 4]
             - 0.5 * (x[:, 1] < 6) + 0.4 * np.tanh(x[:, 5] + x[:, 6]) + 0.3 * x[:, 7] ** 2
             - 0.3 * x[:, 8] + 0.2 * np.abs(x[:, 9] - x[:, 10]) + 0.25 * x[:, 11])
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(np.float32)
    x[rng.random(x.shape) < NAN_RATE] = np.nan
    return x, y


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def train(out):
    import lightgbm as lgb
    import onnxmltools
    import xgboost as xgb
    from onnxmltools.convert.common.data_types import FloatTensorType

    rng = np.random.default_rng(20241124)
    x, y = synth(N_TRAIN, rng)
    if not os.path.exists(os.path.join(out, "xgb2000.ubj")):
        bst = xgb.train({"objective": "binary:logistic", "max_depth": 8, "eta": 0.05,
                         "tree_method": "hist", "nthread": 2, "seed": 7},
                        xgb.DMatrix(x, label=y), num_boost_round=N_TREES)
        bst.save_model(os.path.join(out, "xgb2000.json"))
        bst.save_model(os.path.join(out, "xgb2000.ubj"))
    if not os.path.exists(os.path.join(out, "lgb2000.onnx")):
        booster = lgb.train({"objective": "binary", "num_leaves": 64, "max_depth": 8,
                             "learning_rate": 0.05, "num_threads": 2, "seed": 7,
                             "verbose": -1, "deterministic": True},
                            lgb.Dataset(x, label=y), num_boost_round=N_TREES)
        booster.save_model(os.path.join(out, "lgb2000.txt"))
        onx = onnxmltools.convert_lightgbm(booster, initial_types=[("x", FloatTensorType([None, N_FEATURES]))],
                                           zipmap=False, target_opset=15)
        with open(os.path.join(out, "lgb2000.onnx"), "wb") as f:
            f.write(onx.SerializeToString())
    if HAVE_CATBOOST and not os.path.exists(os.path.join(out, "cb2000.json")):
        import catboost as cb
        m = cb.CatBoostClassifier(iterations=N_TREES, depth=8, learning_rate=0.05, thread_count=2,
                                  random_seed=7, verbose=0, allow_writing_files=False)
        m.fit(x, y)
        m.save_model(os.path.join(out, "cb2000.json"), format="json")
    if not os.path.exists(os.path.join(out, "iforest500.onnx")):
        from sklearn.ensemble import IsolationForest
        from skl2onnx import to_onnx
        iso = IsolationForest(n_estimators=N_LINEAR_TREES, random_state=7).fit(np.nan_to_num(x))
        onx = to_onnx(iso, x[:1], target_opset={"": 17, "ai.onnx.ml": 3})
        with open(os.path.join(out, "iforest500.onnx"), "wb") as f:
            f.write(onx.SerializeToString())
    if not os.path.exists(os.path.join(out, "lgb500_linear.txt")):
        booster = lgb.train({"objective": "binary", "num_leaves": 64, "max_depth": 8,
                             "learning_rate": 0.05, "num_threads": 2, "seed": 7,
                             "verbose": -1, "deterministic": True, "linear_tree": True,
                             "linear_lambda": 0.01},
                            lgb.Dataset(x, label=y), num_boost_round=N_LINEAR_TREES)
        booster.save_model(os.path.join(out, "lgb500_linear.txt"))


def main():
    import lightgbm as lgb
    import onnxruntime as ort
    import xgboost as xgb

    out, n_rows, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.makedirs(out, exist_ok=True)
    train(out)
    rows, _ = synth(n_rows, np.random.default_rng(20241125))
    rows.tofile(os.path.join(out, "rows.f32"))

    def xgb_load(path):
        b = xgb.Booster(model_file=path)
        b.set_param({"nthread": 1})
        return b

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1

    cases = [
        ("xgb2000.json", "xgboost %s" % xgb.__version__, lambda p: xgb_load(p),
         lambda m: m.inplace_predict(rows)),
        ("xgb2000.ubj", "xgboost %s" % xgb.__version__, lambda p: xgb_load(p),
         lambda m: m.inplace_predict(rows)),
        ("lgb2000.txt", "lightgbm %s" % lgb.__version__, lambda p: lgb.Booster(model_file=p),
         lambda m: m.predict(rows, num_threads=1)),
        ("lgb500_linear.txt", "lightgbm %s" % lgb.__version__, lambda p: lgb.Booster(model_file=p),
         lambda m: m.predict(rows, num_threads=1)),
        ("lgb2000.onnx", "onnxruntime %s" % ort.__version__,
         lambda p: ort.InferenceSession(p, so, providers=["CPUExecutionProvider"]),
         lambda m: m.run(None, {"x": rows})[1][:, 1]),
        ("iforest500.onnx", "onnxruntime %s" % ort.__version__,
         lambda p: ort.InferenceSession(p, so, providers=["CPUExecutionProvider"]),
         lambda m: m.run(None, {"X": rows})[1].ravel()),
    ]
    if HAVE_CATBOOST:
        import catboost as cb

        def cb_load(path):
            m = cb.CatBoost()
            m.load_model(path, format="json")
            return m
        cases.append(("cb2000.json", "catboost %s" % cb.__version__, cb_load,
                      lambda m: m.predict(rows, prediction_type="Probability", thread_count=1)[:, 1]))
    for name, lib, load, predict in cases:
        path = os.path.join(out, name)
        load_s = median_time(lambda: load(path), repeats)
        model = load(path)
        ref = np.asarray(predict(model), dtype=np.float32).reshape(n_rows)
        predict_s = median_time(lambda: predict(model), repeats)
        ref.tofile(path + ".ref.f32")
        print("%s %.6f %.6f %.0f %s" % (name, load_s, predict_s, n_rows / predict_s, json.dumps(lib)))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
