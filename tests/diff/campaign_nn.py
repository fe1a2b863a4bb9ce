"""campaign_nn.py -- the families of the differential campaign (campaign.py) that score neural
networks and linear models read from ONNX, against onnxruntime: "mlp" (networks built with the onnx
package), "skl-mlp" (MLPClassifier / MLPRegressor by skl2onnx), "skl-mlp-pipe" and "skl-lin"
(networks and linear models behind scikit-learn pipelines), "torch" / "torch2" (PyTorch's
exporters).
"""
import os

import numpy as np

from campaign_common import F32, case_rows, labels
from campaign_onnx import ort_run, skl_reference, skl_save, within_span


def mlp_trial(r, d, X, cats, ncat, z):
    """A random feed-forward network built with the onnx helper API, as a PyTorch / Keras export
    might look: Gemm (transB 0/1, alpha/beta) or MatMul + Add layers, BatchNormalization, every
    supported activation, Dropout / Identity / no-op Flatten and Reshape, feature scaling by
    Sub / Div / Mul constants, a sigmoid / softmax / identity head; reference onnxruntime."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    nf = X.shape[1]
    nodes, inits = [], []
    cur, width, k = "x", nf, [0]

    def name(p):
        k[0] += 1
        return "%s%d" % (p, k[0])

    def const(arr):
        n = name("c")
        inits.append(numpy_helper.from_array(np.asarray(arr, dtype=F32), n))
        return n

    def node(op, ins, **attrs):
        nonlocal cur
        out = name("t")
        nodes.append(helper.make_node(op, ins, [out], name=name(op.lower()), **attrs))
        cur = out

    # Networks see standardized inputs (features at scales up to 1e5 straight into a dense
    # layer would only measure float cancellation): the scaling is baked into the graph, or
    # the rows are standardized before, as a user would
    col = np.nan_to_num(X, nan=0.0).astype(np.float64)
    mean, std = col.mean(axis=0), col.std(axis=0) + 1e-3
    if r.random() < 0.5:
        node("Sub", [cur, const(mean)])
        div = r.random() < 0.5
        node("Div" if div else "Mul", [cur, const(std if div else 1.0 / std)])
    else:
        X = ((col - mean) / std).astype(F32)
        col = X.astype(np.float64)
    n_layers = int(r.integers(1, 5))
    head = str(r.choice(["sigmoid", "softmax", "identity", "autoencoder"]))
    for i in range(n_layers):
        last = i == n_layers - 1
        n_out = {"sigmoid": 1, "softmax": int(r.integers(2, 6)), "identity": int(r.integers(1, 4)),
                 "autoencoder": nf}[head] if last else int(r.choice([4, 16, 64, 257]))
        w = (r.normal(size=(width, n_out)) / np.sqrt(width)).astype(F32)
        b = (r.normal(size=n_out) * 0.1).astype(F32)
        kind = r.random()
        if kind < 0.4:
            node("Gemm", [cur, const(w.T), const(b)], transB=1)
        elif kind < 0.6:
            node("Gemm", [cur, const(w), const(b)], alpha=float(r.uniform(0.5, 2)),
                 beta=float(r.uniform(0.5, 2)))
        else:
            node("MatMul", [cur, const(w)])
            node("Add", [cur, const(b)])
        width = n_out
        if last:
            break
        if r.random() < 0.3:
            node("BatchNormalization", [cur, const(r.uniform(0.5, 2, width)), const(r.normal(size=width)),
                                        const(r.normal(size=width)), const(r.uniform(0.5, 2, width))],
                 epsilon=float(r.choice([1e-5, 1e-3])))
        act = str(r.choice(["Relu", "LeakyRelu", "Sigmoid", "Tanh", "Elu", "Selu", "Softplus",
                            "Softsign", "HardSigmoid", "PRelu", "Clip"]))
        if act == "LeakyRelu":
            node(act, [cur], alpha=float(r.choice([0.01, 0.2])))
        elif act == "Elu":
            node(act, [cur], alpha=float(r.choice([1.0, 0.3])))
        elif act == "HardSigmoid":
            node(act, [cur], alpha=float(r.choice([0.2, 1 / 6])), beta=0.5)
        elif act == "PRelu":
            node(act, [cur, const(r.uniform(0, 0.3, width) if r.random() < 0.5 else [0.25])])
        elif act == "Clip":
            node(act, [cur, const(np.float32(-1.0)), const(np.float32(r.choice([1.0, 6.0])))])
        else:
            node(act, [cur])
        if r.random() < 0.3:
            node(str(r.choice(["Dropout", "Identity", "Flatten"])), [cur])
        if r.random() < 0.15:
            node("Reshape", [cur, name_shape(inits, name, width)])
    if head == "sigmoid":
        node("Sigmoid", [cur])
    elif head == "softmax":
        node("Softmax", [cur], axis=1)
    xin = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", nf])
    yout = helper.make_tensor_value_info(cur, TensorProto.FLOAT, ["N", width])
    g = helper.make_graph(nodes, "random_mlp", [xin], [yout], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", int(r.choice([13, 15, 17])))],
                          producer_name="campaign")
    m.ir_version = 8
    onnx.checker.check_model(m)
    path = os.path.join(d, "model.onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    # rows: no NaN (a network has no missing values: NULLs are refused), the special values
    Xc = np.nan_to_num(case_rows(r, np.nan_to_num(X[int(len(X) * 0.8):]), [], [], ncat), nan=0.0)
    Xc = within_span(Xc, col)
    ref = list(ort_run(path, Xc).values())[0]
    if head == "autoencoder":
        ref = ((ref.astype(np.float64) - Xc.astype(np.float64)) ** 2).mean(axis=1)
        os.rename(path, path.replace(".onnx", ".ae.onnx"))
        path = path.replace(".onnx", ".ae.onnx")
    desc = "mlp %s layers=%d ops=%s" % (head, n_layers, ",".join(n.op_type for n in nodes))
    return path, Xc, ref, 1e-5, desc


def skl_mlp_trial(r, d, X, cats, ncat, z):
    """A scikit-learn MLP (alone or after a StandardScaler / MinMaxScaler) exported by skl2onnx
    with zipmap off, as a scikit-learn user would; reference onnxruntime."""
    from sklearn.neural_network import MLPClassifier, MLPRegressor
    from sklearn.pipeline import make_pipeline
    from sklearn.impute import SimpleImputer
    from sklearn.preprocessing import MinMaxScaler, StandardScaler
    from skl2onnx import to_onnx
    import warnings
    impute = r.random() < 0.3      # keep the NaNs: a SimpleImputer starts the pipeline
    if not impute:
        X = np.nan_to_num(X, nan=0.0)
    clf = r.random() < 0.7
    k = int(r.choice([2, 2, 3, 5])) if clf else 0
    y = (labels(r, z, "binary") if k == 2 else labels(r, z, "multi", k)) if clf else labels(r, z, "reg")
    hidden = tuple(int(h) for h in r.choice([4, 16, 64], size=int(r.integers(1, 4))))
    act = str(r.choice(["relu", "tanh", "logistic", "identity"]))
    net = (MLPClassifier if clf else MLPRegressor)(hidden_layer_sizes=hidden, activation=act,
                                                    max_iter=int(r.choice([20, 200])),
                                                    random_state=int(r.integers(1 << 30)))
    scaler = "standard" if impute else str(r.choice(["standard", "minmax", "none"]))
    model = net if scaler == "none" else make_pipeline(
        StandardScaler() if scaler == "standard" else MinMaxScaler(), net)
    if impute:
        model = make_pipeline(SimpleImputer(strategy=str(r.choice(["mean", "median", "constant"]))),
                              StandardScaler(), net)
        scaler = "impute+standard"
    if scaler == "none":      # an unscaled network only measures float cancellation
        mean, std = X.mean(axis=0), X.std(axis=0) + 1e-3
        X = ((X - mean) / std).astype(F32)
    ntr = int(len(X) * 0.8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X[:ntr], y[:ntr])
    opts = {id(net): {"zipmap": False}} if clf else None
    onx = to_onnx(model, X[:1].astype(F32), target_opset={"": 17, "ai.onnx.ml": 3}, options=opts)
    path = os.path.join(d, "model.onnx")
    with open(path, "wb") as f:
        f.write(onx.SerializeToString())
    Xte = X[ntr:]
    Xc = case_rows(r, Xte, [], [], ncat)
    if not impute:
        Xc = np.nan_to_num(Xc, nan=0.0)
    Xc = within_span(Xc, X)
    out = ort_run(path, Xc)
    ref = np.asarray(out.get("probabilities", out.get("variable")), dtype=F32).reshape(len(Xc), -1)
    if clf and ref.shape[1] == 2:
        ref = ref[:, 1:]
    desc = "skl-mlp %s %s hidden=%s act=%s scaler=%s" % ("clf%d" % k if clf else "reg", net.n_iter_,
                                                        hidden, act, scaler)
    return path, Xc, ref, 1e-5, desc


def linear_estimator(r, clf, k):
    """A random scikit-learn linear model (family skl-lin) and its description."""
    import sklearn.linear_model as LM
    from sklearn.svm import LinearSVC, LinearSVR
    seed = int(r.integers(1 << 30))
    if clf:
        which = str(r.choice(["logreg", "logreg", "svc", "ridge", "sgd-log", "sgd-hinge", "perceptron"]))
        est = {"logreg": lambda: LM.LogisticRegression(C=float(10 ** r.uniform(-2, 2)), max_iter=500),
               "svc": lambda: LinearSVC(C=float(10 ** r.uniform(-2, 1)), random_state=seed),
               "ridge": lambda: LM.RidgeClassifier(alpha=float(10 ** r.uniform(-2, 2))),
               "sgd-log": lambda: LM.SGDClassifier(loss="log_loss", random_state=seed),
               "sgd-hinge": lambda: LM.SGDClassifier(loss=str(r.choice(["hinge", "modified_huber"])),
                                                     random_state=seed),
               "perceptron": lambda: LM.Perceptron(random_state=seed)}[which]()
    else:
        which = str(r.choice(["linreg", "ridge", "lasso", "enet", "sgd", "svr", "huber"]))
        est = {"linreg": lambda: LM.LinearRegression(),
               "ridge": lambda: LM.Ridge(alpha=float(10 ** r.uniform(-2, 2))),
               "lasso": lambda: LM.Lasso(alpha=float(10 ** r.uniform(-3, 0)), max_iter=5000),
               "enet": lambda: LM.ElasticNet(alpha=float(10 ** r.uniform(-3, 0)), max_iter=5000),
               "sgd": lambda: LM.SGDRegressor(random_state=seed),
               "svr": lambda: LinearSVR(random_state=seed, max_iter=5000),
               "huber": lambda: LM.HuberRegressor(max_iter=500)}[which]()
    return est, which


def skl_mlp_pipe_trial(r, d, X, cats, ncat, z, linear=False):
    """A scikit-learn MLP after a ColumnTransformer: groups of columns, each imputed and scaled
    its own way, the rest dropped or passed through, fitted on an array or a pandas DataFrame
    (one graph input per column); reference onnxruntime.  Rows keep NaN in imputed and dropped
    columns.  linear (family skl-lin): a random linear model instead of the MLP, after the
    same preprocessing or (a third of the trials) a StandardScaler alone."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.neural_network import MLPClassifier, MLPRegressor
    from sklearn.pipeline import make_pipeline
    import sklearn.preprocessing as P
    from sklearn.preprocessing import OneHotEncoder
    import warnings
    nf = X.shape[1]
    clf = r.random() < 0.7
    k = int(r.choice([2, 2, 3, 5])) if clf else 0
    y = (labels(r, z, "binary") if k == 2 else labels(r, z, "multi", k)) if clf else labels(r, z, "reg")
    hidden = tuple(int(h) for h in r.choice([4, 16, 64], size=int(r.integers(1, 3))))
    act = str(r.choice(["relu", "tanh", "logistic"]))
    net = (MLPClassifier if clf else MLPRegressor)(hidden_layer_sizes=hidden, activation=act,
                                                    max_iter=int(r.choice([20, 200])),
                                                    random_state=int(r.integers(1 << 30)))
    if linear:
        net, which = linear_estimator(r, clf, k)
        if not clf and which in ("linreg", "ridge", "lasso", "enet") and r.random() < 0.3:
            y = np.stack([y, np.roll(y, 7) * 0.5 + 1.0], axis=1)      # two targets
            which += " 2 targets"
        if r.random() < 1 / 3:
            return skl_lin_plain(r, d, X, y, net, which, clf, k, ncat)
    cols = [int(c) for c in r.permutation(nf)]
    n_groups = int(r.integers(1, min(3, nf) + 1))
    cut = sorted(int(c) for c in r.choice(np.arange(1, nf), size=min(n_groups, nf - 1), replace=False))
    groups = [[int(c) for c in g] for g in np.split(np.array(cols), cut) if len(g)]
    rest = groups.pop() if len(groups) > 1 else []
    remainder = str(r.choice(["drop", "passthrough"])) if rest else "drop"
    # heavy tails compressed (sign(x) log(1 + |x|), NaN kept): a RobustScaler of a column whose
    # quartiles are close but whose tail reaches 1e4 feeds the network values of 1e5 and more,
    # where a row's first-layer sums cancel and batchings differ by 1e-5 (as onnxruntime's would;
    # see the 'mlp' finding in README.md): that measures float32, not the preprocessing
    X = (np.sign(X) * np.log1p(np.abs(X))).astype(F32)
    # what no imputer reaches is standardized and NaN-free (an MLP cannot train on NaN, and
    # unscaled inputs only measure float cancellation)
    plain = list(rest) if remainder == "passthrough" else []
    parts, shape, sentinel = [], [], []
    for i, g in enumerate(groups):
        # a column in two groups now and then
        if i and r.random() < 0.3:
            g = g + [groups[0][0]]
        steps = []
        if r.random() < 0.7:
            strategy = str(r.choice(["mean", "median", "constant"]))
            if r.random() < 0.25:
                # an imputer of a number: 0 or a -1 sentinel marks what is missing (the rows' NaNs
                # become it; scikit-learn refuses NaN beside another missing value)
                sv = float(r.choice([0.0, -1.0]))
                steps.append(SimpleImputer(missing_values=sv, strategy=strategy))
                sentinel.append((g, sv))
            else:
                steps.append(SimpleImputer(strategy=strategy))
        else:
            plain += g
        for _ in range(int(r.choice([1, 1, 2]))):
            lo = float(r.normal())
            steps.append(r.choice([P.StandardScaler(), P.RobustScaler(),
                                   P.MinMaxScaler(feature_range=(lo, lo + float(r.uniform(0.5, 4)))),
                                   P.MaxAbsScaler()]))
        parts.append(("g%d" % i, make_pipeline(*steps), g))
        shape.append("%d cols: %s" % (len(g), "+".join(
            type(s).__name__ + ("(missing_values=%g)" % s.missing_values
                                if isinstance(s, SimpleImputer) and s.missing_values == s.missing_values else "")
            for s in steps)))
    for g, sv in sentinel:
        X[:, g] = np.nan_to_num(X[:, g], nan=sv)
    for c in set(plain):
        v = np.nan_to_num(X[:, c], nan=0.0)
        X[:, c] = ((v - v.mean()) / (v.std() + 1e-3)).astype(F32)
    if rest and r.random() < 0.5:
        # a OneHotEncoder of 1-2 columns of category codes taken from what is left
        cat = [int(c) for c in r.choice(rest, size=min(len(rest), int(r.integers(1, 3))), replace=False)]
        for c in cat:
            kc = int(r.choice([2, 3, 7, 40]))
            X[:, c] = np.where(np.isnan(X[:, c]), np.nan, np.floor(np.abs(np.nan_to_num(X[:, c])) * 7) % kc +
                               int(r.choice([0, 1, 100])))
        drop = [None, "first", "if_binary"][int(r.integers(3))]
        enc = OneHotEncoder(handle_unknown="ignore", drop=drop, sparse_output=False)
        steps = [SimpleImputer(strategy="most_frequent"), enc] if r.random() < 0.6 else [enc]
        if steps[0] is enc:
            X[:, cat] = np.nan_to_num(X[:, cat], nan=0.0)
        parts.append(("cat", make_pipeline(*steps), cat))
        shape.append("%d cols: %sOneHotEncoder(drop=%s)" % (len(cat), "SimpleImputer+" if len(steps) > 1 else "",
                                                           drop))
        plain = [c for c in plain if c not in cat]
    X = X.astype(F32)
    model = make_pipeline(ColumnTransformer(parts, remainder=remainder), net)
    Xfit, how = X, "array"
    if r.random() < 0.5:
        import pandas as pd
        names = ["c%d" % j for j in range(nf)]
        Xfit, how = pd.DataFrame(X, columns=names), "DataFrame"
        model.steps[0][1].transformers = [(n, p, [names[c] for c in cs])
                                          for n, p, cs in model.steps[0][1].transformers]
    ntr = int(len(X) * 0.8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(Xfit[:ntr], y[:ntr])
    zipmap = clf and r.random() < 0.3 and hasattr(net, "predict_proba")
    if zipmap:
        # skl2onnx's default for a classifier: the probabilities as a ZipMap (a sequence of maps)
        from skl2onnx import to_onnx
        path = os.path.join(d, "model.onnx")
        with open(path, "wb") as f:
            f.write(to_onnx(model, Xfit[:1], target_opset={"": 17, "ai.onnx.ml": 3}).SerializeToString())
        how += " zipmap"
    else:
        path = skl_save(model, Xfit, d)
    Xc = case_rows(r, X[ntr:], [], [], ncat)
    Xc[:, plain] = np.nan_to_num(Xc[:, plain], nan=0.0)
    for g, sv in sentinel:
        Xc[:, g] = np.nan_to_num(Xc[:, g], nan=sv)
    # within the data's range (the widened span of within_span is thousands of robust units)
    lo, hi = np.nanmin(X, axis=0), np.nanmax(X, axis=0)
    Xc = np.where(np.isnan(Xc), Xc, np.clip(Xc, lo, hi)).astype(F32)
    ref = skl_reference(ort_run(path, Xc), len(Xc), clf)
    model_desc = which if linear else "%s hidden=%s act=%s" % (net.n_iter_, hidden, act)
    desc = "%s %s %s ColumnTransformer(%s, remainder=%s) %s" % (
        "skl-lin" if linear else "skl-mlp-pipe", how, "clf%d" % k if clf else "reg", "; ".join(shape),
        remainder, model_desc)
    return path, Xc, ref, 1e-5, desc


def skl_lin_plain(r, d, X, y, est, which, clf, k, ncat):
    """A linear model after a StandardScaler (a SimpleImputer first when the rows keep NaN)."""
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    import warnings
    X = (np.sign(X) * np.log1p(np.abs(X))).astype(F32)
    impute = r.random() < 0.5
    if not impute:
        X = np.nan_to_num(X, nan=0.0)
    steps = ([SimpleImputer(strategy=str(r.choice(["mean", "median"])))] if impute else []) + [StandardScaler()]
    model = make_pipeline(*steps, est)
    ntr = int(len(X) * 0.8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X[:ntr], y[:ntr])
    path = skl_save(model, X, d)
    Xc = case_rows(r, X[ntr:], [], [], ncat)
    if not impute:
        Xc = np.nan_to_num(Xc, nan=0.0)
    lo, hi = np.nanmin(X, axis=0), np.nanmax(X, axis=0)
    Xc = np.where(np.isnan(Xc), Xc, np.clip(Xc, lo, hi)).astype(F32)
    ref = skl_reference(ort_run(path, Xc), len(Xc), clf)
    desc = "skl-lin %s%s %s %s" % ("SimpleImputer+" if impute else "", "StandardScaler",
                                   "clf%d" % k if clf else "reg", which)
    return path, Xc, ref, 1e-5, desc


def torch_trial(r, d, X, cats, ncat, z, v2=False):
    """A random torch.nn.Sequential exported by torch.onnx.export; reference: PyTorch's own
    outputs (the framework that made the model).  v2: PyTorch 2's default exporter
    (dynamo=True, weights inside the file), with the modules it brings in (LayerNorm, Mish,
    Hardswish, tanh GELU, Softplus with beta and threshold, a LogSoftmax head, a squeeze of
    one output to [N])."""
    import torch
    nn = torch.nn
    if v2 and int(torch.__version__.split(".")[0]) < 2:
        raise RuntimeError("torch2 needs PyTorch 2.x, found %s" % torch.__version__)
    torch.manual_seed(int(r.integers(1 << 30)))
    torch.set_num_threads(1)
    nf = X.shape[1]
    col = np.nan_to_num(X, nan=0.0).astype(np.float64)
    X = ((col - col.mean(axis=0)) / (col.std(axis=0) + 1e-3)).astype(F32)
    acts = [lambda: nn.ReLU(), lambda: nn.LeakyReLU(0.1), lambda: nn.Sigmoid(), lambda: nn.Tanh(),
            lambda: nn.ELU(float(r.choice([1.0, 0.5]))), lambda: nn.SELU(), lambda: nn.Softplus(),
            lambda: nn.Softsign(), lambda: nn.Hardsigmoid(), lambda: nn.ReLU6(),
            lambda: nn.Hardtanh(-2.0, 2.0), lambda: nn.GELU(), lambda: nn.SiLU(),
            lambda: nn.GELU(approximate="tanh")]
    if v2:
        acts += [lambda: nn.Mish(), lambda: nn.Hardswish(),
                 lambda: nn.Softplus(beta=float(r.choice([0.5, 2.0])), threshold=float(r.choice([2.0, 5.0])))]
    layers, width = [], nf
    for _ in range(int(r.integers(1, 4))):
        n_out = int(r.choice([8, 32, 100]))
        layers.append(nn.Linear(width, n_out))
        width = n_out
        if r.random() < 0.3:
            layers.append(nn.LayerNorm(width) if r.random() < 0.5 else nn.BatchNorm1d(width))
        layers.append(nn.PReLU(width) if r.random() < 0.1 else acts[int(r.integers(len(acts)))]())
        if r.random() < 0.2:
            layers.append(nn.Dropout(0.3))
    head = str(r.choice(["sigmoid", "softmax", "identity", "autoencoder"] +
                        (["log_softmax", "squeeze"] if v2 else [])))
    n_out = {"sigmoid": 1, "softmax": int(r.integers(2, 5)), "identity": int(r.integers(1, 3)),
             "autoencoder": nf, "log_softmax": int(r.integers(2, 5)), "squeeze": 1}[head]
    layers.append(nn.Linear(width, n_out))
    if head in ("sigmoid", "squeeze"):
        layers.append(nn.Sigmoid())
    elif head == "softmax":
        layers.append(nn.Softmax(dim=1))
    elif head == "log_softmax":
        layers.append(nn.LogSoftmax(dim=1))
    if head == "squeeze":
        layers.append(nn.Flatten(0))
    net = nn.Sequential(*layers)
    xt = torch.from_numpy(X)
    net.train()
    with torch.no_grad():
        net(xt[:200])
    net.eval()
    opset = int(r.choice([18, 20]) if v2 else r.choice([11, 13, 14, 17]))
    path = os.path.join(d, "model.ae.onnx" if head == "autoencoder" else "model.onnx")
    if v2:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(net, (xt[:2],), path, input_names=["x"], output_names=["y"],
                              dynamic_shapes=({0: torch.export.Dim("N")},), dynamo=True,
                              external_data=False, opset_version=opset, verbose=False)
    else:
        torch.onnx.export(net, xt[:1], path, input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "N"}, "y": {0: "N"}}, opset_version=opset)
    Xc = np.clip(np.nan_to_num(case_rows(r, X[int(len(X) * 0.8):], [], [], ncat), nan=0.0), -8, 8).astype(F32)
    with torch.no_grad():
        ref = net(torch.from_numpy(Xc)).numpy()
    if head == "autoencoder":
        ref = ((ref.astype(np.float64) - Xc.astype(np.float64)) ** 2).mean(axis=1)
    desc = "torch %s %sopset %d %s" % (torch.__version__, "dynamo " if v2 else "", opset,
                                       " ".join(type(l).__name__ +
                                                ("(tanh)" if getattr(l, "approximate", "none") == "tanh" else "")
                                                for l in layers))
    return path, Xc, ref, 1e-5, desc


def name_shape(inits, name, width):
    """A Reshape target [-1, width]: a no-op on [N, width]."""
    from onnx import numpy_helper
    n = name("shape")
    inits.append(numpy_helper.from_array(np.asarray([-1, width], dtype=np.int64), n))
    return n
