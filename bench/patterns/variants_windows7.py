"""Windows, strides and convolutions in styles the suite lacked (item 2, some with items 1 and
4): 2-D windows whose stride and dilation are variables; a transposed convolution written as a
scatter-add of windows; windows over a (C, T) array read as x[:, t:t+k]; im2col built by the
user with a list comprehension, then `@`; max-pooling through argmax-like masks; robust
windows clipped around their mean; pooling, then upsampling by `np.repeat` (1-D and 2-D);
windowed variance as the mean of squares minus the square of the mean; attention restricted
to a band, written with two nested loops; a 1-D convolution with a bias per output channel
and ReLU; grouped windows over the last axis of (B, C, T); 2-D neighbour sums that hit a zero
boundary through `if` branches, plain and weighted; normalized cross-correlation of patches."""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import vecgrad.numpy as vnp

from .core import Pattern, normal

_V = ("variant",)

# ------------------------------------------------------------------ 2-D strides, dilations


def strided_dilated_2d_vars(img, K, s, d):
    """Item 2: a 2-D filter whose stride s and dilation d are variables: each output pixel
    reads img[i*s : i*s + d*(k-1) + 1 : d, j*s : ... : d], written into a buffer."""
    k = K.shape[0]
    span = d * (k - 1) + 1
    H, W = ((n - span) // s + 1 for n in img.shape)
    out = vnp.zeros((H, W))
    for i in range(H):
        for j in range(W):
            out[i, j] = vnp.sum(img[i * s:i * s + span:d, j * s:j * s + span:d] * K)
    return vnp.sum(vnp.tanh(out))


def strided_dilated_2d_vars_ref(img, K, s, d):
    k = K.shape[0]
    span = d * (k - 1) + 1
    H, W = ((n - span) // s + 1 for n in img.shape)
    out = sum(K[a, b] * img[a * d:a * d + s * (H - 1) + 1:s, b * d:b * d + s * (W - 1) + 1:s]
              for a in range(k) for b in range(k))
    return np.sum(np.tanh(out))


def sd2_inputs(rng, n, k, s, d):
    return normal(rng, n, n), normal(rng, k, k, scale=1.0 / k), s, d


# ------------------------------------------------------------------ transposed convolution


def scatter_transposed_conv1d(x, W, s):
    """Item 2 with item 1: a strided transposed convolution written as a scatter-add of
    windows: every input step t adds its (k, O) response x[t] . W at y[t*s : t*s + k]."""
    T = x.shape[0]
    k = W.shape[1]
    y = vnp.zeros(((T - 1) * s + k, W.shape[2]))
    for t in range(T):
        y[t * s:t * s + k] += vnp.tensordot(x[t], W, axes=1)
    return vnp.sum(y ** 2)


def scatter_transposed_conv1d_ref(x, W, s):
    T = x.shape[0]
    k = W.shape[1]
    r = np.tensordot(x, W, axes=1)  # (T, k, O)
    y = np.zeros(((T - 1) * s + k, W.shape[2]))
    for a in range(k):
        y[a:a + s * (T - 1) + 1:s] += r[:, a]
    return np.sum(y ** 2)


def tconv_inputs(rng, T, c, k, o, s):
    return normal(rng, T, c), normal(rng, c, k, o, scale=c ** -0.5), s


# ------------------------------------------------------------------ (C, T) windows


def ct_column_windows(x, W):
    """Item 2: a convolution over a (C, T) signal whose windows are column blocks
    x[:, t:t+k], each contracted with an (O, C, k) filter bank by a broadcast product and a
    sum over (C, k)."""
    k = W.shape[2]
    T = x.shape[1] - k + 1
    out = vnp.zeros((W.shape[0], T))
    for t in range(T):
        out[:, t] = vnp.sum(W * x[:, t:t + k], axis=(1, 2))
    return vnp.sum(vnp.tanh(out))


def ct_column_windows_ref(x, W):
    k = W.shape[2]
    T = x.shape[1] - k + 1
    return np.sum(np.tanh(sum(W[:, :, a] @ x[:, a:a + T] for a in range(k))))


def ct_inputs(rng, C, T, o, k):
    return normal(rng, C, T), normal(rng, o, C, k, scale=(C * k) ** -0.5)


def user_im2col_matmul(x, W):
    """Item 2: im2col built by the user: a list comprehension of flattened (k, C) windows,
    stacked, then one matrix product with the reshaped filter."""
    k, C, O = W.shape
    cols = vnp.stack([x[t:t + k].ravel() for t in range(x.shape[0] - k + 1)])
    y = cols @ W.reshape(k * C, O)
    return vnp.sum(vnp.log1p(y ** 2))


def user_im2col_matmul_ref(x, W):
    k = W.shape[0]
    T = x.shape[0] - k + 1
    y = sum(x[a:a + T] @ W[a] for a in range(k))
    return np.sum(np.log1p(y ** 2))


def im2col_inputs(rng, T, c, k, o):
    return normal(rng, T, c), normal(rng, k, c, o, scale=(c * k) ** -0.5)


# ------------------------------------------------------------------ pooling


def maxpool_argmax_masks(x, s):
    """Item 2: max-pooling over windows of s rows through an argmax-like mask: the mean of
    the entries equal to the window's maximum, per channel."""
    T = x.shape[0] // s
    total = 0.0
    for t in range(T):
        win = x[t * s:(t + 1) * s]
        m = vnp.max(win, axis=0)
        mask = win >= m
        pooled = vnp.sum(win * mask, axis=0) / vnp.sum(mask, axis=0)
        total = total + vnp.sum(vnp.tanh(pooled))
    return total


def maxpool_argmax_masks_ref(x, s):
    T = x.shape[0] // s
    win = x[:T * s].reshape(T, s, -1)
    mask = win >= win.max(axis=1, keepdims=True)
    return np.sum(np.tanh((win * mask).sum(1) / mask.sum(1)))


def maxpool_inputs(rng, T, c, s):
    return normal(rng, T, c), s


def pool_repeat_upsample(x, s):
    """Item 2: average-pool a signal by blocks of s in a loop, upsample the pooled values
    back by `np.repeat`, and penalize the residual (a one-level wavelet-like detail)."""
    n = x.shape[0] // s
    p = vnp.zeros(n)
    for i in range(n):
        p[i] = vnp.mean(x[i * s:(i + 1) * s])
    up = vnp.repeat(p, s)
    return vnp.sum((x[:n * s] - up) ** 2) + vnp.sum(p ** 2)


def pool_repeat_upsample_ref(x, s):
    n = x.shape[0] // s
    p = x[:n * s].reshape(n, s).mean(1)
    return np.sum((x[:n * s] - np.repeat(p, s)) ** 2) + np.sum(p ** 2)


def repeat_inputs(rng, T, s):
    return normal(rng, T), s


def pool_repeat_upsample_2d(img, s):
    """Item 2: 2-D average pooling by (s, s) blocks in two nested loops, then nearest
    upsampling with `np.repeat` along both axes, the residual's energy."""
    H, W = img.shape[0] // s, img.shape[1] // s
    p = vnp.zeros((H, W))
    for i in range(H):
        for j in range(W):
            p[i, j] = vnp.mean(img[i * s:(i + 1) * s, j * s:(j + 1) * s])
    up = vnp.repeat(vnp.repeat(p, s, axis=0), s, axis=1)
    return vnp.sum((img[:H * s, :W * s] - up) ** 2)


def pool_repeat_upsample_2d_ref(img, s):
    H, W = img.shape[0] // s, img.shape[1] // s
    p = img[:H * s, :W * s].reshape(H, s, W, s).mean((1, 3))
    up = np.repeat(np.repeat(p, s, axis=0), s, axis=1)
    return np.sum((img[:H * s, :W * s] - up) ** 2)


def repeat2d_inputs(rng, n, s):
    return normal(rng, n, n), s


# ------------------------------------------------------------------ robust and moment windows


def clipped_robust_windows(x, c):
    """Item 2: robust sliding windows without a median: each window's deviations from its
    mean are clipped at +-c inside the loop, and their squares summed (a Huber-like score)."""
    k = 7
    total = 0.0
    for t in range(x.shape[0] - k + 1):
        w = x[t:t + k]
        r = vnp.clip(w - vnp.mean(w, axis=0), -c, c)
        total = total + vnp.sum(r ** 2)
    return total


def clipped_robust_windows_ref(x, c):
    T = x.shape[0] - 6
    m = sum(x[a:a + T] for a in range(7)) / 7
    return sum(np.sum(np.clip(x[a:a + T] - m, -c, c) ** 2) for a in range(7))


def robust_inputs(rng, T, C):
    return normal(rng, T, C), 0.8


def windowed_variance_formula(x, k):
    """Item 2: windowed variance written as the mean of squares minus the square of the mean
    (the user's formula, kept), each window's variance through a log."""
    total = 0.0
    for t in range(x.shape[0] - k + 1):
        w = x[t:t + k]
        var = vnp.mean(w ** 2, axis=0) - vnp.mean(w, axis=0) ** 2
        total = total + vnp.sum(vnp.log(var + 1.0))
    return total


def windowed_variance_formula_ref(x, k):
    T = x.shape[0] - k + 1
    sq = x * x
    m = sum(x[a:a + T] for a in range(k)) / k
    var = sum(sq[a:a + T] for a in range(k)) / k - m ** 2
    return np.sum(np.log(var + 1.0))


def wvar_inputs(rng, T, C, k):
    return normal(rng, T, C), k


# ------------------------------------------------------------------ banded attention


def band_attention_nested(q, kk, v):
    """Items 2, 4: attention restricted to a band |i - j| <= b, written with two nested
    loops: the scores of row i's neighbours j in a list, a softmax over them, then the
    weighted sum of their values (rows near the ends have fewer neighbours)."""
    n, b = q.shape[0], 3
    out = 0.0
    for i in range(n):
        scores = []
        for j in range(max(0, i - b), min(n, i + b + 1)):
            scores.append(vnp.dot(q[i], kk[j]))
        s = vnp.stack(scores)
        a = vnp.exp(s - vnp.max(s))
        a = a / vnp.sum(a)
        out = out + vnp.sum(vnp.tanh(a @ v[max(0, i - b):min(n, i + b + 1)]))
    return out


def band_attention_nested_ref(q, kk, v):
    n, b = q.shape[0], 3
    w = 2 * b + 1
    kp = np.pad(kk, ((b, b), (0, 0)))
    vp = np.pad(v, ((b, b), (0, 0)))
    kw = sliding_window_view(kp, w, axis=0)  # (n, d, w)
    vw = sliding_window_view(vp, w, axis=0)
    s = np.einsum("nd,ndw->nw", q, kw)
    j = np.arange(n)[:, None] + np.arange(w)[None] - b
    s = np.where((j >= 0) & (j < n), s, -np.inf)
    a = np.exp(s - s.max(1, keepdims=True))
    a /= a.sum(1, keepdims=True)
    return np.sum(np.tanh(np.einsum("nw,ndw->nd", a, vw)))


def band_inputs(rng, n, d):
    return normal(rng, n, d, scale=d ** -0.5), normal(rng, n, d), normal(rng, n, d)


# ------------------------------------------------------------------ channel convolutions


def conv1d_bias_relu(x, W, b):
    """Item 2: a 1-D convolution of a (T, C) signal with a bias per output channel and ReLU,
    each output step a tensordot of its (k, C) window with the (k, C, O) filter."""
    k = W.shape[0]
    T = x.shape[0] - k + 1
    total = 0.0
    for t in range(T):
        h = vnp.maximum(vnp.tensordot(x[t:t + k], W, axes=2) + b, 0.0)
        total = total + vnp.sum(h ** 2)
    return total


def conv1d_bias_relu_ref(x, W, b):
    k = W.shape[0]
    T = x.shape[0] - k + 1
    h = np.maximum(sum(x[a:a + T] @ W[a] for a in range(k)) + b, 0.0)
    return np.sum(h ** 2)


def bias_relu_inputs(rng, T, c, k, o):
    return (normal(rng, T, c), normal(rng, k, c, o, scale=(c * k) ** -0.5),
            normal(rng, o, scale=0.1))


def grouped_bct_windows(x, W):
    """Item 2: a grouped convolution over the last axis of a (B, C, T) batch: each group g's
    channels x[:, g*cg:(g+1)*cg, t:t+k] contracted with its own (O/G, cg, k) filter."""
    G, og, cg, k = W.shape
    B, _, T = x.shape
    out = vnp.zeros((B, G * og, T - k + 1))
    for g in range(G):
        for t in range(T - k + 1):
            out[:, g * og:(g + 1) * og, t] = vnp.einsum(
                "bck,ock->bo", x[:, g * cg:(g + 1) * cg, t:t + k], W[g])
    return vnp.sum(vnp.tanh(out))


def grouped_bct_windows_ref(x, W):
    G, _, cg, k = W.shape
    B, _, T = x.shape
    win = sliding_window_view(x, k, axis=2).reshape(B, G, cg, T - k + 1, k)
    out = np.einsum("bgctk,gock->bgot", win, W, optimize=True)
    return np.sum(np.tanh(out))


def grouped_inputs(rng, B, G, og, cg, T, k):
    return normal(rng, B, G * cg, T), normal(rng, G, og, cg, k, scale=(cg * k) ** -0.5)


# ------------------------------------------------------------------ boundaries in 2-D


def laplacian_boundary_ifs_2d(u):
    """Items 2, 4: a 2-D Laplacian energy whose neighbour sums hit a zero boundary through
    `if` branches on Python ints, one pixel at a time (1 to 4 terms per pixel)."""
    H, W = u.shape
    e = 0.0
    for i in range(H):
        for j in range(W):
            s = 0.0
            if i > 0:
                s = s + u[i - 1, j]
            if i < H - 1:
                s = s + u[i + 1, j]
            if j > 0:
                s = s + u[i, j - 1]
            if j < W - 1:
                s = s + u[i, j + 1]
            e += (4 * u[i, j] - s) ** 2
    return e


def laplacian_boundary_ifs_2d_ref(u):
    p = np.pad(u, 1)
    s = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]
    return np.sum((4 * u - s) ** 2)


def lap_inputs(rng, n):
    return (normal(rng, n, n),)


def weighted_boundary_ifs_2d(u, c):
    """Items 2, 4: an anisotropic smoothness term over a (H, W, C) image: vertical
    neighbours weighted 0.5, horizontal ones 0.25, each added under an `if` at the edges,
    then a per-channel scale c."""
    H, W, _ = u.shape
    e = 0.0
    for i in range(H):
        for j in range(W):
            s = 0.0 * u[i, j]
            if i > 0:
                s = s + 0.5 * u[i - 1, j]
            if i < H - 1:
                s = s + 0.5 * u[i + 1, j]
            if j > 0:
                s = s + 0.25 * u[i, j - 1]
            if j < W - 1:
                s = s + 0.25 * u[i, j + 1]
            e += vnp.sum(c * (u[i, j] - s) ** 2)
    return e


def weighted_boundary_ifs_2d_ref(u, c):
    p = np.pad(u, ((1, 1), (1, 1), (0, 0)))
    s = 0.5 * (p[:-2, 1:-1] + p[2:, 1:-1]) + 0.25 * (p[1:-1, :-2] + p[1:-1, 2:])
    return np.sum(c * (u - s) ** 2)


def wlap_inputs(rng, n, c):
    return normal(rng, n, n, c), normal(rng, c) ** 2


# ------------------------------------------------------------------ template matching


def patch_ncc(img, K):
    """Item 2: normalized cross-correlation of a template with every (p, p) patch: each
    patch centred and divided by its norm inside the loop, then dotted with the template."""
    p = K.shape[0]
    H, W = (n - p + 1 for n in img.shape)
    Kc = K - vnp.mean(K)
    total = 0.0
    for i in range(H):
        for j in range(W):
            patch = img[i:i + p, j:j + p]
            z = patch - vnp.mean(patch)
            total = total + vnp.sum(z * Kc) / vnp.sqrt(vnp.sum(z * z) + 1e-3)
    return total


def patch_ncc_ref(img, K):
    # sum(z * Kc) = sum(patch * Kc) (Kc sums to 0); sum(z * z) = sum(patch**2) - p*p*mean**2
    p = K.shape[0]
    H, W = (n - p + 1 for n in img.shape)
    Kc = K - K.mean()
    sq = img * img
    taps = [(a, b) for a in range(p) for b in range(p)]
    num = sum(Kc[a, b] * img[a:a + H, b:b + W] for a, b in taps)
    s1 = sum(img[a:a + H, b:b + W] for a, b in taps)
    s2 = sum(sq[a:a + H, b:b + W] for a, b in taps)
    return np.sum(num / np.sqrt(s2 - s1 * s1 / (p * p) + 1e-3))


def ncc_inputs(rng, n, p):
    return normal(rng, n, n), normal(rng, p, p)


PATTERNS = [
    Pattern("strided_dilated_2d_vars", 2, strided_dilated_2d_vars, strided_dilated_2d_vars_ref,
            sd2_inputs, {"small": {"n": 11, "k": 3, "s": 2, "d": 2},
                         "default": {"n": 100, "k": 3, "s": 2, "d": 2}}, (0, 1), tags=_V),
    Pattern("scatter_transposed_conv1d", 2, scatter_transposed_conv1d,
            scatter_transposed_conv1d_ref, tconv_inputs,
            {"small": {"T": 6, "c": 2, "k": 3, "o": 2, "s": 2},
             "default": {"T": 1000, "c": 16, "k": 4, "o": 8, "s": 2}}, (0, 1), tags=_V),
    Pattern("ct_column_windows", 2, ct_column_windows, ct_column_windows_ref, ct_inputs,
            {"small": {"C": 2, "T": 9, "o": 3, "k": 3},
             "default": {"C": 8, "T": 1000, "o": 8, "k": 5}}, (0, 1), tags=_V),
    Pattern("user_im2col_matmul", 2, user_im2col_matmul, user_im2col_matmul_ref, im2col_inputs,
            {"small": {"T": 9, "c": 2, "k": 3, "o": 2},
             "default": {"T": 2000, "c": 8, "k": 5, "o": 16}}, (0, 1), tags=_V),
    Pattern("maxpool_argmax_masks", 2, maxpool_argmax_masks, maxpool_argmax_masks_ref,
            maxpool_inputs, {"small": {"T": 12, "c": 2, "s": 3},
                             "default": {"T": 3000, "c": 16, "s": 4}}, (0,), tags=_V),
    Pattern("pool_repeat_upsample", 2, pool_repeat_upsample, pool_repeat_upsample_ref,
            repeat_inputs, {"small": {"T": 13, "s": 3}, "default": {"T": 12000, "s": 4}},
            (0,), tags=_V),
    Pattern("pool_repeat_upsample_2d", 2, pool_repeat_upsample_2d,
            pool_repeat_upsample_2d_ref, repeat2d_inputs,
            {"small": {"n": 8, "s": 2}, "default": {"n": 128, "s": 2}}, (0,), tags=_V),
    Pattern("clipped_robust_windows", 2, clipped_robust_windows, clipped_robust_windows_ref,
            robust_inputs, {"small": {"T": 12, "C": 2}, "default": {"T": 2000, "C": 16}},
            (0,), tags=_V),
    Pattern("windowed_variance_formula", 2, windowed_variance_formula,
            windowed_variance_formula_ref, wvar_inputs,
            {"small": {"T": 10, "C": 2, "k": 3}, "default": {"T": 1200, "C": 32, "k": 6}},
            (0,), tags=_V),
    Pattern("band_attention_nested", 2, band_attention_nested, band_attention_nested_ref,
            band_inputs, {"small": {"n": 9, "d": 3}, "default": {"n": 400, "d": 16}},
            (0, 1, 2), tags=_V),
    Pattern("conv1d_bias_relu", 2, conv1d_bias_relu, conv1d_bias_relu_ref, bias_relu_inputs,
            {"small": {"T": 9, "c": 2, "k": 3, "o": 3},
             "default": {"T": 2000, "c": 8, "k": 5, "o": 16}}, (0, 1, 2), tags=_V),
    Pattern("grouped_bct_windows", 2, grouped_bct_windows, grouped_bct_windows_ref,
            grouped_inputs, {"small": {"B": 2, "G": 2, "og": 2, "cg": 2, "T": 7, "k": 3},
                             "default": {"B": 8, "G": 4, "og": 4, "cg": 4, "T": 300, "k": 5}},
            (0, 1), tags=_V),
    Pattern("laplacian_boundary_ifs_2d", 4, laplacian_boundary_ifs_2d,
            laplacian_boundary_ifs_2d_ref, lap_inputs,
            {"small": {"n": 6}, "default": {"n": 64}}, (0,), tags=_V),
    Pattern("weighted_boundary_ifs_2d", 4, weighted_boundary_ifs_2d,
            weighted_boundary_ifs_2d_ref, wlap_inputs,
            {"small": {"n": 5, "c": 2}, "default": {"n": 64, "c": 4}}, (0, 1), tags=_V),
    Pattern("patch_ncc", 2, patch_ncc, patch_ncc_ref, ncc_inputs,
            {"small": {"n": 8, "p": 3}, "default": {"n": 40, "p": 5}}, (0, 1), tags=_V),
]
