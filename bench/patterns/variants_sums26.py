"""Products, cumulative products and sums over samples written the ways users write them (sums
lane, session 26): survival curves with hazards of exactly 1 (zeros in the running product),
running products of narrow rows, growth with deposits and returns discounted backwards (affine
recurrences whose coefficients vary per step), polynomials by Horner's rule from a Python float
and by a comprehension of powers, nested comprehensions, sums over enumerate(zip(...)) with a
condition, kernels as lambdas and functools.partial, mixed Python floats and arrays, and
Cholesky factors per sample (their VJPs are stacks of small triangular solves), and einsums
of three and four operands.
References are the hand-vectorized forms a NumPy user would write (np.cumprod, np.polyval, the
closed form P * cumsum(b / P) of an affine recurrence, slices and matrix products)."""
from __future__ import annotations

import functools

import numpy as np

from .core import Pattern, normal, uniform


def survival_with_certain_events(p):
    """Item 6: a survival curve whose hazards include exact 1s (the running product of
    (1 - hazard) hits zero and stays there), summed."""
    s = 1.0
    tot = 0.0
    for pi in p:
        s = s * (1.0 - pi)
        tot += s
    return tot


def survival_with_certain_events_ref(p):
    return np.sum(np.cumprod(1.0 - p))


def _hazards_ones(rng, n):
    p = uniform(rng, n, high=0.02)
    p[rng.choice(n, size=max(1, n // 200), replace=False)] = 1.0
    return (p,)


def running_product_rows(F, v):
    """Item 6: the running product of narrow rows of factors, w = w * F[t], each step's
    state read through a dot product with v."""
    w = np.ones(F.shape[1])
    tot = 0.0
    for t in range(F.shape[0]):
        w = w * F[t]
        tot = tot + w @ v
    return tot


def running_product_rows_ref(F, v):
    return np.sum(np.cumprod(F, axis=0) @ v)


def _factors_v(rng, n, d):
    return uniform(rng, n, d, low=0.97, high=1.03), normal(rng, d)


def horner_from_float(c, x):
    """Item 6: Horner's rule from a Python float over a list of coefficients, the polynomial's
    values at x summed after a square root of (1 + y^2)."""
    y = 0.0
    for ck in list(c):
        y = y * x + ck
    return np.sum(np.sqrt(1.0 + y * y))


def horner_from_float_ref(c, x):
    y = np.polyval(c, x)
    return np.sum(np.sqrt(1.0 + y * y))


def _coeffs_x(rng, n, k):
    return normal(rng, k, scale=0.5), uniform(rng, n, low=-1.0, high=1.0)


def power_series_comprehension(c, x):
    """Item 4: a polynomial as a comprehension of powers, sum(c[k] * x ** k), then squared."""
    y = sum(c[k] * x ** k for k in range(len(c)))
    return np.sum(y ** 2)


def power_series_comprehension_ref(c, x):
    return np.sum(np.polyval(c[::-1], x) ** 2)


def growth_with_deposits(r, d):
    """Item 6: a balance growing by a rate that varies per step with a deposit each step,
    w = w * r[t] + d[t] (an affine recurrence), every balance summed."""
    w = 0.0
    tot = 0.0
    for t in range(len(r)):
        w = w * r[t] + d[t]
        tot = tot + w
    return tot


def growth_with_deposits_ref(r, d):
    P = np.cumprod(r)
    return np.sum(P * np.cumsum(d / P))


def _rates_deposits(rng, n):
    return uniform(rng, n, low=0.99, high=1.01), normal(rng, n)


def returns_discounted_backwards(r, g):
    """Item 6: returns discounted backwards with a discount per step, G = r[t] + g[t] * G over
    reversed(range(T)), the squared returns summed."""
    G = 0.0
    tot = 0.0
    for t in reversed(range(len(r))):
        G = r[t] + g[t] * G
        tot = tot + G * G
    return tot


def returns_discounted_backwards_ref(r, g):
    rr, gg = r[::-1], g[::-1]
    P = np.cumprod(np.concatenate([[1.0], gg[1:]]))
    G = P * np.cumsum(rr / P)
    return np.sum(G * G)


def _rewards_discounts(rng, n):
    return normal(rng, n), uniform(rng, n, low=0.9, high=0.999)


def nested_bilinear_comprehension(u, M, v):
    """Item 4: a bilinear form as a nested comprehension over rows and their entries,
    sum(u[i] * sum(M[i, j] * v[j] for j) for i)."""
    return sum(u[i] * sum(M[i, j] * v[j] for j in range(M.shape[1]))
               for i in range(M.shape[0]))


def nested_bilinear_comprehension_ref(u, M, v):
    return u @ M @ v


def _u_m_v(rng, n, m):
    return normal(rng, n), normal(rng, n, m), normal(rng, m)


def enumerate_zip_even_terms(w, X, Y):
    """Item 4: a sum over enumerate(zip(X, Y)) keeping the even samples only, each a softplus
    of a difference of scores."""
    return sum(np.log1p(np.exp(x @ w - y @ w)) for i, (x, y) in enumerate(zip(X, Y))
               if i % 2 == 0)


def enumerate_zip_even_terms_ref(w, X, Y):
    return np.sum(np.log1p(np.exp(X[::2] @ w - Y[::2] @ w)))


def _w_x_y(rng, n, d):
    return normal(rng, d, scale=d ** -0.5), normal(rng, n, d), normal(rng, n, d)


def lambda_kernel_pairs(c, X, Y):
    """Item 4: a Gaussian kernel passed as a lambda, summed over zip(X, Y) with a weight per
    pair: sum(c[i] * k(x, y))."""
    k = lambda a, b: np.exp(-np.sum((a - b) ** 2))  # (as users write it)
    return sum(ci * k(x, y) for ci, x, y in zip(c, X, Y))


def lambda_kernel_pairs_ref(c, X, Y):
    return np.sum(c * np.exp(-np.sum((X - Y) ** 2, axis=1)))


def _c_x_y(rng, n, d):
    return normal(rng, n), normal(rng, n, d, scale=0.3), normal(rng, n, d, scale=0.3)


def partial_clip_log_wealth(R):
    """Item 6: wealth compounded by factors clipped by a functools.partial of np.clip, the
    log-wealth of every step summed."""
    clip = functools.partial(np.clip, a_min=0.9, a_max=1.1)
    w = np.ones(R.shape[1])
    tot = 0.0
    for t in range(R.shape[0]):
        w = w * clip(R[t])
        tot = tot + np.sum(np.log(w))
    return tot


def partial_clip_log_wealth_ref(R):
    return np.sum(np.log(np.cumprod(np.clip(R, 0.9, 1.1), axis=0)))


def _growth(rng, n, d):
    return (uniform(rng, n, d, low=0.85, high=1.15),)


def float_array_survival_mix(p):
    """Item 6: a survival product with a Python float scale, s = s * (1.0 - 0.5 * p[t]), and a
    loss mixing it with a per-step array term: 0.1 * s + p[t] ** 2."""
    s = 1.0
    loss = 0.0
    for t in range(len(p)):
        s = s * (1.0 - 0.5 * p[t])
        loss = loss + 0.1 * s + p[t] ** 2
    return loss


def float_array_survival_mix_ref(p):
    return np.sum(0.1 * np.cumprod(1.0 - 0.5 * p) + p ** 2)


def _hazards(rng, n):
    return (uniform(rng, n, high=0.1),)


def price_paths_stacked(r):
    """Item 6: price paths from returns, price = price * (1 + r[t]) appended to a list and
    stacked, the log-prices summed."""
    price = np.ones(r.shape[1])
    path = []
    for t in range(r.shape[0]):
        price = price * (1.0 + r[t])
        path.append(price)
    return np.sum(np.log(np.stack(path)))


def price_paths_stacked_ref(r):
    return np.sum(np.log(np.cumprod(1.0 + r, axis=0)))


def _returns(rng, n, d):
    return (normal(rng, n, d, scale=0.01),)


def product_of_mixed_factors(x, y):
    """Item 6: a running product of two kinds of factors per step, s = s * x[t] * (2.0 - y[t]),
    every partial product summed."""
    s = 1.0
    tot = 0.0
    for xt, yt in zip(x, y):
        s = s * xt * (2.0 - yt)
        tot = tot + s
    return tot


def product_of_mixed_factors_ref(x, y):
    return np.sum(np.cumprod(x * (2.0 - y)))


def _two_factors(rng, n):
    return uniform(rng, n, low=0.95, high=1.05), uniform(rng, n, low=0.95, high=1.05)


def gaussian_nll_per_sample(A, X):
    """Item 4: a Gaussian negative log-likelihood per sample with a covariance of its own,
    S = a a^T + I: its Cholesky factor, the whitened sample solve(L, x), summed over
    zip(A, X)."""
    loss = 0.0
    for a, x in zip(A, X):
        L = np.linalg.cholesky(a @ a.T + np.eye(len(x)))
        z = np.linalg.solve(L, x)
        loss += 0.5 * z @ z + np.sum(np.log(np.diag(L)))
    return loss


def gaussian_nll_per_sample_ref(A, X):
    L = np.linalg.cholesky(A @ np.swapaxes(A, 1, 2) + np.eye(X.shape[1]))
    z = np.linalg.solve(L, X[:, :, None])[:, :, 0]
    return 0.5 * np.sum(z * z) + np.sum(np.log(np.diagonal(L, axis1=1, axis2=2)))


def _covs_samples(rng, n, d):
    return normal(rng, n, d, d, scale=0.5), normal(rng, n, d)


def cholesky_trace_comprehension(A):
    """Item 4: the traces of Cholesky factors of a a^T + 2 I, one per matrix, in a generator
    expression summed by Python's sum."""
    return sum(np.trace(np.linalg.cholesky(a @ a.T + 2.0 * np.eye(a.shape[0]))) for a in A)


def cholesky_trace_comprehension_ref(A):
    L = np.linalg.cholesky(A @ np.swapaxes(A, 1, 2) + 2.0 * np.eye(A.shape[1]))
    return np.sum(np.trace(L, axis1=1, axis2=2))


def _mats(rng, n, d):
    return (normal(rng, n, d, d, scale=0.5),)


def einsum_chain_samples(X, A, B):
    """Item 4: a bilinear form through two matrices per sample,
    np.einsum('i,ij,jk,k->', x, A, B, x), summed over the rows by Python's sum."""
    return sum(np.einsum("i,ij,jk,k->", x, A, B, x) for x in X)


def einsum_chain_samples_ref(X, A, B):
    return np.sum((X @ A @ B) * X)


def _x_a_b(rng, n, d):
    return normal(rng, n, d), normal(rng, d, d, scale=d ** -0.5), \
        normal(rng, d, d, scale=d ** -0.5)


def einsum_weighted_gram(X, w, C):
    """Item 4: a weighted Gram matrix in one three-operand einsum,
    np.einsum('ai,a,aj->ij', X, w, X), matched to a target by squares."""
    G = np.einsum("ai,a,aj->ij", X, w, X)
    return np.sum((G - C) ** 2)


def einsum_weighted_gram_ref(X, w, C):
    G = (X * w[:, None]).T @ X
    return np.sum((G - C) ** 2)


def _x_w_c(rng, n, d):
    return normal(rng, n, d), uniform(rng, n), normal(rng, d, d)


def _p(name, item, sizes, argnums, inputs):
    mod = globals()
    return Pattern(name, item, mod[name], mod[name + "_ref"], inputs, sizes, argnums,
                   target="scan" if item == 6 else "parallel",
                   tags=("variant", "sums", "plain-numpy"))


def _sz(small, default):
    return {"small": small, "default": default}


PATTERNS = [
    _p("survival_with_certain_events", 6, _sz({"n": 9}, {"n": 2000}), (0,), _hazards_ones),
    _p("running_product_rows", 6, _sz({"n": 6, "d": 3}, {"n": 1000, "d": 4}), (0, 1),
       _factors_v),
    _p("horner_from_float", 6, _sz({"n": 5, "k": 4}, {"n": 2000, "k": 8}), (0, 1), _coeffs_x),
    _p("power_series_comprehension", 4, _sz({"n": 5, "k": 4}, {"n": 2000, "k": 8}), (0, 1),
       _coeffs_x),
    _p("growth_with_deposits", 6, _sz({"n": 8}, {"n": 1000}), (0, 1), _rates_deposits),
    _p("returns_discounted_backwards", 6, _sz({"n": 8}, {"n": 1000}), (0, 1),
       _rewards_discounts),
    _p("nested_bilinear_comprehension", 4, _sz({"n": 4, "m": 3}, {"n": 60, "m": 8}),
       (0, 1, 2), _u_m_v),
    _p("enumerate_zip_even_terms", 4, _sz({"n": 7, "d": 3}, {"n": 2000, "d": 32}), (0,),
       _w_x_y),
    _p("lambda_kernel_pairs", 4, _sz({"n": 6, "d": 3}, {"n": 2000, "d": 16}), (0, 1, 2),
       _c_x_y),
    _p("partial_clip_log_wealth", 6, _sz({"n": 6, "d": 3}, {"n": 1000, "d": 16}), (0,),
       _growth),
    _p("float_array_survival_mix", 6, _sz({"n": 8}, {"n": 1000}), (0,), _hazards),
    _p("price_paths_stacked", 6, _sz({"n": 6, "d": 3}, {"n": 500, "d": 8}), (0,), _returns),
    _p("product_of_mixed_factors", 6, _sz({"n": 8}, {"n": 1000}), (0, 1), _two_factors),
    _p("gaussian_nll_per_sample", 4, _sz({"n": 5, "d": 3}, {"n": 400, "d": 5}), (0, 1),
       _covs_samples),
    _p("cholesky_trace_comprehension", 4, _sz({"n": 5, "d": 3}, {"n": 400, "d": 6}), (0,),
       _mats),
    _p("einsum_chain_samples", 4, _sz({"n": 5, "d": 3}, {"n": 1000, "d": 16}), (0, 1, 2),
       _x_a_b),
    _p("einsum_weighted_gram", 4, _sz({"n": 6, "d": 3}, {"n": 2000, "d": 16}), (0, 1),
       _x_w_c),
]
