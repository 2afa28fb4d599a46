"""Loops that make the same constant table at every iteration (sums lane, session 29).

Each program builds a plain NumPy array inside its loop or comprehension (np.linspace,
np.arange, np.eye, np.ones, an array from a Python list, a cast of a global table) and reads it
with the iteration's data: the table is loop-invariant although each iteration holds its own
copy. Tracing keeps one constant for equal arrays (builder.capture), so batching sees one
operand rather than a copy per iteration to stack (np.interp's tables became a (501, 33) stack
gathered per sample). The references are the hand-vectorized forms."""
from __future__ import annotations

import numpy as np

from .core import normal, presets, uniform, variant


def interp_list_grid(X, fp):
    """Item 1: np.interp per row with the sample points given as a Python list."""
    t = fp.shape[0]
    grid = [-2.0 + 4.0 * k / (t - 1) for k in range(t)]
    return sum(np.sum(np.interp(x, grid, fp) ** 2) for x in X)


def interp_list_grid_ref(X, fp):
    return np.sum(np.interp(X, np.linspace(-2.0, 2.0, fp.shape[0]), fp) ** 2)


def interp_int_grid(X, fp):
    """Item 1: np.interp per row at integer sample points np.arange(t) (cast to float64 per
    call), a weighted sum."""
    tot = 0.0
    for x in X:
        tot = tot + np.sum(np.interp(x, np.arange(fp.shape[0]), fp) * x)
    return tot


def interp_int_grid_ref(X, fp):
    return np.sum(np.interp(X, np.arange(fp.shape[0]), fp) * X)


def rbf_grid_in_loop(X, w):
    """Item 4: radial features against a grid np.linspace made at every iteration."""
    tot = 0.0
    for x in X:
        grid = np.linspace(-1.0, 1.0, w.shape[0])
        tot += np.sum(np.exp(-(x[:, None] - grid) ** 2) @ w)
    return tot


def rbf_grid_in_loop_ref(X, w):
    grid = np.linspace(-1.0, 1.0, w.shape[0])
    return np.sum(np.exp(-(X[:, :, None] - grid) ** 2) @ w)


def ridge_eye_per_sample(X, A):
    """Item 4: a quadratic form with A + 0.1 I, the identity made per sample."""
    return sum(x @ (A + 0.1 * np.eye(len(x))) @ x for x in X)


def ridge_eye_per_sample_ref(X, A):
    M = A + 0.1 * np.eye(A.shape[0])
    return np.einsum("ni,ij,nj->", X, M, X)


def position_weights_comprehension(X, w):
    """Item 4: each row weighted by its positions 1..d (np.arange per sample) and w."""
    return sum(np.dot(w * np.arange(1, len(x) + 1), x ** 2) for x in X)


def position_weights_comprehension_ref(X, w):
    return np.sum((X ** 2) @ (w * np.arange(1, X.shape[1] + 1)))


def mask_from_list(X, w):
    """Item 4: a mask written as a Python list, made an array in every iteration."""
    tot = 0.0
    for x in X:
        m = np.array([1.0 if k % 3 else 0.5 for k in range(len(x))])
        tot = tot + np.tanh(np.dot(m * x, w))
    return tot


def mask_from_list_ref(X, w):
    m = np.where(np.arange(X.shape[1]) % 3 == 0, 0.5, 1.0)
    return np.sum(np.tanh((X * m) @ w))


def cosine_table_gather(ids, w):
    """Item 4: a cosine table made per step and read at the step's ids, times learned
    weights."""
    tot = 0.0
    for row in ids:
        table = np.cos(np.linspace(0.0, np.pi, w.shape[0]))
        tot += np.sum(table[row] * w[row] ** 2)
    return tot


def cosine_table_gather_ref(ids, w):
    table = np.cos(np.linspace(0.0, np.pi, w.shape[0]))
    return np.sum(table[ids] * w[ids] ** 2)


def smoothing_kernel_per_row(X, v):
    """Item 2: np.convolve of each row with a box kernel np.ones(3) / 3 made per row."""
    return sum(np.dot(np.convolve(x, np.ones(3) / 3.0, mode="same"), v) ** 2 for x in X)


