"""Sums and products over samples written the ways users write them (sums lane, session 30).

Each program sums or multiplies per-sample terms through a Python construct other than the
plain loop: a filtered or enumerated comprehension, a list handed to np.sum / np.prod /
np.mean / np.array, functools.reduce and math.prod over a generator, map with a NumPy ufunc,
two sample sets zipped in one loop, and products whose factors hold exact zeros; and sums
whose every term subtracts or divides by a loop invariant made from a table built before the
loop (a reference point's score, the count a masked mean divides by), which hash-consing
records once beside the per-sample terms of the same operation. The references are the
hand-vectorized forms."""
from __future__ import annotations

import functools
import itertools
import math
import operator

import numpy as np

from .core import normal, presets, uniform, variant


def filtered_even_rows(X, w):
    """Item 4: a comprehension over the even-numbered samples only (enumerate and an if)."""
    return sum(np.log1p(np.exp(x @ w)) for i, x in enumerate(X) if i % 2 == 0)


def filtered_even_rows_ref(X, w):
    return np.sum(np.log1p(np.exp(X[::2] @ w)))


def list_of_scalars_np_sum(X, w):
    """Item 4: per-sample squared margins collected in a list and summed by np.sum."""
    return np.sum([(x @ w - 1.0) ** 2 for x in X])


def list_of_scalars_np_sum_ref(X, w):
    return np.sum((X @ w - 1.0) ** 2)


def mean_of_stacked_rows(X, w):
    """Item 4: per-sample vectors averaged by np.mean over a stacked list (axis 0)."""
    m = np.mean(np.stack([np.tanh(x * w) for x in X]), axis=0)
    return np.sum(m ** 2)


def mean_of_stacked_rows_ref(X, w):
    return np.sum(np.mean(np.tanh(X * w), axis=0) ** 2)


def reduce_add_generator(X, w):
    """Item 4: functools.reduce(np.add, ...) over a generator of weighted rows."""
    s = functools.reduce(np.add, (np.sin(x) * w for x in X))
    return np.sum(s * s)


def reduce_add_generator_ref(X, w):
    s = np.sum(np.sin(X) * w, axis=0)
    return np.sum(s * s)


def zipped_weights_list(X, w, c):
    """Item 4: a loss weighted per sample, the weights zipped with the rows."""
    return sum(ci * np.log1p(np.exp(-(x @ w))) for ci, x in zip(c, X))


def zipped_weights_list_ref(X, w, c):
    return np.sum(c * np.log1p(np.exp(-(X @ w))))


def prod_of_factor_list(P, w):
    """Item 4: np.prod handed a Python list of per-period factor rows (no np.stack)."""
    return np.prod([1.0 - p for p in P], axis=0) @ w


def prod_of_factor_list_ref(P, w):
    return np.prod(1.0 - P, axis=0) @ w


def math_prod_rows(R, w):
    """Item 4: math.prod over the rows of growth factors (a functools.reduce in disguise)."""
    return math.prod(1.0 + r for r in R) @ w


def math_prod_rows_ref(R, w):
    return np.prod(1.0 + R, axis=0) @ w


def map_square_sum(X, w):
    """Item 4: sum(map(np.square, ...)) over the residual rows."""
    return np.sum(sum(map(np.square, (x - w for x in X))))


def map_square_sum_ref(X, w):
    return np.sum((X - w) ** 2)


def two_sets_zipped_loop(A, B, w):
    """Item 4: one loop over two sample sets zipped, a positive and a negative term each
    step, accumulated into one total."""
    tot = 0.0
    for a, b in zip(A, B):
        tot = tot + np.log1p(np.exp(-(a @ w)))
        tot = tot + np.log1p(np.exp(b @ w))
    return tot


def two_sets_zipped_loop_ref(A, B, w):
    return np.sum(np.log1p(np.exp(-(A @ w)))) + np.sum(np.log1p(np.exp(B @ w)))


