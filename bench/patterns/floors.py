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
from typing import Any

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


def _cost_volume(a, b):
    """the (2r+1)^2 shifted products three times over the (H, W) interior: the forward's
    contraction of a with the windows of b (np.einsum on the window view, as the reference),
    a's cotangent (one multiply-add per shift of the costs' cotangent with b's shifted slice:
    np.einsum on the view measured 1.4x slower), b's (the outer product of the costs'
    cotangent with a, then one add per shift into b's shifted slice: per-shift multiply-adds
    measured 1.2x slower)"""
    r = 2
    H, W = a.shape[0] - 2 * r, a.shape[1] - 2 * r
    ac = a[r:r + H, r:r + W]
    win = np.lib.stride_tricks.sliding_window_view(b, (H, W))
    g = np.ones((2 * r + 1, 2 * r + 1, H)) / W
    shifts = [(dy, dx) for dy in range(2 * r + 1) for dx in range(2 * r + 1)]

    def run():
        c = np.einsum("hw,yxhw->yxh", ac, win, optimize=True)
        da = np.zeros_like(ac)
        for dy, dx in shifts:
            da += g[dy, dx][:, None] * b[dy:dy + H, dx:dx + W]
        o = np.einsum("yxh,hw->yxhw", g, ac)
        db = np.zeros_like(b)
        for dy, dx in shifts:
            db[dy:dy + H, dx:dx + W] += o[dy, dx]
        return c, da, db
    run.doc = _cost_volume.__doc__
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
    """the cotangents of X and Y are outer products as large as X and Y (written in full, by
    NumPy's fastest outer product measured here: np.dot of a column and a row; einsum and the
    broadcasting multiply are 1.0-3.7x slower), w's reads X and Y again (two matrix-vector
    products), and the forward reads them once"""
    u, v = np.ones((len(X), 1)), np.ones((len(Y), 1))
    r = w.reshape(1, -1)

    def run():
        return (X @ w, Y @ w, np.dot(u, r), np.dot(v, r), u[:, 0] @ X + v[:, 0] @ Y)
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


def _hand(doc: str) -> Any:
    """A hand-written NumPy gradient (value and every cotangent) as a floor: the best graph
    a compiler could emit with NumPy kernels, checked against vecgrad's in floors' --check."""
    def wrap(f: Any) -> Any:
        def make(*args: Any) -> Any:
            def run() -> Any:
                return f(*args)
            run.doc = doc
            run.grads = f
            return run
        return make
    return wrap


@_hand("X @ w, max(., 0) and the scale, then the cotangents: the forward's matvec, one for "
       "w's (s @ X) and X's outer product s w^T written in full (as large as X)")
def _maximum_rmw(X, w):
    e = 1.0 + w[0] ** 2
    f = X @ w
    g = np.maximum(f, 0.0)
    h = g * e
    loss = np.sum(np.log1p(h))
    r = 1.0 / (1.0 + h)
    s = r * e * (f > 0)
    dw = s @ X
    dw[0] += (r @ g) * 2 * w[0]
    return loss, np.multiply.outer(s, w), dw


@_hand("X @ w - 0.5 clipped to [0, 2], squared: the matvec, the mask, s @ X and s w^T")
def _builtin_max(X, w):
    z = X @ w - 0.5
    y = np.minimum(np.maximum(z, 0.0), 2.0)
    s = 2 * y * ((z > 0) & (z < 2))
    return np.sum(y ** 2), np.multiply.outer(s, w), s @ X


@_hand("x * w, the two masks as np.where, the square and its cotangent through both masks, "
       "w's column sums of g * x")
def _masked(x, w):
    d = x * w
    c = x > 2
    y = np.where(c, 2.0, np.maximum(d, 0.0))
    g = np.where(c | (d < 0), 0.0, 2 * y)
    return np.sum(y * y), g * w, np.sum(g * x, axis=0)


@_hand("max(X, 0) with b added to column 0, R @ W, tanh, and the cotangents: 1 - t^2, "
       "G @ W.T through the mask, R.T @ G")
def _copy_mask(X, W, b):
    R = np.maximum(X, 0.0)
    R[:, 0] += b
    t = np.tanh(R @ W)
    G = 1.0 - t * t
    dR = G @ W.T
    dX = dR * (X > 0)
    return np.sum(t), dX, R.T @ G, np.sum(dR[:, 0])


