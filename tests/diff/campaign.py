#!/usr/bin/env python3
"""campaign.py -- differential campaign: random models trained by the real libraries, scored by
pg_gpuscore's CPU engine (tests/diff/diff_score) and by the library itself, compared.

The fixtures under tests/fixtures are chosen by hand; this tries what a new user might bring:
each trial draws a data set (3-40 features, scales from 1e-3 to 1e5, integer-valued columns,
exact zeros, NaN rates up to 30 %, categorical columns) and a training configuration at random
(objective, booster, depth or leaf-wise growth, bins, trees, sampling, constraints, ...), trains
with XGBoost, LightGBM, CatBoost (campaign_catboost.py) or scikit-learn (then converted to ONNX
by skl2onnx / onnxmltools: campaign_onnx.py; networks and linear models: campaign_nn.py), saves
the model in one of its formats and scores held-out rows plus rows on, just above and just below
the model's own split thresholds, -0, subnormals, +-FLT_MAX, NaN-heavy rows and odd category
codes. The reference is the library's predict (onnxruntime for ONNX files).

A trial ends as one of
  ok        every output within the tolerance (XGBoost and LightGBM 1e-6, others 1e-5,
            relative above 1)
  refused   gpu_pg_score refused the model: the message is printed, to be checked against the
            documented limits (docs/reference.md, "Model formats")
  DIFF      a wrong score, or batchings that disagree: a bug; the trial's files are kept
  crash     diff_score died (it is built with ASan + UBSan): a bug; files kept
  KERNEL    the CPU emulation of a GPU kernel (tests/unit/test_kernel_emulation, test_binned,
            --models) disagrees with the CPU engine on this model: a bug; files kept
  skipped   the library itself could not train or predict this configuration
A trial is known by its seed (printed): --seed S --only T (and the same --family) reruns trial T.

CI runs it with Debian's XGBoost only (--ci); its findings become fixtures. It builds
tests/diff/diff_score and the kernel emulations first (make). Usage:
    /tmp/pg_gpuscore-venv-onnx-trees/bin/python tests/diff/campaign.py --trials 200 --seed 1
    (the venv of tests/fixtures/make_venv_onnx_trees.sh: XGBoost 3.2, LightGBM 4.7,
    scikit-learn 1.9, skl2onnx, onnxmltools, onnxruntime; with /usr/bin/python3, Debian's
    XGBoost 1.7.4 and the families whose libraries are missing are skipped)
    --family F[,F...] (xgb xgb-es xgb-lin lgb cb skl skl-pipe onnx-xgb onnx-lgb mlp skl-mlp skl-mlp-pipe skl-lin skl-str df-cats torch torch2 torch-skip keras2 keras3 keras3-jax)  only those;  --keep  keep every trial's files
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import campaign_catboost  # noqa: E402
# h.labels, h.case_rows ... for the families that take this module (campaign_catboost)
from campaign_common import F32, case_rows, labels, make_data, write_contribs  # noqa: E402,F401
from campaign_nn import (mlp_trial, skl_mlp_pipe_trial, skl_mlp_trial,  # noqa: E402
                         torch_trial)
from campaign_skip import torch_skip_trial  # noqa: E402
from campaign_keras import keras_trial  # noqa: E402
from campaign_onnx import (WORDS, iforest_trial, onnx_gbm_trial, skl_pipe_trial,  # noqa: E402
                           skl_str_trial, skl_trial)
DIFF = os.path.join(HERE, "diff_score")
# CPU emulations of the GPU kernels (tests/unit), run on every tree model that scored right
EMULATORS = [os.path.join(HERE, "..", "unit", t) for t in ("test_kernel_emulation", "test_binned")]
ROUNDS = [1, 5, 30, 100, 300]       # boosting rounds drawn from (--ci: the first four)
SIZES = [300, 1000, 3000]           # rows drawn from (--ci: the first two)


# ------------------------------------------------------------------------------------- XGBoost


def xgb_trial(r, d, X, cats, ncat, z):
    import xgboost as xgb
    ver = tuple(int(x) for x in xgb.__version__.split(".")[:2])
    objs = ["binary:logistic", "binary:logitraw", "binary:hinge", "reg:squarederror",
            "reg:logistic", "reg:pseudohubererror", "reg:absoluteerror", "count:poisson",
            "reg:gamma", "reg:tweedie", "multi:softprob", "multi:softmax", "rank:pairwise",
            "rank:ndcg", "reg:squaredlogerror", "multi-target"]
    if ver >= (2, 0):
        objs.append("reg:quantileerror")
    obj = str(r.choice(objs))
    p = {"nthread": 1, "seed": int(r.integers(1 << 30)), "max_depth": int(r.integers(1, 11)),
         "eta": float(r.uniform(0.05, 1.0)), "min_child_weight": float(r.choice([0, 1, 5])),
         "subsample": float(r.choice([1.0, 0.7])), "colsample_bytree": float(r.choice([1.0, 0.6])),
         "tree_method": str(r.choice(["hist", "approx", "exact"])),
         "max_bin": int(r.choice([4, 16, 256, 1024])), "lambda": float(r.choice([0, 1, 10]))}
    if r.random() < 0.2:
        p["grow_policy"] = "lossguide"
        p["max_leaves"] = int(r.integers(2, 64))
        p["max_depth"] = int(r.choice([0, 12]))
        p["tree_method"] = "hist"
    if r.random() < 0.2:
        p["booster"] = "dart"
        p["rate_drop"] = float(r.uniform(0, 0.5))
        p["skip_drop"] = float(r.uniform(0, 0.5))
        p["normalize_type"] = str(r.choice(["tree", "forest"]))
    if r.random() < 0.15:
        p["num_parallel_tree"] = int(r.integers(2, 5))
    if r.random() < 0.3:
        p["base_score"] = float(r.uniform(0.1, 0.9))
    use_cat = bool(cats) and p["tree_method"] != "exact" and r.random() < 0.8
    if use_cat:
        p["max_cat_to_onehot"] = int(r.choice([1, 4, 64]))
    y = None
    if obj.startswith("binary") or obj == "reg:logistic":
        y = labels(r, z, "binary") if obj != "reg:logistic" else labels(r, z, "unit")
    elif obj.startswith("multi:"):
        k = int(r.integers(3, 6))
        p["num_class"] = k
        y = labels(r, z, "multi", k)
    elif obj in ("count:poisson",):
        y = labels(r, z, "count")
    elif obj in ("reg:gamma", "reg:tweedie", "reg:squaredlogerror"):
        y = labels(r, z, "positive")
    elif obj.startswith("rank:"):
        y = np.clip(np.round(labels(r, z, "unit") * 4), 0, 4)
    elif obj == "multi-target":
        obj = "reg:squarederror"
        y = np.stack([labels(r, z, "reg"), labels(r, -z, "reg")], axis=1)
        if ver >= (2, 0):
            p["multi_strategy"] = str(r.choice(["one_output_per_tree", "one_output_per_tree",
                                                "multi_output_tree"]))
            if p["multi_strategy"] == "multi_output_tree":
                p["tree_method"] = "hist"
    elif obj == "reg:quantileerror":
        p["quantile_alpha"] = [0.1, 0.5, 0.9] if r.random() < 0.5 else 0.7
        y = labels(r, z, "reg")
    else:
        y = labels(r, z, "reg")
    p["objective"] = obj
    if obj in ("binary:logistic", "binary:logitraw", "binary:hinge", "reg:logistic") \
            and "base_score" not in p and r.random() < 0.3:
        p["scale_pos_weight"] = float(r.uniform(1, 20))
    ft = ["c" if (use_cat and j in cats) else "q" for j in range(X.shape[1])]
    ntr = int(len(X) * 0.8)
    Xtr, ytr, Xte = X[:ntr], y[:ntr], X[ntr:]

    def dm(A, lab=None):
        kw = {"feature_types": ft, "enable_categorical": True} if use_cat else {}
        dmat = xgb.DMatrix(A, lab, missing=np.nan, **kw)
        return dmat

    dtr = dm(Xtr, ytr)
    if obj.startswith("rank:"):
        dtr.set_group([ntr // 4, ntr // 4, ntr - 2 * (ntr // 4)])
    rounds = int(r.choice(ROUNDS))
    bst = xgb.train(p, dtr, rounds)
    ext = str(r.choice(["json", "ubj"])) if ver >= (1, 6) else "json"
    raw = json.loads(bst.save_raw("json"))
    gb = raw["learner"]["gradient_booster"]
    trees = (gb.get("gbtree", gb).get("model", {}) or {}).get("trees", [])
    # XGBoost's legacy binary format, which save_model writes for other names up to 2.0 (it
    # holds no categorical splits and no vector leaves): a third of the UBJ draws, picked by
    # the tree count so that the trial's random draws stay what they were
    if ext == "ubj" and ver < (2, 1) and not use_cat and len(trees) % 3 == 0 \
            and p.get("multi_strategy") != "multi_output_tree":
        ext = "model"
    path = os.path.join(d, "model." + ext)
    bst.save_model(path)
    th = []
    for t in trees:
        st = t.get("split_type", [0] * len(t["split_indices"]))
        for f, v, lc, s in zip(t["split_indices"], t["split_conditions"], t["left_children"], st):
            if lc != -1 and s == 0 and isinstance(v, (int, float)):
                th.append((int(f), v))
    Xc = case_rows(r, Xte, th, cats if use_cat else [], ncat)
    if not use_cat:
        Xc = Xc[:, :]
    ref = bst.predict(dm(Xc))
    if p.get("multi_strategy") != "multi_output_tree":     # XGBoost has no SHAP for vector leaves
        write_contribs(d, bst.predict(dm(Xc), pred_contribs=True), len(Xc))
    desc = "xgb %s %s %s rounds=%d %s" % (xgb.__version__, ext, obj, rounds,
                                          json.dumps({k: v for k, v in p.items()
                                                      if k not in ("nthread", "seed", "objective")}))
    return path, Xc, ref, 1e-6, desc


def xgb_lin_trial(r, d, X, cats, ncat, z):
    """XGBoost's linear booster (gblinear): objectives with an identity, logistic or softmax
    transform, both updaters and their feature selectors, explicit base_score, JSON or UBJ;
    reference: Booster.predict.  Scored as a one-layer network (src/core/frontend/xgboost/xgb_linear.c)."""
    import xgboost as xgb
    ver = tuple(int(x) for x in xgb.__version__.split(".")[:2])
    # XGBoost 1.7's gblinear often diverges to NaN weights under reg:pseudohubererror (refused:
    # "gblinear weight 0 is not a finite float")
    objs = ["binary:logistic", "reg:logistic", "binary:logitraw", "reg:squarederror",
            "multi:softprob", "rank:pairwise"] + (["reg:pseudohubererror"] if ver >= (2, 0) else [])
    obj = str(r.choice(objs))
    updater = str(r.choice(["shotgun", "coord_descent"]))
    p = {"booster": "gblinear", "nthread": 1, "seed": int(r.integers(1 << 30)), "objective": obj,
         "eta": float(r.uniform(0.05, 1.0)), "lambda": float(r.choice([0, 0.1, 1, 10])),
         "alpha": float(r.choice([0, 0.01, 1])), "updater": updater,
         "feature_selector": str(r.choice(["cyclic", "shuffle"] if updater == "shotgun" else
                                          ["cyclic", "shuffle", "random", "greedy", "thrifty"]))}
    if p["feature_selector"] in ("greedy", "thrifty") and r.random() < 0.5:
        p["top_k"] = int(r.integers(1, X.shape[1] + 1))
    if obj in ("binary:logistic", "reg:logistic") and r.random() < 0.3:
        p["base_score"] = float(r.uniform(0.1, 0.9))
    if obj.startswith("binary"):
        y = labels(r, z, "binary")
    elif obj == "reg:logistic":
        y = labels(r, z, "unit")
    elif obj == "multi:softprob":
        p["num_class"] = int(r.integers(3, 6))
        y = labels(r, z, "multi", p["num_class"])
    elif obj.startswith("rank:"):
        y = np.clip(np.round(labels(r, z, "unit") * 4), 0, 4)
    else:
        y = labels(r, z, "reg")
    ntr = int(len(X) * 0.8)
    dtr = xgb.DMatrix(X[:ntr], y[:ntr], missing=np.nan)
    if obj.startswith("rank:"):
        dtr.set_group([ntr // 4, ntr // 4, ntr - 2 * (ntr // 4)])
    rounds = int(r.choice(ROUNDS))
    bst = xgb.train(p, dtr, rounds)
    ext = str(r.choice(["json", "ubj"])) if ver >= (1, 6) else "json"
    path = os.path.join(d, "model." + ext)
    bst.save_model(path)
    Xc = case_rows(r, X[ntr:], [], [], ncat)
    ref = xgb.Booster(model_file=path).predict(xgb.DMatrix(Xc, missing=np.nan))
    desc = "xgb-lin %s %s %s rounds=%d %s" % (xgb.__version__, ext, obj, rounds,
                                              json.dumps({k: v for k, v in p.items()
                                                          if k not in ("nthread", "seed", "objective")}))
    return path, Xc, ref, 1e-6, desc


def xgb_es_trial(r, d, X, cats, ncat, z):
    """XGBoost's scikit-learn API with early stopping (a validation set), saved by the model or
    by its Booster; reference: the model's predict_proba / predict, or Booster.predict."""
    import xgboost as xgb
    kind = str(r.choice(["binary", "multi", "reg"]))
    y = labels(r, z, "binary" if kind == "binary" else "multi" if kind == "multi" else "reg",
               int(r.integers(3, 5)))
    n = len(X)
    tr, ev = slice(0, int(n * 0.6)), slice(int(n * 0.6), int(n * 0.8))
    p = {"n_estimators": int(r.choice([50, 300])), "learning_rate": float(r.uniform(0.1, 0.9)),
         "max_depth": int(r.integers(2, 8)), "n_jobs": 1, "random_state": int(r.integers(1 << 30)),
         "early_stopping_rounds": int(r.choice([3, 10])),
         "num_parallel_tree": int(r.choice([1, 1, 2])), "subsample": float(r.choice([1.0, 0.8]))}
    # a third of the trials fill missing values with -999 and say missing=-999, as fraud
    # tables often do (chosen by a value drawn above: the trial's draws stay the same)
    if p["random_state"] % 3 == 0:
        p["missing"] = -999.0
        X = np.where(np.isnan(X), np.float32(-999.0), X).astype(np.float32)
    cls = xgb.XGBRegressor if kind == "reg" else xgb.XGBClassifier
    m = cls(**p)
    m.fit(X[tr], y[tr], eval_set=[(X[ev], y[ev])], verbose=False)
    Xc = case_rows(r, X[int(n * 0.8):], [], [], ncat)
    from_booster = r.random() < 0.3
    ext = str(r.choice(["json", "ubj"]))
    path = os.path.join(d, "model." + ext)
    if from_booster:
        m.get_booster().save_model(path)
        ref = m.get_booster().predict(xgb.DMatrix(Xc, missing=np.nan))
    else:
        m.save_model(path)
        # the model as its file gives it back (XGBoost 1.x restores `missing`, 2.0+ does not)
        m = cls()
        m.load_model(path)
        ref = m.predict(Xc) if kind == "reg" else m.predict_proba(Xc)
        if kind == "binary":
            ref = ref[:, 1]
    desc = "xgb-es %s %s best_iteration=%d of %d %s %s" % (
        xgb.__version__, kind, m.best_iteration, m.get_booster().num_boosted_rounds(),
        "booster" if from_booster else "model", json.dumps(p))
    return path, Xc, ref, 1e-6, desc


