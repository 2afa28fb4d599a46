"""Item 2, affine positions: slices whose bounds move with the loop (sliding windows, 2-D
patches, column blocks, ranges with steps, negative steps included)."""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import vecgrad as vg
import vecgrad.numpy as vnp

from .core import Pattern, normal


def conv1d(x, w):
    """Item 2: a multi-channel 1-D convolution, one sliding window x[t:t+k] per output row."""
    k = w.shape[0]
    T = x.shape[0] - k + 1
    y = vnp.empty((T, w.shape[2]))
    for t in range(T):
        y[t] = vnp.tensordot(x[t:t + k], w, axes=2)
    return vnp.sum(vnp.tanh(y))


def conv1d_ref(x, w):
    k = w.shape[0]
    T = x.shape[0] - k + 1
    return np.sum(np.tanh(sum(x[j:j + T] @ w[j] for j in range(k))))


def conv1d_inputs(rng, T, c, k, f):
    return normal(rng, T, c), normal(rng, k, c, f, scale=(k * c) ** -0.5)


def moving_average(x, target, k):
    """Item 2: moving averages x[t:t+k].mean(axis=0) in a list comprehension, stacked."""
    ma = vnp.stack([x[t:t + k].mean(axis=0) for t in range(len(x) - k + 1)])
    return vnp.mean((ma - target) ** 2)


def moving_average_ref(x, target, k):
    c = np.cumsum(np.concatenate([np.zeros((1,) + x.shape[1:]), x]), axis=0)
    return np.mean(((c[k:] - c[:-k]) / k - target) ** 2)


def moving_average_inputs(rng, T, c, k):
    return normal(rng, T, c), normal(rng, T - k + 1, c, scale=0.1), k


def ngram_layer(x, W, b, n):
    """Item 2: n-gram features, each window of n embeddings flattened and passed to a layer."""
    total = 0.0
    for t in range(len(x) - n + 1):
        total = total + vnp.sum(vnp.tanh(W @ x[t:t + n].ravel() + b))
    return total


def ngram_layer_ref(x, W, b, n):
    win = sliding_window_view(x, n, axis=0)            # (T', d, n)
    flat = win.transpose(0, 2, 1).reshape(win.shape[0], -1)
    return np.sum(np.tanh(flat @ W.T + b))


def ngram_inputs(rng, T, d, h, n):
    return normal(rng, T, d), normal(rng, h, n * d, scale=(n * d) ** -0.5), normal(rng, h), n


def conv2d(img, K):
    """Item 2: a 'valid' 2-D convolution over channels, patches img[:, i:i+p, j:j+p] in nested
    loops written into a buffer, then a ReLU energy."""
    p = K.shape[1]
    H, W = img.shape[1] - p + 1, img.shape[2] - p + 1
    out = vnp.zeros((H, W))
    for i in range(H):
        for j in range(W):
            out[i, j] = vnp.sum(img[:, i:i + p, j:j + p] * K)
    return vnp.sum(vg.nn.relu(out) ** 2)


def conv2d_ref(img, K):
    p = K.shape[1]
    H, W = img.shape[1] - p + 1, img.shape[2] - p + 1
    out = sum(np.tensordot(K[:, a, b], img[:, a:a + H, b:b + W], axes=1)
              for a in range(p) for b in range(p))
    return np.sum(np.maximum(out, 0) ** 2)


def conv2d_inputs(rng, c, n, p):
    return normal(rng, c, n, n), normal(rng, c, p, p, scale=(c * p * p) ** -0.5)


