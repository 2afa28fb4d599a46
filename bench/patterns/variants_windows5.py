"""Windows, strides and convolutions in styles the suite lacked (item 2, some with items 1, 4
and 5): windows over a middle axis of 3-D and 4-D arrays; channels-last (H, W, C) images
(patches against a filter bank, depthwise filters, transposed convolution written as a
scatter loop); pooling after `np.pad`; windows read through a helper function; windows
visited by `reversed(range(...))`; sliding dot products in `map(lambda t: ..., range(...))`;
several window sizes in one loop; STFT-like frames times a window function; windows scaled
by a per-window weight read from another array; local statistics of 2-D patches."""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import vecgrad.numpy as vnp

from .core import Pattern, normal

_V = ("variant",)

# ------------------------------------------------------------------ middle axes


def mid_axis_windows_4d(X, W):
    """Item 2: windows along axis 1 of a (B, T, H, C) array, each step's (B, H, F) features
    one einsum of X[:, t:t+k] with (k, C, F) filters, stacked back on axis 1."""
    k = W.shape[0]
    ys = [vnp.einsum("bkhc,kcf->bhf", X[:, t:t + k], W) for t in range(X.shape[1] - k + 1)]
    return vnp.sum(vnp.tanh(vnp.stack(ys, axis=1)))


def mid_axis_windows_4d_ref(X, W):
    k = W.shape[0]
    n = X.shape[1] - k + 1
    return np.sum(np.tanh(sum(X[:, a:a + n] @ W[a] for a in range(k))))


def mid4d_inputs(rng, B, T, H, c, f, k):
    return normal(rng, B, T, H, c), normal(rng, k, c, f, scale=(k * c) ** -0.5)


def mid_axis_scaled_means(X, a):
    """Items 2, 4: a centred moving mean along the middle axis of a (B, T, C) batch, each
    window scaled by a per-window weight a[t] read from another array."""
    k = 5
    out = []
    for t in range(X.shape[1] - k + 1):
        out.append(a[t] * vnp.mean(X[:, t:t + k, :], axis=1))
    return vnp.sum(vnp.stack(out, axis=1) ** 2)


def mid_axis_scaled_means_ref(X, a):
    win = sliding_window_view(X, 5, axis=1)              # (B, T', C, k)
    return np.sum((a[:, None] * win.mean(axis=-1)) ** 2)


def mid_scaled_inputs(rng, B, T, c):
    return normal(rng, B, T, c), normal(rng, T - 4)


# ------------------------------------------------------------------ channels-last images


def hwc_patch_conv(img, W):
    """Item 2: a channels-last (H, W, C) image, each output pixel the tensordot of its
    (p, p, C) patch with a (p, p, C, F) filter bank, in nested loops into a buffer."""
    p, F = W.shape[0], W.shape[3]
    n = img.shape[0] - p + 1
    out = vnp.zeros((n, n, F))
    for i in range(n):
        for j in range(n):
            out[i, j] = vnp.tensordot(img[i:i + p, j:j + p, :], W, axes=3)
    return vnp.sum(vnp.tanh(out))


def hwc_patch_conv_ref(img, W):
    win = sliding_window_view(img, W.shape[:2], axis=(0, 1))   # (n, n, C, p, p)
    return np.sum(np.tanh(np.einsum("ijcab,abcf->ijf", win, W, optimize=True)))


def hwc_inputs(rng, n, c, p, f):
    return normal(rng, n, n, c), normal(rng, p, p, c, f, scale=(p * p * c) ** -0.5)


def hwc_depthwise(img, K):
    """Item 2: a depthwise 3x3 filter on a channels-last image, each pixel's (C,) output
    the channel-wise sum of its patch times the (3, 3, C) kernel, one row at a time."""
    n = img.shape[0] - 2
    rows = [vnp.stack([vnp.sum(img[i:i + 3, j:j + 3] * K, axis=(0, 1)) for j in range(n)])
            for i in range(n)]
    return vnp.sum(vnp.stack(rows) ** 2)


