"""More natural variants of windows, strided reads and ragged (triangular, growing, shrinking)
loops (items 2, 4 and 6), in the styles users mix: 2-D patches with stride and dilation, causal
windows over a zero-padded signal, reversed windows, windows over a batch axis, `np.stack` of
comprehensions, `map` of a kernel over windows, pairwise triangular loops, growing prefixes and
shrinking suffixes, moving averages kept as running sums, differences at several lags, dot
products at every lag (an autocorrelation) and over growing prefixes (a causal filter)."""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import vecgrad.numpy as vnp

from .core import Pattern, normal


def dilated_strided_patches(img, K, s, d):
    """Item 2 (variant): 2-D patches at stride s and dilation d, img[i*s : i*s+(p-1)*d+1 : d,
    j*s : ...], each against the kernel, written into out[i, j] in nested loops."""
    p = K.shape[0]
    span = (p - 1) * d + 1
    H = (img.shape[0] - span) // s + 1
    W = (img.shape[1] - span) // s + 1
    out = vnp.zeros((H, W))
    for i in range(H):
        for j in range(W):
            out[i, j] = vnp.sum(img[i * s:i * s + span:d, j * s:j * s + span:d] * K)
    return vnp.sum(vnp.tanh(out) ** 2)


def dilated_strided_patches_ref(img, K, s, d):
    p = K.shape[0]
    H = (img.shape[0] - (p - 1) * d - 1) // s + 1
    W = (img.shape[1] - (p - 1) * d - 1) // s + 1
    out = sum(K[a, b] * img[a * d:a * d + s * (H - 1) + 1:s, b * d:b * d + s * (W - 1) + 1:s]
              for a in range(p) for b in range(p))
    return np.sum(np.tanh(out) ** 2)


def dilated_patches_inputs(rng, n, p, s, d):
    return normal(rng, n, n), normal(rng, p, p, scale=1.0 / p), s, d


def causal_padded_windows(x, w):
    """Item 2 (variant): a causal filter over a zero-padded signal, y[t] = w @ xp[t:t+k] with
    xp = concatenate(zeros(k-1), x), so every output sees only the past."""
    k = w.shape[0]
    xp = vnp.concatenate([vnp.zeros(k - 1), x])
    y = vnp.stack([w @ xp[t:t + k] for t in range(len(x))])
    return vnp.sum((y - x) ** 2)


def causal_padded_windows_ref(x, w):
    k = w.shape[0]
    y = np.correlate(np.concatenate([np.zeros(k - 1), x]), w, "valid")
    return np.sum((y - x) ** 2)


def causal_inputs(rng, T, k):
    return normal(rng, T), normal(rng, k, scale=k ** -0.5)


def reversed_window_taps(x, w):
    """Item 2 (variant): the window read backwards, x[t:t+k][::-1] against the taps (a true
    convolution), in a list comprehension stacked with np.stack."""
    k = w.shape[0]
    y = vnp.stack([vnp.dot(x[t:t + k][::-1], w) for t in range(len(x) - k + 1)])
    return vnp.sum(vnp.sin(y))


def reversed_window_taps_ref(x, w):
    return np.sum(np.sin(np.convolve(x, w, "valid")))


def reversed_inputs(rng, T, k):
    return normal(rng, T), normal(rng, k, scale=k ** -0.5)


def batch_axis_windows(X, w):
    """Item 2 (variant): windows along the time axis of a batch of signals, one column of the
    output per position: y[:, t] = X[:, t:t+k] @ w."""
    k = w.shape[0]
    B, T = X.shape
    y = vnp.zeros((B, T - k + 1))
    for t in range(T - k + 1):
        y[:, t] = X[:, t:t + k] @ w
    return vnp.sum(vnp.logaddexp(0.0, y))


def batch_axis_windows_ref(X, w):
    y = sliding_window_view(X, w.shape[0], axis=1) @ w
    return np.sum(np.logaddexp(0.0, y))


def batch_windows_inputs(rng, B, T, k):
    return normal(rng, B, T), normal(rng, k, scale=k ** -0.5)


def stacked_flat_windows(x, W, s):
    """Item 2 (variant): multichannel windows flattened into rows, np.stack of a comprehension
    over range(0, T-k+1, s), then one dense layer (a strided 1-D patch embedding)."""
    kc = W.shape[0]
    k = kc // x.shape[1]
    rows = vnp.stack([x[t:t + k].reshape(-1) for t in range(0, x.shape[0] - k + 1, s)])
    return vnp.sum(vnp.tanh(rows @ W))


