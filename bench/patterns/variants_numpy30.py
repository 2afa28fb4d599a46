"""Natural programs that batch since session 30 (numpy lane): loops that unpack a few values
per row (`i, j = np.argsort(r)[:2]`, `lo, mid, hi = np.sort(r)[[0, k, -1]]`), whose batched
reads go back through the flattening and broadcasting that batching made of them
(rewrite/reads.py) to the sort read at those positions; and np.vectorize of a kernel with
Python `if`s on an element's value (numpy/_branches.py: every path traced, each element's
result selected by its path's conditions), a ConcretizationError before."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal

_T = ("variant", "numpy30")


def low_pair_argsort(X):
    """Item 1: the product of each row's two smallest entries, picked by np.argsort."""
    tot = 0.0
    for r in X:
        i, j = np.argsort(r)[:2]
        tot = tot + r[i] * r[j]
    return tot


def low_pair_argsort_ref(X):
    S = np.sort(X, axis=1)
    return np.sum(S[:, 0] * S[:, 1])


def sorted_ends_middle(X):
    """Item 1: (max - min) * median of each row, unpacked from np.sort(r)[[0, k, -1]]."""
    tot = 0.0
    k = X.shape[1] // 2
    for r in X:
        lo, mid, hi = np.sort(r)[[0, k, -1]]
        tot = tot + (hi - lo) * mid
    return tot


def sorted_ends_middle_ref(X):
    S = np.sort(X, axis=1)
    return np.sum((S[:, -1] - S[:, 0]) * S[:, X.shape[1] // 2])


def middle_ranks_buffer(X):
    """Item 1: three middle-ranked entries of each row (argsort positions 3..5) combined and
    written into a buffer."""
    out = vnp.zeros(X.shape[0])
    for n, r in enumerate(X):
        a, b, c = np.argsort(r)[3:6]
        out[n] = r[a] * 2 + r[b] - r[c] ** 2
    return vnp.sum(out ** 2)


def middle_ranks_buffer_ref(X):
    S = np.sort(X, axis=1)
    return np.sum((S[:, 3] * 2 + S[:, 4] - S[:, 5] ** 2) ** 2)


def _clip(a):
    if a > 0.5:
        return 0.5 + 0.1 * a
    elif a < -0.5:
        return -0.5
    return a


_VCLIP = np.vectorize(_clip)


def vectorize_clip(X):
    """Item 1: np.vectorize of a kernel with an if / elif / else on the element's value."""
    return np.sum(np.tanh(_VCLIP(X)) ** 2)


def vectorize_clip_ref(X):
    Y = np.where(X > 0.5, 0.5 + 0.1 * X, np.where(X < -0.5, -0.5, X))
    return np.sum(np.tanh(Y) ** 2)


def _soft_sqrt(a, b):
    return np.sqrt(a * b) if a * b > 0 else 0.5 * (a + b)


def vectorize_two_args_rows(X, w):
    """Item 1: per row, np.vectorize of a two-argument kernel with a branch (a square root
    where it is defined), against a shared weight row."""
    f = np.vectorize(_soft_sqrt)
    return sum(np.dot(f(r, w), w) for r in X)


def vectorize_two_args_rows_ref(X, w):
    p = X * w
    Y = np.where(p > 0, np.sqrt(np.where(p > 0, p, 1.0)), 0.5 * (X + w))
    return np.sum(Y @ w)


def _rows(rng, n, d):
    return (normal(rng, n, d),)


def _spaced(rng, n, d):
    """Rows whose sorted entries are at least 0.1 apart: central differences of the
    reference (steps of 1e-6) then reorder no entries (normal rows of 33 have neighbours
    within 1e-7 somewhere among 1000)."""
    return (rng.permuted(np.tile(np.linspace(-2.0, 2.0, d), (n, 1)), axis=1)
            + 0.02 * rng.random((n, d)),)


def _rows_w(rng, n, d):
    return normal(rng, n, d), rng.random(d) + 0.2


_SMALL = {"n": 4, "d": 9}
_DEFAULT = {"n": 1000, "d": 33}
_ELEMS = {"n": 60, "d": 32}  # (np.vectorize traces its kernel once per element)


def _p(name, natural, ref, inputs, argnums=(0,), default=_DEFAULT):
    return Pattern(name, 1, natural, ref, inputs, {"small": _SMALL, "default": default},
                   argnums, tags=_T)


PATTERNS = [
    _p("low_pair_argsort", low_pair_argsort, low_pair_argsort_ref, _rows),
    _p("sorted_ends_middle", sorted_ends_middle, sorted_ends_middle_ref, _rows),
    _p("middle_ranks_buffer", middle_ranks_buffer, middle_ranks_buffer_ref, _spaced),
    _p("vectorize_clip", vectorize_clip, vectorize_clip_ref, _rows, default=_ELEMS),
    _p("vectorize_two_args_rows", vectorize_two_args_rows, vectorize_two_args_rows_ref,
       _rows_w, (0, 1), default={"n": 40, "d": 24}),
]