def array_of_scalars_mean(X, w):
    """Item 4: np.array of per-sample scalars, its mean and variance."""
    s = np.array([np.tanh(x @ w) for x in X])
    return np.mean(s) + np.var(s)


def array_of_scalars_mean_ref(X, w):
    s = np.tanh(X @ w)
    return np.mean(s) + np.var(s)


def mean_of_squares_len(X, w):
    """Item 4: a sum over samples divided by len(X), with the bias term written apart."""
    b = w[0]
    return sum((x @ w[1:] + b) ** 2 for x in X) / len(X)


def mean_of_squares_len_ref(X, w):
    return np.mean((X @ w[1:] + w[0]) ** 2)


def reduce_mul_zero_rows_lambda(R, w):
    """Item 4: functools.reduce with a lambda over rows where some columns hold exact zeros
    (an account closed at some period), the product read through a dot."""
    g = functools.reduce(lambda a, b: a * b, [r for r in R])
    return g @ w


def reduce_mul_zero_rows_lambda_ref(R, w):
    return np.prod(R, axis=0) @ w


def per_sample_prod_with_zeros(H, w):
    """Item 4: np.prod of each sample's factors (some exact zeros: a certain event) in a
    loop, weighted."""
    tot = 0.0
    for h, wi in zip(H, w):
        tot = tot + wi * np.prod(1.0 - h)
    return tot


def per_sample_prod_with_zeros_ref(H, w):
    return np.prod(1.0 - H, axis=1) @ w


def operator_mul_pairs(X, w):
    """Item 4: products of neighbouring samples (itertools.pairwise) by operator.mul in a
    comprehension, summed."""
    return sum(np.sum(operator.mul(a, b) * w) for a, b in itertools.pairwise(X))


def operator_mul_pairs_ref(X, w):
    return np.sum(X[:-1] * X[1:] * w)


def baseline_score_gap(X, W):
    """Item 4: each sample's score minus a fixed reference point's (np.linspace made before
    the loop), the same operations on the invariant point as on each sample."""
    base = np.linspace(-1.0, 1.0, X.shape[1])
    return sum(np.sum(np.tanh(x @ W)) - np.sum(np.tanh(base @ W)) for x in X)


def baseline_score_gap_ref(X, W):
    base = np.linspace(-1.0, 1.0, X.shape[1])
    return np.sum(np.tanh(X @ W)) - len(X) * np.sum(np.tanh(base @ W))


def masked_mean_rows(T, m):
    """Item 4: per-sample weighted means, each divided by the weights' total over a table of
    ones made before the loop."""
    ones = np.ones(T.shape[1:])
    return sum(np.sum(t * m) / np.sum(ones * m) for t in T)


def masked_mean_rows_ref(T, m):
    return np.sum(T * m) / (T.shape[1] * np.sum(m))


def log_partition_gap(T, w):
    """Item 4: each sample's log-partition minus a reference grid's, accumulated in a loop."""
    grid = np.linspace(-2.0, 2.0, T.shape[1])
    tot = 0.0
    for t in T:
        tot = tot + np.log(np.sum(np.exp(t * w))) - np.log(np.sum(np.exp(grid * w)))
    return tot


def log_partition_gap_ref(T, w):
    grid = np.linspace(-2.0, 2.0, T.shape[1])
    return np.sum(np.log(np.sum(np.exp(T * w), axis=1))) - len(T) * np.log(np.sum(np.exp(grid * w)))


def relative_to_origin(X, w):
    """Item 4: an RBF response of each sample relative to the origin's (np.zeros made before
    the loop), as a ratio."""
    origin = np.zeros(X.shape[1])
    return sum(np.exp(-np.sum((x - w) ** 2)) / np.exp(-np.sum((origin - w) ** 2)) for x in X)


def relative_to_origin_ref(X, w):
    return np.sum(np.exp(-np.sum((X - w) ** 2, axis=1))) / np.exp(-np.sum(w ** 2))


