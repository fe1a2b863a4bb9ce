"""campaign_onnx.py -- the families of the differential campaign (campaign.py) that score ONNX
tree ensembles against onnxruntime: "skl" (scikit-learn forests and boosting converted by
skl2onnx), "iforest" (IsolationForest), "skl-pipe" (the same behind imputers, scalers, encoders
and a ColumnTransformer), "onnx-xgb" / "onnx-lgb" (XGBoost and LightGBM converted by
onnxmltools) and "skl-str" (pipelines over string columns, rows given by name); and the helpers
the network families (campaign_nn.py) share: onnxruntime runs, scikit-learn references, saving.
"""
import json
import os
import sys

import numpy as np

from campaign_common import F32, case_rows, labels

HERE = os.path.dirname(os.path.abspath(__file__))


def ort_run(path, X):
    """onnxruntime's outputs for rows X, one thread: {output name: value}."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    feed, at = {}, 0
    for i in sess.get_inputs():     # several inputs: a DataFrame's columns, side by side
        w = i.shape[1] if len(sess.get_inputs()) > 1 else X.shape[1]
        feed[i.name] = np.ascontiguousarray(X[:, at:at + w])
        at += w
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feed)))


def skl_reference(out, n, clf):
    """A scikit-learn model's onnxruntime outputs as pg_gpuscore scores them: the probabilities
    (a ZipMap's maps as columns in class order) or scores, of two columns the second; or a
    regressor's values."""
    if "output_probability" in out:
        out = {"probabilities": [[m[c] for c in sorted(m)] for m in out["output_probability"]]}
    ref = np.asarray(out.get("probabilities", out.get("variable")), dtype=F32).reshape(n, -1)
    return ref[:, 1:] if clf and ref.shape[1] == 2 else ref


def within_span(Xc, X):
    """Rows held within the data's range widened by its span on each side (NaN kept): the
    extreme rows of case_rows (+-3.4e38) through dense layers only measure float cancellation."""
    lo, hi = np.nanmin(X, axis=0), np.nanmax(X, axis=0)
    return np.where(np.isnan(Xc), Xc, np.clip(Xc, lo - (hi - lo), hi + (hi - lo))).astype(F32)


def ort_scores(path, X):
    import onnx
    out = ort_run(path, X)
    m = onnx.load(path)
    node = [n for n in m.graph.node if n.op_type.startswith("TreeEnsemble")][0]
    if node.op_type != "TreeEnsembleClassifier":
        v = [v for v in out.values() if isinstance(v, np.ndarray) and v.dtype.kind == "f"][0]
        return np.asarray(v, dtype=F32).reshape(len(X), -1)
    prob = np.asarray([v for k, v in out.items() if "prob" in k][0], dtype=F32)
    return prob[:, 1:2] if prob.shape[1] == 2 else prob


def onnx_thresholds(path):
    import onnx
    from onnx import helper
    m = onnx.load(path)
    node = [n for n in m.graph.node if n.op_type.startswith("TreeEnsemble")][0]
    a = {x.name: helper.get_attribute_value(x) for x in node.attribute}
    return [(int(f), v) for f, v, mo in zip(a.get("nodes_featureids", []), a.get("nodes_values", []),
                                            a.get("nodes_modes", [])) if mo != b"LEAF"]


def skl_estimator(r, z):
    """A random scikit-learn tree model and its labels: (model, y, kind, desc)."""
    import sklearn.ensemble as E
    import sklearn.tree as T
    kind = str(r.choice(["rf", "et", "gb", "hgb", "dt"]))
    clf = r.random() < 0.6
    k = int(r.choice([2, 2, 3, 4])) if clf else 0
    y = labels(r, z, "multi", k) if clf else labels(r, z, "reg")
    if clf and k == 2:
        y = labels(r, z, "binary")
    if r.random() < 0.3 and not clf:
        y = np.stack([y, labels(r, -z, "reg")], axis=1)
    depth = int(r.choice([2, 5, 10])) if r.random() < 0.8 else None
    n_est = int(r.choice([1, 10, 50]))
    seed = int(r.integers(1 << 30))
    if kind == "rf":
        m = (E.RandomForestClassifier if clf else E.RandomForestRegressor)(
            n_estimators=n_est, max_depth=depth, random_state=seed)
    elif kind == "et":
        m = (E.ExtraTreesClassifier if clf else E.ExtraTreesRegressor)(
            n_estimators=n_est, max_depth=depth, random_state=seed)
    elif kind == "gb":
        m = (E.GradientBoostingClassifier if clf else E.GradientBoostingRegressor)(
            n_estimators=n_est, max_depth=depth or 3, random_state=seed)
    elif kind == "hgb":
        m = (E.HistGradientBoostingClassifier if clf else E.HistGradientBoostingRegressor)(
            max_iter=n_est, max_depth=depth, random_state=seed)
    else:
        m = (T.DecisionTreeClassifier if clf else T.DecisionTreeRegressor)(
            max_depth=depth, random_state=seed)
    if y.ndim == 2 and kind in ("gb", "hgb"):
        y = y[:, 0]
    desc = "%s %s n_est=%d depth=%s y=%s" % (kind, "clf%d" % k if clf else "reg", n_est, depth, y.shape)
    return m, y, kind, desc


def skl_save(m, X, d):
    """Convert a fitted scikit-learn model or pipeline with skl2onnx; the file's path."""
    from skl2onnx import to_onnx
    last = m.steps[-1][1] if hasattr(m, "steps") else m
    # a classifier without probabilities (LinearSVC...) needs an option of its own named, or
    # skl2onnx offers the pipeline a ZipMap and fails
    opts = ({id(last): {"zipmap": False}} if hasattr(last, "predict_proba") else
            {id(last): {"nocl": False}} if hasattr(last, "classes_") else None)
    onx = to_onnx(m, X[:1], target_opset={"": 17, "ai.onnx.ml": 3}, options=opts)
    path = os.path.join(d, "model.onnx")
    with open(path, "wb") as f:
        f.write(onx.SerializeToString())
    return path


def skl_trial(r, d, X, cats, ncat, z):
    m, y, kind, desc = skl_estimator(r, z)
    ntr = int(len(X) * 0.8)
    Xtr = X[:ntr]
    if kind == "gb":   # no NaN support in GradientBoosting
        Xtr = np.nan_to_num(Xtr)
    m.fit(Xtr, y[:ntr])
    path = skl_save(m, X, d)
    Xte = X[ntr:]
    if kind == "gb":
        Xte = np.nan_to_num(Xte)
    Xc = case_rows(r, Xte, onnx_thresholds(path), [], ncat)
    if kind == "gb":
        Xc = np.nan_to_num(Xc, nan=0.0)
    ref = ort_scores(path, Xc)
    return path, Xc, ref, 1e-5, "skl " + desc


def iforest_trial(r, d, X, cats, ncat, z):
    """A random scikit-learn IsolationForest converted by skl2onnx; the reference is
    onnxruntime's "scores" output (scikit-learn's decision_function)."""
    from sklearn.ensemble import IsolationForest
    ntr = int(len(X) * 0.8)
    n_est = int(r.choice([1, 3, 30, 100, 200]))
    samples = [str(r.choice(["auto"])), int(r.choice([2, 3, 16, 64])), float(r.choice([0.05, 0.5, 1.0]))]
    ms = samples[int(r.integers(3))]
    cont = ["auto", float(r.choice([0.01, 0.1, 0.3]))][int(r.integers(2))]
    boot = bool(r.random() < 0.3)
    m = IsolationForest(n_estimators=n_est, max_samples=ms, contamination=cont, bootstrap=boot,
                        random_state=int(r.integers(1 << 30)))
    m.fit(np.nan_to_num(X[:ntr]))              # scikit-learn refuses NaN
    path = skl_save(m, X, d)
    Xc = case_rows(r, X[ntr:], onnx_thresholds(path), [], ncat)
    ref = ort_scores(path, Xc)
    return path, Xc, ref, 1e-6, "iforest n_est=%d max_samples=%s contamination=%s bootstrap=%s" % (
        n_est, ms, cont, boot)


def skl_pipe_trial(r, d, X, cats, ncat, z):
    """A scikit-learn pipeline: imputers and scalers (or a ColumnTransformer of them) before a
    random tree model, folded into the splits by pg_gpuscore; rows around the raw values the
    preprocessing maps onto the thresholds."""
    fixtures = os.path.join(HERE, "..", "fixtures")
    if fixtures not in sys.path:
        sys.path.insert(0, fixtures)
    from gen_onnx_pipeline_fixtures import invert, tree_columns
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    import sklearn.preprocessing as P
    nf = X.shape[1]

    def steps(impute):
        out = []
        if impute:
            st = str(r.choice(["mean", "median", "most_frequent", "constant"]))
            out.append(SimpleImputer(strategy=st, fill_value=float(np.round(r.normal() * 10, 2))))
        for _ in range(int(r.choice([0, 1, 1, 2]))):
            lo = float(r.normal() * 5)
            out.append(r.choice([P.StandardScaler(with_mean=bool(r.random() < 0.8), with_std=bool(r.random() < 0.9)),
                                 P.RobustScaler(quantile_range=(float(r.uniform(5, 30)), float(r.uniform(70, 95)))),
                                 P.MinMaxScaler(feature_range=(lo, lo + float(r.uniform(0.1, 100)))),
                                 P.MaxAbsScaler()]))
        return out or ["passthrough"]

    m, y, kind, desc = skl_estimator(r, z)
    impute_all = kind == "gb" or r.random() < 0.5     # GradientBoosting cannot train on NaN
    if r.random() < 0.4:
        cols = [int(c) for c in r.permutation(nf)]
        cut = sorted(int(c) for c in r.choice(np.arange(1, nf), size=min(2, nf - 1), replace=False)) \
            if nf > 2 else [1]
        groups = [g for g in np.split(np.array(cols), cut) if len(g)]
        parts = [("g%d" % i, make_pipeline(*s) if s != ["passthrough"] else "passthrough", [int(c) for c in g])
                 for i, g in enumerate(groups[:-1]) for s in [steps(impute_all or r.random() < 0.5)]]
        # (skl2onnx cannot convert a ColumnTransformer after an imputer: impute in the groups)
        remainder = "drop" if impute_all else str(r.choice(["passthrough", "drop"]))
        rest = [int(c) for c in groups[-1]] if len(groups) > 1 else []
        if rest and r.random() < 0.5:
            # a OneHotEncoder of a column of category codes (folded into category splits)
            from sklearn.preprocessing import OneHotEncoder
            c = rest[0]
            kc = int(r.choice([2, 3, 7, 40]))
            X = X.copy()
            X[:, c] = np.where(np.isnan(X[:, c]), np.nan,
                               np.floor(np.abs(np.nan_to_num(X[:, c])) * 7) % kc + int(r.choice([0, 1, 100])))
            drop = [None, "first", "if_binary"][int(r.integers(3))]
            parts.append(("cat", make_pipeline(SimpleImputer(strategy="most_frequent"),
                                               OneHotEncoder(handle_unknown="ignore", drop=drop,
                                                             sparse_output=False)), [c]))
            if remainder == "passthrough":
                remainder = "drop"      # the code column is not passed through as well
        pre = [ColumnTransformer(parts, remainder=remainder)]
        shape = "ColumnTransformer(%s, remainder=%s)" % (", ".join(
            "%d cols: %s" % (len(c), p if p == "passthrough" else "+".join(type(x).__name__ for _, x in p.steps))
            for _, p, c in parts), remainder)
    else:
        pre = [s for s in steps(impute_all) if s != "passthrough"]
        shape = "+".join(type(s).__name__ for s in pre) or "nothing"
    pipe = make_pipeline(*pre, m)
    ntr = int(len(X) * 0.8)
    Xfit = X
    if pre and isinstance(pre[0], ColumnTransformer) and r.random() < 0.5:
        # fitted on a pandas DataFrame: skl2onnx makes one input per column
        import pandas as pd
        names = ["c%d" % j for j in range(nf)]
        Xfit = pd.DataFrame(X, columns=names)
        pre[0].transformers = [(n, p, [names[c] for c in cs]) for n, p, cs in pre[0].transformers]
        shape = "DataFrame " + shape
    pipe.fit(Xfit[:ntr], y[:ntr])
    path = skl_save(pipe, Xfit, d)
    import onnx
    cols = tree_columns(onnx.load(path))
    raw = []
    for f, t in onnx_thresholds(path):
        x0 = invert(cols[f][1], float(F32(t)))
        if x0 is not None:
            v = F32(x0)
            raw += [(cols[f][0], v), (cols[f][0], v + 3 * np.spacing(v)), (cols[f][0], v - 3 * np.spacing(v))]
    Xc = case_rows(r, X[ntr:], raw, [], ncat)
    ref = ort_scores(path, Xc)
    return path, Xc, ref, 1e-5, "skl-pipe %s -> %s" % (shape, desc)


def onnx_gbm_trial(r, d, X, cats, ncat, z, which):
    from onnxmltools.convert.common.data_types import FloatTensorType
    nf = X.shape[1]
    ntr = int(len(X) * 0.8)
    clf = r.random() < 0.7
    k = int(r.choice([2, 2, 3])) if clf else 0
    y = (labels(r, z, "binary") if k == 2 else labels(r, z, "multi", k)) if clf else labels(r, z, "reg")
    n_est = int(r.choice([1, 10, 60]))
    depth = int(r.integers(1, 9))
    if which == "xgb":
        import xgboost as xgb
        from onnxmltools import convert_xgboost
        m = (xgb.XGBClassifier if clf else xgb.XGBRegressor)(
            n_estimators=n_est, max_depth=depth, n_jobs=1, random_state=int(r.integers(1 << 30)),
            base_score=float(r.uniform(0.2, 0.8)) if r.random() < 0.3 else None)
        m.fit(X[:ntr], y[:ntr])
        onx = convert_xgboost(m, initial_types=[("X", FloatTensorType([None, nf]))], target_opset=15)
    else:
        import lightgbm as lgb
        from onnxmltools import convert_lightgbm
        m = (lgb.LGBMClassifier if clf else lgb.LGBMRegressor)(
            n_estimators=n_est, max_depth=depth, num_leaves=int(r.choice([4, 15, 63])),
            n_jobs=1, verbose=-1, random_state=int(r.integers(1 << 30)))
        m.fit(X[:ntr], y[:ntr])
        onx = convert_lightgbm(m, initial_types=[("X", FloatTensorType([None, nf]))],
                               target_opset=15, zipmap=False)
    path = os.path.join(d, "model.onnx")
    with open(path, "wb") as f:
        f.write(onx.SerializeToString())
    Xc = case_rows(r, X[ntr:], onnx_thresholds(path), [], ncat)
    ref = ort_scores(path, Xc)
    desc = "onnx-%s %s n_est=%d depth=%d" % (which, "clf%d" % k if clf else "reg", n_est, depth)
    return path, Xc, ref, 1e-5, desc


WORDS = ["US", "us", "US ", "", "FR", "Côte d'Ivoire", "日本", "a", "A", "a b", "web", "pos", "atm", "0",
         "7995", "-1", "nan", "x" * 40, "é", "e\u0301", "tab\tin", "NG", "BR", "DE", "GB", "mobile"]


def skl_str_trial(r, d, X, cats, ncat, z):
    """A scikit-learn pipeline over a DataFrame with 1-3 string columns (random vocabularies:
    case, blanks, the empty string, non-ASCII, digits), each one-hot encoded
    (handle_unknown="ignore", any drop) or ordinal encoded (unknown_value -1 or -7), beside
    scaled or passed-through numeric columns, before a random model (linear, network or trees),
    converted by skl2onnx (one string input per string column).  Reference: onnxruntime on the
    strings; pg_gpuscore's rows hold what its name lookup gives (the code; an unknown name or
    NULL, given to onnxruntime as a string no encoder knows, no indicator / the unknown_value)."""
    import pandas as pd
    import sklearn.ensemble as E
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.neural_network import MLPClassifier, MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder, StandardScaler
    import warnings
    import onnx
    from onnx import helper
    n = len(X)
    nnum = int(r.integers(1, min(6, X.shape[1]) + 1))
    Xn = np.nan_to_num((np.sign(X[:, :nnum]) * np.log1p(np.abs(X[:, :nnum])))).astype(F32)
    nstr = int(r.integers(1, 4))
    df = pd.DataFrame({"n%d" % j: Xn[:, j] for j in range(nnum)})
    vocab, parts, shape = {}, [], []
    for j in range(nstr):
        words = [str(w) for w in r.choice(WORDS, size=int(r.integers(2, 12)), replace=False)]
        vocab["s%d" % j] = words
        df["s%d" % j] = r.choice(words, n)
    # the label depends on the strings too
    score = z.copy()
    for j in range(nstr):
        w = {v: float(r.normal()) for v in vocab["s%d" % j]}
        score = score + df["s%d" % j].map(w).to_numpy()
    clf = r.random() < 0.7
    y = (score > np.median(score)).astype(int) if clf else score.astype(F32)
    for j in range(nstr):
        c = "s%d" % j
        if r.random() < 0.5:
            drop = [None, "first", "if_binary"][int(r.integers(3))]
            parts.append((c, OneHotEncoder(handle_unknown="ignore", drop=drop, sparse_output=False), [c]))
            shape.append("%s: OneHotEncoder(drop=%s) of %d" % (c, drop, len(vocab[c])))
        else:
            uv = int(r.choice([-1, -7]))
            parts.append((c, OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=uv), [c]))
            shape.append("%s: OrdinalEncoder(unknown_value=%d) of %d" % (c, uv, len(vocab[c])))
    num = ["n%d" % j for j in range(nnum)]
    parts.append(("num", StandardScaler() if r.random() < 0.5 else "passthrough", num))
    kind = str(r.choice(["lin", "mlp", "rf", "et", "gb", "hgb"]))
    seed = int(r.integers(1 << 30))
    est = {"lin": lambda: LogisticRegression(max_iter=300) if clf else Ridge(),
           "mlp": lambda: (MLPClassifier if clf else MLPRegressor)(hidden_layer_sizes=(8,), max_iter=100,
                                                                  random_state=seed),
           "rf": lambda: (E.RandomForestClassifier if clf else E.RandomForestRegressor)(
               n_estimators=8, max_depth=6, random_state=seed),
           "et": lambda: (E.ExtraTreesClassifier if clf else E.ExtraTreesRegressor)(
               n_estimators=8, max_depth=6, random_state=seed),
           "gb": lambda: (E.GradientBoostingClassifier if clf else E.GradientBoostingRegressor)(
               n_estimators=10, max_depth=3, random_state=seed),
           "hgb": lambda: (E.HistGradientBoostingClassifier if clf else E.HistGradientBoostingRegressor)(
               max_iter=10, random_state=seed)}[kind]()
    model = make_pipeline(ColumnTransformer(parts, sparse_threshold=0), est)
    ntr = int(n * 0.8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(df[:ntr], y[:ntr])
    path = skl_save(model, df, d)
    # rows: held out, then unknown names and NULLs in every string column
    rows = df[ntr:].reset_index(drop=True)
    extra = []
    for j in range(nstr):
        for v in ["never-seen", None, "US\u00a0"]:
            e = rows.iloc[int(r.integers(len(rows)))].copy()
            e["s%d" % j] = v
            extra.append(e)
    rows = pd.concat([rows, pd.DataFrame(extra)], ignore_index=True)
    m = onnx.load(path)
    # the encoder reading each string input (through Identity, Reshape, Cast or a Gather of its
    # one column, as skl2onnx writes them now and then)
    src = {i.name: i.name for i in m.graph.input}
    for nd in m.graph.node:
        if nd.op_type in ("Identity", "Reshape", "Cast", "Gather") and nd.input and nd.input[0] in src:
            src[nd.output[0]] = src[nd.input[0]]
    enc = {src[nd.input[0]]: nd for nd in m.graph.node
           if nd.op_type in ("OneHotEncoder", "LabelEncoder") and nd.input[0] in src}
    unknown = "\x00never"
    feed, Xc = {}, np.zeros((len(rows), len(m.graph.input)), dtype=F32)
    for i, inp in enumerate(m.graph.input):
        col = rows[inp.name]
        if inp.type.tensor_type.elem_type == onnx.TensorProto.STRING:
            # (pandas may turn the None of a row into NaN)
            vals = [unknown if v is None or (isinstance(v, float) and v != v) else v for v in col]
            feed[inp.name] = np.array(vals, dtype=object).reshape(-1, 1)
            e = enc[inp.name]
            a = {x.name: helper.get_attribute_value(x) for x in e.attribute}
            if e.op_type == "OneHotEncoder":
                names = [b.decode() for b in a["cats_strings"]]
                Xc[:, i] = [names.index(v) if v in names else np.nan for v in vals]
            else:
                code = {b.decode(): v for b, v in zip(a["keys_strings"], a["values_int64s"])}
                Xc[:, i] = [code.get(v, a.get("default_int64", -1)) for v in vals]
        else:
            feed[inp.name] = col.to_numpy(dtype=F32).reshape(-1, 1)
            Xc[:, i] = feed[inp.name][:, 0]
    # the names pg_gpuscore must keep: the encoder's categories in code order
    names = []
    for inp in m.graph.input:
        if inp.type.tensor_type.elem_type != onnx.TensorProto.STRING:
            names.append(None)
            continue
        a = {x.name: helper.get_attribute_value(x) for x in enc[inp.name].attribute}
        if enc[inp.name].op_type == "OneHotEncoder":
            names.append([b.decode() for b in a["cats_strings"]])
        else:
            names.append([k.decode() for k, _ in sorted(zip(a["keys_strings"], a["values_int64s"]),
                                                        key=lambda kv: kv[1])])
    with open(os.path.join(d, "names.catnames"), "w") as f:
        json.dump(names, f)
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    out = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feed)))
    ref = skl_reference(out, len(rows), clf)
    desc = "skl-str %s %s %s; num %s" % ("clf" if clf else "reg", kind, "; ".join(shape),
                                         "scaled" if parts[-1][1] != "passthrough" else "passthrough")
    return path, Xc, ref, 1e-5, desc
