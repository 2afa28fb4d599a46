"""Natural variants over CSR-style segments (issue 14, item 3: irregular positions): a loop
over `x[offs[i]:offs[i + 1]]` for segments of unequal lengths, with per-segment statistics
that NumPy's own functions compute with keepdims (`np.var`, `np.std`, `x - x.mean(0,
keepdims=True)`), row-wise contractions (`S @ w`), an expand-dims (`a[:, None] * S`) and
weighted sums of the rows: variances, z-scores, attention pooling, per-segment layer norms,
softmax-weighted centroids and deep-set pooling.

Each has a hand-vectorized NumPy reference over the concatenated rows (`np.add.reduceat` at
the offsets, `np.repeat` of per-segment values); the offsets list is static data."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal

_S1 = {"small": {"m": 6, "d": 1}, "default": {"m": 3000, "d": 1}}
_S2 = {"small": {"m": 6, "d": 3}, "default": {"m": 1500, "d": 16}}


def _offsets(rng, m):
    lens = rng.integers(2, 24, m)
    return [0] + np.cumsum(lens).tolist()


def _flat_inputs(rng, m, d):
    offs = _offsets(rng, m)
    return normal(rng, offs[-1]), offs


def _rows_inputs(rng, m, d):
    offs = _offsets(rng, m)
    return normal(rng, offs[-1], d), normal(rng, d, scale=d ** -0.5), offs


def _prep(args):
    *arrays, offs = args
    offs = np.asarray(offs)
    lens = np.diff(offs)
    return (*arrays, offs[:-1], lens, np.repeat(np.arange(len(lens)), lens))


def _ssum(v, starts):
    return np.add.reduceat(v, starts, axis=0)


def segment_variances(x, offs):
    """Item 3: the variance of every segment of a CSR layout, `np.var(x[a:b])`, summed."""
    return sum(np.var(x[offs[i]:offs[i + 1]]) for i in range(len(offs) - 1))


def segment_variances_ref(x, starts, lens, seg):
    m = _ssum(x, starts) / lens
    return np.sum(_ssum((x - m[seg]) ** 2, starts) / lens)


def segment_zscores(x, offs):
    """Item 3: z-scores within each segment (`(s - s.mean()) / s.std()`), squashed."""
    tot = 0.0
    for i in range(len(offs) - 1):
        s = x[offs[i]:offs[i + 1]]
        tot += np.sum(np.tanh((s - s.mean()) / (s.std() + 0.1)))
    return tot


def segment_zscores_ref(x, starts, lens, seg):
    m = _ssum(x, starts) / lens
    c = x - m[seg]
    sd = np.sqrt(_ssum(c * c, starts) / lens)
    return np.sum(np.tanh(c / (sd + 0.1)[seg]))


def segment_attention_pool(X, w, offs):
    """Item 3: attention pooling of each segment's rows: scores `tanh(S @ w)`, a softmax
    over the rows, the rows weighted by it (`a[:, None] * S`) and summed."""
    tot = 0.0
    for i in range(len(offs) - 1):
        S = X[offs[i]:offs[i + 1]]
        a = np.exp(np.tanh(S @ w))
        a = a / np.sum(a)
        tot += np.sum(np.sum(a[:, None] * S, axis=0) ** 2)
    return tot


def segment_attention_pool_ref(X, w, starts, lens, seg):
    a = np.exp(np.tanh(X @ w))
    ctx = _ssum(a[:, None] * X, starts) / _ssum(a, starts)[:, None]
    return np.sum(ctx ** 2)


def segment_layer_norm(X, w, offs):
    """Item 3: each segment's rows standardized per column with keepdims statistics over
    the rows, then projected (`(S - mu) / sqrt(var + eps) @ w`)."""
    tot = 0.0
    for i in range(len(offs) - 1):
        S = X[offs[i]:offs[i + 1]]
        mu = S.mean(axis=0, keepdims=True)
        var = ((S - mu) ** 2).mean(axis=0, keepdims=True)
        tot += np.sum(np.tanh((S - mu) / np.sqrt(var + 1e-3) @ w))
    return tot


def segment_layer_norm_ref(X, w, starts, lens, seg):
    mu = _ssum(X, starts) / lens[:, None]
    c = X - mu[seg]
    var = _ssum(c * c, starts) / lens[:, None]
    return np.sum(np.tanh(c / np.sqrt(var + 1e-3)[seg] @ w))


def segment_soft_centroids(X, w, offs):
    """Item 3: softmax-weighted centroids: weights from each row's distance to its
    segment's mean, the weighted mean of the rows, projected on w."""
    tot = 0.0
    for i in range(len(offs) - 1):
        S = X[offs[i]:offs[i + 1]]
        d = np.sum((S - S.mean(axis=0)) ** 2, axis=1)
        p = np.exp(-d)
        c = (p @ S) / np.sum(p)
        tot += np.sin(c @ w)
    return tot


def segment_soft_centroids_ref(X, w, starts, lens, seg):
    mu = _ssum(X, starts) / lens[:, None]
    p = np.exp(-np.sum((X - mu[seg]) ** 2, axis=1))
    c = _ssum(p[:, None] * X, starts) / _ssum(p, starts)[:, None]
    return np.sum(np.sin(c @ w))


def segment_deep_sets(X, w, offs):
    """Item 3: deep-set pooling: every row through `tanh(S * w)`, the mean over the
    segment's rows, then a squashing and a sum."""
    out = vnp.zeros(len(offs) - 1)
    for i in range(len(offs) - 1):
        h = np.tanh(X[offs[i]:offs[i + 1]] * w)
        out[i] = np.sum(np.tanh(h.mean(axis=0)))
    return np.sum(out ** 2)


def segment_deep_sets_ref(X, w, starts, lens, seg):
    h = _ssum(np.tanh(X * w), starts) / lens[:, None]
    return np.sum(np.sum(np.tanh(h), axis=1) ** 2)


def _p(name, sizes, argnums, inputs):
    mod = globals()
    return Pattern(name, 3, mod[name], mod[name + "_ref"], inputs, sizes, argnums,
                   prepare=_prep, tags=("variant", "natural", "segments"))


PATTERNS = [
    _p("segment_variances", _S1, (0,), _flat_inputs),
    _p("segment_zscores", _S1, (0,), _flat_inputs),
    _p("segment_attention_pool", _S2, (0, 1), _rows_inputs),
    _p("segment_layer_norm", _S2, (0, 1), _rows_inputs),
    _p("segment_soft_centroids", _S2, (0, 1), _rows_inputs),
    _p("segment_deep_sets", _S2, (0, 1), _rows_inputs),
]
