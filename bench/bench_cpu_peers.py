"""bench_cpu_peers.py: the peers' side of bench/bench_cpu_peers.sh.

Run in the venv of bench/bench_cpu_peers.sh (bench/requirements-cpu-peers.txt):

    VENV/bin/python bench/bench_cpu_peers.py prepare OUT_DIR N_ROWS [MODEL...]
    VENV/bin/python bench/bench_cpu_peers.py time OUT_DIR N_ROWS REPEATS [MODEL...]
    VENV/bin/python bench/bench_cpu_peers.py loop OUT_DIR N_ROWS MODEL PEER K

prepare: trains, from fixed seeds, on 50,000 synthetic rows of bench_formats.py's
  distribution (30 features, ~5% NaN): XGBoost 100x6, 500x8 and 2000x10
  (binary:logistic, hist), a 500-tree LightGBM model (num_leaves 64) whose
  features 1, 12 and 13 are categorical (24, 10 and 100 categories), and a
  CatBoost classifier of 1,000 symmetric trees of depth 6; then makes what each
  peer needs from those files: ONNX-ML (onnxmltools; CatBoost's own export),
  the TL2cgen shared library (treelite frontend, gcc -O3, branches annotated
  on the training rows, quantized thresholds), the lleaves LLVM build; and
  writes N_ROWS scoring rows (rows.f32, row-major float32, ~5% NaN; the
  categorical columns hold category codes).  Skips what exists, and the
  TL2cgen builds of the models named in TL2CGEN_SKIP (gcc -O3 on the 2000x10
  model's C takes long on 2 cores).
time: per model and peer, one thread: P(class 1) of all N_ROWS rows in one
  call, one warm-up, then the median of REPEATS; the model's own library's
  output goes to <model>.ref.f32 (what bench_formats compares ours against) and
  every peer's output is compared with it.  Timed in CPU seconds of the
  process (time.process_time: all its threads; the machine's cores are
  shared) and in wall seconds.  Prints one tab-separated line per peer:
  "model peer rows/s(cpu) rows/s(wall) max_abs_diff version".
loop: K predictions of MODEL by PEER (for perf stat / instruction counts by
  difference: the count at K=5 less the count at K=1, over 4 x N_ROWS rows).
"""
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

N_FEATURES = 30
N_TRAIN = 50_000
NAN_RATE = 0.05
CAT_FEATURES = {1: 24, 12: 10, 13: 100}   # LightGBM's categorical columns: categories

XGB_MODELS = [("xgb100x6", 100, 6), ("xgb500x8", 500, 8), ("xgb2000x10", 2000, 10)]
MODELS = [m[0] for m in XGB_MODELS] + ["lgb500cat", "cb1000x6"]
FILES = {"xgb100x6": "xgb100x6.json", "xgb500x8": "xgb500x8.json", "xgb2000x10": "xgb2000x10.json",
         "lgb500cat": "lgb500cat.txt", "cb1000x6": "cb1000x6.json"}


def synth(n, rng, cats=False):
    """bench_formats.py's rows and labels; cats: codes in CAT_FEATURES' columns."""
    x = rng.normal(size=(n, N_FEATURES)).astype(np.float32)
    x[:, 0] = np.abs(x[:, 0]) * 120.0
    x[:, 1] = rng.integers(0, 24, size=n)
    logit = (0.015 * x[:, 0] - 1.5 + 0.8 * np.sin(x[:, 2]) + 0.6 * x[:, 3] * x[:, 4]
             - 0.5 * (x[:, 1] < 6) + 0.4 * np.tanh(x[:, 5] + x[:, 6]) + 0.3 * x[:, 7] ** 2
             - 0.3 * x[:, 8] + 0.2 * np.abs(x[:, 9] - x[:, 10]) + 0.25 * x[:, 11])
    if cats:
        c12 = rng.integers(0, CAT_FEATURES[12], size=n)
        c13 = rng.integers(0, CAT_FEATURES[13], size=n)
        logit = logit + 0.5 * np.isin(c12, [1, 4, 7]) - 0.7 * (c13 % 7 == 3) + 0.3 * (x[:, 1] % 5 == 2)
        x[:, 12] = c12
        x[:, 13] = c13
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(np.float32)
    x[rng.random(x.shape) < NAN_RATE] = np.nan
    return x, y


