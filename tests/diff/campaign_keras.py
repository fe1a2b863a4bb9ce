"""campaign_keras.py -- the families "keras2", "keras3" and "keras3-jax" of the differential
campaign (campaign.py): random Keras networks exported to ONNX, against Keras' own outputs.
keras2: Keras 2.15 converted by tf2onnx 1.16.1 (tf2onnx.convert.from_keras; the venv of
tests/fixtures/make_venv_keras.sh); keras3: Keras 3 on TensorFlow, model.export(format="onnx")
(tf2onnx 1.17 inside; the first venv of make_venv_keras3.sh); keras3-jax: Keras 3 on JAX,
model.export(format="onnx") (jax2onnx; its second venv).

A model is a Sequential chain or, half of the time, a functional model with branches: 1-4 blocks
over the current value h, each a Dense layer with a random activation (relu, elu, selu, tanh,
sigmoid, swish, gelu (not on Keras 3's TensorFlow backend, whose exact gelu exports an Erfc node
no one can run), softplus, softsign, hard_sigmoid, linear) or an activation layer (PReLU,
LeakyReLU, ReLU(max_value=6)), now and then BatchNormalization, LayerNormalization (epsilon 1e-3
or 1e-6, scale and center at random), Dropout; in functional models a block may instead be a
residual Add, a wide & deep Add of the input's Dense, a Multiply gate, an Average, a Subtract or
a Concatenate of two branches.  Heads: sigmoid, softmax, identity, or an autoencoder's
reconstruction (its mean squared error scored).  The opset is the exporter's default or one it
takes (keras2 13-18, keras3 15-18, keras3-jax 17, 18, 23).
"""
import os

import numpy as np

from campaign_common import F32, case_rows


