"""Window variants of session 28 (item 2): local attention over windows of rows (dilated,
strided, causal by concatenated padding, masked, several heads), 2-D patches scored against
each pixel's query (rectangular, dilated, pooled by a softmax), 3-D patches, and
convolutions padded by concatenation. Each reference is the hand-vectorized form a user
would write: one pass per tap over contiguous slices, or np.einsum over
sliding_window_view where that is the natural form."""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view as _windows

from .core import Pattern, normal

_V = ("variant", "natural")


def dilated_window_scores(K, Q, k, d):
    """Item 2: each row's query against k keys spaced d rows apart
    (`K[t : t + (k-1)d + 1 : d] @ Q[t]`), scores squashed and summed."""
    span = (k - 1) * d + 1
    total = 0.0
    for t in range(K.shape[0] - span + 1):
        s = K[t:t + span:d] @ Q[t]
        total = total + np.sum(np.tanh(s) ** 2)
    return total


def dilated_window_scores_ref(K, Q, k, d):
    n = K.shape[0] - (k - 1) * d
    return sum(np.sum(np.tanh(np.einsum("td,td->t", K[a * d:a * d + n], Q[:n])) ** 2)
               for a in range(k))


def window_qk_inputs(rng, T, D, k, d):
    return normal(rng, T, D, scale=0.5), normal(rng, T, D, scale=0.5), k, d


