"""Sums over samples written the ways users write them (sums lane, session 25): logistic
losses with the sigmoid written out, nested comprehensions, generator expressions with a
condition, kernels passed as lambdas, functions and functools.partial, map over two
iterables, sums that mix Python floats and arrays, and copies of one matrix scaled and
stacked. References are the hand-vectorized forms a NumPy user would write (the same
formulas, whole arrays at once)."""
from __future__ import annotations

import functools

import numpy as np

from .core import Pattern, normal


def _xyw(rng, n, d):
    return normal(rng, d, scale=d ** -0.5), normal(rng, n, d), \
        (rng.random(n) < 0.5).astype(np.float64)


def _prep_list(args):
    return tuple(np.asarray(a, dtype=np.float64) if isinstance(a, list) else a for a in args)


def bce_written_sigmoid(w, X, y):
    """Item 4: binary cross-entropy per sample with the sigmoid written out,
    s = 1 / (1 + np.exp(-(x @ w))); loss += -(t log s + (1 - t) log(1 - s))."""
    loss = 0.0
    for x, t in zip(X, y):
        s = 1 / (1 + np.exp(-(x @ w)))
        loss += -(t * np.log(s) + (1 - t) * np.log(1 - s))
    return loss


def bce_written_sigmoid_ref(w, X, y):
    s = 1 / (1 + np.exp(-(X @ w)))
    return -np.sum(y * np.log(s) + (1 - y) * np.log(1 - s))


def nested_comprehension_kernel(A, B, ell):
    """Item 4: a kernel sum as a nested generator, sum(sum(exp(-|a - b|^2 / ell) for b in B)
    for a in A)."""
    return sum(sum(np.exp(-np.sum((a - b) ** 2) / ell) for b in B) for a in A)


def nested_comprehension_kernel_ref(A, B, ell):
    d2 = np.sum(A ** 2, 1)[:, None] + np.sum(B ** 2, 1)[None] - 2 * A @ B.T
    return np.sum(np.exp(-d2 / ell))


def _ab(rng, n, m, d):
    return normal(rng, n, d), normal(rng, m, d), np.array(float(d))


def conditional_genexpr(w, X, y):
    """Item 4: a generator expression with a condition on Python floats: the softplus margin
    loss of the positive samples only, sum(... for x, t in zip(X, y) if t > 0)."""
    return sum(np.log1p(np.exp(-(x @ w))) for x, t in zip(X, y) if t > 0)


def conditional_genexpr_ref(w, X, y):
    return np.sum(np.log1p(np.exp(-(X[y > 0] @ w))))


def _xw_list(rng, n, d):
    w, X, y = _xyw(rng, n, d)
    return w, X, [float(v) for v in 2 * y - 1]


def lambda_kernel_arg(X, w, kernel=lambda x, w: np.tanh(x @ w)):
    """Item 4: a kernel passed as a default lambda argument, summed squared over rows."""
    return sum(kernel(x, w) ** 2 for x in X)


def lambda_kernel_arg_ref(X, w):
    return np.sum(np.tanh(X @ w) ** 2)


def _rbf_row(x, c, scale):
    return np.exp(-scale * np.sum((x - c) ** 2))


def partial_kernel_map(X, c):
    """Item 4: a kernel with a keyword bound by functools.partial, mapped over the rows with
    a second iterable of centres (map with two iterables)."""
    k = functools.partial(_rbf_row, scale=0.5)
    return sum(map(k, X, c))


def partial_kernel_map_ref(X, c):
    return np.sum(np.exp(-0.5 * np.sum((X - c) ** 2, 1)))


def _xc(rng, n, d):
    return normal(rng, n, d), normal(rng, n, d, scale=0.5)


def map_two_lists_residuals(w, X, y):
    """Item 4: map(lambda x, t: (x @ w - t) ** 2, X, y) over a Python list of targets."""
    return sum(map(lambda x, t: (x @ w - t) ** 2, X, y))


def map_two_lists_residuals_ref(w, X, y):
    return np.sum((X @ w - y) ** 2)


def float_array_mix(X, w):
    """Item 4: one accumulator mixing per-step Python floats (i % 3 * 0.5) and array terms,
    total += i % 3 * 0.5 + np.sum(np.abs(x - w)), started at 1.0."""
    total = 1.0
    for i, x in enumerate(X):
        total += i % 3 * 0.5 + np.sum(np.abs(x - w))
    return total


def float_array_mix_ref(X, w):
    n = len(X)
    return 1.0 + 0.5 * np.sum(np.arange(n) % 3) + np.sum(np.abs(X - w))


def _xw(rng, n, d):
    return normal(rng, n, d), normal(rng, d)


def enumerate_decayed_softplus(w, X, y):
    """Item 4: a softplus margin loss discounted by the step, 0.99 ** t, over
    enumerate(zip(X, y)), written with np.logaddexp(0, -m)."""
    return sum(0.99 ** t * np.logaddexp(0.0, -s * (x @ w)) for t, (x, s) in
               enumerate(zip(X, y)))


def enumerate_decayed_softplus_ref(w, X, y):
    return np.sum(0.99 ** np.arange(len(y)) * np.logaddexp(0.0, -y * (X @ w)))