def stacked_flat_windows_ref(x, W, s):
    k = W.shape[0] // x.shape[1]
    win = sliding_window_view(x, k, axis=0)[::s]          # (n, c, k)
    rows = win.transpose(0, 2, 1).reshape(win.shape[0], -1)
    return np.sum(np.tanh(rows @ W))


def stacked_flat_inputs(rng, T, c, k, f, s):
    return normal(rng, T, c), normal(rng, k * c, f, scale=(k * c) ** -0.5), s


def map_kernel_windows(x, w):
    """Item 2 (variant): `map` of a kernel function over window starts, a softplus of each
    window's dot with w, summed with Python's sum."""
    k = w.shape[0]

    def kernel(seg, taps):
        return vnp.logaddexp(0.0, seg @ taps)
    return sum(map(lambda t: kernel(x[t:t + k], w), range(len(x) - k + 1)))  # noqa: C417


def map_kernel_windows_ref(x, w):
    return np.sum(np.logaddexp(0.0, sliding_window_view(x, w.shape[0]) @ w))


def map_kernel_inputs(rng, T, k):
    return normal(rng, T), normal(rng, k, scale=k ** -0.5)


def cauchy_pairs_triangular(x):
    """Item 4 (variant): a t-SNE-style Cauchy kernel over all pairs i < j, written as the
    double loop `for i: for j in range(i + 1, n)`."""
    n = x.shape[0]
    e = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            e = e + 1.0 / (1.0 + vnp.sum((x[i] - x[j]) ** 2))
    return e


def cauchy_pairs_triangular_ref(x):
    i, j = np.triu_indices(len(x), 1)
    return np.sum(1.0 / (1.0 + np.sum((x[i] - x[j]) ** 2, axis=1)))


def cauchy_inputs(rng, n, d):
    return (normal(rng, n, d),)


def triangular_buffer_fill(x):
    """Items 1, 4 (variant): the strict upper triangle of a distance buffer filled pair by pair,
    D[i, j] for j in range(i + 1, n), then a masked sum with np.triu."""
    n = x.shape[0]
    D = vnp.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            D[i, j] = vnp.sqrt(vnp.sum((x[i] - x[j]) ** 2) + 1e-3)
    return vnp.sum(vnp.triu(vnp.exp(-D), 1))


def triangular_buffer_fill_ref(x):
    i, j = np.triu_indices(len(x), 1)
    return np.sum(np.exp(-np.sqrt(np.sum((x[i] - x[j]) ** 2, axis=1) + 1e-3)))


def growing_prefix_means(x):
    """Items 2, 6 (variant): each row against the mean of the rows up to it, x[:i+1].mean(0),
    a growing slice per iteration (a cumulative window)."""
    loss = 0.0
    for i in range(x.shape[0]):
        m = vnp.mean(x[:i + 1], axis=0)
        loss = loss + vnp.sum((x[i] - m) ** 2)
    return loss


def growing_prefix_means_ref(x):
    m = np.cumsum(x, axis=0) / np.arange(1, len(x) + 1)[:, None]
    return np.sum((x - m) ** 2)


def prefix_inputs(rng, n, d):
    return (normal(rng, n, d),)


def suffix_weighted_energy(x, w):
    """Items 2, 4 (variant): a shrinking suffix per iteration, the weighted tail sum
    (x[i:] * w[i:]).sum(0) squared, for every start i."""
    e = 0.0
    for i in range(x.shape[0]):
        e = e + vnp.sum(vnp.sum(x[i:] * w[i:], axis=0) ** 2)
    return e


def suffix_weighted_energy_ref(x, w):
    return np.sum(np.cumsum((x * w)[::-1], axis=0) ** 2)


def suffix_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, n, d)


def running_sum_average(x, k):
    """Item 6 (variant): a moving average kept as a running sum, s += x[t] - x[t-k], each
    average written into a buffer (a first-order recurrence in s)."""
    T = x.shape[0]
    out = vnp.zeros((T - k + 1,) + x.shape[1:])
    s = vnp.sum(x[:k], axis=0)
    out[0] = s / k
    for t in range(k, T):
        s = s + x[t] - x[t - k]
        out[t - k + 1] = s / k
    return vnp.sum(vnp.tanh(out))


def running_sum_average_ref(x, k):
    c = np.cumsum(x, axis=0)
    s = np.concatenate([c[k - 1:k], c[k:] - c[:-k]])
    return np.sum(np.tanh(s / k))


