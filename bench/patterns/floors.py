"""Floor kernels of the patterns that miss their target (issue 14: "say exactly which kernel is
the floor, with its measured time").

    python bench/patterns/floors.py [--only names]

For each program, the NumPy kernels that any gradient of it must run (written by hand on the
program's default inputs, the cotangent of the loss taken as ones), timed in one process next
to the reference forward: the ratio floor / reference is the least a NumPy-kernel gradient can
reach. A floor above the target means the target cannot be met with NumPy kernels.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import functools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from patterns import PATTERNS
from vecgrad.timing import fmt_time, measure


def _conv2d(img, K):
    """the p*p slice products three times: the forward, the image's cotangent (strided adds),
    the kernel's cotangent (one dot product per offset)"""
    p = K.shape[1]
    H, W = img.shape[1] - p + 1, img.shape[2] - p + 1
    g = np.ones((H, W))

    def run():
        out = sum(np.tensordot(K[:, a, b], img[:, a:a + H, b:b + W], axes=1)
                  for a in range(p) for b in range(p))
        d = np.zeros_like(img)
        for a in range(p):
            for b in range(p):
                d[:, a:a + H, b:b + W] += K[:, a, b][:, None, None] * g
        dK = np.array([[np.tensordot(img[:, a:a + H, b:b + W], g, axes=2) for b in range(p)]
                       for a in range(p)])
        return out, d, dK
    run.doc = _conv2d.__doc__
    return run


def _overlap_add(x, w):
    """k strided multiply-adds three times: the forward, x's cotangent, w's (a column sum each)"""
    k, T = w.shape[0], len(x)
    g = np.ones((T + k - 1, x.shape[1]))

    def run():
        out = np.zeros((T + k - 1, x.shape[1]))
        for j in range(k):
            out[j:j + T] += x * w[j]
        dx = sum(g[j:j + T] * w[j] for j in range(k))
        dw = np.stack([np.einsum("tc,tc->c", g[j:j + T], x) for j in range(k)])
        return np.tanh(out), dx, dw
    run.doc = _overlap_add.__doc__
    return run


def _pair_differences(a, b):
    """one subtraction writing the (n, m, d) differences x_i - y_j and one contraction reading
    them into the squared distances, both in their fastest layout (NumPy has no kernel that
    fuses the difference into the squared norm, and expanding |x - y|^2 into
    x^2 + y^2 - 2xy is not accurate)"""
    at, bt = np.ascontiguousarray(a.T), np.ascontiguousarray(b.T)

    def run():
        if a.shape[1] < 32:
            d = at[:, :, None] - bt[:, None, :]
            return np.einsum("kij,kij->ij", d, d)
        d = a[:, None, :] - b[None]
        return np.einsum("ijk,ijk->ij", d, d)
    run.doc = _pair_differences.__doc__
    return run


def _kde(x, data, log_h):
    return _pair_differences(x, data)


def _rbf(x, alpha, log_ell, log_s2):
    return _pair_differences(x, x)


def _two_comprehensions(X, Y, w):
    """the cotangents of X and Y are outer products as large as X and Y (written in full), w's
    reads X and Y again (two matrix-vector products), and the forward reads them once"""
    u, v = np.ones(len(X)), np.ones(len(Y))

    def run():
        return (X @ w, Y @ w, np.einsum("a,i->ai", u, w), np.einsum("a,i->ai", v, w),
                u @ X + v @ Y)
    run.doc = _two_comprehensions.__doc__
    return run


def _edges_e2(x, edges):
    """the two row gathers x[s], x[d] and the difference (the forward), then the scatter-add of
    the 2E rows of cotangent into x's rows (np.add.at's flat fast path: the fastest NumPy
    segment sum through a runtime index measured here)"""
    E, f = len(edges), x.shape[1]

    def run():
        d = x[edges[:, 0]] - x[edges[:, 1]]
        out = np.zeros(x.size)
        np.add.at(out, (edges[:, :1] * f + np.arange(f)).ravel(), d.ravel())
        np.subtract.at(out, (edges[:, 1:] * f + np.arange(f)).ravel(), d.ravel())
        return np.sum(d * d), out.reshape(x.shape)
    assert E
    run.doc = _edges_e2.__doc__
    return run


def _sin_cos(arr):
    """the forward's transcendental (sin) and its derivative's (cos), one pass each"""
    def run():
        return np.sin(arr), np.cos(arr)
    run.doc = _sin_cos.__doc__
    return run


def _scaled_accumulate(X, a, b, c):
    return _sin_cos((a * X + b * X ** 2) * c[:, None])


def _halves_iadd(a, b, s):
    return _sin_cos(np.concatenate([np.exp(a), b ** 2], axis=1) * s[:, None])


def _whitened(x, mu, P):
    """the forward's product d @ P and the precision's cotangent d.T @ d (two BLAS products
    over all points; the reference forward is the first)"""
    d = x - mu

    def run():
        return np.sum((d @ P) * d), d.T @ d
    run.doc = _whitened.__doc__
    return run


def _rnn(W, U, xs, h0=None, b=None):
    """U @ xs for all steps, the loop's W @ h per step, and the backward's two products per step
    (W.T @ g and g @ h.T) and two over all steps (U's and xs's cotangents)"""
    T, n_in, B = xs.shape
    h = np.zeros((W.shape[0], B)) if h0 is None else h0
    X = xs.transpose(1, 0, 2).reshape(n_in, T * B)

    def run():
        ux = U @ X
        hs = [h]
        for t in range(T):
            hs.append(np.tanh(W @ hs[-1] + ux[:, t * B:(t + 1) * B]))
        g = np.ones_like(h)
        dW = np.zeros_like(W)
        for t in range(T, 0, -1):
            dW += g @ hs[t - 1].T
            g = W.T @ g
        G = np.ones_like(ux)
        return dW, G @ X.T, U.T @ G
    run.doc = _rnn.__doc__
    return run


FLOORS = {
    "conv2d": _conv2d,
    "overlap_add": _overlap_add,
    "kde_negative_log_likelihood": _kde,
    "rbf_kernel_quadratic": _rbf,
    "two_comprehensions": _two_comprehensions,
    "edges_e2_array": _edges_e2,
    "scaled_accumulate": _scaled_accumulate,
    "halves_iadd": _halves_iadd,
    "whitened_energy": _whitened,
    "tanh_rnn": lambda W, U, b, xs, h0: _rnn(W, U, xs, h0),
    "rnn_hidden_energy": lambda W, U, xs: _rnn(W, U, xs),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/patterns/floors.py", description=__doc__)
    ap.add_argument("--only", default="", help="comma-separated program names")
    ap.add_argument("--budget", type=float, default=0.5, help="seconds per measurement")
    a = ap.parse_args(argv)
    names = [n for n in a.only.split(",") if n] or list(FLOORS)
    print(f"{'program':30s} {'ref fwd':>10s} {'floor':>10s} {'floor/ref':>9s}  floor kernels")
    for name in names:
        p = PATTERNS[name]
        args = p.args("default")
        ref_args = p.prepare(args)
        ref = measure(functools.partial(p.reference, *ref_args), None, a.budget)
        f = FLOORS[name]
        run = f(*args)
        fl = measure(run, None, a.budget)
        doc = " ".join(run.doc.split())
        print(f"{name:30s} {fmt_time(ref.min):>10s} {fmt_time(fl.min):>10s} "
              f"{fl.min / ref.min:8.1f}x  {doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
