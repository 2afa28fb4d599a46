"""Item 1, dependence by region: buffers written with several index patterns per iteration,
read back in the same iteration, and updated read-modify-write (`buf[i] += ...`,
`buf[i] = buf[i] * c`). No iteration reads what another wrote."""
from __future__ import annotations

import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp

from .core import Pattern, normal, uniform


def two_column_writes(x, v, c):
    """Item 1: y[i, 0] and y[i, 1] written, then y[i, 0] rescaled and the row incremented."""
    n = x.shape[0]
    y = vnp.zeros((n, 2))
    for i in range(n):
        y[i, 0] = vnp.tanh(x[i]) @ v
        y[i, 1] = vnp.sum(x[i] ** 2)
        y[i, 0] = y[i, 0] * c
        y[i] += 1.0
    return vnp.sum(vnp.log(y ** 2 + 1.0))


def two_column_writes_ref(x, v, c):
    y0 = np.tanh(x) @ v * c + 1.0
    y1 = np.einsum("ij,ij->i", x, x) + 1.0
    return np.sum(np.log(y0 ** 2 + 1.0)) + np.sum(np.log(y1 ** 2 + 1.0))


def two_column_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d), np.array(0.7)


def attention_rows(Q, K, V):
    """Item 1: scores written entry by entry, w[r, n] = q_r . k_n, then w[r] = softmax(w[r])."""
    R, N = Q.shape[0], K.shape[0]
    w = vnp.empty((R, N))
    for r in range(R):
        for n in range(N):
            w[r, n] = Q[r] @ K[n]
        w[r] = vg.nn.softmax(w[r])
    return vnp.sum((w @ V) ** 2)


def attention_rows_ref(Q, K, V):
    s = Q @ K.T
    e = np.exp(s - s.max(1, keepdims=True))
    return np.sum((e / e.sum(1, keepdims=True) @ V) ** 2)


def attention_inputs(rng, n, d):
    return normal(rng, n, d, scale=0.3), normal(rng, n, d, scale=0.3), normal(rng, n, d)


def layernorm_inplace(x, gamma, beta):
    """Item 1: each row normalised in place by three read-modify-writes of h[i]."""
    h = x.copy()
    for i in range(len(h)):
        h[i] = h[i] - vnp.mean(h[i])
        h[i] = h[i] / vnp.sqrt(vnp.mean(h[i] ** 2) + 1e-5)
        h[i] = h[i] * gamma + beta
    return vnp.sum(vnp.tanh(h) * x)


def layernorm_ref(x, gamma, beta):
    h = x - x.mean(1, keepdims=True)
    h = h / np.sqrt((h ** 2).mean(1, keepdims=True) + 1e-5)
    return np.sum(np.tanh(h * gamma + beta) * x)


def layernorm_inputs(rng, n, d):
    return normal(rng, n, d), 1 + normal(rng, d, scale=0.1), normal(rng, d, scale=0.1)


def scaled_accumulate(X, a, b, c):
    """Item 1: buf[i] = a * X[i]; buf[i] += b * X[i]**2; buf[i] = buf[i] * c[i]."""
    buf = vnp.zeros(X.shape)
    for i in range(X.shape[0]):
        buf[i] = a * X[i]
        buf[i] += b * X[i] ** 2
        buf[i] = buf[i] * c[i]
    return vnp.sum(vnp.sin(buf))


def scaled_accumulate_ref(X, a, b, c):
    return np.sum(np.sin((a * X + b * X ** 2) * c[:, None]))


def scaled_accumulate_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d), normal(rng, d), normal(rng, n)


def rows_then_columns(X, W):
    """Item 1: a buffer filled row by row, out[i, :] = tanh(X[i] @ W), then centred column by
    column, out[:, j] = out[:, j] - mean(out[:, j])."""
    n, m = X.shape[0], W.shape[1]
    out = vnp.zeros((n, m))
    for i in range(n):
        out[i, :] = vnp.tanh(X[i] @ W)
    for j in range(m):
        out[:, j] = out[:, j] - vnp.mean(out[:, j])
    return vnp.sum(out ** 2 * X[:, :m])


def rows_then_columns_ref(X, W):
    out = np.tanh(X @ W)
    out = out - out.mean(0)
    return np.sum(out ** 2 * X[:, :W.shape[1]])


def rows_then_columns_inputs(rng, n, d, m):
    return normal(rng, n, d), normal(rng, d, m, scale=d ** -0.5)