def hwc_depthwise_ref(img, K):
    n = img.shape[0] - 2
    out = sum(img[a:a + n, b:b + n] * K[a, b] for a in range(3) for b in range(3))
    return np.sum(out ** 2)


def hwc_depthwise_inputs(rng, n, c):
    return normal(rng, n, n, c), normal(rng, 3, 3, c, scale=1 / 3)


def hwc_transposed_conv(x, W, s):
    """Items 1, 2: a channels-last 2-D transposed convolution as a scatter loop: each input
    pixel's (C,) vector times the (C, k, k, F) filters added into out[i*s : i*s+k,
    j*s : j*s+k] (overlapping at stride s < k)."""
    n, k, F = x.shape[0], W.shape[1], W.shape[3]
    m = (n - 1) * s + k
    out = vnp.zeros((m, m, F))
    for i in range(n):
        for j in range(n):
            out[i * s:i * s + k, j * s:j * s + k] += vnp.tensordot(x[i, j], W, axes=1)
    return vnp.sum(vnp.tanh(out) ** 2)


def hwc_transposed_conv_ref(x, W, s):
    n, k, F = x.shape[0], W.shape[1], W.shape[3]
    m = (n - 1) * s + k
    out = np.zeros((m, m, F))
    for a in range(k):
        for b in range(k):
            out[a:a + s * (n - 1) + 1:s, b:b + s * (n - 1) + 1:s] += \
                np.tensordot(x, W[:, a, b], axes=1)
    return np.sum(np.tanh(out) ** 2)


def hwc_tconv_inputs(rng, n, c, k, f, s):
    return normal(rng, n, n, c), normal(rng, c, k, k, f, scale=(c * k) ** -0.5), s


def scatter_transposed_conv2d(x, K, s):
    """Items 1, 2: a one-channel 2-D transposed convolution (upsampling) written as the
    scatter loop out[i*s : i*s+k, j*s : j*s+k] += x[i, j] * K."""
    n, k = x.shape[0], K.shape[0]
    m = (n - 1) * s + k
    out = vnp.zeros((m, m))
    for i in range(n):
        for j in range(n):
            out[i * s:i * s + k, j * s:j * s + k] += x[i, j] * K
    return vnp.sum(vnp.tanh(out) ** 2)


def scatter_transposed_conv2d_ref(x, K, s):
    n, k = x.shape[0], K.shape[0]
    m = (n - 1) * s + k
    out = np.zeros((m, m))
    for a in range(k):
        for b in range(k):
            out[a:a + s * (n - 1) + 1:s, b:b + s * (n - 1) + 1:s] += K[a, b] * x
    return np.sum(np.tanh(out) ** 2)


def tconv2d_inputs(rng, n, k, s):
    return normal(rng, n, n), normal(rng, k, k, scale=1 / k), s


# ------------------------------------------------------------------ pooling after np.pad


def padded_max_pool(x):
    """Item 2: 3x3 max pooling at stride 2 of a (C, H, W) batch zero-padded by `np.pad`,
    one window per output pixel in nested loops."""
    xp = vnp.pad(x, ((0, 0), (1, 1), (1, 1)))
    n = (xp.shape[1] - 3) // 2 + 1
    out = [[vnp.max(xp[:, 2 * i:2 * i + 3, 2 * j:2 * j + 3], axis=(1, 2)) for j in range(n)]
           for i in range(n)]
    return vnp.sum(vnp.stack([vnp.stack(r, axis=-1) for r in out], axis=-2) ** 2)


def padded_max_pool_ref(x):
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1)))
    win = sliding_window_view(xp, (3, 3), axis=(1, 2))[:, ::2, ::2]
    return np.sum(win.max(axis=(-2, -1)) ** 2)


def padded_avg_pool(x):
    """Item 2: 2x2 average pooling at stride 2 of an odd-sized image padded at the edge by
    `np.pad(mode='edge')`, the windows visited by a comprehension."""
    xp = vnp.pad(x, ((0, 1), (0, 1)), mode="edge")
    n = xp.shape[0] // 2
    out = vnp.stack([vnp.mean(xp[2 * i:2 * i + 2, 2 * j:2 * j + 2])
                     for i in range(n) for j in range(n)])
    return vnp.sum(vnp.sin(out))


