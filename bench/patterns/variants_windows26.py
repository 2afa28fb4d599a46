"""Window variants of session 26 (item 2): attention rows over growing prefixes or shrinking
suffixes of the keys (causal, anti-causal, multi-head, into a buffer, into a list, a
log-sum-exp per row, a kernel regression over the past), and windows written other ways
(2-D patches at a stride, a dilated causal filter bank padded by concatenation, channels
last, 3-D patches, local attention with partial windows at the start). Each reference is
the hand-vectorized form a user would write: a dense masked score matrix for the rows, one
pass per tap over contiguous slices for the windows."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal

_V = ("variant", "natural")


def _masked_softmax(S, mask):
    S = np.where(mask, S, -np.inf)
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    return P / P.sum(axis=-1, keepdims=True)


# ------------------------------------------------------------------ attention rows


def suffix_attention_rows(Q, K, V):
    """Item 2: anti-causal attention: query t attends to the keys from t on (suffixes)."""
    out = 0.0
    for t in range(len(Q)):
        s = K[t:] @ Q[t] / np.sqrt(Q.shape[1])
        p = np.exp(s - np.max(s))
        out = out + np.sum(np.tanh(p @ V[t:] / np.sum(p)))
    return out


def suffix_attention_rows_ref(Q, K, V):
    P = _masked_softmax(Q @ K.T / np.sqrt(Q.shape[1]), np.tri(len(Q), dtype=bool).T)
    return np.sum(np.tanh(P @ V))


def causal_rows_transposed(Q, K, V):
    """Item 2: causal attention rows written with the keys transposed, `Q[t] @ K[:t+1].T`,
    and the scaled scores' softmax computed by hand."""
    out = 0.0
    for t in range(len(Q)):
        s = Q[t] @ K[:t + 1].T * (1.0 / np.sqrt(Q.shape[1]))
        e = np.exp(s - s.max())
        out = out + np.sum((e / e.sum()) @ V[:t + 1])
    return out


def causal_rows_transposed_ref(Q, K, V):
    P = _masked_softmax(Q @ K.T / np.sqrt(Q.shape[1]), np.tri(len(Q), dtype=bool))
    return np.sum(P @ V)


def causal_rows_buffer(Q, K, V, Y):
    """Item 2: causal attention rows written into a buffer, then a squared error."""
    T, d = Q.shape
    out = vnp.empty((T, d))
    for t in range(T):
        s = K[:t + 1] @ Q[t] / np.sqrt(d)
        a = vnp.exp(s - vnp.max(s))
        out[t] = (a / vnp.sum(a)) @ V[:t + 1]
    return vnp.sum((out - Y) ** 2)


def causal_rows_buffer_ref(Q, K, V, Y):
    P = _masked_softmax(Q @ K.T / np.sqrt(Q.shape[1]), np.tri(len(Q), dtype=bool))
    return np.sum((P @ V - Y) ** 2)


def causal_rows_list(Q, K, V):
    """Item 2: causal attention contexts appended to a list, stacked, a loss on them."""
    ctx = []
    for t in range(len(Q)):
        w = np.exp(K[:t + 1] @ Q[t] - np.max(K[:t + 1] @ Q[t]))
        ctx.append(w @ V[:t + 1] / w.sum())
    return np.sum(np.stack(ctx) ** 2)


def causal_rows_list_ref(Q, K, V):
    return np.sum((_masked_softmax(Q @ K.T, np.tri(len(Q), dtype=bool)) @ V) ** 2)


def causal_multihead_rows(Q, K, V):
    """Item 2: causal attention for every head at once: rows of (heads, d) per position."""
    out = 0.0
    for t in range(Q.shape[0]):
        s = np.einsum("hd,jhd->hj", Q[t], K[:t + 1])
        p = np.exp(s - np.max(s, axis=1, keepdims=True))
        p = p / np.sum(p, axis=1, keepdims=True)
        out = out + np.sum(np.einsum("hj,jhd->hd", p, V[:t + 1]) ** 2)
    return out


def causal_multihead_rows_ref(Q, K, V):
    S = Q.transpose(1, 0, 2) @ K.transpose(1, 2, 0)  # (heads, T, T), batched BLAS products
    P = _masked_softmax(S, np.tri(len(Q), dtype=bool))
    return np.sum((P @ V.transpose(1, 0, 2)) ** 2)


def causal_logsumexp_rows(Q, K, b):
    """Item 2: a log-sum-exp of each query's scores against the keys up to it, plus a bias
    per query (a causal partition function)."""
    tot = 0.0
    for t in range(len(Q)):
        s = K[:t + 1] @ Q[t] + b[t]
        m = np.max(s)
        tot = tot + m + np.log(np.sum(np.exp(s - m)))
    return tot