def running_inputs(rng, T, d, k):
    return normal(rng, T, d), k


def multi_lag_diffs(x, c):
    """Items 2, 4 (variant): sums of squared differences at several lags, an outer loop over
    the lags and an inner loop over positions, each lag with its own weight."""
    lags = (1, 2, 3, 5, 8)
    acc = 0.0
    for m, L in enumerate(lags):
        for t in range(L, x.shape[0]):
            acc = acc + c[m] * vnp.sum((x[t] - x[t - L]) ** 2)
    return acc


def multi_lag_diffs_ref(x, c):
    return sum(c[m] * np.sum((x[L:] - x[:-L]) ** 2) for m, L in enumerate((1, 2, 3, 5, 8)))


def multi_lag_inputs(rng, n, d):
    return normal(rng, n, d), np.abs(normal(rng, 5))


def hop_overlap_add(frames, win, hop):
    """Items 1, 2 (variant): inverse-STFT style synthesis, windowed frames added back at a hop,
    out[t*hop : t*hop + n] += frames[t] * win (each sample covered by n / hop frames)."""
    T, n = frames.shape
    out = vnp.zeros((T - 1) * hop + n)
    for t in range(T):
        out[t * hop:t * hop + n] += frames[t] * win
    return vnp.sum(vnp.tanh(out) ** 2)


def hop_overlap_add_ref(frames, win, hop):
    T, n = frames.shape
    q = n // hop                                # frames overlapping each hop block
    blocks = np.zeros((T - 1 + q, hop))
    fw = (frames * win).reshape(T, q, hop)
    for r in range(q):                          # one add per block offset
        blocks[r:r + T] += fw[:, r]
    return np.sum(np.tanh(blocks.reshape(-1)) ** 2)


def hop_inputs(rng, T, q, hop):
    return normal(rng, T, q * hop), np.hanning(q * hop), hop


def local_contrast_norm(x, k, eps):
    """Item 2 (variant): each point normalized by the mean and variance of the window around
    it, written with vnp.mean / vnp.var of x[t:t+k] in a loop."""
    h = k // 2
    out = []
    for t in range(len(x) - k + 1):
        seg = x[t:t + k]
        out.append((x[t + h] - vnp.mean(seg)) / vnp.sqrt(vnp.var(seg) + eps))
    return vnp.sum(vnp.stack(out) ** 2)


