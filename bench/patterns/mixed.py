"""Item 4, mixed sources: sums and chains whose operands come from several places at once
(slices, inputs, constants, zero boundaries), and losses accumulated from two kinds of terms."""
from __future__ import annotations

import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp

from .core import Pattern, normal, uniform


def all_pairs(n):
    """Every (i, j) with i < j, as a list of Python-int pairs."""
    return [(i, j) for i in range(n) for j in range(i + 1, n)]


def polynomial_kernel_pairs(x, a, b, pairs):
    """Item 4: a kernel summed with constants over pairs, total += 1 + a*r + b*r**2."""
    total = 0.0
    for i, j in pairs:
        r = vnp.sqrt(vnp.sum((x[i] - x[j]) ** 2))
        total += 1 + a * r + b * r ** 2
    return total


def polynomial_kernel_pairs_ref(x, a, b, I, J):
    r = np.sqrt(np.sum((x[I] - x[J]) ** 2, axis=1))
    return np.sum(1 + a * r + b * r ** 2)


def poly_pairs_inputs(rng, n, d):
    return normal(rng, n, d), np.array(0.5), np.array(-0.1), all_pairs(n)


def _prep_pairs(args):
    *rest, pairs = args
    I, J = np.array(pairs).T
    return (*rest, I, J)


def laplacian_zero_boundary(u):
    """Item 4: a 5-point Laplacian with a zero boundary, one row at a time; neighbours off the
    grid are 0.0, so each sum mixes rows of u, shifted rows and constants."""
    n, m = u.shape
    lap = vnp.zeros((n, m))
    for i in range(n):
        up = u[i - 1] if i > 0 else 0.0
        down = u[i + 1] if i < n - 1 else 0.0
        left = vnp.concatenate([vnp.zeros(1), u[i, :-1]])
        right = vnp.concatenate([u[i, 1:], vnp.zeros(1)])
        lap[i] = up + down + left + right - 4 * u[i]
    return vnp.sum(lap ** 2)


def laplacian_zero_boundary_ref(u):
    p = np.pad(u, 1)
    lap = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * u
    return np.sum(lap ** 2)


def grid_inputs(rng, n):
    return (normal(rng, n, n),)


def ising_energy(s, J, h):
    """Item 4: nearest-neighbour sums on a grid with a zero boundary, scalar per site over a
    batch of fields: (s[:, i-1, j] if i > 0 else 0.0) + ... accumulated into E."""
    _, n, m = s.shape
    E = 0.0
    for i in range(n):
        for j in range(m):
            nb = ((s[:, i - 1, j] if i > 0 else 0.0) + (s[:, i + 1, j] if i < n - 1 else 0.0)
                  + (s[:, i, j - 1] if j > 0 else 0.0) + (s[:, i, j + 1] if j < m - 1 else 0.0))
            E = E - vnp.sum(J * vnp.tanh(s[:, i, j]) * vnp.tanh(nb)) - h * vnp.sum(s[:, i, j])
    return E


def ising_energy_ref(s, J, h):
    p = np.pad(s, ((0, 0), (1, 1), (1, 1)))
    nb = p[:, :-2, 1:-1] + p[:, 2:, 1:-1] + p[:, 1:-1, :-2] + p[:, 1:-1, 2:]
    return -np.sum(J * np.tanh(s) * np.tanh(nb)) - h * np.sum(s)


def ising_inputs(rng, b, n):
    return normal(rng, b, n, n), np.array(0.3), np.array(0.1)


def heat_residual(u, kappa, r):
    """Item 4: a finite-difference stencil residual, u[t+1] - u[t] - kappa*r*(u[t, :-2] -
    2u[t, 1:-1] + u[t, 2:]) over the interior, summed over time steps."""
    total = 0.0
    for t in range(u.shape[0] - 1):
        lap = u[t, :-2] - 2 * u[t, 1:-1] + u[t, 2:]
        total = total + vnp.sum((u[t + 1, 1:-1] - u[t, 1:-1] - kappa * r * lap) ** 2)
    return total


def heat_residual_ref(u, kappa, r):
    lap = u[:-1, :-2] - 2 * u[:-1, 1:-1] + u[:-1, 2:]
    return np.sum((u[1:, 1:-1] - u[:-1, 1:-1] - kappa * r * lap) ** 2)