def three_lists_masked(w, X, y, m):
    """Item 4: zip of three sequences, a Python-float mask per sample scaling its squared
    residual, loss += m * (x @ w - t) ** 2."""
    loss = 0.0
    for x, t, mk in zip(X, y, m):
        loss += mk * (x @ w - t) ** 2
    return loss


def three_lists_masked_ref(w, X, y, m):
    return np.sum(m * (X @ w - y) ** 2)


def _xytm(rng, n, d):
    w, X, _ = _xyw(rng, n, d)
    return w, X, normal(rng, n), [float(v) for v in rng.integers(0, 2, n)]


def scaled_copies_stack(X, W):
    """Item 4: copies of one matrix scaled by Python floats and stacked,
    np.stack([s * X for s in scales]), then a weighted energy."""
    S = np.stack([s * X for s in (0.5, 1.0, 2.0, -1.5)])
    return np.sum(np.tanh(S) * W)


def scaled_copies_stack_ref(X, W):
    return np.sum(np.tanh(np.array([0.5, 1.0, 2.0, -1.5])[:, None, None] * X) * W)


def _xw4(rng, n, d):
    return normal(rng, n, d), normal(rng, 4, n, d)


def sigmoid_gated_rows(X, W, v):
    """Item 4: a row-wise gate with the sigmoid written out, g = 1 / (1 + exp(-(x @ W))),
    then (g * x) @ v squared, summed over a list comprehension."""
    return np.sum(np.array([((1 / (1 + np.exp(-(x @ W)))) * x) @ v for x in X]) ** 2)


def sigmoid_gated_rows_ref(X, W, v):
    return np.sum(((1 / (1 + np.exp(-(X @ W)))) * X @ v) ** 2)


def _xWv(rng, n, d):
    return normal(rng, n, d), normal(rng, d, d, scale=d ** -0.5), normal(rng, d)


def mean_of_listcomp_bce(w, X, y):
    """Item 4: np.mean of a list comprehension of written-out logistic losses,
    -log(1 / (1 + exp(-t x.w)))."""
    return np.mean([-np.log(1 / (1 + np.exp(-t * (x @ w)))) for x, t in zip(X, y)])


def mean_of_listcomp_bce_ref(w, X, y):
    return np.mean(-np.log(1 / (1 + np.exp(-y * (X @ w)))))


def nested_pairs_generator(X, W):
    """Item 4: one generator over two loops, sum(np.sum(np.tanh(W[j] * x)) for x in X for j in
    range(len(W))): every (row, filter) pair."""
    return sum(np.sum(np.tanh(W[j] * x)) for x in X for j in range(len(W)))


def nested_pairs_generator_ref(X, W):
    return np.sum(np.tanh(X[:, None, :] * W[None]))


def _xW(rng, n, k, d):
    return normal(rng, n, d), normal(rng, k, d)


def _p(name, sizes, argnums, inputs, prepare=None):
    mod = globals()
    extra = {"prepare": prepare} if prepare else {}
    return Pattern(name, 4, mod[name], mod[name + "_ref"], inputs, sizes, argnums,
                   tags=("variant", "sums", "plain-numpy"), **extra)


PATTERNS = [
    _p("bce_written_sigmoid", {"small": {"n": 7, "d": 3}, "default": {"n": 4000, "d": 64}}, (0,), _xyw),
    _p("nested_comprehension_kernel", {"small": {"n": 4, "m": 3, "d": 2},
                                       "default": {"n": 80, "m": 60, "d": 16}}, (0, 1), _ab),
    _p("conditional_genexpr", {"small": {"n": 7, "d": 3}, "default": {"n": 4000, "d": 64}}, (0,), _xw_list, _prep_list),
    _p("lambda_kernel_arg", {"small": {"n": 7, "d": 3}, "default": {"n": 4000, "d": 64}}, (1,), _xw),
    _p("partial_kernel_map", {"small": {"n": 6, "d": 3}, "default": {"n": 3000, "d": 32}},
       (0, 1), _xc),
    _p("map_two_lists_residuals", {"small": {"n": 7, "d": 3}, "default": {"n": 4000, "d": 64}}, (0,), _xw_list, _prep_list),
    _p("float_array_mix", {"small": {"n": 7, "d": 3}, "default": {"n": 3000, "d": 32}},
       (0, 1), _xw),
    _p("enumerate_decayed_softplus", {"small": {"n": 7, "d": 3}, "default": {"n": 4000, "d": 64}}, (0,), _xw_list, _prep_list),
    _p("three_lists_masked", {"small": {"n": 7, "d": 3}, "default": {"n": 4000, "d": 64}}, (0,), _xytm, _prep_list),
    _p("scaled_copies_stack", {"small": {"n": 3, "d": 2}, "default": {"n": 200, "d": 100}},
       (0, 1), _xw4),
    _p("sigmoid_gated_rows", {"small": {"n": 5, "d": 3}, "default": {"n": 2000, "d": 32}},
       (0, 1, 2), _xWv),
    _p("mean_of_listcomp_bce", {"small": {"n": 7, "d": 3}, "default": {"n": 4000, "d": 64}}, (0,), _xw_list, _prep_list),
    _p("nested_pairs_generator", {"small": {"n": 4, "k": 3, "d": 2},
                                  "default": {"n": 300, "k": 8, "d": 32}}, (0, 1), _xW),
]
