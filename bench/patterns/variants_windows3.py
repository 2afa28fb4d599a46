"""Convolutions, pooling stacks and local windows in more of the styles users write (item 2,
some with items 4 and 5): 2-D convolutions as loops over output pixels, over kernel taps and
as nested comprehensions of `np.sum(patch * w)`; zero padding by `np.pad` and by bounds checks
(`if 0 <= i + d < n`); depthwise and separable filters; pooling then convolution; a kernel
`map`ped over windows; multi-channel 1-D convolutions through `einsum`; strided and dilated
windows at odd sizes; windows along the time axis of a 3-D batch; a transposed (overlap-add)
convolution with channels; banded (local) attention in 1-D and over 2-D neighbourhoods."""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import vecgrad.numpy as vnp

from .core import Pattern, normal

# ------------------------------------------------------------------ 2-D convolutions


def conv2d_pixel_loops(img, W):
    """Item 2: a multi-channel 2-D convolution (C in, F out) written as nested loops over the
    output pixels, each pixel's F outputs one tensordot of the filters with its patch."""
    F, p = W.shape[0], W.shape[2]
    H, Wd = img.shape[1] - p + 1, img.shape[2] - p + 1
    out = vnp.zeros((F, H, Wd))
    for i in range(H):
        for j in range(Wd):
            out[:, i, j] = vnp.tensordot(W, img[:, i:i + p, j:j + p], axes=3)
    return vnp.sum(vnp.tanh(out))


def conv2d_pixel_loops_ref(img, W):
    p = W.shape[2]
    win = sliding_window_view(img, (p, p), axis=(1, 2))       # (C, H, W, p, p)
    return np.sum(np.tanh(np.einsum("chwab,fcab->fhw", win, W, optimize=True)))


def conv2d_pixel_inputs(rng, c, n, f, p):
    return normal(rng, c, n, n), normal(rng, f, c, p, p, scale=(c * p * p) ** -0.5)


def conv2d_tap_loops(img, K):
    """Item 2: a one-channel 2-D correlation written as loops over the kernel taps, each tap
    adding a shifted slice of the image times its weight into the output."""
    p = K.shape[0]
    H, W = img.shape[0] - p + 1, img.shape[1] - p + 1
    out = vnp.zeros((H, W))
    for a in range(p):
        for b in range(p):
            out = out + K[a, b] * img[a:a + H, b:b + W]
    return vnp.sum(vnp.sin(out))


def conv2d_tap_loops_ref(img, K):
    p = K.shape[0]
    H, W = img.shape[0] - p + 1, img.shape[1] - p + 1
    out = sum(K[a, b] * img[a:a + H, b:b + W] for a in range(p) for b in range(p))
    return np.sum(np.sin(out))


def tap_inputs(rng, n, p):
    return normal(rng, n, n), normal(rng, p, p, scale=1.0 / p)


def conv2d_patch_comprehension(img, K):
    """Item 2: `np.array([[np.sum(patch * K) for j ...] for i ...])`, the natural one-liner
    over every patch, then a squared error against a target of zeros."""
    p = K.shape[0]
    H, W = img.shape[0] - p + 1, img.shape[1] - p + 1
    out = vnp.array([[vnp.sum(img[i:i + p, j:j + p] * K) for j in range(W)] for i in range(H)])
    return vnp.mean(out ** 2)


def conv2d_patch_comprehension_ref(img, K):
    return np.mean(np.einsum("ijab,ab->ij", sliding_window_view(img, K.shape), K) ** 2)


def conv2d_same_np_pad(img, K):
    """Item 2: a 'same' 2-D convolution, the image zero-padded by np.pad, then loops over the
    output pixels reading padded patches, a ReLU after."""
    p = K.shape[0]
    r = p // 2
    xp = vnp.pad(img, r)
    n, m = img.shape
    out = vnp.zeros((n, m))
    for i in range(n):
        for j in range(m):
            out[i, j] = vnp.sum(xp[i:i + p, j:j + p] * K)
    return vnp.sum(vnp.maximum(out, 0.0) ** 2)


