"""Programs that mix several patterns, as whole models do: a GNN layer, a convolution +
pooling + softmax classifier, a particle simulation with pair forces."""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import vecgrad as vg
import vecgrad.numpy as vnp

from .core import Pattern, normal, segment_sum, segments
from .indices import random_edges
from .mixed import lattice


def gnn_layer(x, W_self, W_nbr, w_out, edges):
    """Mixed (items 3, 4, 7): a GCN-style layer, relu(x_v W_self + mean over in-edges of
    x_u W_nbr), then a log-sum-exp readout over the nodes."""
    n = x.shape[0]
    agg = vnp.zeros((n, W_nbr.shape[1]))
    deg = [0] * n
    for s, d in edges:
        agg[d] += x[s] @ W_nbr
        deg[d] += 1
    h = vnp.stack([vg.nn.relu(x[v] @ W_self + agg[v] / max(deg[v], 1)) for v in range(n)])
    return vg.nn.logsumexp(h @ w_out)


def gnn_layer_ref(x, W_self, W_nbr, w_out, src, dst, deg):
    agg = segment_sum((x @ W_nbr)[src], dst)
    z = np.maximum(x @ W_self + agg / deg[:, None], 0.0) @ w_out
    m = z.max()
    return np.log(np.exp(z - m).sum()) + m


def gnn_inputs(rng, n, e, f):
    s = f ** -0.5
    return (normal(rng, n, f), normal(rng, f, f, scale=s), normal(rng, f, f, scale=s),
            normal(rng, f), random_edges(rng, n, e))


def _prep_gnn(args):
    x, Ws, Wn, w, edges = args
    src, dst = np.array(edges).T
    deg = np.maximum(np.bincount(dst, minlength=len(x)), 1)
    return x, Ws, Wn, w, src, segments(dst, len(x)), deg


def conv_pool_classifier(x, K, Wd, labels):
    """Mixed (items 1, 2): for a batch of signals, a 1-D convolution by windows x[:, t:t+k],
    ReLU, max pooling over strided windows, a dense layer and a softmax cross-entropy."""
    B, T = x.shape
    F, k = K.shape
    feat = vnp.zeros((B, T - k + 1, F))
    for t in range(T - k + 1):
        feat[:, t, :] = vg.nn.relu(x[:, t:t + k] @ K.T)
    pooled = [vnp.max(feat[:, t:t + 2], axis=1) for t in range(0, T - k, 2)]
    logp = vg.nn.log_softmax(vnp.concatenate(pooled, axis=1) @ Wd, axis=1)
    return -sum(logp[i, y] for i, y in enumerate(labels)) / B


def conv_pool_classifier_ref(x, K, Wd, labels):
    B, T = x.shape
    F, k = K.shape
    feat = np.maximum(sliding_window_view(x, k, axis=1) @ K.T, 0.0)   # (B, T-k+1, F)
    P = (T - k + 1) // 2
    pooled = feat[:, :2 * P].reshape(B, P, 2, F).max(axis=2).reshape(B, P * F)
    z = pooled @ Wd
    m = z.max(1, keepdims=True)
    return np.mean(np.log(np.exp(z - m).sum(1)) + m[:, 0] - z[np.arange(B), labels])


def conv_pool_inputs(rng, B, T, F, k, classes):
    P = (T - k + 1) // 2
    return (normal(rng, B, T), normal(rng, F, k, scale=k ** -0.5),
            normal(rng, P * F, classes, scale=(P * F) ** -0.5),
            [int(c) for c in rng.integers(0, classes, B)])


def _prep_labels(args):
    *rest, labels = args
    return (*rest, np.asarray(labels))


def particle_dynamics(x0, v0, k, rc, dt, steps):
    """Mixed (items 1, 4, 5): a particle simulation with soft repulsive pair forces under a
    cutoff (where), accumulated by F[i] += f; F[j] -= f in nested loops inside a time loop."""
    n = len(x0)
    x, v = x0, v0
    for _ in range(steps):
        F = vnp.zeros(x.shape)
        for i in range(n):
            for j in range(i + 1, n):
                d = x[i] - x[j]
                r2 = vnp.sum(d ** 2)
                f = vnp.where(r2 < rc ** 2, k * (rc ** 2 - r2), 0.0) * d
                F[i] += f
                F[j] -= f
        v = v + dt * F
        x = x + dt * v
    return 0.5 * vnp.sum(v ** 2) + vnp.sum(x[:, 2])


def particle_dynamics_ref(x0, v0, k, rc, dt, steps):
    x, v = x0, v0
    for _ in range(steps):
        d = x[:, None, :] - x[None, :, :]
        r2 = np.sum(d ** 2, axis=2)
        np.fill_diagonal(r2, np.inf)
        F = np.sum((np.where(r2 < rc ** 2, k * (rc ** 2 - r2), 0.0))[:, :, None] * d, axis=1)
        v = v + dt * F
        x = x + dt * v
    return 0.5 * np.sum(v ** 2) + np.sum(x[:, 2])


def particle_inputs(rng, n, steps):
    return lattice(rng, n, spacing=1.0, jitter=0.1), normal(rng, n, 3, scale=0.1), \
        np.array(2.0), 1.2, 0.05, steps


PATTERNS = [
    Pattern("gnn_layer", 0, gnn_layer, gnn_layer_ref, gnn_inputs,
            {"small": {"n": 5, "e": 10, "f": 3}, "default": {"n": 500, "e": 3000, "f": 16}},
            (0, 1, 2, 3), prepare=_prep_gnn),
    Pattern("conv_pool_classifier", 0, conv_pool_classifier, conv_pool_classifier_ref,
            conv_pool_inputs, {"small": {"B": 2, "T": 9, "F": 2, "k": 3, "classes": 3},
                               "default": {"B": 64, "T": 200, "F": 8, "k": 5, "classes": 10}},
            (0, 1, 2), prepare=_prep_labels),
    Pattern("particle_dynamics", 0, particle_dynamics, particle_dynamics_ref, particle_inputs,
            {"small": {"n": 4, "steps": 2}, "default": {"n": 27, "steps": 10}}, (0, 1, 2)),
]
