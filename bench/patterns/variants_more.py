"""More natural variants (items 1-4): autoregressive windows before t, strided 2-D patches,
pair forces written both ways (Newton's third law), degrees counted into a buffer, a loss from
two comprehensions, and triangular reads of the slice after i (shapes that shrink with i)."""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import vecgrad.numpy as vnp

from .core import Pattern, normal, segment_sum, segments
from .indices import random_edges


def ar_windows(x, w):
    """Item 2 (variant): an autoregressive fit, each x[t] predicted from the k values before
    it, pred = w @ x[t-k:t] for t in range(k, T), squared errors summed."""
    k = w.shape[0]
    loss = 0.0
    for t in range(k, len(x)):
        loss = loss + (x[t] - w @ x[t - k:t]) ** 2
    return loss


def ar_windows_ref(x, w):
    k = w.shape[0]
    win = sliding_window_view(x, k)[:-1]
    return np.sum((x[k:] - win @ w) ** 2)


def ar_inputs(rng, T, k):
    return normal(rng, T), normal(rng, k, scale=k ** -0.5)


def strided_conv2d(img, K, s):
    """Item 2 (variant): a 2-D convolution at stride s, patches img[i*s:i*s+p, j*s:j*s+p] in
    nested loops, outputs collected in a nested list comprehension and stacked."""
    p = K.shape[0]
    H = (img.shape[0] - p) // s + 1
    W = (img.shape[1] - p) // s + 1
    out = vnp.stack([vnp.stack([vnp.sum(img[i * s:i * s + p, j * s:j * s + p] * K)
                                for j in range(W)]) for i in range(H)])
    return vnp.sum(vnp.tanh(out) ** 2)


def strided_conv2d_ref(img, K, s):
    p = K.shape[0]
    win = sliding_window_view(img, (p, p))[::s, ::s]
    return np.sum(np.tanh(np.einsum("ijab,ab->ij", win, K)) ** 2)


def strided_conv2d_inputs(rng, n, p, s):
    return normal(rng, n, n), normal(rng, p, p, scale=1.0 / p), s


def pair_forces_newton(x, k, edges):
    """Items 1, 3 (variant): spring forces along an edge list of tuples, written both ways,
    F[i] += f and F[j] -= f, then the work against a field."""
    F = vnp.zeros_like(x)
    for i, j in edges:
        f = k * (x[j] - x[i])
        F[i] += f
        F[j] -= f
    return vnp.sum(F * vnp.sin(x))


def pair_forces_newton_ref(x, k, src, dst, to_src, to_dst):
    f = k * (x[dst] - x[src])
    return np.sum((segment_sum(f, to_src) - segment_sum(f, to_dst)) * np.sin(x))


def pair_forces_inputs(rng, n, e, d):
    return normal(rng, n, d), np.array(0.3), random_edges(rng, n, e)


def _prep_forces(args):
    x, k, edges = args
    src, dst = np.asarray(edges).T
    return x, k, src, dst, segments(src, len(x)), segments(dst, len(x))


def degree_buffer_norm(x, edges):
    """Items 1, 3 (variant): degrees counted into a float buffer, deg[d] += 1.0 over the
    edges, then neighbour sums divided by them: repeated indices, a constant written."""
    n = x.shape[0]
    deg = vnp.ones(n)
    agg = vnp.zeros_like(x)
    for s, d in edges:
        deg[d] += 1.0
        agg[d] += x[s]
    return vnp.sum((agg / deg[:, None] - x) ** 2)


def degree_buffer_norm_ref(x, src, dst, plan):
    deg = 1.0 + np.bincount(dst, minlength=len(x))
    return np.sum((segment_sum(x[src], plan) / deg[:, None] - x) ** 2)


def degree_inputs(rng, n, e, d):
    return normal(rng, n, d), random_edges(rng, n, e)


def _prep_degree(args):
    x, edges = args
    src, dst = np.asarray(edges).T
    return x, src, dst, segments(dst, len(x))


def two_comprehensions(X, Y, w):
    """Item 4 (variant): a loss from two comprehensions over different sequences, a data term
    over the rows of X and a contrastive term over the rows of Y, added."""
    data = sum(vnp.log1p(vnp.exp(-(x @ w))) for x in X)
    contrast = sum(vnp.log1p(vnp.exp(y @ w)) for y in Y)
    return data + 0.5 * contrast


def two_comprehensions_ref(X, Y, w):
    return np.sum(np.log1p(np.exp(-(X @ w)))) + 0.5 * np.sum(np.log1p(np.exp(Y @ w)))


def two_comprehensions_inputs(rng, n, m, d):
    return normal(rng, n, d), normal(rng, m, d), normal(rng, d, scale=d ** -0.5)