@_hand("b = x^2 w, the differences, |.|^1.5 and its cotangent (sign * sqrt), spread back to "
       "b's rows (two shifted adds), then 2 x w and the column sums for w")
def _write_read(x, w):
    b = x * x * w
    d = b[1:] - b[:-1]
    a = np.abs(d)
    gd = 1.5 * np.sqrt(a) * np.sign(d)
    gb = np.zeros_like(b)
    gb[1:] += gd
    gb[:-1] -= gd
    return np.sum(np.power(a, 1.5)), gb * 2 * x * w, np.sum(gb * x * x, axis=0)


@_hand("z = X @ w + b, the four terms' cotangent per row, then s @ X")
def _four_term(w, b, X, y):
    z = X @ w + b
    loss = -(np.sum(y * z - np.log1p(np.exp(z)) + 1e-3 * z ** 2) - 1e-3 * len(y) * w.sum())
    s = -(y - 1.0 / (1.0 + np.exp(-z)) + 2e-3 * z)
    return loss, s @ X + 1e-3 * len(y), np.sum(s)


@_hand("X @ w, softplus and c * sum(X^2) (X read twice), then s @ X, X's cotangent "
       "s w^T + 2 c X written in full")
def _closure(X, w, c):
    z = X @ w
    sq = np.sum(X * X)
    s = 1.0 / (1.0 + np.exp(-z))
    return np.sum(np.log1p(np.exp(z))) + c * sq, np.multiply.outer(s, w) + 2 * c * X, \
        s @ X, sq


@_hand("X @ w once, the kept rows' softplus terms by index, and the cotangents: a scatter of "
       "the kept rows' s into X's rows, s @ X and s w^T")
def _skip_rows(X, w, keep):
    z = X @ w
    idx = np.flatnonzero(keep)
    sign = np.where(idx % 2 == 1, 1.0, -1.0)
    zz = sign * z[idx]
    s = np.zeros(len(X))
    s[idx] = sign / (1.0 + np.exp(-zz))
    return np.sum(np.logaddexp(0.0, zz)), np.multiply.outer(s, w), s @ X


@_hand("np.where on X[:, 0] > 0, tanh(X @ w), the square, and s @ X, s w^T")
def _where_rmw(X, w):
    t = np.tanh(X @ w)
    c = X[:, 0] > 0
    y = np.where(c, 1.0 + t, 0.5)
    s = np.where(c, 2 * y * (1 - t * t), 0.0)
    return np.sum(y * y), np.multiply.outer(s, w), s @ X


FLOORS = {
    "maximum_rmw_rows": _maximum_rmw,
    "builtin_max_rmw": _builtin_max,
    "masked_assign": _masked,
    "copy_mask_rows": _copy_mask,
    "write_read_previous": _write_read,
    "four_term_accumulator": _four_term,
    "closure_kernel_loss": _closure,
    "continue_skip_rows": _skip_rows,
    "where_rmw_rows": _where_rmw,
    "conv2d": _conv2d,
    "overlap_add": _overlap_add,
    "cost_volume_shifts": _cost_volume,
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


def _check(p: Any, args: tuple, got: tuple) -> None:
    """The hand-written floor computes the loss and the cotangents vecgrad does."""
    import vecgrad as vg
    want = vg.value_and_grad(p.natural, argnums=p.argnums)(*args)
    want = (want[0], *(want[1] if len(p.argnums) > 1 else (want[1],)))
    for x, y in zip(got, want):
        np.testing.assert_allclose(np.asarray(x, float), np.asarray(y, float), rtol=1e-9,
                                   atol=1e-9, err_msg=p.name)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/patterns/floors.py", description=__doc__)
    ap.add_argument("--only", default="", help="comma-separated program names")
    ap.add_argument("--budget", type=float, default=0.5, help="seconds per measurement")
    ap.add_argument("--check", action="store_true",
                    help="also check the hand-written gradients against vecgrad's")
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
        if a.check and hasattr(run, "grads"):
            _check(p, args, run())
        print(f"{name:30s} {fmt_time(ref.min):>10s} {fmt_time(fl.min):>10s} "
              f"{fl.min / ref.min:8.1f}x  {doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