def run(cmd):
    subprocess.run(cmd, check=True)


def prepare(out, n_rows, names):
    import catboost as cb
    import lightgbm as lgb
    import xgboost as xgb

    rng = np.random.default_rng(20241124)
    x, y = synth(N_TRAIN, rng)
    xc, yc = synth(N_TRAIN, np.random.default_rng(20241126), cats=True)
    for name, trees, depth in XGB_MODELS:
        p = os.path.join(out, name + ".json")
        if name in names and not os.path.exists(p):
            print("training %s" % name, file=sys.stderr, flush=True)
            bst = xgb.train({"objective": "binary:logistic", "max_depth": depth, "eta": 0.05,
                             "tree_method": "hist", "nthread": 2, "seed": 7},
                            xgb.DMatrix(x, label=y), num_boost_round=trees)
            bst.save_model(p)
    p = os.path.join(out, "lgb500cat.txt")
    if "lgb500cat" in names and not os.path.exists(p):
        print("training lgb500cat", file=sys.stderr, flush=True)
        booster = lgb.train({"objective": "binary", "num_leaves": 64, "max_depth": 8,
                             "learning_rate": 0.05, "num_threads": 2, "seed": 7, "verbose": -1,
                             "deterministic": True, "max_cat_to_onehot": 4},
                            lgb.Dataset(xc, label=yc, categorical_feature=sorted(CAT_FEATURES)),
                            num_boost_round=500)
        booster.save_model(p)
    p = os.path.join(out, "cb1000x6.json")
    if "cb1000x6" in names and not os.path.exists(p):
        print("training cb1000x6", file=sys.stderr, flush=True)
        m = cb.CatBoostClassifier(iterations=1000, depth=6, learning_rate=0.05, thread_count=2,
                                  random_seed=7, verbose=0, allow_writing_files=False)
        m.fit(x, y.astype(np.int32))       # integer labels: CatBoost's ONNX export refuses float ones
        m.save_model(p, format="json")
        m.save_model(os.path.join(out, "cb1000x6.cbm"))
        try:
            m.save_model(os.path.join(out, "cb1000x6.onnx"), format="onnx")
        except Exception as e:  # noqa: BLE001  (the table says why)
            with open(os.path.join(out, "cb1000x6.onnx.failed"), "w") as f:
                f.write("%s: %s" % (type(e).__name__, str(e).splitlines()[0][:120]))
    for f, seed, cats in (("rows.f32", 20241125, False), ("rows_cat.f32", 20241127, True)):
        p = os.path.join(out, f)
        if not os.path.exists(p) or os.path.getsize(p) != 4 * N_FEATURES * n_rows:
            synth(n_rows, np.random.default_rng(seed), cats=cats)[0].tofile(p + ".tmp")
            os.replace(p + ".tmp", p)
    convert_onnx(out, names)
    p = os.path.join(out, "lgb500cat.lleaves.o")
    if "lgb500cat" in names and not os.path.exists(p):
        import lleaves
        print("compiling lgb500cat with lleaves", file=sys.stderr, flush=True)
        lleaves.Model(model_file=os.path.join(out, "lgb500cat.txt")).compile(cache=p)
    skip = os.environ.get("TL2CGEN_SKIP", "").split()
    for name in ["xgb100x6", "xgb500x8", "lgb500cat", "xgb2000x10"]:
        if name in names and name not in skip:
            compile_tl2cgen(out, name, xc if name == "lgb500cat" else x)


def convert_onnx(out, names):
    import lightgbm as lgb
    import onnxmltools
    import xgboost as xgb
    from onnxmltools.convert.common.data_types import FloatTensorType

    types = [("x", FloatTensorType([None, N_FEATURES]))]
    for name, _, _ in XGB_MODELS:
        p = os.path.join(out, name + ".onnx")
        if name in names and not os.path.exists(p):
            print("converting %s to ONNX" % name, file=sys.stderr, flush=True)
            bst = xgb.Booster(model_file=os.path.join(out, name + ".json"))
            onx = onnxmltools.convert_xgboost(bst, initial_types=types, target_opset=15)
            with open(p, "wb") as f:
                f.write(onx.SerializeToString())
    p = os.path.join(out, "lgb500cat.onnx")
    if "lgb500cat" in names and not os.path.exists(p):
        print("converting lgb500cat to ONNX", file=sys.stderr, flush=True)
        try:
            booster = lgb.Booster(model_file=os.path.join(out, "lgb500cat.txt"))
            onx = onnxmltools.convert_lightgbm(booster, initial_types=types, zipmap=False, target_opset=15)
            with open(p, "wb") as f:
                f.write(onx.SerializeToString())
        except Exception as e:  # noqa: BLE001  (the table says why)
            with open(p + ".failed", "w") as f:
                f.write("%s: %s" % (type(e).__name__, str(e).splitlines()[0][:120]))


