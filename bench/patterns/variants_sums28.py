"""Recurrences with work of their own kind hanging off them, and whole products (sums lane,
session 28).

The first six carry a running product (a discount, a survival, a compounding factor; scalars or
rows) and read it at every step with an operation of the same kind as the recurrence's own
step (`d = d * g[t]` and `ret += d * r[t]` both multiply two scalars). Batching must not merge
the read at step t with the recurrence's step t + 1 (batch/agenda.py holds it back), or the
recurrence is no longer a chain that `scans` can see. The other six take whole products, by
np.prod per sample, a method call, functools.reduce with operator.mul or a lambda, with exact
zeros among the factors in some: their gradients go through `reduce_prod_grad`. References are
the hand-vectorized forms (np.cumprod, np.prod)."""
from __future__ import annotations

import functools
import operator

import numpy as np

from .core import normal, presets, uniform, variant


def discounted_return_product(g, r):
    """Item 6: a return discounted by learned per-step factors, d = d * g[t]; ret += d * r[t]."""
    d = 1.0
    ret = 0.0
    for gt, rt in zip(g, r):
        d = d * gt
        ret = ret + d * rt
    return ret


def discounted_return_product_ref(g, r):
    return np.sum(np.cumprod(g) * r)


def expected_lifetime(p):
    """Item 6: an expected lifetime, each step's hazard weighted by the survival before it
    (the read comes before the update)."""
    s = 1.0
    e = 0.0
    for t, pt in enumerate(p):
        e = e + t * (s * pt)
        s = s * (1.0 - pt)
    return e


def expected_lifetime_ref(p):
    before = np.concatenate([[1.0], np.cumprod(1.0 - p)[:-1]])
    return np.sum(np.arange(len(p)) * before * p)


def compounded_cashflows(r, cf):
    """Item 6: cash flows valued at a compounding rate, v *= 1 + r[t] in place, by index."""
    v = 1.0
    tot = 0.0
    for t in range(len(r)):
        v *= 1.0 + r[t]
        tot += v * cf[t]
    return tot


def compounded_cashflows_ref(r, cf):
    return np.sum(np.cumprod(1.0 + r) * cf)


def weighted_survival_rows(F, W):
    """Item 6: survival of d groups, s = s * F[t] on rows, each step's s weighted by W[t] (a
    product of two rows, as the step is)."""
    s = np.ones(F.shape[1])
    tot = 0.0
    for t in range(F.shape[0]):
        s = s * F[t]
        tot = tot + np.sum(s * W[t])
    return tot


def weighted_survival_rows_ref(F, W):
    return np.sum(np.cumprod(F, axis=0) * W)


def decay_then_square(beta, e):
    """Item 6: a weight decayed in place and used twice per step, w *= beta[t];
    loss += w * e[t] * e[t]."""
    w = 1.0
    loss = 0.0
    for t in range(len(beta)):
        w *= beta[t]
        loss += w * e[t] * e[t]
    return loss


def decay_then_square_ref(beta, e):
    return np.sum(np.cumprod(beta) * e * e)


def two_products_one_loop(a, b, x):
    """Item 6: two running products in one loop (a price and an index), each read by a
    product with x[t]."""
    p = 1.0
    q = 1.0
    tot = 0.0
    for at, bt, xt in zip(a, b, x):
        p = p * at
        q = q * bt
        tot = tot + p * xt - q * xt
    return tot


def two_products_one_loop_ref(a, b, x):
    return np.sum((np.cumprod(a) - np.cumprod(b)) * x)


def per_sample_prod_log(H):
    """Item 4: each sample's probability of surviving every period, np.prod per sample in a
    loop, its log summed."""
    tot = 0.0
    for h in H:
        tot += np.log(np.prod(1.0 - h))
    return tot


def per_sample_prod_log_ref(H):
    return np.sum(np.log(np.prod(1.0 - H, axis=1)))


def geometric_means_method(X, w):
    """Item 4: geometric means of the columns by the ndarray method X.prod(axis=0)."""
    return np.sum(X.prod(axis=0) ** (1.0 / X.shape[0]) * w)


def geometric_means_method_ref(X, w):
    return np.sum(np.prod(X, axis=0) ** (1.0 / X.shape[0]) * w)


def reduce_mul_zero_columns(R, w):
    """Item 4: functools.reduce(operator.mul, rows) where some columns hold an exact zero (a
    factor that wipes out an account): the product of the others is the gradient there."""
    g = functools.reduce(operator.mul, list(R))
    return g @ w