def keras_trial(r, d, X, cats, ncat, z, version=2, backend="tensorflow"):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ["KERAS_BACKEND"] = backend
    import keras
    if int(keras.__version__.split(".")[0]) != version or keras.backend.backend() != backend:
        raise RuntimeError("this family needs Keras %d on %s, found %s on %s" % (
            version, backend, keras.__version__, keras.backend.backend()))
    if backend == "tensorflow":
        import tensorflow as tf
        tf.config.threading.set_intra_op_parallelism_threads(1)
    keras.utils.set_random_seed(int(r.integers(1 << 30)))
    L = keras.layers
    nf = X.shape[1]
    col = np.nan_to_num(X, nan=0.0).astype(np.float64)
    X = ((col - col.mean(axis=0)) / (col.std(axis=0) + 1e-3)).astype(F32)
    acts = ["relu", "elu", "selu", "tanh", "sigmoid", "swish", "softplus", "softsign",
            "hard_sigmoid", "linear"] + ([] if version == 3 and backend == "tensorflow" else ["gelu"])
    desc = []

    def dense(h, w):
        a = str(r.choice(acts))
        desc.append("Dense(%s)" % a)
        h = L.Dense(w, activation=a)(h)
        u = r.random()
        if u < 0.15:
            desc.append("PReLU")
            h = L.PReLU()(h)
        elif u < 0.25:
            desc.append("LeakyReLU")
            h = L.LeakyReLU(0.2)(h)
        elif u < 0.3:
            desc.append("ReLU6")
            h = L.ReLU(max_value=6.0)(h)
        u = r.random()
        if u < 0.2:
            desc.append("BN")
            h = L.BatchNormalization()(h)
        elif u < 0.4:
            eps = float(r.choice([1e-3, 1e-6]))
            sc, ce = bool(r.random() < 0.8), bool(r.random() < 0.8)
            desc.append("LN(%g%s%s)" % (eps, "" if sc else ",noscale", "" if ce else ",nocenter"))
            h = L.LayerNormalization(epsilon=eps, scale=sc, center=ce)(h)
        if r.random() < 0.15:
            h = L.Dropout(0.2)(h)
        return h

    functional = r.random() < 0.5
    x = keras.Input(shape=(nf,))
    h = x
    for _ in range(int(r.integers(1, 5))):
        w = int(r.choice([8, 16, 33]))
        kind = str(r.choice(["res", "wide", "gate", "avg", "sub", "cat"])) if functional and r.random() < 0.6 else "dense"
        if kind == "dense":
            h = dense(h, w)
            continue
        desc.append(kind)
        w_h = h.shape[-1]
        if kind == "res":
            h = L.Add()([h, dense(dense(h, w), w_h)])
        elif kind == "wide":
            h = L.Add()([dense(h, w), L.Dense(w)(x)])
        elif kind == "gate":
            h = L.Multiply()([L.Dense(w)(h), L.Dense(w, activation="sigmoid")(h)])
        elif kind == "avg":
            h = L.Average()([dense(h, w), dense(h, w)])
        elif kind == "sub":
            h = L.Subtract()([dense(h, w), dense(h, w)])
        else:
            h = L.Concatenate()([dense(h, w), h] if r.random() < 0.5 else [h, dense(h, int(r.choice([4, 8])))])
    head = str(r.choice(["sigmoid", "softmax", "identity", "autoencoder"]))
    n_out = {"sigmoid": 1, "softmax": int(r.integers(2, 5)), "identity": int(r.integers(1, 3)),
             "autoencoder": nf}[head]
    y = L.Dense(n_out, activation={"sigmoid": "sigmoid", "softmax": "softmax"}.get(head, "linear"))(h)
    m = keras.Model(x, y)     # (a chain of layers converts as a Sequential's does)
    # weights away from their initial values (biases 0, gammas 1 would be dropped by tf2onnx)
    rng = np.random.default_rng(int(r.integers(1 << 30)))
    m(X[:2])
    for layer in m.layers:
        ws = layer.get_weights()
        if not ws:
            continue
        if isinstance(layer, L.BatchNormalization):
            g, b, mu, var = ws
            layer.set_weights([(1 + rng.normal(size=g.shape) * 0.1).astype(np.float32),
                               (rng.normal(size=b.shape) * 0.1).astype(np.float32),
                               (rng.normal(size=mu.shape) * 0.3).astype(np.float32),
                               (rng.random(var.shape) + 0.5).astype(np.float32)])
        elif isinstance(layer, (L.LayerNormalization, L.PReLU)):
            layer.set_weights([(w + rng.normal(size=w.shape) * 0.2).astype(np.float32) for w in ws])
        elif isinstance(layer, L.Dense):
            layer.set_weights([ws[0], (rng.normal(size=ws[1].shape) * 0.2).astype(np.float32)])
    opsets = [13, 15, 17, 18] if version == 2 else [15, 17, 18] if backend == "tensorflow" else [17, 18, 23]
    if backend == "jax" and any(t.startswith("LN") for t in desc):
        opsets.remove(17)   # jax2onnx's LayerNormalization at 17 is an invalid file (documented refusal)
    opset = None if r.random() < 0.4 or not opsets else int(r.choice(opsets))
    path = os.path.join(d, "model.ae.onnx" if head == "autoencoder" else "model.onnx")
    if version == 2:
        import tensorflow as tf
        import tf2onnx
        tf2onnx.convert.from_keras(m, input_signature=(tf.TensorSpec((None, nf), tf.float32, name="x"),),
                                   output_path=path, opset=opset)
        exporter = "tf2onnx %s" % tf2onnx.__version__
    else:
        m.export(path, format="onnx", opset_version=opset, verbose=False)
        exporter = "model.export"
    Xc = np.clip(np.nan_to_num(case_rows(r, X[int(len(X) * 0.8):], [], [], ncat), nan=0.0), -8, 8).astype(F32)
    ref = np.asarray(m(Xc, training=False))
    if head == "autoencoder":
        ref = ((ref.astype(np.float64) - Xc.astype(np.float64)) ** 2).mean(axis=1)
    return path, Xc, ref, 1e-5, "keras %s on %s, %s, opset %s %s %s head %s" % (
        keras.__version__, backend, exporter, opset or "default",
        "functional" if functional else "chain", " ".join(desc), head)