def causal_logsumexp_rows_ref(Q, K, b):
    S = np.where(np.tri(len(Q), dtype=bool), Q @ K.T + b[:, None], -np.inf)
    m = S.max(axis=1)
    return np.sum(m + np.log(np.exp(S - m[:, None]).sum(axis=1)))


def attention_inputs(rng, T, d):
    return tuple(normal(rng, T, d, scale=0.5) for _ in range(3))


def buffer_inputs(rng, T, d):
    return attention_inputs(rng, T, d) + (normal(rng, T, d),)


def multihead_inputs(rng, T, h, d):
    return tuple(normal(rng, T, h, d, scale=0.5) for _ in range(3))


def lse_inputs(rng, T, d):
    return normal(rng, T, d, scale=0.5), normal(rng, T, d, scale=0.5), normal(rng, T)


def past_kernel_regression(X, Y, h):
    """Item 2: a Nadaraya-Watson estimate of each target from the points before it, by a
    Gaussian kernel on the inputs (a causal kernel smoother)."""
    err = 0.0
    for t in range(1, len(X)):
        w = np.exp(-np.sum((X[:t] - X[t]) ** 2, axis=1) / h)
        err = err + (w @ Y[:t] / np.sum(w) - Y[t]) ** 2
    return err


def past_kernel_regression_ref(X, Y, h):
    sq = np.sum(X ** 2, axis=1)
    D = sq[:, None] + sq[None, :] - 2 * X @ X.T
    W = np.where(np.tri(len(X), k=-1, dtype=bool), np.exp(-D / h), 0.0)[1:]
    return np.sum((W @ Y / W.sum(axis=1) - Y[1:]) ** 2)


def kernel_inputs(rng, T, d):
    return normal(rng, T, d, scale=0.3), normal(rng, T), 2.0


# ------------------------------------------------------------------ windows


def strided_patches_2d(img, W, s):
    """Item 2: 2-D patches of an image at a stride, each scored by a filter, squashed."""
    p = W.shape[0]
    tot = 0.0
    for i in range(0, img.shape[0] - p + 1, s):
        for j in range(0, img.shape[1] - p + 1, s):
            tot = tot + np.tanh(np.sum(img[i:i + p, j:j + p] * W))
    return tot


def strided_patches_2d_ref(img, W, s):
    p = W.shape[0]
    n0 = (img.shape[0] - p) // s + 1
    n1 = (img.shape[1] - p) // s + 1
    acc = sum(W[a, b] * img[a:a + s * (n0 - 1) + 1:s, b:b + s * (n1 - 1) + 1:s]
              for a in range(p) for b in range(p))
    return np.sum(np.tanh(acc))


def patch_inputs(rng, H, p, s):
    return normal(rng, H, H), normal(rng, p, p), s


def causal_dilated_bank(x, W, d):
    """Item 2: a causal dilated filter bank over a (T, C) signal padded by concatenating
    zeros in front: out[t] = sum_k xp[t + k*d] @ W[k], then a squared output."""
    k, C, F = W.shape
    xp = vnp.concatenate([vnp.zeros(((k - 1) * d, C)), x])
    out = vnp.empty((x.shape[0], F))
    for t in range(x.shape[0]):
        out[t] = vnp.einsum("kc,kcf->f", xp[t:t + (k - 1) * d + 1:d], W)
    return vnp.sum(out ** 2)


def causal_dilated_bank_ref(x, W, d):
    k, C, _ = W.shape
    T = x.shape[0]
    xp = np.concatenate([np.zeros(((k - 1) * d, C)), x])
    out = sum(xp[j * d:j * d + T] @ W[j] for j in range(k))
    return np.sum(out ** 2)


def bank_inputs(rng, T, C, F, k, d):
    return normal(rng, T, C), normal(rng, k, C, F, scale=0.3), d


def volume_patch_energy(vol, p):
    """Item 2: every 3-D patch of a volume, its mean removed, the squared deviations."""
    n = vol.shape[0] - p + 1
    tot = 0.0
    for i in range(n):
        for j in range(n):
            for k in range(n):
                c = vol[i:i + p, j:j + p, k:k + p]
                tot = tot + np.sum((c - np.mean(c)) ** 2)
    return tot


