"""Running products written the ways users write them (sums lane, session 27): survival curves
of cohorts, discount factors divided step by step, compound growth by enumerate, in-place
`*=` on a row, first-event probabilities, Kaplan-Meier style factors from counts, decaying
sample weights, products with exact zeros in rows, survival curves per sample by np.cumprod
in a loop, and whole products by functools.reduce(operator.mul, ...). Their gradients go
through cumprod's VJP (`cumprod_grad`: a suffix sum divided by the factors where the running
product is exact and normal, the work up to the first zero where it reaches zero).
Einsums of three and four operands (a weighted covariance, energies per sample, low-rank
scores in a loop) go through the gradient's pairwise split (rewrite/reassociate.split_wide).
References are the hand-vectorized forms a NumPy user would write (np.cumprod, np.prod, @)."""
from __future__ import annotations

import functools
import operator

import numpy as np

from .core import normal, presets, uniform, variant


def cohort_survival(H, w):
    """Item 6: survival of d cohorts with hazards per step, s = s * (1 - H[t]), each step's
    survivors weighted by w and summed."""
    s = np.ones(H.shape[1])
    tot = 0.0
    for t in range(H.shape[0]):
        s = s * (1.0 - H[t])
        tot = tot + s @ w
    return tot


def cohort_survival_ref(H, w):
    return np.sum(np.cumprod(1.0 - H, axis=0) @ w)


def _hazard_rows(rng, n, d):
    return uniform(rng, n, d, high=0.01), normal(rng, d)


def discount_by_division(r, cf):
    """Item 6: a discount factor divided by (1 + r[t]) each step, the cash flows' present
    value summed."""
    df = 1.0
    pv = 0.0
    for t in range(len(r)):
        df = df / (1.0 + r[t])
        pv = pv + cf[t] * df
    return pv


def discount_by_division_ref(r, cf):
    return np.sum(cf * np.cumprod(1.0 / (1.0 + r)))


def _rates_flows(rng, n):
    return uniform(rng, n, low=0.0, high=0.002), normal(rng, n)


def compound_by_enumerate(rates, weights):
    """Item 6: compound growth by enumerate, balance *= 1 + r, each balance weighted."""
    balance = 1.0
    total = 0.0
    for t, r in enumerate(rates):
        balance *= 1.0 + r
        total += balance * weights[t]
    return total


def compound_by_enumerate_ref(rates, weights):
    return np.sum(np.cumprod(1.0 + rates) * weights)


def _rates_weights(rng, n):
    return normal(rng, n, scale=0.001), uniform(rng, n)


def inplace_row_product(F, v):
    """Item 6: a row multiplied in place, w *= row, read through a dot with v each step and
    averaged over the steps so far."""
    w = np.ones(F.shape[1])
    total = 0.0
    for t, row in enumerate(F):
        w *= row
        total += np.dot(w, v) / (t + 1)
    return total


def inplace_row_product_ref(F, v):
    return np.sum((np.cumprod(F, axis=0) @ v) / np.arange(1, F.shape[0] + 1))


def _factor_rows(rng, n, d):
    return uniform(rng, n, d, low=0.99, high=1.01), normal(rng, d)


def first_event_probability(p, y):
    """Item 6: the probability that the first event happens at step t, alive * p[t], with
    alive the running product of (1 - p), scored against targets y by squares."""
    alive = 1.0
    loss = 0.0
    for t in range(len(p)):
        first = alive * p[t]
        loss = loss + (first - y[t]) ** 2
        alive = alive * (1.0 - p[t])
    return loss


def first_event_probability_ref(p, y):
    alive = np.concatenate([[1.0], np.cumprod(1.0 - p)[:-1]])
    return np.sum((alive * p - y) ** 2)


def _probs_targets(rng, n):
    return uniform(rng, n, high=0.01), uniform(rng, n, high=0.01)


def kaplan_meier_counts(d, n_at_risk):
    """Item 6: a Kaplan-Meier style curve, s *= 1 - d[t] / n[t] with n a constant array of
    counts, its area (the sum of the curve) returned."""
    s = 1.0
    area = 0.0
    for t in range(len(d)):
        s *= 1.0 - d[t] / n_at_risk[t]
        area += s
    return area


def kaplan_meier_counts_ref(d, n_at_risk):
    return np.sum(np.cumprod(1.0 - d / n_at_risk))


def _deaths_counts(rng, n):
    return uniform(rng, n, high=2.0), np.linspace(5000.0, 100.0, n)


def decaying_sample_weights(beta, y, pred):
    """Item 6: a sample weight decayed by a learned factor per step, w = w * beta[t], and a
    weighted squared error."""
    w = 1.0
    loss = 0.0
    for b, yt, pt in zip(beta, y, pred):
        w = w * b
        loss = loss + w * (yt - pt) ** 2
    return loss


def decaying_sample_weights_ref(beta, y, pred):
    return np.sum(np.cumprod(beta) * (y - pred) ** 2)


def _beta_y_pred(rng, n):
    return uniform(rng, n, low=0.998, high=1.0), normal(rng, n), normal(rng, n)


def rows_with_zero_factors(F, v):
    """Item 6: running products of rows whose factors include exact zeros (a cohort dies
    out), read through a dot with v."""
    alive = np.ones(len(v))
    out = 0.0
    for row in F:
        alive = alive * row
        out += alive @ v
    return out


def rows_with_zero_factors_ref(F, v):
    return np.sum(np.cumprod(F, axis=0) @ v)