def conv2d_same_np_pad_ref(img, K):
    p = K.shape[0]
    xp = np.pad(img, p // 2)
    n, m = img.shape
    out = sum(K[a, b] * xp[a:a + n, b:b + m] for a in range(p) for b in range(p))
    return np.sum(np.maximum(out, 0.0) ** 2)


def same_pad_inputs(rng, n, p):
    return normal(rng, n, n), normal(rng, p, p, scale=1.0 / p)


def stencil_bounds_checks(x, w):
    """Items 2, 4: a 3-tap stencil along the rows with zero boundaries written as bounds
    checks, `if 0 <= i + d < n: out[i] += w[d + 1] * x[i + d]`, in a loop over rows."""
    n = x.shape[0]
    out = vnp.zeros_like(x)
    for i in range(n):
        for d in (-1, 0, 1):
            if 0 <= i + d < n:
                out[i] += w[d + 1] * x[i + d]
    return vnp.sum(vnp.tanh(out) ** 2)


def stencil_bounds_checks_ref(x, w):
    out = w[1] * x
    out[1:] += w[0] * x[:-1]
    out[:-1] += w[2] * x[1:]
    return np.sum(np.tanh(out) ** 2)


def stencil_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, 3, scale=0.5)


def depthwise_conv2d(img, K):
    """Item 2: a depthwise 2-D convolution, every channel with its own kernel, in loops over
    the output pixels: out[:, i, j] = sum(img[:, i:i+p, j:j+p] * K, axis=(1, 2))."""
    C, p, _ = K.shape
    H, W = img.shape[1] - p + 1, img.shape[2] - p + 1
    out = vnp.zeros((C, H, W))
    for i in range(H):
        for j in range(W):
            out[:, i, j] = vnp.sum(img[:, i:i + p, j:j + p] * K, axis=(1, 2))
    return vnp.sum(out ** 2)


def depthwise_conv2d_ref(img, K):
    p = K.shape[1]
    H, W = img.shape[1] - p + 1, img.shape[2] - p + 1
    out = sum(K[:, a, b, None, None] * img[:, a:a + H, b:b + W]
              for a in range(p) for b in range(p))
    return np.sum(out ** 2)


def depthwise_inputs(rng, c, n, p):
    return normal(rng, c, n, n), normal(rng, c, p, p, scale=1.0 / p)


def separable_filter(img, u, v):
    """Items 2, 5: a separable 2-D filter, a 1-D filter along the rows (a loop over column
    windows) then along the columns (a loop over row windows), each in a comprehension."""
    k = u.shape[0]
    rows = vnp.stack([img[:, j:j + k] @ u for j in range(img.shape[1] - k + 1)], axis=1)
    both = vnp.stack([v @ rows[i:i + k] for i in range(rows.shape[0] - k + 1)])
    return vnp.sum(vnp.exp(-both ** 2))


def separable_filter_ref(img, u, v):
    rows = sliding_window_view(img, u.shape[0], axis=1) @ u          # (n, m - k + 1)
    both = np.einsum("iak,k->ia", sliding_window_view(rows, v.shape[0], axis=0), v)
    return np.sum(np.exp(-both ** 2))


def separable_inputs(rng, n, k):
    return normal(rng, n, n), normal(rng, k, scale=k ** -0.5), normal(rng, k, scale=k ** -0.5)