def _rows_w(rng, n, d):
    return normal(rng, n, d), normal(rng, d, scale=d ** -0.5)


def _rows_w1(rng, n, d):
    return normal(rng, n, d), normal(rng, d + 1, scale=d ** -0.5)


def _rows_w_c(rng, n, d):
    return normal(rng, n, d), normal(rng, d, scale=d ** -0.5), uniform(rng, n)


def _two_sets(rng, n, d):
    return normal(rng, n, d), normal(rng, n, d), normal(rng, d, scale=d ** -0.5)


def _probs(rng, n, d):
    return uniform(rng, n, d, high=0.01), normal(rng, d)


def _rates(rng, n, d):
    return normal(rng, n, d, scale=0.01), normal(rng, d)


def _zero_rows(rng, n, d):
    R = uniform(rng, n, d, low=0.98, high=1.02)
    R[rng.integers(0, n, size=d // 4), np.arange(d // 4)] = 0.0
    return R, normal(rng, d)


def _certain(rng, n, d):
    H = uniform(rng, n, d, high=0.02)
    H[np.arange(0, n, 7), rng.integers(0, d, size=len(range(0, n, 7)))] = 1.0
    return H, normal(rng, n)


def _rows_m(rng, n, d):
    return normal(rng, n, d), normal(rng, d, 4, scale=d ** -0.5)


def _blocks(rng, n, d):
    return normal(rng, n, 4, d), uniform(rng, d, low=0.5, high=1.0)


def _near(rng, n, d):
    return normal(rng, n, d, scale=0.2), normal(rng, d, scale=0.2)


def _p(name, item, sizes, argnums, inputs):
    return variant(globals(), name, item, sizes, argnums, inputs)


_sz = presets
_vec = _sz({"n": 6, "d": 5}, {"n": 2000, "d": 32})
_wide = _sz({"n": 5, "d": 4}, {"n": 200, "d": 64})

PATTERNS = [
    _p("filtered_even_rows", 4, _vec, (0, 1), _rows_w),
    _p("list_of_scalars_np_sum", 4, _vec, (0, 1), _rows_w),
    _p("mean_of_stacked_rows", 4, _vec, (0, 1), _rows_w),
    _p("reduce_add_generator", 4, _vec, (0, 1), _rows_w),
    _p("zipped_weights_list", 4, _vec, (0, 1), _rows_w_c),
    _p("prod_of_factor_list", 4, _wide, (0, 1), _probs),
    _p("math_prod_rows", 4, _wide, (0, 1), _rates),
    _p("map_square_sum", 4, _vec, (0, 1), _rows_w),
    _p("two_sets_zipped_loop", 4, _vec, (0, 1, 2), _two_sets),
    _p("array_of_scalars_mean", 4, _vec, (0, 1), _rows_w),
    _p("mean_of_squares_len", 4, _vec, (0, 1), _rows_w1),
    _p("reduce_mul_zero_rows_lambda", 4, _wide, (0, 1), _zero_rows),
    _p("per_sample_prod_with_zeros", 4, _sz({"n": 9, "d": 4}, {"n": 2000, "d": 16}), (0, 1),
       _certain),
    _p("operator_mul_pairs", 4, _vec, (0, 1), _rows_w),
    _p("baseline_score_gap", 4, _sz({"n": 9, "d": 5}, {"n": 2000, "d": 32}), (0, 1), _rows_m),
    _p("masked_mean_rows", 4, _sz({"n": 9, "d": 5}, {"n": 1000, "d": 16}), (0, 1), _blocks),
    _p("log_partition_gap", 4, _sz({"n": 9, "d": 5}, {"n": 2000, "d": 32}), (0, 1), _rows_w),
    _p("relative_to_origin", 4, _sz({"n": 9, "d": 5}, {"n": 2000, "d": 32}), (0, 1), _near),
]