def compile_tl2cgen(out, name, train_rows):
    import tl2cgen
    import treelite

    lib = os.path.join(out, name + ".tl2cgen.so")
    if os.path.exists(lib):
        return
    print("compiling %s with TL2cgen (gcc -O3)" % name, file=sys.stderr, flush=True)
    path = os.path.join(out, FILES[name])
    if name.startswith("xgb"):
        model = treelite.frontend.load_xgboost_model(path)
    else:
        model = treelite.frontend.load_lightgbm_model(path)
    ann = os.path.join(out, name + ".tl2cgen.ann.json")
    tl2cgen.annotate_branch(model, tl2cgen.DMatrix(train_rows), path=ann, nthread=2)
    tl2cgen.export_lib(model, toolchain="gcc", libpath=lib, nthread=2,
                       params={"annotate_in": ann, "quantize": 1, "parallel_comp": 8})


def load_peers(out, name, only=None):
    """[(peer, version, predict(input) -> P(class 1), prep(rows) -> input)]; the first is the
    model's own library.  only: build just the peers whose name starts with it."""
    path = os.path.join(out, FILES[name])
    fam = name[:3]
    makers = [("XGBoost inplace_predict", peer_xgb) if fam == "xgb" else
              ("LightGBM predict", peer_lgb) if fam == "lgb" else
              ("CatBoost predict (Pool built beforehand)", peer_cb),
              ("onnxruntime (ONNX-ML trees)", peer_ort),
              ("oneDAL (daal4py model builder)", peer_onedal),
              ("TL2cgen (gcc -O3, annotated, quantized; DMatrix built beforehand)", peer_tl2cgen),
              ("lleaves (LLVM)", peer_lleaves)]
    peers = []
    for label, make in makers:
        if only is None or label.startswith(only):
            try:
                ver, predict, prep = make(out, name, path)
            except Exception as e:  # noqa: BLE001  (the table says why)
                ver, predict, prep = "n/a: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:120]), None, None
            peers.append((label, ver, predict, prep))
    return peers


def ident(r):
    return r


def version(dist):
    from importlib.metadata import version as v
    return v(dist)


def peer_xgb(out, name, path):
    import xgboost as xgb
    b = xgb.Booster(model_file=path)
    b.set_param({"nthread": 1})
    return "xgboost " + xgb.__version__, lambda r: b.inplace_predict(r), ident


def peer_lgb(out, name, path):
    import lightgbm as lgb
    b = lgb.Booster(model_file=path)
    return "lightgbm " + lgb.__version__, lambda r: b.predict(r, num_threads=1), ident


def peer_cb(out, name, path):
    import catboost as cb
    m = cb.CatBoost()
    m.load_model(os.path.join(out, "cb1000x6.cbm"))
    return ("catboost " + cb.__version__,
            lambda p: m.predict(p, prediction_type="Probability", thread_count=1)[:, 1],
            lambda r: cb.Pool(r))


def peer_ort(out, name, path):
    import onnxruntime as ort
    onx = os.path.join(out, name + ".onnx")
    if not os.path.exists(onx):
        why = open(onx + ".failed").read() if os.path.exists(onx + ".failed") else "no ONNX file"
        return "n/a: " + why, None, None
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    s = ort.InferenceSession(onx, so, providers=["CPUExecutionProvider"])
    iname = s.get_inputs()[0].name
    oidx = 1 if len(s.get_outputs()) > 1 else 0

    def ort_run(r):
        p = s.run(None, {iname: r})[oidx]
        if isinstance(p, list):      # a ZipMap (CatBoost's export): one {class: P} per row
            return np.array([d[max(d)] for d in p], dtype=np.float32)
        return p[:, -1] if p.ndim == 2 else p
    return "onnxruntime " + ort.__version__, ort_run, ident


