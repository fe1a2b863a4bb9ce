"""campaign_skip.py -- the family "torch-skip" of the differential campaign (campaign.py): random
PyTorch networks that are not one chain (skip connections and branches, what
src/core/frontend/onnx/onnx_skip.c reads), exported by torch.onnx.export; reference: PyTorch's own outputs.

A network is a stem (a Linear, or nothing: the first block then reads the input itself), 1-4
random blocks over the current value h, and a head:
  res     h + f(h) or f(h) + h, f a small MLP (Linear, activation or nn.GLU, Linear; pre-norm
          by BatchNorm1d or LayerNorm now and then, Dropout)
  proj    f(h) + P(h), P a Linear to another width (a projection shortcut)
  glu     A(h) * sigmoid(B(h)) (a gated linear unit)
  cross   x0 * (W h + b) + h, x0 the stem's output (DCN-V2 cross layer)
  cat     torch.cat of two or three branches over h (f(h), g(h), h itself), in random order
  sub     f(h) - g(h) or f(h) - h
  wide    deep(h) + wide(x): the input read again, by a Linear to the current width
then, half of the time, an activation between blocks.  The head is a sigmoid, a softmax, an
identity (1-2 outputs), or an autoencoder's reconstruction of the input (its error scored).
"""
import os

import numpy as np

from campaign_common import F32, case_rows


def torch_skip_trial(r, d, X, cats, ncat, z):
    import torch
    nn = torch.nn
    torch.manual_seed(int(r.integers(1 << 30)))
    torch.set_num_threads(1)
    nf = X.shape[1]
    col = np.nan_to_num(X, nan=0.0).astype(np.float64)
    X = ((col - col.mean(axis=0)) / (col.std(axis=0) + 1e-3)).astype(F32)
    acts = [nn.ReLU, nn.Tanh, nn.Sigmoid, nn.GELU, nn.SiLU, nn.ELU, lambda: nn.LeakyReLU(0.1)]

    def act():
        return acts[int(r.integers(len(acts)))]()

    extras = []

    def mlp(w_in, w_out):
        hid = int(r.choice([8, 16, 33]))
        mods = []
        if r.random() < 0.3:
            mods.append(nn.LayerNorm(w_in) if r.random() < 0.5 else nn.BatchNorm1d(w_in))
        if r.random() < 0.2:
            mods += [nn.Linear(w_in, 2 * hid), nn.GLU()]     # a gated linear unit (Split, Sigmoid, Mul)
            extras.append("GLU")
        else:
            mods += [nn.Linear(w_in, hid), act()]
        if r.random() < 0.2:
            mods.append(nn.Dropout(0.2))
        mods.append(nn.Linear(hid, w_out))
        return nn.Sequential(*mods)

    class Block(nn.Module):
        def __init__(self, kind, w):
            super().__init__()
            self.kind, self.w_in = kind, w
            self.order = int(r.integers(2))
            if kind == "res":
                self.f, self.w_out = mlp(w, w), w
            elif kind == "proj":
                self.w_out = int(r.choice([8, 16, 24]))
                self.f, self.p = mlp(w, self.w_out), nn.Linear(w, self.w_out)
            elif kind == "glu":
                self.w_out = int(r.choice([8, 16]))
                self.a, self.b = nn.Linear(w, self.w_out), nn.Linear(w, self.w_out)
            elif kind == "cross":
                self.w_out = w
                self.lin = nn.Linear(w, w)
            elif kind == "cat":
                self.parts = [str(p) for p in r.permutation(["f", "g", "id"])[:int(r.integers(2, 4))]]
                self.wf, self.wg = int(r.choice([4, 8])), int(r.choice([4, 12]))
                self.f, self.g = mlp(w, self.wf), mlp(w, self.wg)
                self.w_out = sum({"f": self.wf, "g": self.wg, "id": w}[p] for p in self.parts)
            elif kind == "sub":
                self.w_out = w
                self.f = mlp(w, w)
                self.g = mlp(w, w) if self.order else nn.Identity()
            elif kind == "wide":
                self.w_out = w
                self.f, self.wide = mlp(w, w), nn.Linear(nf, w)
            self.post = act() if r.random() < 0.5 else nn.Identity()

        def forward(self, h, x0, x):
            k = self.kind
            if k == "res":
                y = h + self.f(h) if self.order else self.f(h) + h
            elif k == "proj":
                y = self.f(h) + self.p(h) if self.order else self.p(h) + self.f(h)
            elif k == "glu":
                y = self.a(h) * torch.sigmoid(self.b(h)) if self.order else torch.sigmoid(self.b(h)) * self.a(h)
            elif k == "cross":
                y = x0 * self.lin(h) + h if self.order else h + self.lin(h) * x0
            elif k == "cat":
                y = torch.cat([{"f": self.f, "g": self.g, "id": lambda v: v}[p](h) for p in self.parts], 1)
            elif k == "sub":
                y = self.f(h) - self.g(h)
            else:
                y = self.f(h) + self.wide(x) if self.order else self.wide(x) + self.f(h)
            return self.post(y)

    head = str(r.choice(["sigmoid", "softmax", "identity", "autoencoder"]))
    n_out = {"sigmoid": 1, "softmax": int(r.integers(2, 5)), "identity": int(r.integers(1, 3)),
             "autoencoder": nf}[head]
    kinds = [str(k) for k in r.choice(["res", "proj", "glu", "cross", "cat", "sub", "wide"],
                                      size=int(r.integers(1, 5)))]
    stem_w = 0 if r.random() < 0.25 else int(r.choice([8, 16, 32]))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Linear(nf, stem_w), act()) if stem_w else None
            w = stem_w or nf
            blocks = []
            for k in kinds:
                blocks.append(Block(k, w))
                w = blocks[-1].w_out
            self.blocks = nn.ModuleList(blocks)
            self.out = nn.Linear(w, n_out)

        def forward(self, x):
            h = self.stem(x) if self.stem is not None else x
            x0 = h
            for b in self.blocks:
                h = b(h, x0 if b.kind != "cross" or b.w_in == x0.shape[1] else h, x)
            y = self.out(h)
            if head == "sigmoid":
                return torch.sigmoid(y)
            if head == "softmax":
                return torch.softmax(y, 1)
            return y

    net = Net()
    # a cross layer reads x0, the stem's output: only where the widths agree; elsewhere it
    # reads h itself (x0 = h, which makes it h * (W h + b) + h)
    xt = torch.from_numpy(X)
    net.train()
    with torch.no_grad():
        net(xt[:200])
    net.eval()
    opset = int(r.choice([11, 13, 14, 17]))
    path = os.path.join(d, "model.ae.onnx" if head == "autoencoder" else "model.onnx")
    torch.onnx.export(net, xt[:1], path, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "N"}, "y": {0: "N"}}, opset_version=opset)
    Xc = np.clip(np.nan_to_num(case_rows(r, X[int(len(X) * 0.8):], [], [], ncat), nan=0.0), -8, 8).astype(F32)
    with torch.no_grad():
        ref = net(torch.from_numpy(Xc)).numpy()
    if head == "autoencoder":
        ref = ((ref.astype(np.float64) - Xc.astype(np.float64)) ** 2).mean(axis=1)
    desc = "torch %s opset %d stem %d blocks %s head %s%s" % (torch.__version__, opset, stem_w,
                                                              ",".join(kinds), head,
                                                              " (%d GLU)" % len(extras) if extras else "")
    return path, Xc, ref, 1e-5, desc
