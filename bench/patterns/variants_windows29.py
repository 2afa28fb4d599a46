"""Window variants of session 29 (item 2): windows padded by np.pad, read backwards, strided
and dilated 2-D patches, pooling over blocks, local attention with a relative-position bias
or a padding mask, multi-head windows with the heads first, windows handed to a kernel
function passed as an argument, and a max over each window. Each reference is the
hand-vectorized form a user would write: one pass per tap over contiguous slices, or
np.einsum over sliding_window_view where that is the natural form."""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view as _windows

from .core import Pattern, normal

_V = ("variant", "natural")


# ------------------------------------------------------------------ 1-D windows


def np_pad_dilated_conv(x, W, d):
    """Item 2: a dilated convolution of rows padded by np.pad ('same' output length): each
    output row the sum of k taps d rows apart, each tap a (C, F) matrix."""
    k = W.shape[0]
    half = (k - 1) * d // 2
    xp = np.pad(x, ((half, half), (0, 0)))
    out = np.zeros((x.shape[0], W.shape[2]))
    for t in range(x.shape[0]):
        for j in range(k):
            out[t] += xp[t + j * d] @ W[j]
    return np.sum(np.tanh(out))


def np_pad_dilated_conv_ref(x, W, d):
    k = W.shape[0]
    half = (k - 1) * d // 2
    xp = np.pad(x, ((half, half), (0, 0)))
    n = x.shape[0]
    return np.sum(np.tanh(sum(xp[j * d:j * d + n] @ W[j] for j in range(k))))


def pad_conv_inputs(rng, T, C, F, k, d):
    return normal(rng, T, C), normal(rng, k, C, F, scale=0.3), d


def backward_window_cosine(X, k):
    """Item 2: each row's cosine similarity against the k rows before it (`X[t-k:t]`), a
    softplus of the similarities summed."""
    total = 0.0
    for t in range(k, X.shape[0]):
        W = X[t - k:t]
        c = (W @ X[t]) / (np.sqrt(np.sum(W * W, axis=1)) * np.sqrt(np.sum(X[t] * X[t])))
        total = total + np.sum(np.log1p(np.exp(c)))
    return total


def backward_window_cosine_ref(X, k):
    n = np.sqrt(np.sum(X * X, axis=1))
    m = X.shape[0] - k
    return sum(np.sum(np.log1p(np.exp(np.einsum("td,td->t", X[a:a + m], X[k:]) /
                                      (n[a:a + m] * n[k:]))))
               for a in range(k))


def cosine_inputs(rng, T, D, k):
    return normal(rng, T, D), k


def _banded_score(Kw, q, bias):
    """A kernel function: scores of one query against its window of keys, plus a bias."""
    return Kw @ q + bias


def biased_window_attention(K, V, Q, b, score=_banded_score):
    """Item 2: local attention over k-row windows whose scores come from a kernel function
    passed as an argument, with a learned relative-position bias b (one per offset)."""
    k = b.shape[0]
    total = 0.0
    for t in range(K.shape[0] - k + 1):
        s = score(K[t:t + k], Q[t], b)
        a = np.exp(s - np.max(s))
        total = total + np.sum(((a / np.sum(a)) @ V[t:t + k]) ** 2)
    return total


def biased_window_attention_ref(K, V, Q, b):
    k = b.shape[0]
    Kw, Vw = _windows(K, k, axis=0), _windows(V, k, axis=0)  # (n, D, k)
    s = np.einsum("ndk,nd->nk", Kw, Q[:len(Kw)]) + b
    a = np.exp(s - s.max(axis=1, keepdims=True))
    a /= a.sum(axis=1, keepdims=True)
    return np.sum(np.einsum("nk,ndk->nd", a, Vw) ** 2)


def biased_inputs(rng, T, D, k):
    return (normal(rng, T, D, scale=0.5), normal(rng, T, D, scale=0.5),
            normal(rng, T - k + 1, D, scale=0.5), normal(rng, k, scale=0.5))


def padding_masked_attention(K, V, Q, valid, k):
    """Item 2: each row attends over the k rows centred on it, zero-padded by np.pad at both
    ends; padded rows (and rows marked invalid) are masked out of the softmax by -inf."""
    h = k // 2
    Kp = np.pad(K, ((h, h), (0, 0)))
    Vp = np.pad(V, ((h, h), (0, 0)))
    mp = np.pad(valid, (h, h))
    total = 0.0
    for t in range(K.shape[0]):
        s = np.where(mp[t:t + k], Kp[t:t + k] @ Q[t], -np.inf)
        a = np.exp(s - np.max(s))
        total = total + np.sum(((a / np.sum(a)) @ Vp[t:t + k]) ** 2)
    return total


def padding_masked_attention_ref(K, V, Q, valid, k):
    h = k // 2
    Kw = _windows(np.pad(K, ((h, h), (0, 0))), k, axis=0)
    Vw = _windows(np.pad(V, ((h, h), (0, 0))), k, axis=0)
    mw = _windows(np.pad(valid, (h, h)), k)
    s = np.where(mw, np.einsum("ndk,nd->nk", Kw, Q), -np.inf)
    a = np.exp(s - s.max(axis=1, keepdims=True))
    a /= a.sum(axis=1, keepdims=True)
    return np.sum(np.einsum("nk,ndk->nd", a, Vw) ** 2)