def heat_inputs(rng, T, n):
    return normal(rng, T, n), np.array(0.8), 0.25


def negative_sampling(Win, Wout, pairs, negatives):
    """Item 4: skip-gram with negative sampling, loss accumulated from two kinds of terms:
    loss += -log sigmoid(u_o . v_c), then loss += -log sigmoid(-u_k . v_c)."""
    loss = 0.0
    for (c, o), k in zip(pairs, negatives):
        v = Win[c]
        loss += -vnp.log(vg.nn.sigmoid(Wout[o] @ v))
        loss += -vnp.log(vg.nn.sigmoid(-(Wout[k] @ v)))
    return loss


def negative_sampling_ref(Win, Wout, C, O, K):
    v = Win[C]
    pos = np.einsum("ij,ij->i", Wout[O], v)
    neg = np.einsum("ij,ij->i", Wout[K], v)
    return np.sum(np.logaddexp(0.0, -pos)) + np.sum(np.logaddexp(0.0, neg))


def negative_sampling_inputs(rng, vocab, d, n):
    ids = rng.integers(0, vocab, (n, 3))
    return (normal(rng, vocab, d, scale=0.3), normal(rng, vocab, d, scale=0.3),
            [(int(c), int(o)) for c, o, _ in ids], [int(k) for k in ids[:, 2]])


def _prep_skipgram(args):
    Win, Wout, pairs, negatives = args
    C, O = np.array(pairs).T
    return Win, Wout, C, O, np.asarray(negatives)


def lennard_jones_cutoff(x, rc):
    """Item 4: pairwise potentials with a cutoff via where, summed over i < j in nested ranges."""
    n = x.shape[0]
    E = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            r2 = vnp.sum((x[i] - x[j]) ** 2)
            inv6 = 1.0 / r2 ** 3
            E = E + vnp.where(r2 < rc ** 2, 4.0 * (inv6 ** 2 - inv6), 0.0)
    return E


def lennard_jones_cutoff_ref(x, rc):
    i, j = np.triu_indices(len(x), 1)
    r2 = np.sum((x[i] - x[j]) ** 2, axis=1)
    inv6 = 1.0 / r2 ** 3
    return np.sum(np.where(r2 < rc ** 2, 4.0 * (inv6 ** 2 - inv6), 0.0))


def lattice(rng, n, spacing=1.1, jitter=0.05):
    """n points near a cubic lattice (no two closer than about spacing - 2 jitter)."""
    side = int(np.ceil(n ** (1 / 3)))
    grid = np.stack(np.meshgrid(*[np.arange(side)] * 3, indexing="ij"), -1).reshape(-1, 3)
    return spacing * grid[:n] + jitter * rng.standard_normal((n, 3))


def lj_inputs(rng, n):
    return lattice(rng, n), 2.5


def robust_regression(w, X, y, delta, lam):
    """Item 4: a loss accumulated from two kinds of terms per sample, a Huber residual (where)
    and a loop-invariant L2 penalty, loss += ... twice per iteration."""
    loss = 0.0
    for i in range(len(y)):
        r = X[i] @ w - y[i]
        loss += vnp.where(vnp.abs(r) < delta, 0.5 * r ** 2, delta * (vnp.abs(r) - 0.5 * delta))
        loss += lam * vnp.sum(w ** 2) / len(y)
    return loss


def robust_regression_ref(w, X, y, delta, lam):
    r = X @ w - y
    a = np.abs(r)
    return np.sum(np.where(a < delta, 0.5 * r ** 2, delta * (a - 0.5 * delta))) + lam * (w @ w)


def regression_inputs(rng, n, d):
    X = normal(rng, n, d)
    w = normal(rng, d, scale=0.5)
    return w, X, X @ normal(rng, d, scale=0.5) + uniform(rng, n, low=-2, high=2), 1.0, 0.01