def peer_onedal(out, name, path):
    import daal4py as d4p
    d4p.daalinit(1)
    if name.startswith("xgb"):
        import xgboost as xgb
        src = xgb.Booster(model_file=path)
    elif name.startswith("lgb"):
        import lightgbm as lgb
        src = lgb.Booster(model_file=path)
    else:
        import catboost as cb
        src = cb.CatBoost()
        src.load_model(os.path.join(out, "cb1000x6.cbm"))
    m = d4p.mb.convert_model(src)
    return ("daal4py %s (oneDAL %s)" % (version("scikit-learn-intelex"), version("daal")),
            lambda r: np.asarray(m.predict_proba(r))[:, 1], ident)


def peer_tl2cgen(out, name, path):
    if name.startswith("cb"):
        return "n/a: treelite has no CatBoost frontend", None, None
    lib = os.path.join(out, name + ".tl2cgen.so")
    if not os.path.exists(lib):
        return "n/a: not compiled (see the log)", None, None
    import tl2cgen
    pr = tl2cgen.Predictor(lib, nthread=1)
    return ("tl2cgen %s, treelite %s" % (version("tl2cgen"), version("treelite")),
            lambda d: pr.predict(d).reshape(-1), lambda r: tl2cgen.DMatrix(r))


def peer_lleaves(out, name, path):
    if not name.startswith("lgb"):
        return "n/a: LightGBM models only", None, None
    import lleaves
    lm = lleaves.Model(model_file=path)
    lm.compile(cache=os.path.join(out, name + ".lleaves.o"))
    return ("lleaves %s, llvmlite %s" % (version("lleaves"), version("llvmlite")),
            lambda r: lm.predict(r, n_jobs=1), lambda r: r.astype(np.float64))


def rows_for(out, name, n_rows):
    f = "rows_cat.f32" if name.startswith("lgb") else "rows.f32"
    return np.fromfile(os.path.join(out, f), dtype=np.float32, count=n_rows * N_FEATURES).reshape(n_rows, N_FEATURES)


def time_all(out, n_rows, repeats, names):
    for name in names:
        rows = rows_for(out, name, n_rows)
        ref = None
        for peer, ver, predict, prep in load_peers(out, name):
            if predict is None:
                print("%s\t%s\t-\t-\t-\t%s" % (name, peer, ver), flush=True)
                continue
            inp = prep(rows)
            p = np.asarray(predict(inp), dtype=np.float32).reshape(n_rows)   # warm-up
            times, walls = [], []
            for _ in range(repeats):
                t, w = time.process_time(), time.perf_counter()
                predict(inp)
                times.append(time.process_time() - t)
                walls.append(time.perf_counter() - w)
            if ref is None:
                ref = p
                ref.tofile(os.path.join(out, FILES[name] + ".ref.f32"))
            d = np.abs(p.astype(np.float64) - ref)
            diff = float("inf") if np.isnan(d).any() else float(d.max())
            print("%s\t%s\t%.0f\t%.0f\t%.3g\t%s" % (name, peer, n_rows / statistics.median(times),
                                                     n_rows / statistics.median(walls), diff, ver), flush=True)


def loop(out, n_rows, name, peer_prefix, k):
    rows = rows_for(out, name, n_rows)
    for peer, _, predict, prep in load_peers(out, name, only=peer_prefix):
        if predict is not None:
            inp = prep(rows)
            for _ in range(k):
                predict(inp)
            return
    sys.exit("no peer %r for %s" % (peer_prefix, name))


def main():
    cmd, out, n_rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.makedirs(out, exist_ok=True)
    if cmd == "prepare":
        prepare(out, n_rows, sys.argv[4:] or MODELS)
    elif cmd == "time":
        time_all(out, n_rows, int(sys.argv[4]), sys.argv[5:] or MODELS)
    elif cmd == "loop":
        loop(out, n_rows, sys.argv[4], sys.argv[5], int(sys.argv[6]))
    else:
        sys.exit("usage: see the top of bench_cpu_peers.py")


if __name__ == "__main__":
    main()