def padded_avg_pool_ref(x):
    xp = np.pad(x, ((0, 1), (0, 1)), mode="edge")
    n = xp.shape[0] // 2
    return np.sum(np.sin(xp[:2 * n, :2 * n].reshape(n, 2, n, 2).mean(axis=(1, 3))))


def pool_inputs(rng, c, n):
    return (normal(rng, c, n, n),)


def avg_pool_inputs(rng, n):
    return (normal(rng, n, n),)


# ------------------------------------------------------------------ 1-D styles


def _window(x, t, k):
    return x[t:t + k]


def helper_window_fn(x, w):
    """Item 2: windows read through a helper function `window(x, t, k)`, each one's dot
    product with the filter (k, C), in a loop appending to a list."""
    k = w.shape[0]
    ys = []
    for t in range(x.shape[0] - k + 1):
        ys.append(vnp.sum(_window(x, t, k) * w))
    return vnp.sum(vnp.tanh(vnp.stack(ys)))


def helper_window_fn_ref(x, w):
    return np.sum(np.tanh(np.einsum("tck,kc->t", sliding_window_view(x, w.shape[0], axis=0), w)))


def conv1d_inputs(rng, T, c, k):
    return normal(rng, T, c), normal(rng, k, c, scale=(k * c) ** -0.5)


def reversed_range_windows(x, w):
    """Item 2: windows visited backwards with `reversed(range(...))`, each window's weighted
    sum written into y[t] of a preallocated buffer."""
    k = w.shape[0]
    n = x.shape[0] - k + 1
    y = vnp.zeros((n, x.shape[1]))
    for t in reversed(range(n)):
        y[t] = w @ x[t:t + k]
    return vnp.sum(y ** 2)


def reversed_range_windows_ref(x, w):
    k = w.shape[0]
    n = x.shape[0] - k + 1
    return np.sum(sum(w[a] * x[a:a + n] for a in range(k)) ** 2)


def rev_inputs(rng, T, c, k):
    return normal(rng, T, c), normal(rng, k, scale=k ** -0.5)


def map_lambda_sliding_dot(x, q):
    """Item 2: sliding dot products of a query against every window of a signal, in
    `map(lambda t: ..., range(...))`, then a softmax over positions."""
    k = q.shape[0]
    s = vnp.stack(list(map(lambda t: vnp.sum(x[t:t + k] * q),  # noqa: C417 - as users write it
                           range(x.shape[0] - k + 1))))
    m = vnp.max(s)
    return m + vnp.log(vnp.sum(vnp.exp(s - m)))


def map_lambda_sliding_dot_ref(x, q):
    s = np.einsum("tck,kc->t", sliding_window_view(x, q.shape[0], axis=0), q)
    m = s.max()
    return m + np.log(np.sum(np.exp(s - m)))


def multiscale_windows(x, w3, w5):
    """Items 2, 4: two window sizes (3 and 5) in one loop over positions, each position's
    features the two filtered windows, their products summed."""
    n = x.shape[0] - 4
    acc = 0.0
    for t in range(n):
        a = vnp.sum(x[t + 1:t + 4] * w3, axis=0)
        b = vnp.sum(x[t:t + 5] * w5, axis=0)
        acc = acc + vnp.sum(vnp.tanh(a) * b)
    return acc


def multiscale_windows_ref(x, w3, w5):
    n = x.shape[0] - 4
    a = sum(w3[i] * x[1 + i:1 + i + n] for i in range(3))
    b = sum(w5[i] * x[i:i + n] for i in range(5))
    return np.sum(np.tanh(a) * b)


def multiscale_inputs(rng, T, c):
    return normal(rng, T, c), normal(rng, 3, c, scale=0.5), normal(rng, 5, c, scale=0.4)


def stft_frames_power(x, win, C, S, hop):
    """Items 2, 5: STFT-like frames x[t*hop : t*hop+n] times a window function, each
    frame's power spectrum through cosine and sine bases, log-compressed and summed."""
    n = win.shape[0]
    T = (x.shape[0] - n) // hop + 1
    total = 0.0
    for t in range(T):
        f = x[t * hop:t * hop + n] * win
        total = total + vnp.sum(vnp.log1p((C @ f) ** 2 + (S @ f) ** 2))
    return total


