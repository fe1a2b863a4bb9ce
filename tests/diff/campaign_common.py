"""campaign_common.py -- the data of the differential campaign (campaign.py) that every family
draws from: a random data set, labels of each kind, the case rows (held-out rows, rows on and just
beside the model's thresholds, special values, odd category codes), and a library's per-feature
contributions written for diff_score.
"""
import os

import numpy as np

F32 = np.float32


def make_data(r, n):
    """Rows of a random shape and a label signal; returns X, cat column indices, n categories,
    and a latent score to make labels from."""
    nf = int(r.integers(3, 41))
    X = np.empty((n, nf), dtype=np.float64)
    for j in range(nf):
        kind = r.choice(["normal", "lognormal", "int", "zeros", "uniform"])
        scale = 10.0 ** r.uniform(-3, 5)
        if kind == "normal":
            X[:, j] = r.normal(size=n) * scale
        elif kind == "lognormal":
            X[:, j] = np.round(r.lognormal(size=n) * scale, 2)
        elif kind == "int":
            X[:, j] = r.integers(0, int(r.integers(2, 50)), n)
        elif kind == "zeros":
            X[:, j] = np.where(r.random(n) < 0.6, 0.0, r.normal(size=n) * scale)
        else:
            X[:, j] = r.uniform(-scale, scale, n)
    ncat = int(r.integers(2, 40))
    cats = [j for j in range(nf) if r.random() < 0.15]
    for j in cats:
        X[:, j] = r.integers(0, ncat, n)
    z = np.zeros(n)
    for j in r.choice(nf, size=min(nf, 4), replace=False):
        col = X[:, j]
        z += r.normal() * (col - col.mean()) / (col.std() + 1e-9)
    for j in cats:
        z += (X[:, j] % 3 == 1) * 1.5
    nan_rate = r.choice([0.0, 0.02, 0.1, 0.3])
    if nan_rate:
        X[r.random((n, nf)) < nan_rate] = np.nan
    return X.astype(F32), cats, ncat, z


def labels(r, z, kind, k=3):
    n = len(z)
    if kind == "binary":
        return (r.random(n) < 1 / (1 + np.exp(-z))).astype(np.float64)
    if kind == "multi":
        return np.digitize(z + r.normal(size=n) * 0.3, np.quantile(z, np.linspace(0, 1, k + 1)[1:-1]))
    if kind == "positive":
        return np.exp(z / max(1.0, np.abs(z).max()) * 2) + r.random(n) * 0.1
    if kind == "count":
        return r.poisson(np.exp(np.clip(z, -3, 3)))
    if kind == "unit":
        return 1 / (1 + np.exp(-z))
    return z * 10 + r.normal(size=n)


def case_rows(r, Xte, thresholds, cats, ncat):
    """Held-out rows; rows on, above and below thresholds; special values; odd categories."""
    nf = Xte.shape[1]

    def some(n):   # n held-out rows, repeated where there are fewer
        return Xte[r.integers(0, len(Xte), n)].copy()
    rows = [Xte[:150]]
    if thresholds:
        pick = [thresholds[i] for i in r.choice(len(thresholds), size=min(60, len(thresholds)))]
        on = np.repeat(some(len(pick)), 3, axis=0)
        for i, (f, v) in enumerate(pick):
            v = F32(v)
            on[3 * i, f] = v
            on[3 * i + 1, f] = np.nextafter(v, F32(np.inf))
            on[3 * i + 2, f] = np.nextafter(v, F32(-np.inf))
        rows.append(on)
    special = some(12)
    vals = [F32(-0.0), F32(0.0), F32(1e-40), F32(-1e-40), F32(3.4e38), F32(-3.4e38), F32(np.nan)]
    for i in range(len(special)):
        mask = r.random(nf) < 0.5
        special[i, mask] = r.choice(vals, size=mask.sum())
    rows.append(special)
    heavy = some(20)
    heavy[r.random(heavy.shape) < 0.7] = np.nan
    rows.append(heavy)
    rows.append(np.full((1, nf), np.nan, dtype=F32))
    with np.errstate(over="ignore"):   # a LightGBM threshold past FLT_MAX is inf here
        X = np.vstack(rows).astype(F32)
    if cats:
        odd = X[:12].copy()
        for i in range(len(odd)):
            for j in cats:
                odd[i, j] = r.choice([ncat, ncat + 7, -1, 2.5, 0, 1e7, np.nan])
        X = np.vstack([X, odd]).astype(F32)
    # nextafter of a threshold at FLT_MAX: the glue never passes an infinity (22003)
    X[np.isinf(X)] = np.copysign(np.finfo(F32).max, X[np.isinf(X)])
    return X


def write_contribs(d, c, n):
    """The library's SHAP contributions for the case rows (contribs.f64, row-major, each row's
    output groups of n_features + 1 values, the bias last): diff_score checks gpu_explain's
    engine against them when the file is there."""
    np.asarray(c, dtype=np.float64).reshape(n, -1).tofile(os.path.join(d, "contribs.f64"))
