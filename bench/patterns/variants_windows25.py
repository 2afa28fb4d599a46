"""Window variants of session 25 (item 2): products added into overlapping windows (local
attention causal, over a while loop, in 2-D, with a non-softmax weighting, strided), windows
whose cotangent copies a broadcast term (softmax pooling over dilated windows, windows
weighted per tap inside a comprehension), per-tap products in the windows' order
(depthwise and filter-bank windows of (B, T, C), dilated, padded by concatenation), 3-D
patches, and windows of a reflection-padded signal. Each reference is the best
hand-vectorized form found: one pass per tap over contiguous slices."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal

_V = ("variant",)


def _softmax_rows(s):
    a = np.exp(s - s.max(1, keepdims=True))
    return a / a.sum(1, keepdims=True)


# ------------------------------------------------------------------ attention over windows


def causal_local_attention(Q, K, V, k):
    """Items 2, 5: each query t attends to the k keys before it (t-k..t-1), a softmax over
    them and the values averaged so (a causal sliding-window attention)."""
    T, d = Q.shape
    out = []
    for t in range(k, T):
        s = K[t - k:t] @ Q[t] / np.sqrt(d)
        a = vnp.exp(s - vnp.max(s))
        out.append(a @ V[t - k:t] / vnp.sum(a))
    return vnp.sum(vnp.stack(out) ** 2)


def causal_local_attention_ref(Q, K, V, k):
    T, d = Q.shape
    n = T - k
    q = Q[k:]
    s = np.stack([np.einsum("nd,nd->n", K[a:a + n], q) for a in range(k)], 1) / np.sqrt(d)
    a = _softmax_rows(s)
    return np.sum(sum(a[:, i:i + 1] * V[i:i + n] for i in range(k)) ** 2)


def attention_inputs(rng, T, d, k):
    return normal(rng, T, d), normal(rng, T, d), normal(rng, T, d), k


def while_hop_attention(Q, K, V, k, hop):
    """Items 2, 5: windows of k keys walked by a while loop at a hop, each window's scores
    against the query at its start, a softmax, and the values pooled."""
    d = Q.shape[1]
    out = []
    t = 0
    while t + k <= K.shape[0]:
        s = K[t:t + k] @ Q[t // hop] / np.sqrt(d)
        a = vnp.exp(s - vnp.max(s))
        out.append(a @ V[t:t + k] / vnp.sum(a))
        t += hop
    return vnp.sum(vnp.stack(out) ** 2)


def while_hop_attention_ref(Q, K, V, k, hop):
    d = Q.shape[1]
    n = (K.shape[0] - k) // hop + 1
    q = Q[:n]
    span = hop * (n - 1) + 1
    s = np.stack([np.einsum("nd,nd->n", K[a:a + span:hop], q) for a in range(k)], 1)
    a = _softmax_rows(s / np.sqrt(d))
    return np.sum(sum(a[:, i:i + 1] * V[i:i + span:hop] for i in range(k)) ** 2)


def hop_inputs(rng, T, d, k, hop):
    n = (T - k) // hop + 1
    return normal(rng, n, d), normal(rng, T, d), normal(rng, T, d), k, hop


def tanh_scored_windows(K, Q, k):
    """Item 2: each query against the k keys from its position, the scores squashed by
    tanh (no softmax) and summed: the key cotangent is one scaled query per offset."""
    total = 0.0
    for t in range(K.shape[0] - k + 1):
        total = total + vnp.sum(vnp.tanh(K[t:t + k] @ Q[t]))
    return total


def tanh_scored_windows_ref(K, Q, k):
    n = K.shape[0] - k + 1
    q = Q[:n]
    return sum(np.sum(np.tanh(np.einsum("nd,nd->n", K[a:a + n], q))) for a in range(k))


def scored_inputs(rng, T, d, k):
    return normal(rng, T, d, scale=0.5), normal(rng, T - k + 1, d, scale=0.5), k


def neighbourhood_attention_2d(F, Q, r):
    """Items 2, 5: channels-last features (H, W, C): each interior pixel's query against the
    feature vectors of its (2r+1) x (2r+1) neighbours, scores squared and summed."""
    H, W, C = F.shape
    w = 2 * r + 1
    total = 0.0
    for i in range(H - 2 * r):
        for j in range(W - 2 * r):
            s = F[i:i + w, j:j + w].reshape(w * w, C) @ Q[i, j]
            total = total + vnp.sum(vnp.tanh(s) ** 2)
    return total


def neighbourhood_attention_2d_ref(F, Q, r):
    H, W = F.shape[:2]
    w = 2 * r + 1
    n, m = H - 2 * r, W - 2 * r
    return sum(np.sum(np.tanh(np.einsum("ijc,ijc->ij", F[a:a + n, b:b + m], Q)) ** 2)
               for a in range(w) for b in range(w))


def neighbourhood_inputs(rng, H, W, C, r):
    return normal(rng, H, W, C, scale=0.5), normal(rng, H - 2 * r, W - 2 * r, C, scale=0.5), r


# ------------------------------------------------------------------ pooling inside windows


def dilated_softmax_pool(x, k, d):
    """Item 2: softmax pooling inside dilated windows x[t : t + (k-1)d + 1 : d], per
    channel, and a squared loss of the pooled values."""
    span = (k - 1) * d + 1
    out = []
    for t in range(x.shape[0] - span + 1):
        w = x[t:t + span:d]
        a = vnp.exp(w - vnp.max(w, axis=0))
        out.append(vnp.sum(a * w, axis=0) / vnp.sum(a, axis=0))
    return vnp.sum(vnp.stack(out) ** 2)


def dilated_softmax_pool_ref(x, k, d):
    n = x.shape[0] - (k - 1) * d
    taps = [x[a * d:a * d + n] for a in range(k)]
    m = np.maximum.reduce(taps)
    es = [np.exp(t - m) for t in taps]
    return np.sum((sum(e * t for e, t in zip(es, taps)) / sum(es)) ** 2)


def dilated_pool_inputs(rng, T, C, k, d):
    return normal(rng, T, C), k, d


def tap_weighted_pool(x, g):
    """Item 2: in a comprehension, each window's rows weighted per tap by g (k,), passed
    through a per-window softmax over the taps, and the weighted rows summed."""
    k = g.shape[0]
    ys = [vnp.sum(vnp.exp(x[t:t + k] * g[:, None] - vnp.max(x[t:t + k] * g[:, None], axis=0))
                  * x[t:t + k], axis=0) for t in range(x.shape[0] - k + 1)]
    return vnp.sum(vnp.stack(ys) ** 2)


def tap_weighted_pool_ref(x, g):
    k = g.shape[0]
    n = x.shape[0] - k + 1
    taps = [x[a:a + n] for a in range(k)]
    sc = [t * g[a] for a, t in enumerate(taps)]
    m = np.maximum.reduce(sc)
    return np.sum(sum(np.exp(s - m) * t for s, t in zip(sc, taps)) ** 2)


def tap_weight_inputs(rng, T, C, k):
    return normal(rng, T, C), normal(rng, k)


# ------------------------------------------------------------------ windows of (B, T, C)


def dilated_depthwise_btc(X, w, d):
    """Item 2: depthwise dilated windows along time of a (B, T, C) batch, each step's
    per-channel response, stacked on axis 1, through a softplus-like loss."""
    k = w.shape[0]
    span = (k - 1) * d + 1
    ys = [vnp.einsum("bkc,kc->bc", X[:, t:t + span:d], w) for t in range(X.shape[1] - span + 1)]
    return vnp.sum(vnp.log1p(vnp.stack(ys, axis=1) ** 2))


def dilated_depthwise_btc_ref(X, w, d):
    k = w.shape[0]
    n = X.shape[1] - (k - 1) * d
    return np.sum(np.log1p(sum(X[:, a * d:a * d + n] * w[a] for a in range(k)) ** 2))


def depthwise_inputs(rng, B, T, C, k, d):
    return normal(rng, B, T, C), normal(rng, k, C, scale=k ** -0.5), d


def padded_filter_bank_btc(X, W):
    """Items 2, 4: a causal filter bank over (B, T, C): zeros concatenated before the time
    axis, then each step's window of k contracted with W (k, C, F), stacked on axis 1."""
    k = W.shape[0]
    B, T, C = X.shape
    Xp = vnp.concatenate([vnp.zeros((B, k - 1, C)), X], axis=1)
    ys = [vnp.einsum("bkc,kcf->bf", Xp[:, t:t + k], W) for t in range(T)]
    return vnp.sum(vnp.tanh(vnp.stack(ys, axis=1)))