def smoothing_kernel_per_row_ref(X, v):
    S = (X + np.pad(X[:, 1:], ((0, 0), (0, 1))) + np.pad(X[:, :-1], ((0, 0), (1, 0)))) / 3.0
    return np.sum((S @ v) ** 2)


def uniform_weights_mean(X, b):
    """Item 4: each row's mean as a dot with np.ones(d) / d made per row, shifted by b."""
    return sum((np.dot(np.ones(len(x)) / len(x), x) - b) ** 2 for x in X)


def uniform_weights_mean_ref(X, b):
    return np.sum((X.mean(axis=1) - b) ** 2)


def interp_learned_points(X, fp):
    """Item 1: np.interp per row where the table's values are learned and its points are a
    copy of a float32 grid cast per call (np.float32 -> float64)."""
    grid = np.linspace(-2.5, 2.5, fp.shape[0]).astype(np.float32)
    return sum(np.sum(np.interp(x, grid.astype(np.float64), fp) ** 2) for x in X)


def interp_learned_points_ref(X, fp):
    grid = np.linspace(-2.5, 2.5, fp.shape[0]).astype(np.float32).astype(np.float64)
    return np.sum(np.interp(X, grid, fp) ** 2)


def digitized_bin_weights(X, w):
    """Item 4: each value's bin among edges made per row (np.digitize), a learned weight per
    bin times the value."""
    tot = 0.0
    for x in X:
        edges = np.linspace(-2.0, 2.0, w.shape[0] - 1)
        tot = tot + np.sum(w[np.digitize(x, edges)] * x)
    return tot


def digitized_bin_weights_ref(X, w):
    return np.sum(w[np.digitize(X, np.linspace(-2.0, 2.0, w.shape[0] - 1))] * X)


def _rows_table(rng, n, d, t):
    return np.clip(normal(rng, n, d), -2.4, 2.4), normal(rng, t)


def _int_grid(rng, n, d, t):
    return uniform(rng, n, d, low=0.0, high=t - 1.0), normal(rng, t)


def _rows_w(rng, n, d, t):
    return uniform(rng, n, d, low=-1.0, high=1.0), normal(rng, t)


def _rows_sq(rng, n, d):
    return normal(rng, n, d), normal(rng, d, d, scale=d ** -0.5)


def _rows_vec(rng, n, d):
    return normal(rng, n, d), normal(rng, d, scale=d ** -0.5)


def _ids(rng, n, d, t):
    return rng.integers(0, t, (n, d)), normal(rng, t)


def _rows_scalar(rng, n, d):
    return normal(rng, n, d), np.array(0.3)


def _p(name, item, sizes, argnums, inputs):
    return variant(globals(), name, item, sizes, argnums, inputs)


_sz = presets
_tab = _sz({"n": 4, "d": 5, "t": 7}, {"n": 500, "d": 32, "t": 33})
_vec = _sz({"n": 4, "d": 5}, {"n": 2000, "d": 32})

PATTERNS = [
    _p("interp_list_grid", 1, _tab, (0, 1), _rows_table),
    _p("interp_int_grid", 1, _tab, (0, 1), _int_grid),
    _p("rbf_grid_in_loop", 4, _sz({"n": 4, "d": 5, "t": 6}, {"n": 300, "d": 16, "t": 24}),
       (0, 1), _rows_w),
    _p("ridge_eye_per_sample", 4, _sz({"n": 4, "d": 3}, {"n": 1000, "d": 16}), (0, 1),
       _rows_sq),
    _p("position_weights_comprehension", 4, _vec, (0, 1), _rows_vec),
    _p("mask_from_list", 4, _vec, (0, 1), _rows_vec),
    _p("cosine_table_gather", 4, _tab, (1,), _ids),
    _p("smoothing_kernel_per_row", 4, _sz({"n": 4, "d": 6}, {"n": 1000, "d": 32}), (0, 1),
       _rows_vec),
    _p("uniform_weights_mean", 4, _vec, (0, 1), _rows_scalar),
    # (fp only: some of X's 16,000 values lie within 1e-7 of a grid point, where central
    # differences of the reference cross np.interp's kink; vecgrad's X gradient equals the
    # exact one there, and the differences agree at a step of 1e-8)
    _p("interp_learned_points", 1, _tab, (1,), _rows_table),
    _p("digitized_bin_weights", 4, _tab, (1,), _rows_w),  # (X: steps at the bin edges)
]