def local_contrast_norm_ref(x, k, eps):
    win = sliding_window_view(x, k)
    y = (x[k // 2:len(x) - k + 1 + k // 2] - win.mean(1)) / np.sqrt(win.var(1) + eps)
    return np.sum(y ** 2)


def contrast_inputs(rng, T, k):
    return normal(rng, T), k, 0.1


def patch_filter_bank(img, F):
    """Item 2 (variant): a filter bank over every 2-D patch, one tensordot of the filters with
    img[i:i+p, j:j+p] per position, in a nested comprehension stacked once."""
    p = F.shape[1]
    H, W = img.shape[0] - p + 1, img.shape[1] - p + 1
    feats = vnp.stack([vnp.tensordot(F, img[i:i + p, j:j + p], axes=2)
                       for i in range(H) for j in range(W)])
    return vnp.sum(vnp.maximum(feats, 0.0) ** 2)


def patch_filter_bank_ref(img, F):
    p = F.shape[1]
    win = sliding_window_view(img, (p, p))
    feats = np.einsum("ijab,fab->ijf", win, F, optimize=True)
    return np.sum(np.maximum(feats, 0.0) ** 2)


def filter_bank_inputs(rng, n, f, p):
    return normal(rng, n, n), normal(rng, f, p, p, scale=1.0 / p)


def strided_max_pool_1d(x, k, s):
    """Item 2 (variant): overlapping max pooling over time, vnp.max of x[t*s : t*s+k] over the
    window axis at a stride smaller than the window."""
    n = (x.shape[0] - k) // s + 1
    pooled = vnp.stack([vnp.max(x[t * s:t * s + k], axis=0) for t in range(n)])
    return vnp.sum(pooled ** 2)


def strided_max_pool_1d_ref(x, k, s):
    pooled = sliding_window_view(x, k, axis=0)[::s].max(axis=-1)
    return np.sum(pooled ** 2)


def maxpool1d_inputs(rng, T, c, k, s):
    return normal(rng, T, c), k, s


def dilated_causal_stack(x, w1, w2):
    """Items 2, 5 (variant): two causal convolution layers, the second dilated by 2 (a WaveNet
    block), each a loop over windows of the layer below, a relu between them."""
    k = w1.shape[0]
    T1 = x.shape[0] - k + 1
    h = vnp.stack([vnp.tensordot(x[t:t + k], w1, axes=2) for t in range(T1)])
    h = vnp.maximum(h, 0.0)
    span = 2 * (k - 1) + 1
    y = vnp.stack([vnp.tensordot(h[t:t + span:2], w2, axes=2) for t in range(T1 - span + 1)])
    return vnp.sum(y ** 2)


def dilated_causal_stack_ref(x, w1, w2):
    k = w1.shape[0]
    T1 = x.shape[0] - k + 1
    h = np.maximum(sum(x[a:a + T1] @ w1[a] for a in range(k)), 0.0)
    T2 = T1 - 2 * (k - 1)
    y = sum(h[2 * a:2 * a + T2] @ w2[a] for a in range(k))
    return np.sum(y ** 2)


def dilated_stack_inputs(rng, T, c, f, k):
    return (normal(rng, T, c), normal(rng, k, c, f, scale=(k * c) ** -0.5),
            normal(rng, k, f, f, scale=(k * f) ** -0.5))


def row_window_smoothing(X, w):
    """Item 2 (variant): windows over the rows of a matrix (the batch axis), each output row
    a weighted sum of k consecutive rows, vnp.tensordot(w, X[b:b+k], axes=1)."""
    k = w.shape[0]
    Y = [vnp.tensordot(w, X[b:b + k], axes=1) for b in range(X.shape[0] - k + 1)]
    return vnp.sum(vnp.stack(Y) ** 2) / len(Y)


def row_window_smoothing_ref(X, w):
    k = w.shape[0]
    n = X.shape[0] - k + 1
    Y = sum(w[a] * X[a:a + n] for a in range(k))
    return np.sum(Y ** 2) / n


def row_smoothing_inputs(rng, n, d, k):
    return normal(rng, n, d), normal(rng, k, scale=k ** -0.5)


def autocorrelation_lags(x):
    """Item 2 (variant): an autocorrelation at every lag up to n/2, x[:n-L] @ x[L:], each
    squared and summed (a spectral-flatness style loss)."""
    n = len(x)
    return sum((x[:n - L] @ x[L:]) ** 2 for L in range(n // 2))


def autocorrelation_lags_ref(x):
    n = len(x)
    return np.sum(np.correlate(x, x, "full")[n - 1:n - 1 + n // 2] ** 2)


def autocorr_inputs(rng, n):
    return (normal(rng, n),)


def growing_causal_filter(x, h):
    """Item 2 (variant): a causal filter as dot products over growing prefixes,
    y[t] = x[:t+1] @ h[n-1-t:] (the kernel's tail against the signal so far)."""
    n = len(x)
    y = vnp.stack([x[:t + 1] @ h[n - 1 - t:] for t in range(n)])
    return vnp.sum(vnp.tanh(y))


def growing_causal_filter_ref(x, h):
    return np.sum(np.tanh(np.convolve(x, h[::-1])[:len(x)]))


def growing_filter_inputs(rng, n):
    return normal(rng, n), normal(rng, n, scale=n ** -0.5)


_V = ("variant",)

PATTERNS = [
    Pattern("dilated_strided_patches", 2, dilated_strided_patches, dilated_strided_patches_ref,
            dilated_patches_inputs, {"small": {"n": 11, "p": 3, "s": 2, "d": 2},
                                     "default": {"n": 150, "p": 3, "s": 2, "d": 2}},
            (0, 1), tags=_V),
    Pattern("causal_padded_windows", 2, causal_padded_windows, causal_padded_windows_ref,
            causal_inputs, {"small": {"T": 10, "k": 3}, "default": {"T": 5000, "k": 16}},
            (0, 1), tags=_V),
    Pattern("reversed_window_taps", 2, reversed_window_taps, reversed_window_taps_ref,
            reversed_inputs, {"small": {"T": 10, "k": 3}, "default": {"T": 5000, "k": 24}},
            (0, 1), tags=_V),
    Pattern("batch_axis_windows", 2, batch_axis_windows, batch_axis_windows_ref,
            batch_windows_inputs, {"small": {"B": 3, "T": 9, "k": 3},
                                   "default": {"B": 64, "T": 300, "k": 8}},
            (0, 1), tags=_V),
    Pattern("stacked_flat_windows", 2, stacked_flat_windows, stacked_flat_windows_ref,
            stacked_flat_inputs, {"small": {"T": 11, "c": 2, "k": 3, "f": 4, "s": 2},
                                  "default": {"T": 2000, "c": 8, "k": 6, "f": 32, "s": 3}},
            (0, 1), tags=_V),
    Pattern("map_kernel_windows", 2, map_kernel_windows, map_kernel_windows_ref,
            map_kernel_inputs, {"small": {"T": 10, "k": 3}, "default": {"T": 4000, "k": 32}},
            (0, 1), tags=_V),
    Pattern("cauchy_pairs_triangular", 4, cauchy_pairs_triangular, cauchy_pairs_triangular_ref,
            cauchy_inputs, {"small": {"n": 6, "d": 2}, "default": {"n": 120, "d": 8}},
            (0,), tags=_V),
    Pattern("triangular_buffer_fill", 1, triangular_buffer_fill, triangular_buffer_fill_ref,
            cauchy_inputs, {"small": {"n": 6, "d": 2}, "default": {"n": 120, "d": 8}},
            (0,), tags=_V),
    Pattern("growing_prefix_means", 2, growing_prefix_means, growing_prefix_means_ref,
            prefix_inputs, {"small": {"n": 6, "d": 2}, "default": {"n": 300, "d": 16}},
            (0,), tags=_V),
    Pattern("suffix_weighted_energy", 2, suffix_weighted_energy, suffix_weighted_energy_ref,
            suffix_inputs, {"small": {"n": 7, "d": 2}, "default": {"n": 400, "d": 64}},
            (0, 1), tags=_V),
    Pattern("running_sum_average", 6, running_sum_average, running_sum_average_ref,
            running_inputs, {"small": {"T": 10, "d": 2, "k": 3},
                             "default": {"T": 1000, "d": 32, "k": 16}},
            (0,), target="scan", tags=_V),
    Pattern("multi_lag_diffs", 2, multi_lag_diffs, multi_lag_diffs_ref, multi_lag_inputs,
            {"small": {"n": 12, "d": 2}, "default": {"n": 1000, "d": 32}}, (0, 1), tags=_V),
    Pattern("hop_overlap_add", 2, hop_overlap_add, hop_overlap_add_ref, hop_inputs,
            {"small": {"T": 5, "q": 2, "hop": 2}, "default": {"T": 400, "q": 4, "hop": 64}},
            (0,), tags=_V),
    Pattern("local_contrast_norm", 2, local_contrast_norm, local_contrast_norm_ref,
            contrast_inputs, {"small": {"T": 12, "k": 3}, "default": {"T": 4000, "k": 9}},
            (0,), tags=_V),
    Pattern("patch_filter_bank", 2, patch_filter_bank, patch_filter_bank_ref,
            filter_bank_inputs, {"small": {"n": 6, "f": 2, "p": 3},
                                 "default": {"n": 40, "f": 8, "p": 3}},
            (0, 1), tags=_V),
    Pattern("strided_max_pool_1d", 2, strided_max_pool_1d, strided_max_pool_1d_ref,
            maxpool1d_inputs, {"small": {"T": 11, "c": 2, "k": 3, "s": 2},
                               "default": {"T": 4000, "c": 16, "k": 3, "s": 2}},
            (0,), tags=_V),
    Pattern("dilated_causal_stack", 5, dilated_causal_stack, dilated_causal_stack_ref,
            dilated_stack_inputs, {"small": {"T": 12, "c": 2, "f": 3, "k": 2},
                                   "default": {"T": 2000, "c": 8, "f": 16, "k": 3}},
            (0, 1, 2), tags=_V),
    Pattern("row_window_smoothing", 2, row_window_smoothing, row_window_smoothing_ref,
            row_smoothing_inputs, {"small": {"n": 8, "d": 3, "k": 3},
                                   "default": {"n": 2000, "d": 32, "k": 5}},
            (0, 1), tags=_V),
    Pattern("autocorrelation_lags", 2, autocorrelation_lags, autocorrelation_lags_ref,
            autocorr_inputs, {"small": {"n": 10}, "default": {"n": 1000}}, (0,), tags=_V),
    Pattern("growing_causal_filter", 2, growing_causal_filter, growing_causal_filter_ref,
            growing_filter_inputs, {"small": {"n": 8}, "default": {"n": 1000}}, (0, 1),
            tags=_V),
]

__all__ = ["PATTERNS"]