def strided_window_softmax(K, V, Q, k, s):
    """Item 2: every s-th row attends over its k-row window of keys, the window's values
    pooled by the softmax, a squared loss of the pooled rows."""
    out = []
    for t in range(0, K.shape[0] - k + 1, s):
        sc = K[t:t + k] @ Q[t // s]
        a = np.exp(sc - np.max(sc))
        out.append((a / np.sum(a)) @ V[t:t + k])
    return np.sum(np.stack(out) ** 2)


def strided_window_softmax_ref(K, V, Q, k, s):
    Kw = _windows(K, k, axis=0)[::s]  # (n, D, k)
    Vw = _windows(V, k, axis=0)[::s]
    sc = np.einsum("ndk,nd->nk", Kw, Q[:len(Kw)])
    a = np.exp(sc - sc.max(axis=1, keepdims=True))
    a /= a.sum(axis=1, keepdims=True)
    return np.sum(np.einsum("nk,ndk->nd", a, Vw) ** 2)


def strided_softmax_inputs(rng, T, D, k, s):
    n = (T - k) // s + 1
    return (normal(rng, T, D, scale=0.5), normal(rng, T, D, scale=0.5),
            normal(rng, n, D, scale=0.5), k, s)


def causal_padded_attention(K, Q, k):
    """Item 2: causal windows made by padding the keys with k - 1 zero rows in front
    (np.concatenate), each row's query against the k keys ending at its own row, a
    log-sum-exp of the scores."""
    Kp = np.concatenate([np.zeros((k - 1, K.shape[1])), K])
    total = 0.0
    for t in range(K.shape[0]):
        s = Kp[t:t + k] @ Q[t]
        total = total + np.log(np.sum(np.exp(s)))
    return total


def causal_padded_attention_ref(K, Q, k):
    T = K.shape[0]
    Kp = np.concatenate([np.zeros((k - 1, K.shape[1])), K])
    S = np.stack([np.einsum("td,td->t", Kp[a:a + T], Q) for a in range(k)])
    return np.sum(np.log(np.sum(np.exp(S), axis=0)))


def causal_inputs(rng, T, D, k):
    return normal(rng, T, D, scale=0.5), normal(rng, T, D, scale=0.5), k


def masked_band_scores(K, Q, k):
    """Item 2: a band of k keys around each row, the keys past the row masked out with
    np.where before a softmax, the softmax weights' squares summed."""
    r = k // 2
    total = 0.0
    for t in range(r, K.shape[0] - r):
        s = K[t - r:t + r + 1] @ Q[t]
        s = np.where(np.arange(k) <= r, s, -30.0)
        a = np.exp(s - np.max(s))
        total = total + np.sum((a / np.sum(a)) ** 2)
    return total


def masked_band_scores_ref(K, Q, k):
    r = k // 2
    n = K.shape[0] - 2 * r
    S = np.stack([np.einsum("td,td->t", K[a:a + n], Q[r:r + n]) for a in range(k)], axis=1)
    S = np.where(np.arange(k) <= r, S, -30.0)
    A = np.exp(S - S.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)
    return np.sum(A ** 2)


def multihead_window_attention(K, V, Q, k):
    """Item 2: several heads (K, V, Q of shape (T, H, D)); each row's heads attend over the
    k-row window's keys per head (einsum over the window), values pooled per head."""
    total = 0.0
    for t in range(K.shape[0] - k + 1):
        s = np.einsum("khd,hd->hk", K[t:t + k], Q[t])
        a = np.exp(s - np.max(s, axis=1, keepdims=True))
        a = a / np.sum(a, axis=1, keepdims=True)
        total = total + np.sum(np.einsum("hk,khd->hd", a, V[t:t + k]) ** 2)
    return total


def multihead_window_attention_ref(K, V, Q, k):
    n = K.shape[0] - k + 1
    S = np.stack([np.einsum("thd,thd->th", K[a:a + n], Q[:n]) for a in range(k)], axis=2)
    A = np.exp(S - S.max(axis=2, keepdims=True))
    A /= A.sum(axis=2, keepdims=True)
    out = sum(A[:, :, a, None] * V[a:a + n] for a in range(k))
    return np.sum(out ** 2)


def multihead_inputs(rng, T, H, D, k):
    n = T - k + 1
    return (normal(rng, T, H, D, scale=0.5), normal(rng, T, H, D, scale=0.5),
            normal(rng, n, H, D, scale=0.5), k)


PATTERNS = [
    Pattern("dilated_window_scores", 2, dilated_window_scores, dilated_window_scores_ref,
            window_qk_inputs, {"small": {"T": 12, "D": 3, "k": 3, "d": 2},
                               "default": {"T": 2000, "D": 16, "k": 5, "d": 3}}, (0, 1),
            tags=_V),
    Pattern("strided_window_softmax", 2, strided_window_softmax, strided_window_softmax_ref,
            strided_softmax_inputs, {"small": {"T": 13, "D": 3, "k": 4, "s": 2},
                                     "default": {"T": 4000, "D": 16, "k": 8, "s": 2}},
            (0, 1, 2), tags=_V),
    Pattern("causal_padded_attention", 2, causal_padded_attention,
            causal_padded_attention_ref, causal_inputs,
            {"small": {"T": 9, "D": 3, "k": 3}, "default": {"T": 2000, "D": 16, "k": 6}},
            (0, 1), tags=_V),
    Pattern("masked_band_scores", 2, masked_band_scores, masked_band_scores_ref,
            causal_inputs, {"small": {"T": 10, "D": 3, "k": 3},
                            "default": {"T": 2000, "D": 16, "k": 7}}, (0, 1), tags=_V),
    Pattern("multihead_window_attention", 2, multihead_window_attention,
            multihead_window_attention_ref, multihead_inputs,
            {"small": {"T": 8, "H": 2, "D": 3, "k": 3},
             "default": {"T": 1000, "H": 4, "D": 8, "k": 5}}, (0, 1, 2), tags=_V),
]


# ------------------------------------------------------------------ 2-D and 3-D patches


def rect_patch_scores(F, Q, ph, pw):
    """Item 2: each pixel's query against its ph x pw rectangle of channels-last
    features, flattened to rows (`F[i:i+ph, j:j+pw].reshape(-1, C) @ Q[i, j]`), a
    squared tanh of the scores summed."""
    total = 0.0
    for i in range(F.shape[0] - ph + 1):
        for j in range(F.shape[1] - pw + 1):
            s = F[i:i + ph, j:j + pw].reshape(ph * pw, F.shape[2]) @ Q[i, j]
            total = total + np.sum(np.tanh(s) ** 2)
    return total


def rect_patch_scores_ref(F, Q, ph, pw):
    n, m = F.shape[0] - ph + 1, F.shape[1] - pw + 1
    return sum(np.sum(np.tanh(np.einsum("ijc,ijc->ij", F[a:a + n, b:b + m], Q)) ** 2)
               for a in range(ph) for b in range(pw))


def rect_inputs(rng, H, W, C, ph, pw):
    return (normal(rng, H, W, C, scale=0.5), normal(rng, H - ph + 1, W - pw + 1, C, scale=0.5),
            ph, pw)


def dilated_patch_scores(F, Q):
    """Item 2: each pixel's query against a 3 x 3 grid of features two pixels apart
    (`F[i:i+5:2, j:j+5:2]`), einsum over the channels, a log-sum-exp of the nine scores."""
    total = 0.0
    for i in range(F.shape[0] - 4):
        for j in range(F.shape[1] - 4):
            s = np.einsum("abc,c->ab", F[i:i + 5:2, j:j + 5:2], Q[i, j])
            total = total + np.log(np.sum(np.exp(s)))
    return total


def dilated_patch_scores_ref(F, Q):
    n, m = F.shape[0] - 4, F.shape[1] - 4
    S = np.stack([np.einsum("ijc,ijc->ij", F[2 * a:2 * a + n, 2 * b:2 * b + m], Q)
                  for a in range(3) for b in range(3)])
    return np.sum(np.log(np.sum(np.exp(S), axis=0)))


def dilated_patch_inputs(rng, H, C):
    return normal(rng, H, H, C, scale=0.5), normal(rng, H - 4, H - 4, C, scale=0.5)


def patch_softmax_pool(F, Q):
    """Item 2: a softmax over each pixel's 3 x 3 patch scores pools the patch's features;
    a squared loss of the pooled features (2-D neighbourhood attention, one pixel at a
    time)."""
    C = F.shape[2]
    total = 0.0
    for i in range(F.shape[0] - 2):
        for j in range(F.shape[1] - 2):
            P = F[i:i + 3, j:j + 3].reshape(9, C)
            s = P @ Q[i, j]
            a = np.exp(s - np.max(s))
            total = total + np.sum(((a / np.sum(a)) @ P) ** 2)
    return total


def patch_softmax_pool_ref(F, Q):
    n, m = F.shape[0] - 2, F.shape[1] - 2
    sl = [F[a:a + n, b:b + m] for a in range(3) for b in range(3)]
    S = np.stack([np.einsum("ijc,ijc->ij", x, Q) for x in sl])
    A = np.exp(S - S.max(axis=0))
    A /= A.sum(axis=0)
    return np.sum(sum(A[o, :, :, None] * x for o, x in enumerate(sl)) ** 2)


def patch_inputs(rng, H, C):
    return normal(rng, H, H, C, scale=0.5), normal(rng, H - 2, H - 2, C, scale=0.5)


def volume_patch_scores(X, Q):
    """Item 2: each voxel's query against its 2 x 2 x 2 block of channels-last features,
    scores through a sine, summed."""
    total = 0.0
    for i in range(X.shape[0] - 1):
        for j in range(X.shape[1] - 1):
            for l in range(X.shape[2] - 1):
                s = X[i:i + 2, j:j + 2, l:l + 2].reshape(8, X.shape[3]) @ Q[i, j, l]
                total = total + np.sum(np.sin(s))
    return total


def volume_patch_scores_ref(X, Q):
    n = [d - 1 for d in X.shape[:3]]
    return sum(np.sum(np.sin(np.einsum("ijlc,ijlc->ijl",
                                       X[a:a + n[0], b:b + n[1], e:e + n[2]], Q)))
               for a in range(2) for b in range(2) for e in range(2))


def volume_inputs(rng, S, C):
    return normal(rng, S, S, S, C, scale=0.5), normal(rng, S - 1, S - 1, S - 1, C, scale=0.5)


PATTERNS += [
    Pattern("rect_patch_scores", 2, rect_patch_scores, rect_patch_scores_ref, rect_inputs,
            {"small": {"H": 5, "W": 6, "C": 3, "ph": 2, "pw": 3},
             "default": {"H": 40, "W": 44, "C": 16, "ph": 2, "pw": 3}}, (0, 1), tags=_V),
    Pattern("dilated_patch_scores", 2, dilated_patch_scores, dilated_patch_scores_ref,
            dilated_patch_inputs, {"small": {"H": 7, "C": 3}, "default": {"H": 40, "C": 16}},
            (0, 1), tags=_V),
    Pattern("patch_softmax_pool", 2, patch_softmax_pool, patch_softmax_pool_ref, patch_inputs,
            {"small": {"H": 5, "C": 3}, "default": {"H": 34, "C": 16}}, (0, 1), tags=_V),
    Pattern("volume_patch_scores", 2, volume_patch_scores, volume_patch_scores_ref,
            volume_inputs, {"small": {"S": 4, "C": 2}, "default": {"S": 14, "C": 16}}, (0, 1),
            tags=_V),
]


# ------------------------------------------------------------------ padded convolutions


def concat_padded_conv1d(x, W, b):
    """Item 2: a 'same' 1-D convolution over channels-last rows, padded by concatenating
    zero rows on both sides, each output row the window flattened against the filter
    matrix, a ReLU and a squared loss."""
    k = W.shape[1] // x.shape[1]
    r = k // 2
    pad = np.zeros((r, x.shape[1]))
    xp = np.concatenate([pad, x, pad])
    out = []
    for t in range(x.shape[0]):
        out.append(np.maximum(W @ xp[t:t + k].reshape(-1) + b, 0.0))
    return np.sum(np.stack(out) ** 2)


def concat_padded_conv1d_ref(x, W, b):
    T, C = x.shape
    k = W.shape[1] // C
    r = k // 2
    xp = np.concatenate([np.zeros((r, C)), x, np.zeros((r, C))])
    Wk = W.reshape(W.shape[0], k, C)
    y = sum(xp[a:a + T] @ Wk[:, a].T for a in range(k)) + b
    return np.sum(np.maximum(y, 0.0) ** 2)


def padded_conv_inputs(rng, T, C, F, k):
    return normal(rng, T, C), normal(rng, F, k * C, scale=0.3), normal(rng, F, scale=0.1)


def strided_window_matvec(x, W, s):
    """Item 2: a strided convolution written as a matrix times each window, windows of k
    rows every s rows flattened (`W @ x[s*t : s*t+k].ravel()`), tanh, summed."""
    k = W.shape[1] // x.shape[1]
    total = 0.0
    for t in range((x.shape[0] - k) // s + 1):
        total = total + np.sum(np.tanh(W @ x[s * t:s * t + k].ravel()))
    return total


def strided_window_matvec_ref(x, W, s):
    T, C = x.shape
    k = W.shape[1] // C
    n = (T - k) // s + 1
    Wk = W.reshape(W.shape[0], k, C)
    y = sum(x[a:a + s * (n - 1) + 1:s] @ Wk[:, a].T for a in range(k))
    return np.sum(np.tanh(y))


def strided_matvec_inputs(rng, T, C, F, k, s):
    return normal(rng, T, C), normal(rng, F, k * C, scale=0.3), s


PATTERNS += [
    Pattern("concat_padded_conv1d", 2, concat_padded_conv1d, concat_padded_conv1d_ref,
            padded_conv_inputs, {"small": {"T": 9, "C": 2, "F": 3, "k": 3},
                                 "default": {"T": 2000, "C": 8, "F": 16, "k": 5}}, (0, 1, 2),
            tags=_V),
    Pattern("strided_window_matvec", 2, strided_window_matvec, strided_window_matvec_ref,
            strided_matvec_inputs, {"small": {"T": 11, "C": 2, "F": 3, "k": 3, "s": 2},
                                    "default": {"T": 4000, "C": 8, "F": 16, "k": 6, "s": 3}},
            (0, 1), tags=_V),
]
