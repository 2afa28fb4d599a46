"""Buffers that each iteration makes for itself and fills by index (item 1, batch/siblings.py):
a row's features assembled in a fresh buffer, a tangent-like buffer filled, negated and added
into again, and a triangular factor per component filled entry by entry (GradBench's gmm)."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal


def row_features_buffer(a, b):
    """Item 1: per row, feat = zeros(7); feat[:3] = a[i]; feat[3] = a[i, 0] * b[i, 0];
    feat[4:] = tanh(b[i]); the rows' features then scored."""
    n = a.shape[0]
    out = vnp.empty((n, 7))
    for i in range(n):
        feat = vnp.zeros(7)
        feat[:3] = a[i]
        feat[3] = a[i, 0] * b[i, 0]
        feat[4:] = vnp.tanh(b[i])
        out[i] = feat
    return vnp.sum(vnp.sin(out) * out)


def row_features_buffer_ref(a, b):
    out = np.concatenate([a, (a[:, 0] * b[:, 0])[:, None], np.tanh(b)], axis=1)
    return np.sum(np.sin(out) * out)


def negated_buffer_adds(a, b):
    """Item 1: per row, t = zeros((2, 6)); t[:, :3] += a[i]; t[:, 3:] += 2 b[i]; t = -t;
    t[:, :3] += a[i] * b[i]; the rows' sum of t[:, :3] * t[:, 3:]."""
    tot = 0.0
    for i in range(a.shape[0]):
        t = vnp.zeros((2, 6))
        t[:, :3] += a[i]
        t[:, 3:] += 2.0 * b[i]
        t = -t
        t[:, :3] += a[i] * b[i]
        tot = tot + vnp.sum(t[:, :3] * t[:, 3:])
    return tot


def negated_buffer_adds_ref(a, b):
    t = np.zeros((a.shape[0], 2, 6))
    t[:, :, :3] += a[:, None]
    t[:, :, 3:] += 2.0 * b[:, None]
    t = -t
    t[:, :, :3] += (a * b)[:, None]
    return np.sum(t[:, :, :3] * t[:, :, 3:])


def factor_per_component(q, l, x):
    """Item 1: per component, Q = zeros((d, d)) filled entry by entry (exp(q) on the diagonal,
    l below it), then sum |x Q^T|^2 over the points."""
    K, d = q.shape
    tot = 0.0
    for k in range(K):
        Q = vnp.zeros((d, d))
        idx = 0
        for j in range(d):
            Q[j, j] = vnp.exp(q[k, j])
            for i in range(j + 1, d):
                Q[i, j] = l[k, idx]
                idx += 1
        z = x @ Q.T
        tot = tot + vnp.sum(z * z)
    return tot


def factor_per_component_ref(q, l, x):
    K, d = q.shape
    rows, cols = np.tril_indices(d, -1)
    order = np.lexsort((rows, cols))  # column by column, as the loop fills them
    Q = np.zeros((K, d, d))
    Q[:, np.arange(d), np.arange(d)] = np.exp(q)
    Q[:, rows[order], cols[order]] = l
    z = np.einsum("nj,kij->kni", x, Q)
    return np.sum(z * z)


def _rows_inputs(rng, n):
    return normal(rng, n, 3), normal(rng, n, 3)


def _factor_inputs(rng, k, d, n):
    return normal(rng, k, d, scale=0.3), normal(rng, k, d * (d - 1) // 2), normal(rng, n, d)


PATTERNS = [
    Pattern("row_features_buffer", 1, row_features_buffer, row_features_buffer_ref,
            _rows_inputs, {"small": {"n": 6}, "default": {"n": 2000}}, (0, 1)),
    Pattern("negated_buffer_adds", 1, negated_buffer_adds, negated_buffer_adds_ref,
            _rows_inputs, {"small": {"n": 6}, "default": {"n": 2000}}, (0, 1)),
    Pattern("factor_per_component", 1, factor_per_component, factor_per_component_ref,
            _factor_inputs, {"small": {"k": 3, "d": 3, "n": 4},
                             "default": {"k": 25, "d": 4, "n": 1000}}, (0, 1)),
]
