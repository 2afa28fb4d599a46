"""gmm: log posterior of a Gaussian mixture with a Wishart prior (evals/gmm).

Written as the reference (cpp/gradbench/evals/gmm.hpp) is: build each component's triangular
factor Q_k by filling a buffer, then loop over points and components, with a logsumexp per point.
"""
import math

import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp


def logsumexp(v):
    mx = vnp.max(v)
    return mx + vnp.log(vnp.sum(vnp.exp(v - mx)))


def log_gamma_distrib(a, p):
    """log of the multivariate gamma function Gamma_p(a) (a constant here)."""
    return 0.25 * p * (p - 1) * math.log(math.pi) + sum(
        math.lgamma(a + 0.5 * (1 - j)) for j in range(1, p + 1))


def precision_factor(qk, lk, d):
    """Q: exp(q) on the diagonal, l below it, column by column."""
    Q = vnp.zeros((d, d))
    idx = 0
    for j in range(d):
        Q[j, j] = vnp.exp(qk[j])
        for i in range(j + 1, d):
            Q[i, j] = lk[idx]
            idx += 1
    return Q


def log_wishart_prior(q, l, wishart):
    gamma, m = wishart
    K, d = q.shape
    n = d + m + 1
    C = n * d * (math.log(gamma) - 0.5 * math.log(2)) - log_gamma_distrib(0.5 * n, d)
    out = 0.0
    for k in range(K):
        frobenius = vnp.sum(vnp.exp(q[k]) ** 2) + vnp.sum(l[k] ** 2)
        out = out + 0.5 * gamma * gamma * frobenius - m * vnp.sum(q[k])
    return -out + K * C


def gmm_objective(alpha, mu, q, l, x, wishart):
    """`wishart` is the prior's (gamma, m): a tuple, so static (compiled in)."""
    n, d = x.shape
    K = alpha.shape[0]
    Qs = [precision_factor(q[k], l[k], d) for k in range(K)]
    sum_qs = [vnp.sum(q[k]) for k in range(K)]  # the reference's sum_qs, before the points
    slse = 0.0
    for i in range(n):
        beta = vnp.empty(K)
        for k in range(K):
            z = Qs[k] @ (x[i] - mu[k])
            beta[k] = alpha[k] + sum_qs[k] - 0.5 * vnp.sum(z * z)
        slse = slse + logsumexp(beta)
    constant = -n * d * 0.5 * math.log(2 * math.pi)
    return constant + slse - n * logsumexp(alpha) + log_wishart_prior(q, l, wishart)


objective = vg.jit(gmm_objective)
jacobian = vg.grad(gmm_objective, argnums=(0, 1, 2, 3))


def _arrays(input):
    d, k = input["d"], input["k"]
    f = np.float64
    return (np.asarray(input["alpha"], f).reshape(k), np.asarray(input["mu"], f).reshape(k, d),
            np.asarray(input["q"], f).reshape(k, d),
            np.asarray(input["l"], f).reshape(k, d * (d - 1) // 2),
            np.asarray(input["x"], f).reshape(input["n"], d),
            (float(input["gamma"]), int(input["m"])))


def _listify(g):
    return {name: v.tolist() for name, v in zip(("alpha", "mu", "q", "l"), g)}


def _prepare(fn, post):
    def prepare(input):
        args = _arrays(input)
        return (lambda: fn(*args)), post
    return prepare


FUNCTIONS = {"objective": _prepare(objective, float), "jacobian": _prepare(jacobian, _listify)}


def explain_args(function, input):
    """The gradient's function and arguments, for `vg.explain` (bench/gradbench/run.py)."""
    return gmm_objective, _arrays(input), (0, 1, 2, 3)