def stft_frames_power_ref(x, win, C, S, hop):
    n = win.shape[0]
    fr = sliding_window_view(x, n)[::hop] * win
    return np.sum(np.log1p((fr @ C.T) ** 2 + (fr @ S.T) ** 2))


def stft_inputs(rng, T, n, m, hop):
    k = np.arange(m)[:, None] * np.arange(n)[None, :] * (2 * np.pi / n)
    return normal(rng, T), np.hanning(n), np.cos(k), np.sin(k), hop


def per_window_scale_dilated(x, w, a):
    """Items 2, 4: dilated windows x[t : t+2k-1 : 2] (k taps at dilation 2), each window's
    response scaled by a per-window gain a[t] from another array."""
    k = w.shape[0]
    n = x.shape[0] - 2 * (k - 1)
    ys = [a[t] * vnp.tanh(vnp.sum(x[t:t + 2 * k - 1:2] * w, axis=0)) for t in range(n)]
    return vnp.sum(vnp.stack(ys) ** 2)


def per_window_scale_dilated_ref(x, w, a):
    k = w.shape[0]
    n = x.shape[0] - 2 * (k - 1)
    y = sum(w[i] * x[2 * i:2 * i + n] for i in range(k))
    return np.sum((a[:, None] * np.tanh(y)) ** 2)


def pwsd_inputs(rng, T, c, k):
    return normal(rng, T, c), normal(rng, k, c, scale=k ** -0.5), normal(rng, T - 2 * (k - 1))


# ------------------------------------------------------------------ local statistics