def _rows_zeros(rng, n, d):
    F = uniform(rng, n, d, low=0.99, high=1.01)
    F[rng.integers(n // 4, n, size=d // 2), np.arange(d // 2)] = 0.0
    return F, normal(rng, d)


def per_sample_cumprod(H):
    """Item 4: each sample's survival curve by np.cumprod in a loop over the samples, the
    curves' sum of squares."""
    tot = 0.0
    for h in H:
        tot += np.sum(np.cumprod(1.0 - h) ** 2)
    return tot


def per_sample_cumprod_ref(H):
    return np.sum(np.cumprod(1.0 - H, axis=1) ** 2)


def _hazard_samples(rng, n, d):
    return (uniform(rng, n, d, high=0.05),)


def reduce_mul_growth(R):
    """Item 4: the growth of each account over the periods as functools.reduce(operator.mul,
    ...) over the rows (1 + R[t]), its log summed."""
    g = functools.reduce(operator.mul, [1.0 + r for r in R])
    return np.sum(np.log(g))


def reduce_mul_growth_ref(R):
    return np.sum(np.log(np.prod(1.0 + R, axis=0)))


def _returns_rows(rng, n, d):
    return (normal(rng, n, d, scale=0.01),)


def survival_list_stack(p, w):
    """Item 6: survival values appended to a list, stacked with np.array, and dotted with
    weights."""
    s = 1.0
    curve = []
    for pt in p:
        s = s * (1.0 - pt)
        curve.append(s)
    return np.dot(np.array(curve), w)


def survival_list_stack_ref(p, w):
    return np.cumprod(1.0 - p) @ w


def _probs_weights(rng, n):
    return uniform(rng, n, high=0.005), normal(rng, n)


def weighted_covariance_einsum(X, w, S):
    """Item 4: a weighted covariance by np.einsum('a,ai,aj->ij', w, X, X) / sum(w), matched
    to a target by squares."""
    C = np.einsum("a,ai,aj->ij", w, X, X) / np.sum(w)
    return np.sum((C - S) ** 2)


def weighted_covariance_einsum_ref(X, w, S):
    C = (X.T * w) @ X / np.sum(w)
    return np.sum((C - S) ** 2)


def _x_w_s(rng, n, d):
    return normal(rng, n, d), uniform(rng, n, low=0.5, high=1.5), normal(rng, d, d)


def sample_energies_einsum(X, J):
    """Item 4: each sample's energy x^T J x in one einsum over the batch ('ai,ij,aj->a'),
    passed through a log-sum-exp."""
    e = np.einsum("ai,ij,aj->a", X, J, X)
    m = np.max(e)
    return m + np.log(np.sum(np.exp(e - m)))


def sample_energies_einsum_ref(X, J):
    e = np.sum((X @ J) * X, axis=1)
    m = np.max(e)
    return m + np.log(np.sum(np.exp(e - m)))


def _x_j(rng, n, d):
    return normal(rng, n, d), normal(rng, d, d, scale=0.1 * d ** -0.5)


def low_rank_scores_loop(X, U, V):
    """Item 4: a score per sample through a low-rank matrix, np.einsum('i,ir,jr,j->', x, U,
    V, x) in a loop, squared and summed."""
    tot = 0.0
    for x in X:
        s = np.einsum("i,ir,jr,j->", x, U, V, x)
        tot += s * s
    return tot


def low_rank_scores_loop_ref(X, U, V):
    s = np.sum((X @ U) * (X @ V), axis=1)
    return np.sum(s * s)


def _x_u_v(rng, n, d, r):
    return normal(rng, n, d), normal(rng, d, r, scale=d ** -0.5), normal(rng, d, r,
                                                                         scale=d ** -0.5)


def _p(name, item, sizes, argnums, inputs):
    return variant(globals(), name, item, sizes, argnums, inputs)


_sz = presets


PATTERNS = [
    _p("cohort_survival", 6, _sz({"n": 6, "d": 3}, {"n": 1000, "d": 8}), (0, 1),
       _hazard_rows),
    _p("discount_by_division", 6, _sz({"n": 8}, {"n": 2000}), (0, 1), _rates_flows),
    _p("compound_by_enumerate", 6, _sz({"n": 8}, {"n": 2000}), (0, 1), _rates_weights),
    _p("inplace_row_product", 6, _sz({"n": 6, "d": 3}, {"n": 1000, "d": 8}), (0, 1),
       _factor_rows),
    _p("first_event_probability", 6, _sz({"n": 8}, {"n": 2000}), (0,), _probs_targets),
    _p("kaplan_meier_counts", 6, _sz({"n": 8}, {"n": 2000}), (0,), _deaths_counts),
    _p("decaying_sample_weights", 6, _sz({"n": 8}, {"n": 2000}), (0, 2), _beta_y_pred),
    _p("rows_with_zero_factors", 6, _sz({"n": 8, "d": 4}, {"n": 1000, "d": 8}), (0, 1),
       _rows_zeros),
    _p("per_sample_cumprod", 4, _sz({"n": 5, "d": 6}, {"n": 500, "d": 40}), (0,),
       _hazard_samples),
    _p("reduce_mul_growth", 4, _sz({"n": 5, "d": 3}, {"n": 200, "d": 64}), (0,),
       _returns_rows),
    _p("survival_list_stack", 6, _sz({"n": 8}, {"n": 2000}), (0, 1), _probs_weights),
    _p("weighted_covariance_einsum", 4, _sz({"n": 6, "d": 3}, {"n": 2000, "d": 16}), (0, 1),
       _x_w_s),
    _p("sample_energies_einsum", 4, _sz({"n": 6, "d": 3}, {"n": 2000, "d": 16}), (0, 1),
       _x_j),
    _p("low_rank_scores_loop", 4, _sz({"n": 6, "d": 4, "r": 2}, {"n": 1000, "d": 32,
                                                                   "r": 4}), (0, 1, 2),
       _x_u_v),
]