def volume_patch_energy_ref(vol, p):
    n = vol.shape[0] - p + 1
    s1 = sum(vol[a:a + n, b:b + n, c:c + n] for a in range(p) for b in range(p)
             for c in range(p))
    s2 = sum(vol[a:a + n, b:b + n, c:c + n] ** 2 for a in range(p) for b in range(p)
             for c in range(p))
    return np.sum(s2 - s1 ** 2 / p ** 3)


def volume_inputs(rng, n, p):
    return normal(rng, n, n, n), p


def local_attention_partial(Q, K, V, w):
    """Item 2: local attention over the w keys up to each query, the first w-1 windows
    partial (max(0, t-w+1) .. t): the windows of full width batch as views."""
    out = []
    for t in range(len(Q)):
        lo = max(0, t - w + 1)
        s = K[lo:t + 1] @ Q[t]
        a = vnp.exp(s - vnp.max(s))
        out.append(a @ V[lo:t + 1] / vnp.sum(a))
    return vnp.sum(vnp.stack(out) ** 2)


def local_attention_partial_ref(Q, K, V, w):
    T = len(Q)
    S = np.full((T, w), -np.inf)  # S[t, a]: query t against key t - a
    for a in range(w):
        S[a:, a] = np.einsum("nd,nd->n", Q[a:], K[:T - a])
    P = _masked_softmax(S, np.isfinite(S))
    ctx = P[:, :1] * V
    for a in range(1, w):
        ctx[a:] += P[a:, a:a + 1] * V[:T - a]
    return np.sum(ctx ** 2)


def local_inputs(rng, T, d, w):
    return attention_inputs(rng, T, d) + (w,)


PATTERNS = [
    Pattern("suffix_attention_rows", 2, suffix_attention_rows, suffix_attention_rows_ref,
            attention_inputs, {"small": {"T": 6, "d": 3}, "default": {"T": 128, "d": 16}},
            (0, 1, 2), tags=_V),
    Pattern("causal_rows_transposed", 2, causal_rows_transposed, causal_rows_transposed_ref,
            attention_inputs, {"small": {"T": 6, "d": 3}, "default": {"T": 128, "d": 16}},
            (0, 1, 2), tags=_V),
    Pattern("causal_rows_buffer", 2, causal_rows_buffer, causal_rows_buffer_ref,
            buffer_inputs, {"small": {"T": 6, "d": 3}, "default": {"T": 128, "d": 16}},
            (0, 1, 2), tags=_V),
    Pattern("causal_rows_list", 2, causal_rows_list, causal_rows_list_ref,
            attention_inputs, {"small": {"T": 6, "d": 3}, "default": {"T": 160, "d": 8}},
            (0, 1, 2), tags=_V),
    Pattern("causal_multihead_rows", 2, causal_multihead_rows, causal_multihead_rows_ref,
            multihead_inputs, {"small": {"T": 5, "h": 2, "d": 3},
                               "default": {"T": 96, "h": 4, "d": 8}}, (0, 1, 2), tags=_V),
    Pattern("causal_logsumexp_rows", 2, causal_logsumexp_rows, causal_logsumexp_rows_ref,
            lse_inputs, {"small": {"T": 6, "d": 3}, "default": {"T": 200, "d": 16}},
            (0, 1, 2), tags=_V),
    Pattern("past_kernel_regression", 2, past_kernel_regression, past_kernel_regression_ref,
            kernel_inputs, {"small": {"T": 6, "d": 2}, "default": {"T": 150, "d": 4}},
            (0, 1), tags=_V),
    Pattern("strided_patches_2d", 2, strided_patches_2d, strided_patches_2d_ref,
            patch_inputs, {"small": {"H": 9, "p": 3, "s": 2},
                           "default": {"H": 72, "p": 5, "s": 2}}, (0, 1), tags=_V),
    Pattern("causal_dilated_bank", 2, causal_dilated_bank, causal_dilated_bank_ref,
            bank_inputs, {"small": {"T": 10, "C": 2, "F": 3, "k": 3, "d": 2},
                          "default": {"T": 2000, "C": 8, "F": 8, "k": 4, "d": 2}},
            (0, 1), tags=_V),
    Pattern("volume_patch_energy", 2, volume_patch_energy, volume_patch_energy_ref,
            volume_inputs, {"small": {"n": 5, "p": 2}, "default": {"n": 12, "p": 3}}, (0,),
            tags=_V),
    Pattern("local_attention_partial", 2, local_attention_partial,
            local_attention_partial_ref, local_inputs,
            {"small": {"T": 8, "d": 3, "w": 3}, "default": {"T": 400, "d": 16, "w": 8}},
            (0, 1, 2), tags=_V),
]
