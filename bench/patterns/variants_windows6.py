"""Windows, strides and convolutions in styles the suite lacked (item 2, some with items 1, 4
and 5): patches of 3-D volumes; window widths from a Python list; causal windows over a
signal left-padded by `np.concatenate`; max- and average-pooling in one loop; windows over
the time axis of a (B, T, C) batch with per-channel taps; strided windows in a `while` loop;
separable 2-D filters (rows, then columns, in two loops); a Gaussian kernel built inside the
loop; local contrast normalization; the correlation of two signals over lags; windows gathered
by `np.take(x, range(t, t + k))`; box filters from an integral image (cumsum) read in a loop;
several dilations in one loop; 3-D average pooling at a stride; cost volumes of two images
over small shifts; depthwise strided windows of a (B, T, C) batch."""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import vecgrad.numpy as vnp

from .core import Pattern, normal

_V = ("variant",)

# ------------------------------------------------------------------ volumes


def volume_patches_3d(vol, K):
    """Item 2: a (D, H, W) volume filtered by a (p, p, p) kernel, one patch per voxel in
    three nested loops, written into an output volume."""
    p = K.shape[0]
    D, H, W = (n - p + 1 for n in vol.shape)
    out = vnp.zeros((D, H, W))
    for d in range(D):
        for i in range(H):
            for j in range(W):
                out[d, i, j] = vnp.sum(vol[d:d + p, i:i + p, j:j + p] * K)
    return vnp.sum(vnp.tanh(out))


def volume_patches_3d_ref(vol, K):
    p = K.shape[0]
    D, H, W = (n - p + 1 for n in vol.shape)
    out = sum(K[a, b, c] * vol[a:a + D, b:b + H, c:c + W]
              for a in range(p) for b in range(p) for c in range(p))
    return np.sum(np.tanh(out))


def volume_inputs(rng, n, p):
    return normal(rng, n, n, n), normal(rng, p, p, p, scale=p ** -1.5)