def reduce_mul_zero_columns_ref(R, w):
    return np.prod(R, axis=0) @ w


def reduce_lambda_columns(X):
    """Item 4: products over the columns by functools.reduce with a lambda, log summed."""
    p = functools.reduce(lambda a, b: a * b, [X[:, j] for j in range(X.shape[1])])
    return np.sum(np.log(p))


def reduce_lambda_columns_ref(X):
    return np.sum(np.log(np.prod(X, axis=1)))


def prod_of_stacked_factors(P, w):
    """Item 4: factors 1 - P[t] gathered in a comprehension, stacked, and multiplied out by
    np.prod over the stack."""
    f = np.stack([1.0 - p for p in P])
    return np.prod(f, axis=0) @ w


def prod_of_stacked_factors_ref(P, w):
    return np.prod(1.0 - P, axis=0) @ w


def all_period_prod_keepdims(R):
    """Item 4: the whole growth as np.prod(..., keepdims=True) over periods, divided back into
    each period's factor (a growth of the other periods)."""
    g = 1.0 + R
    total = np.prod(g, axis=0, keepdims=True)
    return np.sum(np.log(total / g))


def all_period_prod_keepdims_ref(R):
    g = 1.0 + R
    return np.sum(np.log(np.prod(g, axis=0, keepdims=True) / g))


def _factors_flows(rng, n):
    return uniform(rng, n, low=0.995, high=1.0), normal(rng, n)


def _hazards(rng, n):
    return (uniform(rng, n, high=0.002),)


def _rates_flows(rng, n):
    return normal(rng, n, scale=0.001), normal(rng, n)


def _factor_rows(rng, n, d):
    return uniform(rng, n, d, low=0.995, high=1.002), normal(rng, n, d)


def _two_rates(rng, n):
    return (uniform(rng, n, low=0.998, high=1.001), uniform(rng, n, low=0.998, high=1.001),
            normal(rng, n))


def _hazard_samples(rng, n, d):
    return (uniform(rng, n, d, high=0.02),)


def _positive_cols(rng, n, d):
    return uniform(rng, n, d, low=0.5, high=1.5), normal(rng, d)


def _zero_columns(rng, n, d):
    R = uniform(rng, n, d, low=0.98, high=1.02)
    R[rng.integers(0, n, size=d // 4), np.arange(d // 4)] = 0.0
    return R, normal(rng, d)


def _positive_rows(rng, n, d):
    return (uniform(rng, n, d, low=0.9, high=1.1),)


def _stack_probs(rng, n, d):
    return uniform(rng, n, d, high=0.01), normal(rng, d)


def _returns(rng, n, d):
    return (normal(rng, n, d, scale=0.01),)


def _p(name, item, sizes, argnums, inputs):
    return variant(globals(), name, item, sizes, argnums, inputs)


_sz = presets
_n = _sz({"n": 8}, {"n": 2000})
_nd = _sz({"n": 6, "d": 3}, {"n": 1000, "d": 8})
_wide = _sz({"n": 5, "d": 4}, {"n": 200, "d": 64})

PATTERNS = [
    _p("discounted_return_product", 6, _n, (0, 1), _factors_flows),
    _p("expected_lifetime", 6, _n, (0,), _hazards),
    _p("compounded_cashflows", 6, _n, (0, 1), _rates_flows),
    _p("weighted_survival_rows", 6, _nd, (0, 1), _factor_rows),
    _p("decay_then_square", 6, _n, (0, 1), _factors_flows),
    _p("two_products_one_loop", 6, _n, (0, 1, 2), _two_rates),
    _p("per_sample_prod_log", 4, _sz({"n": 5, "d": 6}, {"n": 500, "d": 40}), (0,),
       _hazard_samples),
    _p("geometric_means_method", 4, _wide, (0, 1), _positive_cols),
    _p("reduce_mul_zero_columns", 4, _wide, (0, 1), _zero_columns),
    _p("reduce_lambda_columns", 4, _sz({"n": 6, "d": 4}, {"n": 2000, "d": 16}), (0,),
       _positive_rows),
    _p("prod_of_stacked_factors", 4, _wide, (0, 1), _stack_probs),
    _p("all_period_prod_keepdims", 4, _wide, (0,), _returns),
]