def maxpool(x, s):
    """Item 2: max pooling over non-overlapping patches x[:, i:i+s, j:j+s], ranges with step s."""
    C, H, W = x.shape
    out = vnp.zeros((C, H // s, W // s))
    for i in range(0, H, s):
        for j in range(0, W, s):
            out[:, i // s, j // s] = vnp.max(x[:, i:i + s, j:j + s], axis=(1, 2))
    return vnp.sum(out * vnp.tanh(out))


def maxpool_ref(x, s):
    C, H, W = x.shape
    out = x.reshape(C, H // s, s, W // s, s).max(axis=(2, 4))
    return np.sum(out * np.tanh(out))


def maxpool_inputs(rng, c, n, s):
    return normal(rng, c, n, n), s


def multihead_attention(X, Wq, Wk, Wv, Wo, n_heads):
    """Item 2: multi-head self-attention, each head's projection a column block
    W[:, h*d:(h+1)*d]; the heads are concatenated."""
    d = Wq.shape[1] // n_heads
    heads = []
    for h in range(n_heads):
        cols = slice(h * d, (h + 1) * d)
        Q, K, V = X @ Wq[:, cols], X @ Wk[:, cols], X @ Wv[:, cols]
        A = vg.nn.softmax(Q @ K.T / np.sqrt(d), axis=-1)
        heads.append(A @ V)
    return vnp.sum(vnp.tanh(vnp.concatenate(heads, axis=1) @ Wo))


def multihead_attention_ref(X, Wq, Wk, Wv, Wo, n_heads):
    T, D = X.shape[0], Wq.shape[1]
    d = D // n_heads
    Q, K, V = ((X @ W).reshape(T, n_heads, d).transpose(1, 0, 2) for W in (Wq, Wk, Wv))
    s = Q @ K.transpose(0, 2, 1) / np.sqrt(d)
    e = np.exp(s - s.max(-1, keepdims=True))
    H = (e / e.sum(-1, keepdims=True)) @ V                 # (heads, T, d)
    return np.sum(np.tanh(H.transpose(1, 0, 2).reshape(T, D) @ Wo))


def mha_inputs(rng, T, D, heads):
    s = D ** -0.5
    return (normal(rng, T, D), normal(rng, D, D, scale=s), normal(rng, D, D, scale=s),
            normal(rng, D, D, scale=s), normal(rng, D, D, scale=s), heads)


def backward_strided_diffs(x, w):
    """Item 2: a range with a negative step, sum of w @ (x[i] - x[i-2])**2 for i = n-1, n-3, ..."""
    total = 0.0
    for i in range(len(x) - 1, 1, -2):
        total = total + w @ (x[i] - x[i - 2]) ** 2
    return total


def backward_strided_diffs_ref(x, w):
    n = len(x)
    return np.sum((x[n - 1:1:-2] - x[n - 3::-2]) ** 2 @ w)


def strided_diffs_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d)


def strided_conv1d(x, w, s):
    """Item 2: a convolution with stride s, windows x[t:t+k] for t in range(0, T-k+1, s), built
    as a list and stacked."""
    k = w.shape[0]
    ys = [vnp.sum(x[t:t + k] * w, axis=0) for t in range(0, len(x) - k + 1, s)]
    return vnp.sum(vnp.stack(ys) ** 2)


def strided_conv1d_ref(x, w, s):
    k = w.shape[0]
    n = (len(x) - k) // s + 1
    y = sum(x[j:j + s * (n - 1) + 1:s] * w[j] for j in range(k))
    return np.sum(y ** 2)


def strided_conv1d_inputs(rng, T, c, k, s):
    return normal(rng, T, c), normal(rng, k, c), s


def patch_embedding(img, We, pos):
    """Item 2: ViT patch embedding: non-overlapping patches img[:, i:i+p, j:j+p] flattened and
    projected, plus a position embedding per patch, then a token-wise energy."""
    C, H, W = img.shape
    p = round((We.shape[0] // C) ** 0.5)
    tokens = []
    for i in range(0, H, p):
        for j in range(0, W, p):
            tokens.append(img[:, i:i + p, j:j + p].reshape(-1) @ We)
    X = vnp.stack(tokens) + pos
    return vnp.sum(vg.nn.logsumexp(X, axis=1))


def patch_embedding_ref(img, We, pos):
    C, H, W = img.shape
    p = round((We.shape[0] // C) ** 0.5)
    patches = img.reshape(C, H // p, p, W // p, p).transpose(1, 3, 0, 2, 4)
    X = patches.reshape(-1, C * p * p) @ We + pos
    m = X.max(1, keepdims=True)
    return np.sum(np.log(np.exp(X - m).sum(1)) + m[:, 0])


def patch_inputs(rng, c, n, p, e):
    return (normal(rng, c, n, n), normal(rng, c * p * p, e, scale=(c * p * p) ** -0.5),
            normal(rng, (n // p) ** 2, e, scale=0.1))


def causal_moving_average(x, k):
    """Item 2: a causal moving average whose first windows are partial,
    x[max(0, t-k+1):t+1].mean(axis=0): the window's start is clamped, so it is not affine."""
    T = len(x)
    out = vnp.empty(x.shape)
    for t in range(T):
        out[t] = x[max(0, t - k + 1):t + 1].mean(axis=0)
    return vnp.sum((out - x) ** 2)


def causal_moving_average_ref(x, k):
    c = np.cumsum(x, axis=0)
    out = c.copy()
    out[k:] -= c[:-k]
    n = np.minimum(np.arange(1, len(x) + 1), k)[:, None]
    return np.sum((out / n - x) ** 2)


def causal_ma_inputs(rng, T, c, k):
    return normal(rng, T, c), k


PATTERNS = [
    Pattern("conv1d", 2, conv1d, conv1d_ref, conv1d_inputs,
            {"small": {"T": 9, "c": 2, "k": 3, "f": 2},
             "default": {"T": 2000, "c": 16, "k": 5, "f": 8}}, (0, 1)),
    Pattern("moving_average", 2, moving_average, moving_average_ref, moving_average_inputs,
            {"small": {"T": 9, "c": 2, "k": 3}, "default": {"T": 2000, "c": 32, "k": 8}},
            (0,)),
    Pattern("ngram_layer", 2, ngram_layer, ngram_layer_ref, ngram_inputs,
            {"small": {"T": 8, "d": 3, "h": 4, "n": 3},
             "default": {"T": 1000, "d": 16, "h": 32, "n": 3}}, (0, 1, 2)),
    Pattern("conv2d", 2, conv2d, conv2d_ref, conv2d_inputs,
            {"small": {"c": 2, "n": 6, "p": 3}, "default": {"c": 4, "n": 48, "p": 3}}, (0, 1)),
    Pattern("maxpool", 2, maxpool, maxpool_ref, maxpool_inputs,
            {"small": {"c": 2, "n": 6, "s": 2}, "default": {"c": 16, "n": 64, "s": 2}}, (0,)),
    Pattern("multihead_attention", 2, multihead_attention, multihead_attention_ref,
            mha_inputs, {"small": {"T": 5, "D": 6, "heads": 2},
                         "default": {"T": 128, "D": 64, "heads": 8}}, (0, 1, 2, 3, 4)),
    Pattern("backward_strided_diffs", 2, backward_strided_diffs, backward_strided_diffs_ref,
            strided_diffs_inputs, {"small": {"n": 11, "d": 3}, "default": {"n": 6000, "d": 32}},
            (0, 1)),
    Pattern("strided_conv1d", 2, strided_conv1d, strided_conv1d_ref, strided_conv1d_inputs,
            {"small": {"T": 12, "c": 2, "k": 4, "s": 2},
             "default": {"T": 4000, "c": 32, "k": 6, "s": 2}}, (0, 1)),
    Pattern("patch_embedding", 2, patch_embedding, patch_embedding_ref, patch_inputs,
            {"small": {"c": 2, "n": 4, "p": 2, "e": 3},
             "default": {"c": 3, "n": 64, "p": 4, "e": 32}}, (0, 1, 2)),
    Pattern("causal_moving_average", 2, causal_moving_average, causal_moving_average_ref,
            causal_ma_inputs, {"small": {"T": 9, "c": 2, "k": 3},
                               "default": {"T": 2000, "c": 32, "k": 16}}, (0,)),
]