def masked_inputs(rng, T, D, k):
    valid = rng.random(T) > 0.2
    valid[::7] = True  # (every window holds a valid row: its own row is valid or near one)
    valid[k // 2::k // 2 + 1] = True
    return (normal(rng, T, D, scale=0.5), normal(rng, T, D, scale=0.5),
            normal(rng, T, D, scale=0.5), valid, k)


def heads_first_windows(K, Q, k):
    """Item 2: several heads laid out heads first, (H, T, D): each position's query per head
    against its k-row window of that head's keys, one einsum over the heads."""
    total = 0.0
    for t in range(K.shape[1] - k + 1):
        s = np.einsum("hkd,hd->hk", K[:, t:t + k], Q[:, t])
        total = total + np.sum(np.tanh(s) ** 2)
    return total


def heads_first_windows_ref(K, Q, k):
    n = K.shape[1] - k + 1
    return sum(np.sum(np.tanh(np.einsum("htd,htd->ht", K[:, a:a + n], Q[:, :n])) ** 2)
               for a in range(k))


def heads_inputs(rng, H, T, D, k):
    return normal(rng, H, T, D, scale=0.5), normal(rng, H, T, D, scale=0.5), k


def window_max_pool(x, k):
    """Item 2: a sliding maximum over k rows (max pooling, stride 1), channel by channel, a
    squared loss of the pooled rows."""
    total = 0.0
    for t in range(x.shape[0] - k + 1):
        total = total + np.sum(np.max(x[t:t + k], axis=0) ** 2)
    return total


def window_max_pool_ref(x, k):
    return np.sum(np.max(_windows(x, k, axis=0), axis=2) ** 2)


def pool_inputs(rng, T, C, k):
    return normal(rng, T, C), k


def tap_kernel_conv(x, w, tap=lambda win, w: win.T @ w):
    """Item 2: a 1-D convolution over rows whose window is handed to a kernel function
    (`tap(x[t:t+k], w)`, passed as an argument), a logistic-style loss of the outputs."""
    k = w.shape[0]
    out = []
    for t in range(x.shape[0] - k + 1):
        out.append(tap(x[t:t + k], w))
    y = np.stack(out)
    return np.sum(np.log(1.0 + np.exp(-y)))


def tap_kernel_conv_ref(x, w):
    k = w.shape[0]
    n = x.shape[0] - k + 1
    y = sum(x[j:j + n] * w[j] for j in range(k))
    return np.sum(np.log(1.0 + np.exp(-y)))


def tap_inputs(rng, T, C, k):
    return normal(rng, T, C), normal(rng, k, scale=0.5)


PATTERNS = [
    Pattern("np_pad_dilated_conv", 2, np_pad_dilated_conv, np_pad_dilated_conv_ref,
            pad_conv_inputs, {"small": {"T": 9, "C": 2, "F": 3, "k": 3, "d": 2},
                              "default": {"T": 2000, "C": 8, "F": 16, "k": 3, "d": 2}},
            (0, 1), tags=_V),
    Pattern("backward_window_cosine", 2, backward_window_cosine, backward_window_cosine_ref,
            cosine_inputs, {"small": {"T": 9, "D": 3, "k": 3},
                            "default": {"T": 2000, "D": 16, "k": 5}}, (0,), tags=_V),
    Pattern("biased_window_attention", 2, biased_window_attention,
            biased_window_attention_ref, biased_inputs,
            {"small": {"T": 9, "D": 3, "k": 3}, "default": {"T": 2000, "D": 16, "k": 7}},
            (0, 1, 2, 3), tags=_V),
    Pattern("padding_masked_attention", 2, padding_masked_attention,
            padding_masked_attention_ref, masked_inputs,
            {"small": {"T": 9, "D": 3, "k": 3}, "default": {"T": 1500, "D": 16, "k": 5}},
            (0, 1, 2), tags=_V),
    Pattern("heads_first_windows", 2, heads_first_windows, heads_first_windows_ref,
            heads_inputs, {"small": {"H": 2, "T": 8, "D": 3, "k": 3},
                           "default": {"H": 4, "T": 1000, "D": 16, "k": 5}}, (0, 1),
            tags=_V),
    Pattern("window_max_pool", 2, window_max_pool, window_max_pool_ref, pool_inputs,
            {"small": {"T": 9, "C": 3, "k": 3}, "default": {"T": 3000, "C": 16, "k": 5}},
            (0,), tags=_V),
    Pattern("tap_kernel_conv", 2, tap_kernel_conv, tap_kernel_conv_ref, tap_inputs,
            {"small": {"T": 9, "C": 3, "k": 3}, "default": {"T": 3000, "C": 16, "k": 5}},
            (0, 1), tags=_V),
]


# ------------------------------------------------------------------ 2-D and 3-D patches


def strided_patch_scores(F, Q):
    """Item 2: 3 x 3 patches taken every second pixel (`F[2i:2i+3, 2j:2j+3]`, overlapping by
    one row and column), each scored against its query, a log-sum-exp of the nine scores."""
    total = 0.0
    for i in range(Q.shape[0]):
        for j in range(Q.shape[1]):
            s = np.einsum("abc,c->ab", F[2 * i:2 * i + 3, 2 * j:2 * j + 3], Q[i, j])
            total = total + np.log(np.sum(np.exp(s)))
    return total


def strided_patch_scores_ref(F, Q):
    n, m = Q.shape[:2]
    S = np.stack([np.einsum("ijc,ijc->ij", F[a:a + 2 * n - 1:2, b:b + 2 * m - 1:2], Q)
                  for a in range(3) for b in range(3)])
    return np.sum(np.log(np.sum(np.exp(S), axis=0)))


def strided_patch_inputs(rng, H, C):
    n = (H - 3) // 2 + 1
    return normal(rng, H, H, C, scale=0.5), normal(rng, n, n, C, scale=0.5)


def block_mean_pool(img):
    """Item 2: 2 x 2 average pooling with stride 2 over a channels-last image (blocks that
    do not overlap), a squared tanh of the pooled pixels."""
    H, W = img.shape[0] // 2, img.shape[1] // 2
    out = np.zeros((H, W, img.shape[2]))
    for i in range(H):
        for j in range(W):
            out[i, j] = np.mean(img[2 * i:2 * i + 2, 2 * j:2 * j + 2], axis=(0, 1))
    return np.sum(np.tanh(out) ** 2)


def block_mean_pool_ref(img):
    H, W = img.shape[0] // 2, img.shape[1] // 2
    p = img[:2 * H, :2 * W].reshape(H, 2, W, 2, -1).mean(axis=(1, 3))
    return np.sum(np.tanh(p) ** 2)


def pool2d_inputs(rng, H, C):
    return (normal(rng, H, H, C),)


def np_pad_stencil_channels(img, K):
    """Item 2: a 3 x 3 stencil per channel on an image zero-padded by np.pad ('same' size):
    each pixel's patch weighted by the kernel and summed over the offsets."""
    P = np.pad(img, ((1, 1), (1, 1), (0, 0)))
    total = 0.0
    for i in range(img.shape[0]):
        for j in range(img.shape[1]):
            v = np.einsum("abc,ab->c", P[i:i + 3, j:j + 3], K)
            total = total + np.sum(v * v)
    return total


def np_pad_stencil_channels_ref(img, K):
    P = np.pad(img, ((1, 1), (1, 1), (0, 0)))
    H, W = img.shape[:2]
    v = sum(K[a, b] * P[a:a + H, b:b + W] for a in range(3) for b in range(3))
    return np.sum(v * v)


def stencil_inputs(rng, H, C):
    return normal(rng, H, H, C), normal(rng, 3, 3, scale=0.5)


def volume_dilated_scores(V, Q):
    """Item 2: 3-D patches of 2 x 2 x 2 voxels two apart (`V[i:i+3:2, j:j+3:2, k:k+3:2]`),
    each scored against its query over the channels, a squared tanh summed."""
    total = 0.0
    for i in range(Q.shape[0]):
        for j in range(Q.shape[1]):
            for k in range(Q.shape[2]):
                s = np.einsum("abcd,d->abc", V[i:i + 3:2, j:j + 3:2, k:k + 3:2], Q[i, j, k])
                total = total + np.sum(np.tanh(s) ** 2)
    return total


def volume_dilated_scores_ref(V, Q):
    n, m, p = Q.shape[:3]
    return sum(np.sum(np.tanh(np.einsum("ijkd,ijkd->ijk",
                                        V[2 * a:2 * a + n, 2 * b:2 * b + m, 2 * c:2 * c + p],
                                        Q)) ** 2)
               for a in range(2) for b in range(2) for c in range(2))


def volume_inputs(rng, H, C):
    return normal(rng, H, H, H, C, scale=0.5), normal(rng, H - 2, H - 2, H - 2, C, scale=0.5)


PATTERNS += [
    Pattern("strided_patch_scores", 2, strided_patch_scores, strided_patch_scores_ref,
            strided_patch_inputs, {"small": {"H": 7, "C": 3}, "default": {"H": 61, "C": 16}},
            (0, 1), tags=_V),
    Pattern("block_mean_pool", 2, block_mean_pool, block_mean_pool_ref, pool2d_inputs,
            {"small": {"H": 6, "C": 3}, "default": {"H": 64, "C": 16}}, (0,), tags=_V),
    Pattern("np_pad_stencil_channels", 2, np_pad_stencil_channels,
            np_pad_stencil_channels_ref, stencil_inputs,
            {"small": {"H": 5, "C": 3}, "default": {"H": 40, "C": 16}}, (0, 1), tags=_V),
    Pattern("volume_dilated_scores", 2, volume_dilated_scores, volume_dilated_scores_ref,
            volume_inputs, {"small": {"H": 4, "C": 2}, "default": {"H": 14, "C": 8}}, (0, 1),
            tags=_V),
]