def shrinking_slices(x, a):
    """Items 2, 4 (variant): a triangular pair energy written with the slice after i,
    d = x[i+1:] - x[i], so each iteration's operands are one row shorter."""
    e = 0.0
    for i in range(len(x) - 1):
        d = x[i + 1:] - x[i]
        e = e + vnp.sum(vnp.exp(-a * vnp.sum(d ** 2, axis=1)))
    return e


def shrinking_slices_ref(x, a):
    i, j = np.triu_indices(len(x), 1)
    return np.sum(np.exp(-a * np.sum((x[j] - x[i]) ** 2, axis=1)))


def shrinking_inputs(rng, n, d):
    return normal(rng, n, d), np.array(0.5)


def forced_ode(theta, x0, dt, steps):
    """Item 5 (variant): an Euler integrator with a time-dependent forcing sin(3 t) computed
    from the Python float t = k * dt, so every step adds a different number; running cost."""
    x, cost = x0, 0.0
    for k in range(steps):
        x = x + dt * (np.tanh(theta @ x) + np.sin(3.0 * k * dt))
        cost = cost + dt * vnp.sum(x ** 2)
    return cost


def forced_ode_ref(theta, x0, dt, steps):
    x, xs = x0, np.empty((steps,) + x0.shape)
    for k in range(steps):
        x = xs[k] = x + dt * (np.tanh(theta @ x) + np.sin(3.0 * k * dt))
    return dt * np.sum(xs ** 2)


def forced_ode_inputs(rng, d, b, steps):
    return normal(rng, d, d, scale=d ** -0.5), normal(rng, d, b), 0.05, steps


def harmonic_average(x):
    """Item 6 (variant): a running average with a coefficient that changes every step,
    c = (1 - 1/(t+2)) * c + x[t] / (t+2) written with Python numbers, collected in a list."""
    c, out = 0.0, []
    for t in range(len(x)):
        c = (1.0 - 1.0 / (t + 2)) * c + x[t] / (t + 2)
        out.append(c)
    return vnp.sum(vnp.stack(out) ** 2)


def harmonic_average_ref(x):
    # prod of (s+1)/(s+2) from s+1 to t is (s+2)/(t+2): c_t = cumsum(x_s) / (t+2)
    return np.sum((np.cumsum(x, axis=0) / np.arange(2, len(x) + 2)[:, None]) ** 2)


def harmonic_inputs(rng, T, d):
    return (normal(rng, T, d),)


PATTERNS = [
    Pattern("ar_windows", 2, ar_windows, ar_windows_ref, ar_inputs,
            {"small": {"T": 12, "k": 3}, "default": {"T": 5000, "k": 64}}, (0, 1),
            tags=("variant",)),
    Pattern("strided_conv2d", 2, strided_conv2d, strided_conv2d_ref, strided_conv2d_inputs,
            {"small": {"n": 9, "p": 3, "s": 2}, "default": {"n": 130, "p": 4, "s": 2}},
            (0, 1), tags=("variant",)),
    Pattern("pair_forces_newton", 3, pair_forces_newton, pair_forces_newton_ref,
            pair_forces_inputs,
            {"small": {"n": 5, "e": 9, "d": 2}, "default": {"n": 1000, "e": 4000, "d": 3}},
            (0, 1), prepare=_prep_forces, tags=("variant",)),
    Pattern("degree_buffer_norm", 3, degree_buffer_norm, degree_buffer_norm_ref,
            degree_inputs,
            {"small": {"n": 5, "e": 9, "d": 2}, "default": {"n": 1000, "e": 4000, "d": 16}},
            (0,), prepare=_prep_degree, tags=("variant",)),
    Pattern("two_comprehensions", 4, two_comprehensions, two_comprehensions_ref,
            two_comprehensions_inputs,
            {"small": {"n": 5, "m": 4, "d": 3}, "default": {"n": 3000, "m": 2000, "d": 256}},
            (0, 1, 2), tags=("variant",)),
    Pattern("forced_ode", 5, forced_ode, forced_ode_ref, forced_ode_inputs,
            {"small": {"d": 3, "b": 2, "steps": 5}, "default": {"d": 32, "b": 64, "steps": 100}},
            (0, 1), target="rolled", tags=("variant",)),
    Pattern("harmonic_average", 6, harmonic_average, harmonic_average_ref, harmonic_inputs,
            {"small": {"T": 6, "d": 2}, "default": {"T": 1000, "d": 64}}, (0,), target="scan",
            tags=("variant",)),
    Pattern("shrinking_slices", 4, shrinking_slices, shrinking_slices_ref, shrinking_inputs,
            {"small": {"n": 6, "d": 2}, "default": {"n": 300, "d": 3}}, (0, 1),
            tags=("variant",)),
]