def padded_filter_bank_btc_ref(X, W):
    k = W.shape[0]
    B, T, C = X.shape
    Xp = np.concatenate([np.zeros((B, k - 1, C)), X], axis=1)
    return np.sum(np.tanh(sum(Xp[:, a:a + T] @ W[a] for a in range(k))))


def filter_bank_inputs(rng, B, T, C, F, k):
    return normal(rng, B, T, C), normal(rng, k, C, F, scale=(k * C) ** -0.5)


# ------------------------------------------------------------------ 3-D and padded signals


def strided_volume_energy(V, p, s):
    """Item 2: p x p x p patches of a volume (D, H, W) at stride s along every axis, each
    centred on its own mean, the squared deviations summed (a 3-D local energy)."""
    n = [(d - p) // s + 1 for d in V.shape]
    total = 0.0
    for i in range(n[0]):
        for j in range(n[1]):
            for m in range(n[2]):
                w = V[i * s:i * s + p, j * s:j * s + p, m * s:m * s + p]
                total = total + vnp.sum((w - vnp.mean(w)) ** 2)
    return total


def strided_volume_energy_ref(V, p, s):
    n = [(d - p) // s + 1 for d in V.shape]
    e = [s * (k - 1) + 1 for k in n]
    taps = [V[a:a + e[0]:s, b:b + e[1]:s, c:c + e[2]:s]
            for a in range(p) for b in range(p) for c in range(p)]
    m = sum(taps) / p ** 3
    return sum(np.sum((t - m) ** 2) for t in taps)


def volume_inputs(rng, n, p, s):
    return normal(rng, n, n, n), p, s


def reflect_padded_variance(x, k):
    """Items 2, 4: a signal padded at both ends by its reflection (concatenated slices),
    then each window's variance per channel, log-summed (a local-contrast energy)."""
    r = k // 2
    xp = vnp.concatenate([x[r:0:-1], x, x[-2:-r - 2:-1]])
    total = 0.0
    for t in range(x.shape[0]):
        total = total + vnp.sum(vnp.log(vnp.var(xp[t:t + k], axis=0) + 0.1))
    return total


def reflect_padded_variance_ref(x, k):
    r = k // 2
    xp = np.concatenate([x[r:0:-1], x, x[-2:-r - 2:-1]])
    n = x.shape[0]
    taps = [xp[a:a + n] for a in range(k)]
    m = sum(taps) / k
    v = sum((t - m) ** 2 for t in taps) / k
    return np.sum(np.log(v + 0.1))


def reflect_inputs(rng, T, C, k):
    return normal(rng, T, C), k


def strided_dilated_bank(x, W, s, d):
    """Item 2: windows at stride s and dilation d of a (T, C) signal, each contracted with a
    (k, C, F) filter bank in a comprehension, a ReLU-like softplus on the responses."""
    k = W.shape[0]
    span = (k - 1) * d + 1
    n = (x.shape[0] - span) // s + 1
    ys = [vnp.tensordot(x[t * s:t * s + span:d], W, axes=2) for t in range(n)]
    return vnp.sum(vnp.logaddexp(0.0, vnp.stack(ys)))


def strided_dilated_bank_ref(x, W, s, d):
    k = W.shape[0]
    span = (k - 1) * d + 1
    n = (x.shape[0] - span) // s + 1
    y = sum(x[a * d:a * d + s * (n - 1) + 1:s] @ W[a] for a in range(k))
    return np.sum(np.logaddexp(0.0, y))


def bank_inputs(rng, T, C, F, k, s, d):
    return normal(rng, T, C), normal(rng, k, C, F, scale=(k * C) ** -0.5), s, d


PATTERNS = [
    Pattern("causal_local_attention", 2, causal_local_attention, causal_local_attention_ref,
            attention_inputs, {"small": {"T": 12, "d": 3, "k": 3},
                               "default": {"T": 1000, "d": 16, "k": 8}}, (0, 1, 2), tags=_V),
    Pattern("while_hop_attention", 2, while_hop_attention, while_hop_attention_ref,
            hop_inputs, {"small": {"T": 14, "d": 3, "k": 4, "hop": 2},
                         "default": {"T": 2000, "d": 16, "k": 6, "hop": 2}}, (0, 1, 2),
            tags=_V),
    Pattern("tanh_scored_windows", 2, tanh_scored_windows, tanh_scored_windows_ref,
            scored_inputs, {"small": {"T": 12, "d": 3, "k": 3},
                            "default": {"T": 2000, "d": 16, "k": 7}}, (0, 1), tags=_V),
    Pattern("neighbourhood_attention_2d", 2, neighbourhood_attention_2d,
            neighbourhood_attention_2d_ref, neighbourhood_inputs,
            {"small": {"H": 6, "W": 7, "C": 2, "r": 1},
             "default": {"H": 40, "W": 40, "C": 16, "r": 1}}, (0, 1), tags=_V),
    Pattern("dilated_softmax_pool", 2, dilated_softmax_pool, dilated_softmax_pool_ref,
            dilated_pool_inputs, {"small": {"T": 14, "C": 2, "k": 3, "d": 2},
                                  "default": {"T": 2000, "C": 16, "k": 4, "d": 3}}, (0,),
            tags=_V),
    Pattern("tap_weighted_pool", 2, tap_weighted_pool, tap_weighted_pool_ref,
            tap_weight_inputs, {"small": {"T": 10, "C": 2, "k": 3},
                                "default": {"T": 2000, "C": 16, "k": 5}}, (0, 1), tags=_V),
    Pattern("dilated_depthwise_btc", 2, dilated_depthwise_btc, dilated_depthwise_btc_ref,
            depthwise_inputs, {"small": {"B": 2, "T": 12, "C": 2, "k": 3, "d": 2},
                               "default": {"B": 8, "T": 400, "C": 16, "k": 4, "d": 2}},
            (0, 1), tags=_V),
    Pattern("padded_filter_bank_btc", 2, padded_filter_bank_btc, padded_filter_bank_btc_ref,
            filter_bank_inputs, {"small": {"B": 2, "T": 8, "C": 2, "F": 3, "k": 3},
                                 "default": {"B": 16, "T": 200, "C": 8, "F": 8, "k": 4}},
            (0, 1), tags=_V),
    Pattern("strided_volume_energy", 2, strided_volume_energy, strided_volume_energy_ref,
            volume_inputs, {"small": {"n": 7, "p": 3, "s": 2},
                            "default": {"n": 33, "p": 3, "s": 2}}, (0,), tags=_V),
    Pattern("reflect_padded_variance", 2, reflect_padded_variance, reflect_padded_variance_ref,
            reflect_inputs, {"small": {"T": 10, "C": 2, "k": 3},
                             "default": {"T": 2000, "C": 16, "k": 5}}, (0,), tags=_V),
    Pattern("strided_dilated_bank", 2, strided_dilated_bank, strided_dilated_bank_ref,
            bank_inputs, {"small": {"T": 20, "C": 2, "F": 3, "k": 3, "s": 2, "d": 2},
                          "default": {"T": 4000, "C": 8, "F": 8, "k": 4, "s": 2, "d": 3}},
            (0, 1), tags=_V),
]