def pool_then_conv(x, w):
    """Items 2, 5: 2x average pooling over time written as a loop of pair means, then a
    multi-channel 1-D convolution of the pooled signal as a loop over windows."""
    T = x.shape[0]
    pooled = vnp.stack([0.5 * (x[2 * t] + x[2 * t + 1]) for t in range(T // 2)])
    k = w.shape[0]
    y = vnp.stack([vnp.tensordot(pooled[t:t + k], w, axes=2)
                   for t in range(pooled.shape[0] - k + 1)])
    return vnp.sum(vnp.tanh(y))


def pool_then_conv_ref(x, w):
    T, C = x.shape
    pooled = x[:T // 2 * 2].reshape(T // 2, 2, C).mean(1)
    k = w.shape[0]
    n = pooled.shape[0] - k + 1
    y = sum(pooled[a:a + n] @ w[a] for a in range(k))
    return np.sum(np.tanh(y))


def pool_conv_inputs(rng, T, c, f, k):
    return normal(rng, T, c), normal(rng, k, c, f, scale=(k * c) ** -0.5)


# ------------------------------------------------------------------ 1-D windows


def map_conv_kernel(x, W):
    """Item 2: a kernel function `map`ped over the window starts, each window (k, C)
    contracted with the filters (k, C, F) and passed through a softplus."""
    k = W.shape[0]

    def unit(t):
        return vnp.logaddexp(0.0, vnp.tensordot(x[t:t + k], W, axes=2))
    return vnp.sum(vnp.stack(list(map(unit, range(x.shape[0] - k + 1)))))


def map_conv_kernel_ref(x, W):
    k = W.shape[0]
    n = x.shape[0] - k + 1
    return np.sum(np.logaddexp(0.0, sum(x[a:a + n] @ W[a] for a in range(k))))


def conv1d_inputs(rng, T, c, f, k):
    return normal(rng, T, c), normal(rng, k, c, f, scale=(k * c) ** -0.5)


def einsum_conv1d(x, W, b):
    """Item 2: a multi-channel 1-D convolution with a bias, each output row
    `np.einsum('kc,kcf->f', x[t:t+k], W) + b` written into a buffer."""
    k = W.shape[0]
    n = x.shape[0] - k + 1
    y = vnp.zeros((n, W.shape[2]))
    for t in range(n):
        y[t] = vnp.einsum("kc,kcf->f", x[t:t + k], W) + b
    return vnp.sum(vnp.tanh(y))


def einsum_conv1d_ref(x, W, b):
    k = W.shape[0]
    n = x.shape[0] - k + 1
    return np.sum(np.tanh(sum(x[a:a + n] @ W[a] for a in range(k)) + b))


def einsum_conv1d_inputs(rng, T, c, f, k):
    return (normal(rng, T, c), normal(rng, k, c, f, scale=(k * c) ** -0.5),
            normal(rng, f, scale=0.1))


def strided_dilated_conv1d(x, w, s, d):
    """Item 2: windows at stride s and dilation d (odd sizes), x[t*s : t*s + (k-1)*d + 1 : d]
    for every t, each a weighted sum over its k taps and C channels."""
    k = w.shape[0]
    span = (k - 1) * d + 1
    n = (x.shape[0] - span) // s + 1
    ys = [vnp.sum(x[t * s:t * s + span:d] * w) for t in range(n)]
    return vnp.sum(vnp.stack(ys) ** 2)


def strided_dilated_conv1d_ref(x, w, s, d):
    k = w.shape[0]
    n = (x.shape[0] - (k - 1) * d - 1) // s + 1
    y = sum(x[a * d:a * d + s * (n - 1) + 1:s] @ w[a] for a in range(k))
    return np.sum(y ** 2)


def strided_dilated_inputs(rng, T, c, k, s, d):
    return normal(rng, T, c), normal(rng, k, c, scale=(k * c) ** -0.5), s, d


def batch3d_windows(X, W):
    """Item 2: windows along the time axis of a batch of sequences X (B, T, C), each step's
    features one einsum of X[:, t:t+k] with the filters, stacked along time."""
    k = W.shape[0]
    ys = [vnp.einsum("bkc,kcf->bf", X[:, t:t + k], W) for t in range(X.shape[1] - k + 1)]
    return vnp.sum(vnp.tanh(vnp.stack(ys, axis=1)))


def batch3d_windows_ref(X, W):
    k = W.shape[0]
    n = X.shape[1] - k + 1
    return np.sum(np.tanh(sum(X[:, a:a + n] @ W[a] for a in range(k))))


def batch3d_inputs(rng, B, T, c, f, k):
    return normal(rng, B, T, c), normal(rng, k, c, f, scale=(k * c) ** -0.5)


def transposed_conv1d(x, W, s):
    """Items 1, 2: a transposed (fractionally strided) convolution, each input step's
    (k, F) contribution `x[t] @ W` added into out[t*s : t*s + k] (overlap-add)."""
    k, F = W.shape[1:]
    T = x.shape[0]
    out = vnp.zeros(((T - 1) * s + k, F))
    for t in range(T):
        out[t * s:t * s + k] += vnp.tensordot(x[t], W, axes=1)
    return vnp.sum(vnp.sin(out))


def transposed_conv1d_ref(x, W, s):
    k, F = W.shape[1:]
    T = x.shape[0]
    contrib = np.tensordot(x, W, axes=1)                    # (T, k, F)
    out = np.zeros(((T - 1) * s + k, F))
    for a in range(k):
        out[a:a + s * (T - 1) + 1:s] += contrib[:, a]
    return np.sum(np.sin(out))


def transposed_inputs(rng, T, c, k, f, s):
    return normal(rng, T, c), normal(rng, c, k, f, scale=(c * k) ** -0.5), s


def windowed_variance(x, k):
    """Item 2: a rolling variance, `np.var(x[t:t+k], axis=0)` for every t in a
    comprehension, then a log energy."""
    v = vnp.stack([vnp.var(x[t:t + k], axis=0) for t in range(x.shape[0] - k + 1)])
    return vnp.sum(vnp.log(v + 1e-3))


def windowed_variance_ref(x, k):
    # (np.var of the window views, as the natural program computes it: the running-sums
    # formula E[x^2] - E[x]^2 is faster but cancels catastrophically)
    return np.sum(np.log(sliding_window_view(x, k, axis=0).var(axis=-1) + 1e-3))


def variance_inputs(rng, T, d, k):
    return normal(rng, T, d), k


def strided_odd_patches(img, K, s):
    """Item 2: odd-sized patches (p = 5) at stride s over an odd-sized image, each patch's
    score `vnp.sum(patch * K)` in a nested list, then a log-sum-exp over all of them."""
    p = K.shape[0]
    H = (img.shape[0] - p) // s + 1
    W = (img.shape[1] - p) // s + 1
    scores = vnp.stack([vnp.sum(img[i * s:i * s + p, j * s:j * s + p] * K)
                        for i in range(H) for j in range(W)])
    m = vnp.max(scores)
    return m + vnp.log(vnp.sum(vnp.exp(scores - m)))


def strided_odd_patches_ref(img, K, s):
    win = sliding_window_view(img, K.shape)[::s, ::s]
    scores = np.einsum("ijab,ab->ij", win, K).ravel()
    m = scores.max()
    return m + np.log(np.sum(np.exp(scores - m)))


def odd_patch_inputs(rng, n, p, s):
    return normal(rng, n, n), normal(rng, p, p, scale=1.0 / p), s


# ------------------------------------------------------------------ local attention


def banded_attention(Q, K, V, r):
    """Items 2, 5: local (banded) attention, each position t attending to keys t-r..t+r
    (the valid positions only): scores, softmax and the weighted sum of values per t."""
    T, d = Q.shape
    out = []
    for t in range(r, T - r):
        s = K[t - r:t + r + 1] @ Q[t] / np.sqrt(d)
        a = vnp.exp(s - vnp.max(s))
        out.append((a / vnp.sum(a)) @ V[t - r:t + r + 1])
    return vnp.sum(vnp.stack(out) ** 2)


def banded_attention_ref(Q, K, V, r):
    T, d = Q.shape
    w = 2 * r + 1
    Kw = sliding_window_view(K, w, axis=0)                   # (n, d, w)
    Vw = sliding_window_view(V, w, axis=0)
    q = Q[r:T - r]
    s = np.einsum("nd,ndw->nw", q, Kw) / np.sqrt(d)
    a = np.exp(s - s.max(1, keepdims=True))
    a /= a.sum(1, keepdims=True)
    return np.sum(np.einsum("nw,ndw->nd", a, Vw) ** 2)


def banded_inputs(rng, T, d, r):
    return normal(rng, T, d), normal(rng, T, d), normal(rng, T, d), r


def local_attention_2d(Q, K, V, r):
    """Items 2, 5: attention over 2-D neighbourhoods: each interior pixel's query (d) against
    the keys of its (2r+1)^2 neighbours, a softmax over them, the values averaged so."""
    n, m, d = Q.shape
    w = 2 * r + 1
    out = vnp.zeros((n - 2 * r, m - 2 * r, d))
    for i in range(r, n - r):
        for j in range(r, m - r):
            keys = K[i - r:i + r + 1, j - r:j + r + 1].reshape(w * w, d)
            vals = V[i - r:i + r + 1, j - r:j + r + 1].reshape(w * w, d)
            s = keys @ Q[i, j]
            a = vnp.exp(s - vnp.max(s))
            out[i - r, j - r] = (a / vnp.sum(a)) @ vals
    return vnp.sum(out ** 2)


def local_attention_2d_ref(Q, K, V, r):
    n, m = Q.shape[:2]
    w = 2 * r + 1
    Kw = sliding_window_view(K, (w, w), axis=(0, 1))         # (n', m', d, w, w)
    Vw = sliding_window_view(V, (w, w), axis=(0, 1))
    q = Q[r:n - r, r:m - r]
    s = np.einsum("ijd,ijdab->ijab", q, Kw)
    a = np.exp(s - s.max((2, 3), keepdims=True))
    a /= a.sum((2, 3), keepdims=True)
    return np.sum(np.einsum("ijab,ijdab->ijd", a, Vw) ** 2)


def local2d_inputs(rng, n, d, r):
    s = d ** -0.5
    return (normal(rng, n, n, d, scale=s), normal(rng, n, n, d, scale=s),
            normal(rng, n, n, d), r)


def residual_conv_stack(x, w1, w2):
    """Items 2, 5: two 'same' 1-D convolutions with a residual connection, the signal padded
    by concatenating zero rows, each layer a loop of window products into a buffer."""
    k = w1.shape[0]
    r = k // 2
    T, C = x.shape

    def layer(h, w):
        hp = vnp.concatenate([vnp.zeros((r, C)), h, vnp.zeros((r, C))])
        y = vnp.zeros((T, C))
        for t in range(T):
            y[t] = vnp.tensordot(hp[t:t + k], w, axes=2)
        return y
    h = vnp.tanh(layer(x, w1))
    return vnp.sum((x + layer(h, w2)) ** 2)


def residual_conv_stack_ref(x, w1, w2):
    k = w1.shape[0]
    r = k // 2
    T, C = x.shape

    def layer(h, w):
        hp = np.concatenate([np.zeros((r, C)), h, np.zeros((r, C))])
        return sum(hp[a:a + T] @ w[a] for a in range(k))
    h = np.tanh(layer(x, w1))
    return np.sum((x + layer(h, w2)) ** 2)


def residual_inputs(rng, T, c, k):
    s = (k * c) ** -0.5
    return normal(rng, T, c), normal(rng, k, c, c, scale=s), normal(rng, k, c, c, scale=s)


_V = ("variant", "windows3")

PATTERNS = [
    Pattern("conv2d_pixel_loops", 2, conv2d_pixel_loops, conv2d_pixel_loops_ref,
            conv2d_pixel_inputs, {"small": {"c": 2, "n": 6, "f": 3, "p": 3},
                                  "default": {"c": 3, "n": 34, "f": 8, "p": 3}},
            (0, 1), tags=_V),
    Pattern("conv2d_tap_loops", 2, conv2d_tap_loops, conv2d_tap_loops_ref, tap_inputs,
            {"small": {"n": 7, "p": 3}, "default": {"n": 120, "p": 5}}, (0, 1), tags=_V),
    Pattern("conv2d_patch_comprehension", 2, conv2d_patch_comprehension,
            conv2d_patch_comprehension_ref, tap_inputs,
            {"small": {"n": 6, "p": 3}, "default": {"n": 40, "p": 3}}, (0, 1), tags=_V),
    Pattern("conv2d_same_np_pad", 2, conv2d_same_np_pad, conv2d_same_np_pad_ref,
            same_pad_inputs, {"small": {"n": 6, "p": 3}, "default": {"n": 40, "p": 3}},
            (0, 1), tags=_V),
    Pattern("stencil_bounds_checks", 4, stencil_bounds_checks, stencil_bounds_checks_ref,
            stencil_inputs, {"small": {"n": 6, "d": 3}, "default": {"n": 1000, "d": 32}},
            (0, 1), tags=_V),
    Pattern("depthwise_conv2d", 2, depthwise_conv2d, depthwise_conv2d_ref, depthwise_inputs,
            {"small": {"c": 2, "n": 6, "p": 3}, "default": {"c": 8, "n": 34, "p": 3}},
            (0, 1), tags=_V),
    Pattern("separable_filter", 5, separable_filter, separable_filter_ref, separable_inputs,
            {"small": {"n": 7, "k": 3}, "default": {"n": 150, "k": 7}}, (0, 1, 2), tags=_V),
    Pattern("pool_then_conv", 5, pool_then_conv, pool_then_conv_ref, pool_conv_inputs,
            {"small": {"T": 14, "c": 2, "f": 3, "k": 3},
             "default": {"T": 4000, "c": 8, "f": 16, "k": 5}}, (0, 1), tags=_V),
    Pattern("map_conv_kernel", 2, map_conv_kernel, map_conv_kernel_ref, conv1d_inputs,
            {"small": {"T": 9, "c": 2, "f": 3, "k": 3},
             "default": {"T": 2000, "c": 8, "f": 16, "k": 5}}, (0, 1), tags=_V),
    Pattern("einsum_conv1d", 2, einsum_conv1d, einsum_conv1d_ref, einsum_conv1d_inputs,
            {"small": {"T": 9, "c": 2, "f": 3, "k": 3},
             "default": {"T": 2000, "c": 16, "f": 16, "k": 4}}, (0, 1, 2), tags=_V),
    Pattern("strided_dilated_conv1d", 2, strided_dilated_conv1d, strided_dilated_conv1d_ref,
            strided_dilated_inputs, {"small": {"T": 17, "c": 2, "k": 3, "s": 3, "d": 2},
                                     "default": {"T": 6001, "c": 12, "k": 5, "s": 3, "d": 2}},
            (0, 1), tags=_V),
    Pattern("batch3d_windows", 2, batch3d_windows, batch3d_windows_ref, batch3d_inputs,
            {"small": {"B": 2, "T": 8, "c": 2, "f": 3, "k": 3},
             "default": {"B": 16, "T": 200, "c": 8, "f": 8, "k": 4}}, (0, 1), tags=_V),
    Pattern("transposed_conv1d", 1, transposed_conv1d, transposed_conv1d_ref,
            transposed_inputs, {"small": {"T": 5, "c": 2, "k": 4, "f": 3, "s": 2},
                                "default": {"T": 1500, "c": 8, "k": 5, "f": 8, "s": 3}},
            (0, 1), tags=_V),
    Pattern("windowed_variance", 2, windowed_variance, windowed_variance_ref,
            variance_inputs, {"small": {"T": 9, "d": 2, "k": 3},
                              "default": {"T": 2000, "d": 16, "k": 8}}, (0,), tags=_V),
    Pattern("strided_odd_patches", 2, strided_odd_patches, strided_odd_patches_ref,
            odd_patch_inputs, {"small": {"n": 11, "p": 5, "s": 3},
                               "default": {"n": 151, "p": 5, "s": 3}}, (0, 1), tags=_V),
    Pattern("banded_attention", 2, banded_attention, banded_attention_ref, banded_inputs,
            {"small": {"T": 9, "d": 3, "r": 2}, "default": {"T": 1000, "d": 16, "r": 4}},
            (0, 1, 2), tags=_V),
    Pattern("local_attention_2d", 2, local_attention_2d, local_attention_2d_ref,
            local2d_inputs, {"small": {"n": 6, "d": 2, "r": 1},
                             "default": {"n": 24, "d": 8, "r": 1}}, (0, 1, 2), tags=_V),
    Pattern("residual_conv_stack", 5, residual_conv_stack, residual_conv_stack_ref,
            residual_inputs, {"small": {"T": 9, "c": 2, "k": 3},
                              "default": {"T": 1500, "c": 8, "k": 5}}, (0, 1, 2), tags=_V),
]