# ------------------------------------------------------------------------------------ LightGBM

def focal_objective(preds, data, gamma=2.0):
    """LightGBM custom objective: the focal loss (gradient and hessian by central
    differences of its closed form)."""
    t = data.get_label()

    def loss(v):
        q = 1.0 / (1.0 + np.exp(-v))
        pt = np.where(t > 0.5, q, 1.0 - q)
        return -((1.0 - pt) ** gamma) * np.log(np.clip(pt, 1e-12, 1.0))
    h = 1e-4
    g = (loss(preds + h) - loss(preds - h)) / (2 * h)
    hess = (loss(preds + h) - 2 * loss(preds) + loss(preds - h)) / (h * h)
    return g, np.maximum(hess, 1e-6)


def lgb_trial(r, d, X, cats, ncat, z):
    import lightgbm as lgb
    obj = str(r.choice(["binary", "cross_entropy", "regression", "regression_l1", "huber", "fair",
                        "quantile", "mape", "poisson", "gamma", "tweedie", "multiclass",
                        "multiclassova", "lambdarank"]))
    p = {"verbose": -1, "num_threads": 1, "seed": int(r.integers(1 << 30)), "deterministic": True,
         "objective": obj, "num_leaves": int(r.choice([2, 7, 31, 127])),
         "max_depth": int(r.choice([-1, 3, 8])), "learning_rate": float(r.uniform(0.05, 0.5)),
         "min_data_in_leaf": int(r.choice([1, 5, 20])), "max_bin": int(r.choice([7, 63, 255, 1023])),
         "use_missing": bool(r.random() < 0.85), "zero_as_missing": bool(r.random() < 0.2),
         "extra_trees": bool(r.random() < 0.15), "min_data_per_group": 5, "cat_smooth": 1.0}
    boost = str(r.choice(["gbdt", "gbdt", "dart", "goss", "rf"]))
    if boost == "rf":
        p.update(boosting="rf", bagging_fraction=0.7, bagging_freq=1, feature_fraction=0.8)
    elif boost == "goss":
        p.update(data_sample_strategy="goss")
    else:
        p["boosting"] = boost
    if obj in ("binary", "cross_entropy"):
        y = labels(r, z, "binary" if obj == "binary" else "unit")
    elif obj.startswith("multiclass"):
        p["num_class"] = int(r.integers(3, 6))
        y = labels(r, z, "multi", p["num_class"])
    elif obj in ("poisson",):
        y = labels(r, z, "count")
    elif obj in ("gamma", "tweedie", "mape"):
        y = labels(r, z, "positive")
    elif obj == "lambdarank":
        y = np.clip(np.round(labels(r, z, "unit") * 4), 0, 4).astype(int)
    else:
        y = labels(r, z, "reg")
    if obj == "quantile":
        p["alpha"] = float(r.uniform(0.1, 0.9))
    if obj in ("binary", "multiclassova") and r.random() < 0.3:
        p["sigmoid"] = float(r.choice([0.3, 2.0, 5.0]))
    # a fifth of the binary trials train with a custom objective, the focal loss of
    # imbalanced labels (chosen by the seed drawn above, so no other draw changes): the file
    # then names no objective, and predict gives the raw scores
    if obj == "binary" and p["seed"] % 5 == 0 and boost != "rf":   # rf refuses a callable
        p.pop("sigmoid", None)
        p["objective"] = focal_objective
    # the same way, a third of the cross_entropy trials are cross_entropy_lambda (predict is
    # log(1 + exp(raw))) and a quarter of the regressions that honour reg_sqrt use it (predict
    # is sign(raw) raw^2)
    if obj == "cross_entropy" and p["seed"] % 3 == 0:
        p["objective"] = obj = "cross_entropy_lambda"
    if obj in ("regression", "regression_l1", "fair", "quantile", "mape") and p["seed"] % 4 == 1:
        p["reg_sqrt"] = True
    # and a sixth of the trials train linear trees (a linear model of numerical features in
    # every leaf), which LightGBM refuses with zero_as_missing and with regression_l1
    linear = p["seed"] % 6 == 2 and not p["zero_as_missing"] and obj != "regression_l1"
    if linear:
        p["linear_tree"] = True
        p["linear_lambda"] = float(r.choice([0.0, 0.01, 1.0]))
    ntr = int(len(X) * 0.8)
    use_cat = [j for j in cats if r.random() < 0.8]
    group = None
    if obj == "lambdarank":
        group = [ntr // 4, ntr // 4, ntr - 2 * (ntr // 4)]
    ds = lgb.Dataset(X[:ntr], y[:ntr], group=group, categorical_feature=use_cat,
                     free_raw_data=False)
    rounds = int(r.choice(ROUNDS))
    bst = lgb.train(p, ds, rounds)
    path = os.path.join(d, "model.txt")
    bst.save_model(path)
    th = []

    def walk(n):
        if "split_feature" in n:
            if n.get("decision_type") == "<=":
                th.append((int(n["split_feature"]), n["threshold"]))
            walk(n["left_child"])
            walk(n["right_child"])
    for t in bst.dump_model()["tree_info"]:
        walk(t["tree_structure"])
    Xc = case_rows(r, X[ntr:], th, use_cat, ncat)
    ref = bst.predict(Xc)
    # pred_contrib adds up to raw_score, which neither averages rf trees nor applies the
    # sigmoid parameter; pg_gpuscore's contributions add up to the margin predict transforms.
    # Linear trees have none (LightGBM refuses them, and so does pg_gpuscore).
    if not linear:
        c = np.asarray(bst.predict(Xc, pred_contrib=True), dtype=np.float64)
        if boost == "rf":
            c = c / bst.current_iteration()
        if "sigmoid" in p:
            c = c * p["sigmoid"]
        write_contribs(d, c, len(Xc))
    if callable(p["objective"]):
        obj = "custom (focal loss)"
    desc = "lgb %s %s rounds=%d %s" % (lgb.__version__, obj, rounds,
                                        json.dumps({k: v for k, v in p.items()
                                                    if k not in ("verbose", "num_threads", "seed",
                                                                 "deterministic", "objective")}))
    return path, Xc, ref, 1e-6, desc


# --------------------------------------------------------------- XGBoost and LightGBM by name


def df_cats_trial(r, d, X, cats, ncat, z):
    """XGBoost 3.x (enable_categorical) or LightGBM trained on a pandas DataFrame with 1-3
    category columns (strings from WORDS and random ASCII words, up to 300 categories, or
    integers: negative, large), saved as JSON / UBJ / LightGBM text: the model keeps the
    categories, and pg_gpuscore must keep exactly those names (XGBoost's string names outside
    ASCII excepted: it stores them damaged, so none are kept) and score the codes as the
    library's predict on the DataFrame does (NaN categories: missing)."""
    import pandas as pd
    import warnings
    n = len(X)
    nnum = int(r.integers(1, min(6, X.shape[1]) + 1))
    df = pd.DataFrame({"n%d" % j: X[:, j].astype(F32) for j in range(nnum)})
    which = str(r.choice(["xgb", "lgb"]))
    expect = [None] * nnum
    score = z.copy()
    for j in range(int(r.integers(1, 4))):
        if r.random() < 0.7:
            k = int(r.choice([2, 5, 20, 300]))
            pool = list(dict.fromkeys([str(w) for w in WORDS] +
                                      ["".join(r.choice(list("abcdefghijklmnopqrstuvwxyz _-'\"0123456789"),
                                                        size=int(r.integers(0, 12)))) for _ in range(k)]))
            words = [str(w) for w in r.choice(pool, size=min(k, len(pool)), replace=False)]
        else:
            words = sorted({int(v) for v in r.choice([-5, 0, 1, 7, 4829, 5411, 7995, 2 ** 31 + 3, -(2 ** 40)],
                                                     size=int(r.integers(2, 8)))})
        v = r.choice(np.array(words, dtype=object), n)
        v[r.random(n) < 0.05] = None
        col = pd.Categorical(v)
        df["c%d" % j] = col
        cat_list = list(col.categories)
        text = all(isinstance(c, str) for c in cat_list)
        if which == "xgb" and text and any(ord(ch) > 127 for c in cat_list for ch in c):
            expect.append(None)                              # damaged by XGBoost: not kept
        else:
            expect.append([str(c) for c in cat_list])
        w = {c: float(r.normal()) for c in cat_list}
        score = score + np.array([w.get(c, 0.0) if c is not None else 0.0 for c in v])
    clf = r.random() < 0.7
    y = (score > np.median(score)).astype(int) if clf else score.astype(F32)
    ntr = int(n * 0.8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if which == "xgb":
            import xgboost as xgb
            m = (xgb.XGBClassifier if clf else xgb.XGBRegressor)(
                n_estimators=int(r.choice([5, 30])), max_depth=int(r.choice([3, 6])), enable_categorical=True,
                tree_method="hist", max_cat_to_onehot=int(r.choice([1, 4, 64])), n_jobs=1,
                random_state=int(r.integers(1 << 30)))
            m.fit(df[:ntr], y[:ntr])
            path = os.path.join(d, "model." + str(r.choice(["json", "ubj"])))
            m.save_model(path)
        else:
            import lightgbm as lgb
            m = (lgb.LGBMClassifier if clf else lgb.LGBMRegressor)(
                n_estimators=int(r.choice([5, 30])), num_leaves=int(r.choice([7, 31])), min_child_samples=5,
                min_data_per_group=5, cat_smooth=1, n_jobs=1, verbose=-1, random_state=int(r.integers(1 << 30)))
            m.fit(df[:ntr], y[:ntr])
            path = os.path.join(d, "model.txt")
            m.booster_.save_model(path)
    te = df[ntr:]
    ref = m.predict_proba(te)[:, 1] if clf else m.predict(te)
    damaged = which == "xgb" and any(e is None for e in expect[nnum:])
    cols = []
    for c in df.columns:
        if hasattr(te[c], "cat"):
            codes = te[c].cat.codes.to_numpy().astype(F32)
            codes[codes < 0] = np.nan                       # pandas' code of a missing category
            cols.append(codes)
        else:
            cols.append(te[c].to_numpy(F32))
    Xc = np.stack(cols, axis=1)
    if damaged:
        # XGBoost's own DataFrame predict re-codes by its damaged names and scores some rows
        # with the wrong categories (seed 93); the trees mean the training codes: predict those
        import xgboost as xgb
        dm = xgb.DMatrix(Xc, feature_names=list(df.columns), enable_categorical=True,
                         feature_types=["c" if hasattr(df[c], "cat") else "q" for c in df.columns])
        ref = m.get_booster().predict(dm)
    with open(os.path.join(d, "names.catnames"), "w") as f:
        json.dump(expect, f)
    desc = "df-cats %s %s%s %s" % (which, "clf" if clf else "reg", " (names outside ASCII: ref by codes)"
                                   if damaged else "", "; ".join(
        "%s: %d %s" % (c, len(df[c].cat.categories), "int" if not isinstance(df[c].cat.categories[0], str) else "str")
        for c in df.columns if hasattr(df[c], "cat")))
    return path, Xc.astype(F32), np.asarray(ref, dtype=F32).reshape(len(te), -1), 1e-5 if which == "lgb" else 1e-6, desc


FAMILIES = {
    "xgb": (("xgboost",), xgb_trial),
    "lgb": (("lightgbm",), lgb_trial),
    "xgb-es": (("xgboost", "sklearn"), xgb_es_trial),
    "xgb-lin": (("xgboost",), xgb_lin_trial),
    "skl": (("sklearn", "skl2onnx", "onnxruntime"), skl_trial),
    "skl-pipe": (("sklearn", "skl2onnx", "onnxruntime"), skl_pipe_trial),
    "iforest": (("sklearn", "skl2onnx", "onnxruntime"), iforest_trial),
    "onnx-xgb": (("xgboost", "onnxmltools", "onnxruntime"),
                 lambda *a: onnx_gbm_trial(*a, which="xgb")),
    "onnx-lgb": (("lightgbm", "onnxmltools", "onnxruntime"),
                 lambda *a: onnx_gbm_trial(*a, which="lgb")),
    "mlp": (("onnx", "onnxruntime"), mlp_trial),
    "skl-mlp": (("sklearn", "skl2onnx", "onnxruntime"), skl_mlp_trial),
    "skl-mlp-pipe": (("sklearn", "skl2onnx", "onnxruntime", "pandas"), skl_mlp_pipe_trial),
    "skl-lin": (("sklearn", "skl2onnx", "onnxruntime", "pandas"),
                lambda *a: skl_mlp_pipe_trial(*a, linear=True)),
    "skl-str": (("sklearn", "skl2onnx", "onnxruntime", "pandas"), skl_str_trial),
    "df-cats": (("xgboost", "lightgbm", "pandas"), df_cats_trial),
    "torch": (("torch", "onnx"), torch_trial),
    "torch2": (("torch", "onnx", "onnxscript"), lambda *a: torch_trial(*a, v2=True)),
    "torch-skip": (("torch", "onnx"), torch_skip_trial),
    "keras2": (("tensorflow", "tf2onnx", "keras"), keras_trial),
    "keras3": (("tensorflow", "tf2onnx", "keras"), lambda *a: keras_trial(*a, version=3)),
    "keras3-jax": (("jax", "jax2onnx", "keras"), lambda *a: keras_trial(*a, version=3, backend="jax")),
    "cb": (("catboost",), lambda *a: campaign_catboost.cb_trial(*a, h=sys.modules[__name__])),
    "cb-cat": (("catboost", "pandas"), lambda *a: campaign_catboost.cb_cat_trial(*a, h=sys.modules[__name__])),
}


def available(mods):
    import importlib.util
    return all(importlib.util.find_spec(m) is not None for m in mods)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--family", help="one family or several, comma-separated: " + ",".join(sorted(FAMILIES)))
    ap.add_argument("--work", default=os.path.join(HERE, "work"))
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--only", type=int, help="run only trial number ONLY (0-based) of the seed")
    ap.add_argument("--ci", action="store_true",
                    help="CI: smaller data and fewer rounds, TAP lines, a refused model fails too")
    a = ap.parse_args()
    if a.ci:
        global ROUNDS, SIZES
        ROUNDS, SIZES = ROUNDS[:4], SIZES[:2]
    # (re)build the scorer and the kernel emulations, so a trial never runs a stale build
    root = os.path.dirname(os.path.dirname(HERE))
    if subprocess.run(["make", "-s", "-C", root, "tests/diff/diff_score", "tests/unit/test_kernel_emulation",
                       "tests/unit/test_binned"], stdout=subprocess.DEVNULL).returncode != 0:
        sys.exit("could not build tests/diff/diff_score and the kernel emulations")
    fams = a.family.split(",") if a.family else [f for f in sorted(FAMILIES) if available(FAMILIES[f][0])]
    for f in fams:
        if f not in FAMILIES:
            sys.exit("unknown family %s (families: %s)" % (f, ", ".join(sorted(FAMILIES))))
        if not available(FAMILIES[f][0]):
            sys.exit("family %s needs %s" % (f, ", ".join(FAMILIES[f][0])))
    print("%sfamilies: %s" % ("# " if a.ci else "", " ".join(fams)))
    tally = {}
    for t in range(a.trials):
        if a.only is not None and t != a.only:
            continue
        seed = a.seed * 100003 + t
        r = np.random.default_rng(seed)
        fam = fams[t % len(fams)]
        d = os.path.join(a.work, "%s-%d" % (fam, seed))
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        try:
            X, cats, ncat, z = make_data(r, int(r.choice(SIZES)))
            path, Xc, ref, tol, desc = FAMILIES[fam][1](r, d, X, cats, ncat, z)
        except Exception as e:   # the library refused its own configuration
            where = traceback.extract_tb(e.__traceback__)[-1]
            outcome, desc = "skipped", ""
            msg = "%s: %s (%s:%d)" % (type(e).__name__, str(e).split("\n")[0][:200],
                                      os.path.basename(where.filename), where.lineno)
            shutil.rmtree(d, ignore_errors=True)
        else:
            ref = np.asarray(ref, dtype=F32)
            ref = ref.reshape(len(Xc), -1)
            Xc.astype(F32).tofile(os.path.join(d, "rows.f32"))
            ref.tofile(os.path.join(d, "ref.f32"))
            with open(os.path.join(d, "desc"), "w") as f:
                f.write(desc + "\n")
            names = os.path.join(d, "names.catnames")     # written by families that know the names
            p = subprocess.run([DIFF, path, os.path.join(d, "rows.f32"), str(len(Xc)),
                                os.path.join(d, "ref.f32"), str(ref.shape[1]), "%g" % tol] +
                               ([names] if os.path.exists(names) else []),
                               capture_output=True, text=True)
            out = (p.stdout + p.stderr).strip().split("\n")
            msg = out[0] if p.returncode != 1 else " / ".join(out[:3])
            outcome = {0: "ok", 1: "DIFF", 2: "refused"}.get(p.returncode, "crash")
            if outcome == "crash":
                msg = "exit %d: %s" % (p.returncode, " / ".join(out[-5:]))
            if outcome == "ok" and not path.endswith(".onnx") and fam != "xgb-lin":
                # the GPU kernels' traversal, emulated on the CPU, on the same model
                for emu in [e for e in EMULATORS if os.access(e, os.X_OK)]:
                    q = subprocess.run([emu, "--models", d], capture_output=True, text=True)
                    if q.returncode != 0:
                        outcome = "KERNEL"
                        msg = "%s: %s" % (os.path.basename(emu), " / ".join(
                            [l for l in q.stdout.split("\n") if l.startswith("not ok")][:3] or
                            (q.stdout + q.stderr).strip().split("\n")[-3:]))
                        break
                else:
                    msg += "; GPU kernels emulated: same"
            if outcome in ("ok", "refused", "skipped") and not a.keep:
                shutil.rmtree(d, ignore_errors=True)
        tally[(fam, outcome)] = tally.get((fam, outcome), 0) + 1
        if a.ci:
            good = outcome in ("ok", "skipped")
            print("%s %d - %s trial seed=%d %s: %s%s" % ("ok" if good else "not ok", t + 1, fam, seed,
                                                       outcome, desc[:150], "" if good else "\n# " + msg),
                  flush=True)
            continue
        print("%-8s %-8s seed=%d %s\n         %s" % (fam, outcome, seed, desc, msg), flush=True)
    print("\n# summary:" if a.ci else "\nsummary:")
    for (fam, outcome), n in sorted(tally.items()):
        print("%s  %-8s %-8s %d" % ("#" if a.ci else "", fam, outcome, n))
    bad = ("DIFF", "crash", "KERNEL", "refused") if a.ci else ("DIFF", "crash", "KERNEL")
    return 1 if any(o in bad for (_, o) in tally) else 0


if __name__ == "__main__":
    sys.exit(main())
