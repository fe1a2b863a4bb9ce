"""campaign_catboost.py -- the "cb" family of the differential campaign (campaign.py): a random
CatBoost model of the trial's numerical rows, saved as JSON (save_model(..., format="json")),
scored by CatBoost's own predict (predict_proba's probabilities for classifiers, exp for Poisson
and Tweedie, the raw value otherwise), and explained by its get_feature_importance(type=
"ShapValues") where CatBoost explains the model alone (scale 1, no value in a leaf that no
training row reached).

Drawn: the loss function (classification, Focal, multi-class, one-vs-all, multi-label
MultiLogloss, regression losses, Poisson, Tweedie, MultiRMSE, Cox survival, a ranking loss), the grow policy (symmetric trees, Depthwise, Lossguide),
depth or leaves, border_count, nan_mode (Min or Max), learning rate, l2_leaf_reg, rounds,
boost_from_average, and in a tenth of the trials a scale and bias (set_scale_and_bias). The
case rows add rows on, just above and just below the model's borders (CatBoost goes right when
x > border). l2_leaf_reg is never 0: with 0, Huber models diverge to leaves of 1e21 whose sums
cancel to noise (CatBoost's own double sums are off by 1e5 there; pg_gpuscore keeps leaves to
48 bits). Category columns of the data are plain numbers here; family "cb-cat" (cb_cat_trial)
makes them CatBoost categorical features.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
from catboost_known import feature_names, known_hashes  # noqa: E402


def unreached_values(doc):
    """Whether a CatBoost JSON model has a leaf of weight 0 whose value is not 0."""
    for t in doc.get("oblivious_trees", []):
        w, v = t["leaf_weights"], t["leaf_values"]
        dim = len(v) // max(len(w), 1)
        if any(w[i] == 0 and any(v[i * dim:(i + 1) * dim]) for i in range(len(w))):
            return True
    stack = list(doc.get("trees", []))
    while stack:
        n = stack.pop()
        if "split" in n:
            stack += [n["left"], n["right"]]
        elif n.get("weight", 1) == 0 and any(np.atleast_1d(n["value"])):
            return True
    return False


def cb_trial(r, d, X, cats, ncat, z, h):
    """One trial; h is the campaign module (labels, case_rows, ROUNDS)."""
    import catboost as cb
    loss = str(r.choice(["Logloss", "Logloss", "CrossEntropy", "MultiClass", "MultiClassOneVsAll",
                         "RMSE", "RMSE", "MAE", "Quantile", "Poisson", "Tweedie", "MAPE",
                         "Huber", "Expectile", "MultiRMSE", "YetiRank", "Focal", "MultiLogloss",
                         "Cox"]))
    policy = str(r.choice(["SymmetricTree", "SymmetricTree", "Depthwise", "Lossguide"]))
    p = {"thread_count": 1, "random_seed": int(r.integers(1 << 30)), "verbose": 0,
         "allow_writing_files": False, "iterations": int(r.choice(h.ROUNDS)),
         "learning_rate": float(r.uniform(0.03, 0.5)), "grow_policy": policy,
         "border_count": int(r.choice([1, 8, 32, 254])), "l2_leaf_reg": float(r.choice([0.5, 3.0, 10.0])),
         "nan_mode": str(r.choice(["Min", "Max"]))}
    if policy == "Lossguide":
        p["max_leaves"] = int(r.choice([2, 7, 31, 64]))
    else:
        p["depth"] = int(r.integers(1, 11))
    if loss in ("RMSE", "MAE", "Quantile", "MAPE") and r.random() < 0.5:
        p["boost_from_average"] = bool(r.random() < 0.5)
    ntr = int(len(X) * 0.8)
    kind = "RawFormulaVal"
    k = int(r.integers(3, 6))
    if loss in ("Logloss", "CrossEntropy", "Focal"):
        y = h.labels(r, z, "binary" if loss != "CrossEntropy" else "unit")
        kind = "Probability"
    elif loss == "MultiLogloss":
        y = np.stack([h.labels(r, z * s, "binary") for s in (1.0, -0.5, 2.0)[:int(r.integers(2, 4))]],
                     axis=1)
        kind = "Probability"
    elif loss == "Cox":   # survival times, negative where censored
        y = (1.0 + h.labels(r, z, "positive")) * np.where(r.random(len(z)) < 0.7, 1.0, -1.0)
    elif loss.startswith("MultiClass"):
        y = h.labels(r, z, "multi", k)
        kind = "Probability"
    elif loss == "Poisson":
        y = h.labels(r, z, "count")
        kind = "Exponent"
    elif loss in ("Tweedie", "MAPE"):
        y = h.labels(r, z, "positive")
        kind = "Exponent" if loss == "Tweedie" else kind
    elif loss == "MultiRMSE":
        y = np.c_[h.labels(r, z, "reg"), h.labels(r, -z, "reg")]
    elif loss == "YetiRank":
        y = np.clip(np.round(h.labels(r, z, "unit") * 4), 0, 4)
    else:
        y = h.labels(r, z, "reg")
    full = {"Quantile": "Quantile:alpha=%.2f" % r.uniform(0.1, 0.9),
            "Tweedie": "Tweedie:variance_power=%.2f" % r.uniform(1.1, 1.9),
            "Huber": "Huber:delta=%.2f" % r.uniform(0.5, 5.0),
            "Expectile": "Expectile:alpha=%.2f" % r.uniform(0.1, 0.9),
            "Focal": "Focal:focal_alpha=%.2f;focal_gamma=%.1f" % (r.uniform(0.1, 0.9),
                                                                 r.uniform(0.5, 4.0))}.get(loss, loss)
    p["loss_function"] = full
    if loss == "YetiRank":
        m = cb.CatBoostRanker(**p)
        m.fit(X[:ntr], y[:ntr], group_id=np.arange(ntr) // 10)
    elif kind == "Probability":
        m = cb.CatBoostClassifier(**p)
        m.fit(X[:ntr], y[:ntr])
    else:
        m = cb.CatBoostRegressor(**p)
        m.fit(X[:ntr], y[:ntr])
    if r.random() < 0.1:
        scale, bias = m.get_scale_and_bias()
        nb = len(bias) if hasattr(bias, "__len__") else 1
        m.set_scale_and_bias(float(r.uniform(0.3, 2.0)), [float(b) for b in r.normal(size=nb)])
        p["scale_and_bias"] = "set"
    path = os.path.join(d, "model.json")
    m.save_model(path, format="json")
    doc = json.load(open(path))
    flat = {f["feature_index"]: f["flat_feature_index"] for f in doc["features_info"]["float_features"]}
    th = []
    stack = list(doc.get("trees", []))
    for t in doc.get("oblivious_trees", []):
        th += [(flat[s["float_feature_index"]], s["border"]) for s in t["splits"]]
    while stack:
        n = stack.pop()
        if "split" in n:
            th.append((flat[n["split"]["float_feature_index"]], n["split"]["border"]))
            stack += [n["left"], n["right"]]
    Xc = h.case_rows(r, X[ntr:], th, [], ncat)
    back = cb.CatBoost()
    back.load_model(path, format="json")
    ref = back.predict(Xc, prediction_type=kind)
    if kind == "Probability" and ref.ndim == 2 and loss in ("Logloss", "CrossEntropy", "Focal"):
        ref = ref[:, 1]
    # CatBoost's ShapValues for the case rows (diff_score compares gpu_explain's engine), where
    # CatBoost computes them from the model alone: scale 1 and no value in a leaf that no training
    # row reached (it weighs the leaves by a dataset's rows otherwise; the loader refuses both)
    if "scale_and_bias" not in p and not unreached_values(doc):
        c = back.get_feature_importance(cb.Pool(Xc), type="ShapValues", thread_count=1)
        h.write_contribs(d, c, len(Xc))
    desc = "cb %s %s rounds=%d %s" % (cb.__version__, full, p["iterations"],
                                      json.dumps({k: v for k, v in p.items()
                                                  if k not in ("thread_count", "random_seed", "verbose",
                                                               "allow_writing_files", "loss_function",
                                                               "iterations")}))
    return path, Xc, ref, 1e-6, desc


def cb_cat_trial(r, d, X, cats, ncat, z, h):
    """Family "cb-cat": a random CatBoost model with categorical features (the trial's category
    columns, at least one, as strings "c<code>"; "none" for a NaN), saved as JSON with its
    training pool so that it names its categories (in half the trials without it, the rows'
    names then found by their hashes), and scored by CatBoost's predict on the same strings.
    The codes of the rows are worked out apart from pg_gpuscore (tests/fixtures/catboost_known.py):
    a name's position among its feature's names, or its hash's among the feature's hashes.
    Drawn: the loss (Logloss, MultiClass, RMSE, Poisson), symmetric or Depthwise trees, depth,
    one_hot_max_size, max_ctr_complexity, the simple and combination CTR types (Borders, Buckets,
    Counter) and their priors.  The rows hold each category as its code among its
    feature's names (NaN for a name it lacks: the case rows' odd codes -1, 2.5, 1e7 ... are
    names CatBoost never saw); explained by CatBoost's ShapValues where it explains the model
    alone."""
    import catboost as cb
    import pandas as pd
    X = X.copy()
    if not cats:
        cats = [int(r.integers(X.shape[1]))]
        X[:, cats[0]] = r.integers(0, ncat, len(X))
    loss = str(r.choice(["Logloss", "Logloss", "MultiClass", "RMSE", "Poisson"]))
    kinds = ["Borders", "Buckets", "Counter"]

    def ctr_list():
        picked = [k for k in kinds if r.random() < 0.5] or ["Borders"]
        out = []
        for k in picked:
            if r.random() < 0.3:
                out.append("%s:Prior=%.2f/1" % (k, r.uniform(0, 2)))   # CPU: denominator 1 only
            else:
                out.append(k)
        return out
    p = {"thread_count": 1, "random_seed": int(r.integers(1 << 30)), "verbose": 0,
         "allow_writing_files": False, "iterations": int(r.choice(h.ROUNDS)),
         "learning_rate": float(r.uniform(0.05, 0.5)),
         "grow_policy": str(r.choice(["SymmetricTree", "SymmetricTree", "Depthwise"])),
         "depth": int(r.integers(1, 9)), "nan_mode": str(r.choice(["Min", "Max"])),
         "one_hot_max_size": int(r.choice([1, 2, 4, 10])),
         "max_ctr_complexity": int(r.choice([1, 2, 3, 4])),
         "simple_ctr": ctr_list(), "combinations_ctr": ctr_list(), "loss_function": loss}
    if loss == "Poisson":   # Buckets need class labels
        p["simple_ctr"] = [c for c in p["simple_ctr"] if not c.startswith("Buckets")] or ["Borders"]
        p["combinations_ctr"] = [c for c in p["combinations_ctr"] if not c.startswith("Buckets")] or ["Counter"]
    ntr = int(len(X) * 0.8)
    k = int(r.integers(3, 6))
    kind = "Probability" if loss in ("Logloss", "MultiClass") else "Exponent" if loss == "Poisson" else "RawFormulaVal"
    y = (h.labels(r, z, "binary") if loss == "Logloss" else h.labels(r, z, "multi", k) if loss == "MultiClass"
         else h.labels(r, z, "count") if loss == "Poisson" else h.labels(r, z, "reg"))

    def frame(A):
        df = pd.DataFrame({"f%d" % j: A[:, j].astype(np.float32) for j in range(A.shape[1])})
        for j in cats:
            df["f%d" % j] = ["none" if np.isnan(v) else "c%d" % v if v == int(v) else "c%r" % float(v)
                             for v in A[:, j]]
        return df
    names = ["f%d" % j for j in cats]
    pool = cb.Pool(frame(X[:ntr]), y[:ntr], cat_features=names)
    m = (cb.CatBoostClassifier if kind == "Probability" else cb.CatBoostRegressor)(**p)
    m.fit(pool)
    path = os.path.join(d, "model.json")
    m.save_model(path, format="json", pool=pool)
    doc = json.load(open(path))
    nopool = None
    if r.random() < 0.5:
        # saved without its pool: the codes are positions among the hashes the model knows of
        # each feature (None where they cannot all be known: the file would be refused)
        m.save_model(os.path.join(d, "nopool.json"), format="json")
        hashes, _, readable = known_hashes(json.load(open(os.path.join(d, "nopool.json"))))
        nopool = hashes if readable else None
    flat = {f["feature_index"]: f["flat_feature_index"] for f in doc["features_info"]["float_features"]}
    th = []
    stack = list(doc.get("trees", []))
    for t in doc.get("oblivious_trees", []):
        th += [(flat[s["float_feature_index"]], s["border"]) for s in (t["splits"] or [])
               if s["split_type"] == "FloatFeature"]
    while stack:
        n = stack.pop()
        if "split" in n:
            if n["split"]["split_type"] == "FloatFeature":
                th.append((flat[n["split"]["float_feature_index"]], n["split"]["border"]))
            stack += [n["left"], n["right"]]
    Xc = h.case_rows(r, X[ntr:], th, cats, ncat)
    back = cb.CatBoost()
    back.load_model(path, format="json")
    ref = back.predict(frame(Xc), prediction_type=kind)
    if kind == "Probability" and loss == "Logloss":
        ref = ref[:, 1]
    # CatBoost's ShapValues of the rows (diff_score compares gpu_explain's engine), where CatBoost
    # explains the model alone (no value in a leaf that no training row reached)
    strings = frame(Xc)
    if not unreached_values(doc):
        c = back.get_feature_importance(cb.Pool(strings, cat_features=names), type="ShapValues",
                                        thread_count=1)
        h.write_contribs(d, c, len(Xc))
    # the rows as pg_gpuscore takes them: each category its code in the file's names, or without
    # names its hash's position among the hashes the model knows (CatBoost's hash of the name is
    # the one cat_features_hash gives it; a name it lacks was never seen, so no hash is known)
    names_hash = {e["value"]: e["hash"] for e in doc["features_info"].get("cat_features_hash", [])}
    index = {f["flat_feature_index"]: f["feature_index"] for f in doc["features_info"]["categorical_features"]}
    per = feature_names(doc)
    if nopool is not None:
        path = os.path.join(d, "nopool.json")
    for j in cats:
        if nopool is not None:
            pos = {hv: i for i, hv in enumerate(nopool[index[j]])}
            code = {s: pos[hv] for s, hv in names_hash.items() if hv in pos}
        else:
            code = {s: i for i, s in enumerate(per[index[j]])}
        Xc[:, j] = [code.get(s, np.nan) for s in strings["f%d" % j]]
    desc = "cb-cat %s %s%s rounds=%d cats=%s %s" % (cb.__version__, loss,
                                                  "" if nopool is None else " nopool",
                                                  p["iterations"], cats,
                                                json.dumps({k: v for k, v in p.items()
                                                            if k not in ("thread_count", "random_seed",
                                                                         "verbose", "allow_writing_files",
                                                                         "loss_function", "iterations")}))
    return path, Xc, ref, 1e-6, desc