def halves_iadd(a, b, s):
    """Item 1: the two halves of each row written by `+=`, then the whole row scaled with `*=`."""
    n, d = a.shape
    out = vnp.zeros((n, 2 * d))
    for i in range(n):
        out[i, :d] += vnp.exp(a[i])
        out[i, d:] += b[i] ** 2
        out[i] *= s[i]
    return vnp.sum(vnp.sin(out))


def halves_iadd_ref(a, b, s):
    return np.sum(np.sin(np.exp(a) * s[:, None])) + np.sum(np.sin(b ** 2 * s[:, None]))


def halves_inputs(rng, n, d):
    return normal(rng, n, d, scale=0.5), normal(rng, n, d), uniform(rng, n)


def one_hot_rows(logits, labels):
    """Item 1: a target buffer made with vnp.zeros and filled by index, t[i, labels[i]] = 1.0,
    then read by a per-row cross-entropy that also writes its row of a loss buffer."""
    n, k = logits.shape
    t = vnp.zeros((n, k))
    losses = vnp.empty(n)
    for i, y in enumerate(labels):
        t[i, y] = 1.0
        losses[i] = -vnp.sum(t[i] * vg.nn.log_softmax(logits[i]))
    return vnp.mean(losses)


def one_hot_rows_ref(logits, labels):
    m = logits.max(1, keepdims=True)
    lse = np.log(np.exp(logits - m).sum(1)) + m[:, 0]
    return np.mean(lse - logits[np.arange(len(labels)), labels])


def one_hot_inputs(rng, n, k):
    return normal(rng, n, k), [int(c) for c in rng.integers(0, k, n)]


def _prep_one_hot(args):
    return args[0], np.asarray(args[1])


def overlap_add(x, w):
    """Item 1: overlap-add (a transposed depthwise convolution): overlapping regions of one
    buffer updated by `+=`, out[t:t+k] += x[t] * w."""
    k = w.shape[0]
    out = vnp.zeros((len(x) + k - 1, x.shape[1]))
    for t in range(len(x)):
        out[t:t + k] += x[t] * w
    return vnp.sum(vnp.tanh(out))


def overlap_add_ref(x, w):
    k, T = w.shape[0], len(x)
    out = np.zeros((T + k - 1, x.shape[1]))
    for j in range(k):                       # one strided add per window offset
        out[j:j + T] += x * w[j]
    return np.sum(np.tanh(out))


def overlap_add_inputs(rng, T, c, k):
    return normal(rng, T, c), normal(rng, k, c, scale=0.5)


PATTERNS = [
    Pattern("two_column_writes", 1, two_column_writes, two_column_writes_ref, two_column_inputs,
            {"small": {"n": 7, "d": 3}, "default": {"n": 2000, "d": 16}}, (0, 1, 2)),
    Pattern("attention_rows", 1, attention_rows, attention_rows_ref, attention_inputs,
            {"small": {"n": 5, "d": 3}, "default": {"n": 80, "d": 128}}, (0, 1, 2)),
    Pattern("layernorm_inplace", 1, layernorm_inplace, layernorm_ref, layernorm_inputs,
            {"small": {"n": 6, "d": 4}, "default": {"n": 1000, "d": 64}}, (0, 1, 2)),
    Pattern("scaled_accumulate", 1, scaled_accumulate, scaled_accumulate_ref,
            scaled_accumulate_inputs,
            {"small": {"n": 6, "d": 4}, "default": {"n": 1000, "d": 64}}, (0, 1, 2, 3),
            target="single"),
    Pattern("rows_then_columns", 1, rows_then_columns, rows_then_columns_ref,
            rows_then_columns_inputs,
            {"small": {"n": 6, "d": 5, "m": 4}, "default": {"n": 1000, "d": 64, "m": 32}},
            (0, 1)),
    Pattern("halves_iadd", 1, halves_iadd, halves_iadd_ref, halves_inputs,
            {"small": {"n": 6, "d": 3}, "default": {"n": 1000, "d": 32}}, (0, 1, 2),
            target="single"),
    Pattern("one_hot_rows", 1, one_hot_rows, one_hot_rows_ref, one_hot_inputs,
            {"small": {"n": 6, "k": 4}, "default": {"n": 2000, "k": 10}}, (0,),
            prepare=_prep_one_hot),
    Pattern("overlap_add", 1, overlap_add, overlap_add_ref, overlap_add_inputs,
            {"small": {"T": 7, "c": 2, "k": 3}, "default": {"T": 2000, "c": 16, "k": 8}},
            (0, 1)),
]