def kde_negative_log_likelihood(x, data, log_h):
    """Item 4: a Gaussian kernel density estimate, one query at a time: a kernel summed over
    the shared data with constants (1/n, the normaliser, an epsilon), then -log."""
    h = vnp.exp(log_h)
    n, d = data.shape
    nll = 0.0
    for i in range(len(x)):
        k = vnp.exp(-vnp.sum((x[i] - data) ** 2, axis=1) / (2 * h ** 2))
        nll = nll - vnp.log(vnp.sum(k) / (n * (2 * np.pi) ** (d / 2) * h ** d) + 1e-12)
    return nll


def kde_negative_log_likelihood_ref(x, data, log_h):
    h = np.exp(log_h)
    n, d = data.shape
    sq = (x ** 2).sum(1)[:, None] + (data ** 2).sum(1)[None] - 2 * x @ data.T
    dens = np.exp(-sq / (2 * h ** 2)).sum(1) / (n * (2 * np.pi) ** (d / 2) * h ** d)
    return -np.sum(np.log(dens + 1e-12))


def kde_inputs(rng, n, m, d):
    return normal(rng, n, d), normal(rng, m, d), np.array(0.0)


def vae_loss(mu, logvar, x, x_rec):
    """Item 4: a loss accumulated from two kinds of terms per sample, a reconstruction error
    and a KL divergence: loss += ...; loss += ... in one loop."""
    loss = 0.0
    for i in range(len(x)):
        loss += vnp.sum((x[i] - x_rec[i]) ** 2)
        loss += -0.5 * vnp.sum(1 + logvar[i] - mu[i] ** 2 - vnp.exp(logvar[i]))
    return loss / len(x)


def vae_loss_ref(mu, logvar, x, x_rec):
    rec = np.sum((x - x_rec) ** 2)
    kl = -0.5 * np.sum(1 + logvar - mu ** 2 - np.exp(logvar))
    return (rec + kl) / len(x)


def vae_inputs(rng, n, z, d):
    return (normal(rng, n, z), normal(rng, n, z, scale=0.1), normal(rng, n, d),
            normal(rng, n, d))


PATTERNS = [
    Pattern("polynomial_kernel_pairs", 4, polynomial_kernel_pairs, polynomial_kernel_pairs_ref,
            poly_pairs_inputs, {"small": {"n": 5, "d": 3}, "default": {"n": 60, "d": 8}},
            (0, 1, 2), prepare=_prep_pairs),
    Pattern("laplacian_zero_boundary", 4, laplacian_zero_boundary, laplacian_zero_boundary_ref,
            grid_inputs, {"small": {"n": 5}, "default": {"n": 200}}, (0,), target="single"),
    Pattern("ising_energy", 4, ising_energy, ising_energy_ref, ising_inputs,
            {"small": {"b": 2, "n": 4}, "default": {"b": 64, "n": 24}}, (0, 1, 2)),
    Pattern("heat_residual", 4, heat_residual, heat_residual_ref, heat_inputs,
            {"small": {"T": 5, "n": 6}, "default": {"T": 200, "n": 400}}, (0, 1),
            target="single"),
    Pattern("negative_sampling", 4, negative_sampling, negative_sampling_ref,
            negative_sampling_inputs, {"small": {"vocab": 6, "d": 3, "n": 7},
                                       "default": {"vocab": 1000, "d": 32, "n": 1500}},
            (0, 1), prepare=_prep_skipgram),
    Pattern("lennard_jones_cutoff", 4, lennard_jones_cutoff, lennard_jones_cutoff_ref,
            lj_inputs, {"small": {"n": 6}, "default": {"n": 60}}, (0,)),
    Pattern("robust_regression", 4, robust_regression, robust_regression_ref,
            regression_inputs, {"small": {"n": 7, "d": 3}, "default": {"n": 4000, "d": 128}},
            (0,)),
    Pattern("kde_negative_log_likelihood", 4, kde_negative_log_likelihood,
            kde_negative_log_likelihood_ref, kde_inputs,
            {"small": {"n": 5, "m": 6, "d": 2}, "default": {"n": 1000, "m": 200, "d": 4}},
            (0, 1, 2)),
    Pattern("vae_loss", 4, vae_loss, vae_loss_ref, vae_inputs,
            {"small": {"n": 5, "z": 2, "d": 3}, "default": {"n": 1000, "z": 16, "d": 64}},
            (0, 1, 2, 3), target="single"),
]
