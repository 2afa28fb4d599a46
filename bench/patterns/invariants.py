"""Item 7, loop invariants: a value that does not change across the iterations (a component's
precision matrix, shared kernel hyper-parameters, shared weights, a kernel passed as an
argument) is used by every iteration and must be passed once, not stacked per iteration."""
from __future__ import annotations

import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp

from .core import Pattern, normal


def gmm_loglik(means, chols, logw, x):
    """Item 7: a loop-style Gaussian mixture log-likelihood; the precision Q[k] = L_k L_k^T of
    each component is used for every point."""
    K = means.shape[0]
    Q = [chols[k] @ chols[k].T for k in range(K)]
    half_logdet = [vnp.sum(vnp.log(vnp.abs(vnp.diag(chols[k])))) for k in range(K)]
    total = 0.0
    for i in range(len(x)):
        terms = []
        for k in range(K):
            d = x[i] - means[k]
            terms.append(logw[k] + half_logdet[k] - 0.5 * d @ Q[k] @ d)
        total += vg.nn.logsumexp(vnp.stack(terms))
    return total - len(x) * vg.nn.logsumexp(logw)


def gmm_loglik_ref(means, chols, logw, x):
    d = x[:, None, :] - means[None]                        # (n, K, D)
    y = np.einsum("nkd,kde->nke", d, chols)                # L_k^T d
    half_logdet = np.log(np.abs(np.diagonal(chols, axis1=1, axis2=2))).sum(1)
    t = logw + half_logdet - 0.5 * np.einsum("nke,nke->nk", y, y)
    m = t.max(1, keepdims=True)
    lse_w = np.log(np.exp(logw - logw.max()).sum()) + logw.max()
    return np.sum(np.log(np.exp(t - m).sum(1)) + m[:, 0]) - len(x) * lse_w


def gmm_inputs(rng, n, K, D):
    chols = np.tril(normal(rng, K, D, D, scale=0.2)) + np.eye(D)
    return normal(rng, K, D), chols, normal(rng, K, scale=0.1), normal(rng, n, D)


def rbf_kernel_quadratic(x, alpha, log_ell, log_s2):
    """Item 7: an RBF kernel matrix filled entry by entry with shared hyper-parameters,
    K[i, j] = s2 * exp(-|x_i - x_j|^2 / (2 ell^2)); the quadratic form alpha @ K @ alpha."""
    n = len(x)
    s2, ell = vnp.exp(log_s2), vnp.exp(log_ell)
    K = vnp.zeros((n, n))
    for i in range(n):
        for j in range(n):
            K[i, j] = s2 * vnp.exp(-vnp.sum((x[i] - x[j]) ** 2) / (2 * ell ** 2))
    return alpha @ K @ alpha


def rbf_kernel_quadratic_ref(x, alpha, log_ell, log_s2):
    sq = np.sum(x ** 2, axis=1)
    D = np.maximum(sq[:, None] + sq[None, :] - 2 * x @ x.T, 0.0)
    K = np.exp(log_s2) * np.exp(-D / (2 * np.exp(log_ell) ** 2))
    return alpha @ K @ alpha


def rbf_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, n), np.array(0.3), np.array(-0.2)


def whitened_energy(x, mu, P):
    """Item 7: one precision matrix P shared by every point, summed with map:
    sum(map(lambda xi: (xi - mu) @ P @ (xi - mu), x))."""
    return sum(map(lambda xi: (xi - mu) @ P @ (xi - mu), x))  # noqa: C417 - map as users write it


def whitened_energy_ref(x, mu, P):
    d = x - mu
    return np.sum((d @ P) * d)


def whitened_inputs(rng, n, d):
    A = normal(rng, d, d, scale=d ** -0.5)
    return normal(rng, n, d), normal(rng, d), A @ A.T + np.eye(d)


def rbf(u, v, theta):
    """A Gaussian kernel with inverse squared length-scale theta."""
    return vnp.exp(-theta * vnp.sum((u - v) ** 2))


def kernel_pair_sum(xs, ys, theta, kernel):
    """Item 7: a kernel function passed as an argument, summed over matching pairs with a
    shared parameter: sum(kernel(x, y, theta) for x, y in zip(xs, ys))."""
    return sum(kernel(x, y, theta) for x, y in zip(xs, ys))


def kernel_pair_sum_ref(xs, ys, theta, kernel):
    return np.sum(np.exp(-theta * np.sum((xs - ys) ** 2, axis=1)))


def kernel_pair_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, n, d), np.array(0.2), rbf


def shared_layer_map(W, b, X):
    """Item 7: a layer with shared W and b mapped over the samples with map, stacked."""
    H = vnp.stack(list(map(lambda x: vnp.tanh(W @ x + b), X)))  # noqa: C417 - as users write it
    return vnp.sum(H ** 2)


def shared_layer_map_ref(W, b, X):
    return np.sum(np.tanh(X @ W.T + b) ** 2)


def shared_layer_inputs(rng, n, d, h):
    return normal(rng, h, d, scale=d ** -0.5), normal(rng, h, scale=0.1), normal(rng, n, d)


PATTERNS = [
    Pattern("gmm_loglik", 7, gmm_loglik, gmm_loglik_ref, gmm_inputs,
            {"small": {"n": 6, "K": 2, "D": 3}, "default": {"n": 1000, "K": 5, "D": 10}},
            (0, 1, 2)),
    Pattern("rbf_kernel_quadratic", 7, rbf_kernel_quadratic, rbf_kernel_quadratic_ref,
            rbf_inputs, {"small": {"n": 5, "d": 2}, "default": {"n": 128, "d": 16}},
            (0, 1, 2, 3)),
    Pattern("whitened_energy", 7, whitened_energy, whitened_energy_ref, whitened_inputs,
            {"small": {"n": 6, "d": 3}, "default": {"n": 3000, "d": 16}}, (0, 1, 2),
            target="single"),
    Pattern("kernel_pair_sum", 7, kernel_pair_sum, kernel_pair_sum_ref, kernel_pair_inputs,
            {"small": {"n": 6, "d": 3}, "default": {"n": 3000, "d": 16}}, (0, 1, 2),
            target="single"),
    Pattern("shared_layer_map", 7, shared_layer_map, shared_layer_map_ref,
            shared_layer_inputs, {"small": {"n": 6, "d": 3, "h": 4},
                                  "default": {"n": 2000, "d": 32, "h": 32}}, (0, 1),
            target="single"),
]