def local_std_2d(img):
    """Item 2: local contrast, the standard deviation of every 3x3 patch of an image at
    stride 2, in nested loops into a buffer, then its mean."""
    n = (img.shape[0] - 3) // 2 + 1
    out = vnp.zeros((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = vnp.std(img[2 * i:2 * i + 3, 2 * j:2 * j + 3])
    return vnp.mean(out)


def local_std_2d_ref(img):
    win = sliding_window_view(img, (3, 3))[::2, ::2]
    return np.mean(win.std(axis=(-2, -1)))


def std_inputs(rng, n):
    return (normal(rng, n, n),)


def strided_mid_axis_conv(X, W, s):
    """Item 2: a strided convolution along the middle (time) axis of a (B, T, C) batch,
    windows X[:, t*s : t*s+k] contracted with (k, C, F) filters by tensordot."""
    k = W.shape[0]
    n = (X.shape[1] - k) // s + 1
    ys = [vnp.tensordot(X[:, t * s:t * s + k], W, axes=([1, 2], [0, 1])) for t in range(n)]
    return vnp.sum(vnp.tanh(vnp.stack(ys, axis=1)))


def strided_mid_axis_conv_ref(X, W, s):
    k = W.shape[0]
    n = (X.shape[1] - k) // s + 1
    return np.sum(np.tanh(sum(X[:, a:a + s * (n - 1) + 1:s] @ W[a] for a in range(k))))


def strided_mid_inputs(rng, B, T, c, f, k, s):
    return normal(rng, B, T, c), normal(rng, k, c, f, scale=(k * c) ** -0.5), s


PATTERNS = [
    Pattern("mid_axis_windows_4d", 2, mid_axis_windows_4d, mid_axis_windows_4d_ref,
            mid4d_inputs, {"small": {"B": 2, "T": 7, "H": 2, "c": 2, "f": 2, "k": 3},
                           "default": {"B": 4, "T": 100, "H": 6, "c": 8, "f": 8, "k": 4}},
            (0, 1), tags=_V),
    Pattern("mid_axis_scaled_means", 2, mid_axis_scaled_means, mid_axis_scaled_means_ref,
            mid_scaled_inputs, {"small": {"B": 2, "T": 9, "c": 2},
                                "default": {"B": 16, "T": 400, "c": 8}}, (0, 1), tags=_V),
    Pattern("hwc_patch_conv", 2, hwc_patch_conv, hwc_patch_conv_ref, hwc_inputs,
            {"small": {"n": 6, "c": 2, "p": 3, "f": 2},
             "default": {"n": 34, "c": 4, "p": 3, "f": 8}}, (0, 1), tags=_V),
    Pattern("hwc_depthwise", 2, hwc_depthwise, hwc_depthwise_ref, hwc_depthwise_inputs,
            {"small": {"n": 6, "c": 2}, "default": {"n": 50, "c": 8}}, (0, 1), tags=_V),
    Pattern("hwc_transposed_conv", 1, hwc_transposed_conv, hwc_transposed_conv_ref,
            hwc_tconv_inputs, {"small": {"n": 3, "c": 2, "k": 3, "f": 2, "s": 2},
                               "default": {"n": 24, "c": 8, "k": 3, "f": 4, "s": 2}},
            (0, 1), tags=_V),
    Pattern("scatter_transposed_conv2d", 1, scatter_transposed_conv2d,
            scatter_transposed_conv2d_ref, tconv2d_inputs,
            {"small": {"n": 4, "k": 3, "s": 2}, "default": {"n": 48, "k": 4, "s": 2}},
            (0, 1), tags=_V),
    Pattern("padded_max_pool", 2, padded_max_pool, padded_max_pool_ref, pool_inputs,
            {"small": {"c": 2, "n": 6}, "default": {"c": 8, "n": 48}}, (0,), tags=_V),
    Pattern("padded_avg_pool", 2, padded_avg_pool, padded_avg_pool_ref, avg_pool_inputs,
            {"small": {"n": 7}, "default": {"n": 101}}, (0,), tags=_V),
    Pattern("helper_window_fn", 2, helper_window_fn, helper_window_fn_ref, conv1d_inputs,
            {"small": {"T": 9, "c": 2, "k": 3}, "default": {"T": 3000, "c": 8, "k": 5}},
            (0, 1), tags=_V),
    Pattern("reversed_range_windows", 2, reversed_range_windows, reversed_range_windows_ref,
            rev_inputs, {"small": {"T": 9, "c": 2, "k": 3},
                         "default": {"T": 3000, "c": 16, "k": 4}}, (0, 1), tags=_V),
    Pattern("map_lambda_sliding_dot", 2, map_lambda_sliding_dot, map_lambda_sliding_dot_ref,
            conv1d_inputs, {"small": {"T": 9, "c": 2, "k": 3},
                            "default": {"T": 4000, "c": 4, "k": 6}}, (0, 1), tags=_V),
    Pattern("multiscale_windows", 2, multiscale_windows, multiscale_windows_ref,
            multiscale_inputs, {"small": {"T": 9, "c": 2},
                                "default": {"T": 3000, "c": 16}}, (0, 1, 2), tags=_V),
    Pattern("stft_frames_power", 2, stft_frames_power, stft_frames_power_ref, stft_inputs,
            {"small": {"T": 40, "n": 8, "m": 5, "hop": 4},
             "default": {"T": 8000, "n": 64, "m": 33, "hop": 16}}, (0,), tags=_V),
    Pattern("per_window_scale_dilated", 2, per_window_scale_dilated,
            per_window_scale_dilated_ref, pwsd_inputs,
            {"small": {"T": 11, "c": 2, "k": 3}, "default": {"T": 3000, "c": 16, "k": 3}},
            (0, 1, 2), tags=_V),
    Pattern("local_std_2d", 2, local_std_2d, local_std_2d_ref, std_inputs,
            {"small": {"n": 9}, "default": {"n": 101}}, (0,), tags=_V),
    Pattern("strided_mid_axis_conv", 2, strided_mid_axis_conv, strided_mid_axis_conv_ref,
            strided_mid_inputs, {"small": {"B": 2, "T": 11, "c": 2, "f": 2, "k": 3, "s": 2},
                                 "default": {"B": 8, "T": 601, "c": 8, "f": 8, "k": 5,
                                             "s": 2}}, (0, 1), tags=_V),
]