def volume_avg_pool(vol, s):
    """Item 2: 2x2x2 average pooling of a (D, H, W) volume at stride s, nested loops over
    the pooled voxels, each a mean of its block, then a softplus of the pooled volume."""
    D, H, W = ((n - 2) // s + 1 for n in vol.shape)
    total = 0.0
    for d in range(D):
        for i in range(H):
            for j in range(W):
                m = vnp.mean(vol[d * s:d * s + 2, i * s:i * s + 2, j * s:j * s + 2])
                total = total + vnp.log1p(vnp.exp(m))
    return total


def volume_avg_pool_ref(vol, s):
    D, H, W = ((n - 2) // s + 1 for n in vol.shape)
    m = sum(vol[a:a + s * (D - 1) + 1:s, b:b + s * (H - 1) + 1:s, c:c + s * (W - 1) + 1:s]
            for a in range(2) for b in range(2) for c in range(2)) / 8.0
    return np.sum(np.log1p(np.exp(m)))


def vpool_inputs(rng, n, s):
    return normal(rng, n, n, n), s


# ------------------------------------------------------------------ widths and padding


def list_widths_windows(x, ws):
    """Items 2, 4: moving averages at several widths taken from a Python list, each width's
    windows weighted by its own coefficient and every response summed through tanh."""
    total = 0.0
    for m, k in enumerate([2, 3, 5, 8]):
        for t in range(x.shape[0] - k + 1):
            total = total + ws[m] * vnp.sum(vnp.tanh(vnp.mean(x[t:t + k], axis=0)))
    return total


def list_widths_windows_ref(x, ws):
    total = 0.0
    for m, k in enumerate([2, 3, 5, 8]):
        n = x.shape[0] - k + 1
        total = total + ws[m] * np.sum(np.tanh(sum(x[a:a + n] for a in range(k)) / k))
    return total


def widths_inputs(rng, T, c):
    return normal(rng, T, c), normal(rng, 4)


def causal_left_pad(x, w):
    """Item 2: causal windows, the signal left-padded with k - 1 zero rows by
    `np.concatenate`, then y[t] = sum(xp[t:t+k] * w) over (k, C) taps for every t."""
    k = w.shape[0]
    xp = vnp.concatenate([vnp.zeros((k - 1, x.shape[1])), x], axis=0)
    y = vnp.stack([vnp.sum(xp[t:t + k] * w, axis=0) for t in range(x.shape[0])])
    return vnp.sum(vnp.tanh(y) * x)


def causal_left_pad_ref(x, w):
    k = w.shape[0]
    T = x.shape[0]
    xp = np.concatenate([np.zeros((k - 1, x.shape[1])), x], axis=0)
    y = sum(w[a] * xp[a:a + T] for a in range(k))
    return np.sum(np.tanh(y) * x)


def causal_pad_inputs(rng, T, c, k):
    return normal(rng, T, c), normal(rng, k, c, scale=k ** -0.5)


# ------------------------------------------------------------------ pooling


def max_avg_pool(x, v, s):
    """Items 2, 4: max- and average-pooling of the same windows x[t*s : t*s + k] in one
    loop, both pooled features dotted with one weight vector."""
    k = 4
    n = (x.shape[0] - k) // s + 1
    total = 0.0
    for t in range(n):
        win = x[t * s:t * s + k]
        total = total + vnp.dot(vnp.max(win, axis=0) + 0.5 * vnp.mean(win, axis=0), v)
    return total


def max_avg_pool_ref(x, v, s):
    k = 4
    win = sliding_window_view(x, k, axis=0)[::s]
    return np.sum((win.max(axis=2) + 0.5 * win.mean(axis=2)) @ v)


def pool_inputs(rng, T, c, s):
    return normal(rng, T, c), normal(rng, c), s


# ------------------------------------------------------------------ batches of sequences


def btc_channel_windows(X, w):
    """Item 2: windows along the time axis of a (B, T, C) batch, each window scaled by
    per-channel taps w (k, C) and summed over the taps (a depthwise filter), written into
    an output buffer one time step at a time."""
    k = w.shape[0]
    B, T, C = X.shape
    out = vnp.zeros((B, T - k + 1, C))
    for t in range(T - k + 1):
        out[:, t] = vnp.sum(X[:, t:t + k] * w, axis=1)
    return vnp.sum(vnp.sin(out))


def btc_channel_windows_ref(X, w):
    k = w.shape[0]
    n = X.shape[1] - k + 1
    return np.sum(np.sin(sum(X[:, a:a + n] * w[a] for a in range(k))))


def btc_inputs(rng, B, T, c, k):
    return normal(rng, B, T, c), normal(rng, k, c, scale=k ** -0.5)


def btc_strided_depthwise(X, w, s):
    """Item 2: depthwise windows of a (B, T, C) batch at stride s along time, each output
    step stacked on axis 1."""
    k = w.shape[0]
    n = (X.shape[1] - k) // s + 1
    ys = [vnp.einsum("bkc,kc->bc", X[:, t * s:t * s + k], w) for t in range(n)]
    return vnp.sum(vnp.stack(ys, axis=1) ** 2)


def btc_strided_depthwise_ref(X, w, s):
    k = w.shape[0]
    n = (X.shape[1] - k) // s + 1
    return np.sum(sum(X[:, a:a + s * (n - 1) + 1:s] * w[a] for a in range(k)) ** 2)


def btc_strided_inputs(rng, B, T, c, k, s):
    return normal(rng, B, T, c), normal(rng, k, c, scale=k ** -0.5), s


# ------------------------------------------------------------------ while loops


def while_strided_filter_bank(x, W, s):
    """Item 2: strided windows walked by `while t + k <= n: ...; t += s`, each window of
    (k, C) contracted with a (k, C, F) filter bank, the responses collected in a list."""
    k = W.shape[0]
    ys = []
    t = 0
    while t + k <= x.shape[0]:
        ys.append(vnp.tensordot(x[t:t + k], W, axes=2))
        t += s
    return vnp.sum(vnp.tanh(vnp.stack(ys)))


def while_strided_filter_bank_ref(x, W, s):
    k = W.shape[0]
    n = (x.shape[0] - k) // s + 1
    y = sum(x[a:a + s * (n - 1) + 1:s] @ W[a] for a in range(k))
    return np.sum(np.tanh(y))


def while_bank_inputs(rng, T, c, f, k, s):
    return normal(rng, T, c), normal(rng, k, c, f, scale=(k * c) ** -0.5), s


# ------------------------------------------------------------------ 2-D filters


def separable_buffers_2d(img, kr, kc):
    """Items 1, 2: a separable 2-D filter, rows first then columns, in two loops: each column
    j of a buffer gets img[:, j:j+k] @ kr, then each row i of the output gets kc @ tmp[i:i+k]."""
    k = kr.shape[0]
    H, W = img.shape
    tmp = vnp.zeros((H, W - k + 1))
    for j in range(W - k + 1):
        tmp[:, j] = img[:, j:j + k] @ kr
    out = vnp.zeros((H - k + 1, W - k + 1))
    for i in range(H - k + 1):
        out[i] = kc @ tmp[i:i + k]
    return vnp.sum(out ** 2)


def separable_buffers_2d_ref(img, kr, kc):
    k = kr.shape[0]
    H, W = img.shape
    tmp = sum(kr[a] * img[:, a:a + W - k + 1] for a in range(k))
    out = sum(kc[a] * tmp[a:a + H - k + 1] for a in range(k))
    return np.sum(out ** 2)


def separable_inputs(rng, n, k):
    return normal(rng, n, n), normal(rng, k, scale=k ** -0.5), normal(rng, k, scale=k ** -0.5)


def gaussian_blur_loop(x, sigma):
    """Items 2, 7: a Gaussian blur whose kernel is built inside the loop from a learnable
    width sigma (the same kernel at every step: a loop invariant), normalized, then applied
    to the window x[t:t+k] of a (T, C) signal."""
    k = 7
    offs = np.arange(k) - (k - 1) / 2.0
    ys = []
    for t in range(x.shape[0] - k + 1):
        g = vnp.exp(-offs ** 2 / (2.0 * sigma[0] ** 2))
        g = g / vnp.sum(g)
        ys.append(g @ x[t:t + k])
    return vnp.sum(vnp.stack(ys) ** 2)


def gaussian_blur_loop_ref(x, sigma):
    k = 7
    offs = np.arange(k) - (k - 1) / 2.0
    g = np.exp(-offs ** 2 / (2.0 * sigma[0] ** 2))
    g = g / g.sum()
    n = x.shape[0] - k + 1
    return np.sum(sum(g[a] * x[a:a + n] for a in range(k)) ** 2)


def gauss_inputs(rng, T, c):
    return normal(rng, T, c), np.array([1.5])


def local_contrast_norm_2d(img):
    """Items 2, 4: local contrast normalization, each pixel centred by the mean of its p x p
    neighbourhood and divided by the neighbourhood's standard deviation."""
    p, eps = 5, 1e-2
    H, W = img.shape[0] - p + 1, img.shape[1] - p + 1
    out = vnp.zeros((H, W))
    for i in range(H):
        for j in range(W):
            patch = img[i:i + p, j:j + p]
            m = vnp.mean(patch)
            v = vnp.mean((patch - m) ** 2)
            out[i, j] = (img[i + p // 2, j + p // 2] - m) / vnp.sqrt(v + eps)
    return vnp.sum(out ** 2)


def local_contrast_norm_2d_ref(img):
    p, eps = 5, 1e-2
    win = sliding_window_view(img, (p, p))
    m = win.mean(axis=(2, 3))
    v = ((win - m[:, :, None, None]) ** 2).mean(axis=(2, 3))
    c = img[p // 2:p // 2 + m.shape[0], p // 2:p // 2 + m.shape[1]]
    return np.sum(((c - m) / np.sqrt(v + eps)) ** 2)


def lcn_inputs(rng, n):
    return (normal(rng, n, n),)


def integral_box_filter(img):
    """Item 2: box sums from an integral image (a cumsum along both axes, zero-padded),
    each pixel's p x p box read as S[i+p, j+p] - S[i, j+p] - S[i+p, j] + S[i, j] in a loop."""
    p = 4
    S = vnp.cumsum(vnp.cumsum(img, axis=0), axis=1)
    S = vnp.concatenate([vnp.zeros((1, S.shape[1])), S], axis=0)
    S = vnp.concatenate([vnp.zeros((S.shape[0], 1)), S], axis=1)
    H, W = img.shape[0] - p + 1, img.shape[1] - p + 1
    out = vnp.zeros((H, W))
    for i in range(H):
        for j in range(W):
            out[i, j] = S[i + p, j + p] - S[i, j + p] - S[i + p, j] + S[i, j]
    return vnp.sum(vnp.tanh(out / (p * p)))


def integral_box_filter_ref(img):
    p = 4
    S = np.pad(np.cumsum(np.cumsum(img, axis=0), axis=1), ((1, 0), (1, 0)))
    box = S[p:, p:] - S[:-p, p:] - S[p:, :-p] + S[:-p, :-p]
    return np.sum(np.tanh(box / (p * p)))


def box_inputs(rng, n):
    return (normal(rng, n, n),)


def cost_volume_shifts(a, b):
    """Items 2, 4: a cost volume of two images over small shifts (optical-flow style): for
    each shift (dy, dx) the mean product of a and b shifted, softmaxed over the shifts."""
    r = 2
    H, W = a.shape[0] - 2 * r, a.shape[1] - 2 * r
    costs = []
    for dy in range(2 * r + 1):
        for dx in range(2 * r + 1):
            costs.append(vnp.mean(a[r:r + H, r:r + W] * b[dy:dy + H, dx:dx + W], axis=1))
    c = vnp.stack(costs)
    m = vnp.max(c, axis=0)
    return vnp.sum(m + vnp.log(vnp.sum(vnp.exp(c - m), axis=0)))


def cost_volume_shifts_ref(a, b):
    r = 2
    H, W = a.shape[0] - 2 * r, a.shape[1] - 2 * r
    win = sliding_window_view(b, (H, W))  # (2r+1, 2r+1, H, W)
    c = np.einsum("hw,yxhw->yxh", a[r:r + H, r:r + W], win, optimize=True).reshape(-1, H) / W
    m = c.max(axis=0)
    return np.sum(m + np.log(np.sum(np.exp(c - m), axis=0)))


def cost_inputs(rng, n):
    return normal(rng, n, n), normal(rng, n, n)


# ------------------------------------------------------------------ signals


def lag_correlation(x, y):
    """Items 2, 4: the correlation of two signals at lags 0..m-1, each lag's normalized
    inner product of x[L:] with y[:n-L], squared and summed."""
    n, m = x.shape[0], 48
    total = 0.0
    for L in range(m):
        c = vnp.dot(x[L:], y[:n - L]) / (n - L)
        total = total + c ** 2
    return total


def lag_correlation_ref(x, y):
    n, m = x.shape[0], 48
    lagged = sliding_window_view(np.concatenate([x, np.zeros(m)]), n)[:m]  # row L: x[L:], 0s
    return np.sum((lagged @ y / (n - np.arange(m))) ** 2)


def lag_inputs(rng, n):
    return normal(rng, n), normal(rng, n)


def take_range_windows(x, w):
    """Item 2: windows gathered with `np.take(x, range(t, t + k), axis=0)` (a Python range
    as the index list), each contracted with a (k, C) filter."""
    k = w.shape[0]
    ys = [vnp.sum(vnp.take(x, range(t, t + k), axis=0) * w) for t in range(x.shape[0] - k + 1)]
    return vnp.sum(vnp.tanh(vnp.stack(ys)))


def take_range_windows_ref(x, w):
    k = w.shape[0]
    n = x.shape[0] - k + 1
    return np.sum(np.tanh(sum(x[a:a + n] @ w[a] for a in range(k))))


def take_inputs(rng, T, c, k):
    return normal(rng, T, c), normal(rng, k, c, scale=(k * c) ** -0.5)


def multi_dilation_stack(x, ws):
    """Items 2, 4: one loop over positions computing three dilated responses (dilations 1, 2
    and 4, three taps each) of a (T, C) signal, their tanh products summed (WaveNet-like)."""
    n = x.shape[0] - 8
    total = 0.0
    for t in range(n):
        a = vnp.sum(x[t + 6:t + 9] * ws[0], axis=0)
        b = vnp.sum(x[t + 4:t + 9:2] * ws[1], axis=0)
        c = vnp.sum(x[t:t + 9:4] * ws[2], axis=0)
        total = total + vnp.sum(vnp.tanh(a) * vnp.tanh(b) * c)
    return total


def multi_dilation_stack_ref(x, ws):
    n = x.shape[0] - 8
    a = sum(ws[0, i] * x[6 + i:6 + i + n] for i in range(3))
    b = sum(ws[1, i] * x[4 + 2 * i:4 + 2 * i + n] for i in range(3))
    c = sum(ws[2, i] * x[4 * i:4 * i + n] for i in range(3))
    return np.sum(np.tanh(a) * np.tanh(b) * c)


def dil_inputs(rng, T, c):
    return normal(rng, T, c), normal(rng, 3, 3, c, scale=0.5)


PATTERNS = [
    Pattern("volume_patches_3d", 2, volume_patches_3d, volume_patches_3d_ref, volume_inputs,
            {"small": {"n": 6, "p": 2}, "default": {"n": 14, "p": 3}}, (0, 1), tags=_V),
    Pattern("volume_avg_pool", 2, volume_avg_pool, volume_avg_pool_ref, vpool_inputs,
            {"small": {"n": 6, "s": 2}, "default": {"n": 24, "s": 2}}, (0,), tags=_V),
    Pattern("list_widths_windows", 2, list_widths_windows, list_widths_windows_ref,
            widths_inputs, {"small": {"T": 12, "c": 2}, "default": {"T": 500, "c": 48}},
            (0, 1), tags=_V),
    Pattern("causal_left_pad", 2, causal_left_pad, causal_left_pad_ref, causal_pad_inputs,
            {"small": {"T": 9, "c": 2, "k": 3}, "default": {"T": 3000, "c": 16, "k": 4}},
            (0, 1), tags=_V),
    Pattern("max_avg_pool", 2, max_avg_pool, max_avg_pool_ref, pool_inputs,
            {"small": {"T": 14, "c": 2, "s": 2}, "default": {"T": 3000, "c": 32, "s": 2}},
            (0, 1), tags=_V),
    Pattern("btc_channel_windows", 2, btc_channel_windows, btc_channel_windows_ref,
            btc_inputs, {"small": {"B": 2, "T": 9, "c": 3, "k": 3},
                         "default": {"B": 8, "T": 400, "c": 16, "k": 5}}, (0, 1), tags=_V),
    Pattern("btc_strided_depthwise", 2, btc_strided_depthwise, btc_strided_depthwise_ref,
            btc_strided_inputs, {"small": {"B": 2, "T": 11, "c": 3, "k": 3, "s": 2},
                                 "default": {"B": 8, "T": 801, "c": 16, "k": 5, "s": 2}},
            (0, 1), tags=_V),
    Pattern("while_strided_filter_bank", 2, while_strided_filter_bank,
            while_strided_filter_bank_ref, while_bank_inputs,
            {"small": {"T": 13, "c": 2, "f": 3, "k": 3, "s": 3},
             "default": {"T": 6000, "c": 8, "f": 8, "k": 5, "s": 3}}, (0, 1), tags=_V),
    Pattern("separable_buffers_2d", 2, separable_buffers_2d, separable_buffers_2d_ref,
            separable_inputs,
            {"small": {"n": 8, "k": 3}, "default": {"n": 160, "k": 5}}, (0, 1, 2), tags=_V),
    Pattern("gaussian_blur_loop", 2, gaussian_blur_loop, gaussian_blur_loop_ref, gauss_inputs,
            {"small": {"T": 12, "c": 2}, "default": {"T": 1500, "c": 32}}, (0, 1), tags=_V),
    Pattern("local_contrast_norm_2d", 2, local_contrast_norm_2d, local_contrast_norm_2d_ref,
            lcn_inputs, {"small": {"n": 8}, "default": {"n": 32}}, (0,), tags=_V),
    Pattern("integral_box_filter", 2, integral_box_filter, integral_box_filter_ref,
            box_inputs, {"small": {"n": 8}, "default": {"n": 48}}, (0,), tags=_V),
    Pattern("cost_volume_shifts", 2, cost_volume_shifts, cost_volume_shifts_ref, cost_inputs,
            {"small": {"n": 9}, "default": {"n": 124}}, (0, 1), tags=_V),
    Pattern("lag_correlation", 2, lag_correlation, lag_correlation_ref, lag_inputs,
            {"small": {"n": 60}, "default": {"n": 8000}}, (0, 1), tags=_V),
    Pattern("take_range_windows", 2, take_range_windows, take_range_windows_ref, take_inputs,
            {"small": {"T": 9, "c": 2, "k": 3}, "default": {"T": 1000, "c": 48, "k": 4}},
            (0, 1), tags=_V),
    Pattern("multi_dilation_stack", 2, multi_dilation_stack, multi_dilation_stack_ref,
            dil_inputs, {"small": {"T": 14, "c": 2}, "default": {"T": 600, "c": 48}},
            (0, 1), tags=_V),
]
