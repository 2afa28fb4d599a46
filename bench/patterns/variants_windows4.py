"""Windows, strides and convolutions in more styles users write (item 2, some with items 1, 4
and 5): `sliding_window_view` called directly; windows visited by `while` loops; strided 2-D
max and average pooling; Sobel and Laplacian stencils on images; causal convolutions padded by
concatenation; centred moving averages whose windows are clipped at the ends; 1-D convolutions
as `np.dot(x[i:i+k], w)` inside `map` and comprehensions; windows over the last axis of
(B, C, T) batches; local attention with a padding mask; framing (unfold) and overlap-add (fold)
at hop sizes that do not divide the frame; strided and dilated windows at odd sizes, walked
with negative steps; windows gathered by Python index lists."""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import vecgrad.numpy as vnp

from .core import Pattern, normal

_V = ("variant",)

# ------------------------------------------------------------------ 1-D windows


def swv_conv1d(x, W):
    """Item 2: `sliding_window_view` called directly on the traced array, (T-k+1, C, k)
    windows contracted with the filters (k, C, F) by einsum."""
    k = W.shape[0]
    win = vnp.lib.stride_tricks.sliding_window_view(x, k, axis=0)
    return vnp.sum(vnp.tanh(vnp.einsum("tck,kcf->tf", win, W)))


def swv_conv1d_ref(x, W):
    win = sliding_window_view(x, W.shape[0], axis=0)
    return np.sum(np.tanh(np.einsum("tck,kcf->tf", win, W, optimize=True)))


def swv_inputs(rng, T, c, k, f):
    return normal(rng, T, c), normal(rng, k, c, f, scale=(k * c) ** -0.5)


def while_hop_windows(x, w, hop):
    """Item 2: windows visited by a `while` loop at a hop, each window's weighted sum
    squared into a running total."""
    k = w.shape[0]
    total = 0.0
    t = 0
    while t + k <= x.shape[0]:
        total = total + vnp.sum(x[t:t + k] * w) ** 2
        t += hop
    return total


def while_hop_windows_ref(x, w, hop):
    k = w.shape[0]
    n = (x.shape[0] - k) // hop + 1
    y = sum(x[a:a + hop * (n - 1) + 1:hop] @ w[a] for a in range(k))
    return np.sum(y ** 2)


def while_inputs(rng, T, c, k, hop):
    return normal(rng, T, c), normal(rng, k, c, scale=(k * c) ** -0.5), hop


def causal_concat_pad(x, W):
    """Item 2: a causal convolution, the input left-padded with k-1 zero rows by
    `np.concatenate`, every step's output one einsum of its window with the filters."""
    k, C, _ = W.shape
    xp = vnp.concatenate([vnp.zeros((k - 1, C)), x], axis=0)
    ys = [vnp.einsum("kc,kcf->f", xp[t:t + k], W) for t in range(x.shape[0])]
    return vnp.sum(vnp.stack(ys) ** 2)


def causal_concat_pad_ref(x, W):
    k, C, _ = W.shape
    xp = np.concatenate([np.zeros((k - 1, C)), x], axis=0)
    y = sum(xp[a:a + x.shape[0]] @ W[a] for a in range(k))
    return np.sum(y ** 2)


def causal_inputs(rng, T, c, k, f):
    return normal(rng, T, c), normal(rng, k, c, f, scale=(k * c) ** -0.5)


def centred_clipped_mean(x, r):
    """Items 2, 4: a centred moving average whose window x[max(0, t-r) : min(T, t+r+1)] is
    clipped at both ends (shorter windows there), compared with the signal."""
    T = x.shape[0]
    sm = vnp.stack([vnp.mean(x[max(0, t - r):min(T, t + r + 1)], axis=0) for t in range(T)])
    return vnp.sum((sm - x) ** 2)


def centred_clipped_mean_ref(x, r):
    T = x.shape[0]
    c = np.concatenate([np.zeros((1,) + x.shape[1:]), np.cumsum(x, axis=0)])
    t = np.arange(T)
    lo, hi = np.maximum(0, t - r), np.minimum(T, t + r + 1)
    sm = (c[hi] - c[lo]) / (hi - lo)[:, None]
    return np.sum((sm - x) ** 2)


def clipped_inputs(rng, T, c, r):
    return normal(rng, T, c), r


def map_dot_conv1d(x, w):
    """Item 2: a 1-D convolution as `np.dot(x[i:i+k], w)` inside `map` over the positions."""
    k = w.shape[0]
    y = vnp.stack(list(map(lambda i: vnp.dot(x[i:i + k], w), range(x.shape[0] - k + 1))))  # noqa: C417 (the style)
    return vnp.sum(vnp.tanh(y))


def map_dot_conv1d_ref(x, w):
    return np.sum(np.tanh(np.correlate(x, w, mode="valid")))


def map_dot_inputs(rng, T, k):
    return normal(rng, T), normal(rng, k, scale=k ** -0.5)


def comprehension_flat_dot(x, w):
    """Item 2: multi-channel windows flattened, `np.dot(x[i:i+k].ravel(), w.ravel())` in a
    list comprehension at stride 2, the outputs' log-sum-exp."""
    k = w.shape[0]
    wf = w.ravel()
    y = vnp.array([vnp.dot(x[i:i + k].ravel(), wf) for i in range(0, x.shape[0] - k + 1, 2)])
    m = vnp.max(y)
    return m + vnp.log(vnp.sum(vnp.exp(y - m)))


def comprehension_flat_dot_ref(x, w):
    k = w.shape[0]
    y = np.einsum("tck,kc->t", sliding_window_view(x, k, axis=0)[::2], w)
    m = y.max()
    return m + np.log(np.sum(np.exp(y - m)))


def flat_dot_inputs(rng, T, c, k):
    return normal(rng, T, c), normal(rng, k, c, scale=(k * c) ** -0.5)


def last_axis_windows_bct(X, W):
    """Item 2: windows over the last (time) axis of a (B, C, T) batch, each step's (B, F)
    outputs one einsum of X[:, :, t:t+k] with the (F, C, k) filters, stacked on the last
    axis."""
    k = W.shape[2]
    ys = [vnp.einsum("bck,fck->bf", X[:, :, t:t + k], W) for t in range(X.shape[2] - k + 1)]
    return vnp.sum(vnp.tanh(vnp.stack(ys, axis=-1)))


def last_axis_windows_bct_ref(X, W):
    win = sliding_window_view(X, W.shape[2], axis=2)         # (B, C, T', k)
    return np.sum(np.tanh(np.einsum("bctk,fck->bft", win, W, optimize=True)))


def bct_inputs(rng, B, c, T, f, k):
    return normal(rng, B, c, T), normal(rng, f, c, k, scale=(k * c) ** -0.5)


def masked_local_attention(Q, K, V, mask, r):
    """Items 2, 4: local attention over keys t-r..t+r of zero-padded K and V (padded by
    concatenation), the padded slots masked out by a constant additive mask."""
    T, d = Q.shape
    z = vnp.zeros((r, d))
    Kp, Vp = vnp.concatenate([z, K, z]), vnp.concatenate([z, V, z])
    out = []
    for t in range(T):
        s = Kp[t:t + 2 * r + 1] @ Q[t] / np.sqrt(d) + mask[t]
        a = vnp.exp(s - vnp.max(s))
        out.append(a @ Vp[t:t + 2 * r + 1] / vnp.sum(a))
    return vnp.sum(vnp.stack(out) ** 2)


def masked_local_attention_ref(Q, K, V, mask, r):
    d = Q.shape[1]
    z = np.zeros((r, d))
    Kw = sliding_window_view(np.concatenate([z, K, z]), 2 * r + 1, axis=0)   # (T, d, w)
    Vw = sliding_window_view(np.concatenate([z, V, z]), 2 * r + 1, axis=0)
    s = np.einsum("td,tdw->tw", Q, Kw) / np.sqrt(d) + mask
    a = np.exp(s - s.max(1, keepdims=True))
    return np.sum((np.einsum("tw,tdw->td", a, Vw) / a.sum(1, keepdims=True)) ** 2)


def masked_attention_inputs(rng, T, d, r):
    t = np.arange(T)[:, None] + np.arange(-r, r + 1)[None, :]
    mask = np.where((t >= 0) & (t < T), 0.0, -1e9)
    return (normal(rng, T, d), normal(rng, T, d), normal(rng, T, d), mask, r)


def unfold_frames_hop(x, win, basis, hop):
    """Item 2: framing (unfold) at a hop that does not divide the frame: each frame
    windowed and projected on a basis (a real "spectrogram"), log power summed."""
    L = win.shape[0]
    n = (x.shape[0] - L) // hop + 1
    total = 0.0
    for t in range(n):
        spec = (x[t * hop:t * hop + L] * win) @ basis
        total = total + vnp.sum(vnp.log1p(spec ** 2))
    return total


def unfold_frames_hop_ref(x, win, basis, hop):
    frames = sliding_window_view(x, win.shape[0])[::hop]
    return np.sum(np.log1p(((frames * win) @ basis) ** 2))


def unfold_inputs(rng, T, L, m, hop):
    return (normal(rng, T), np.hanning(L), normal(rng, L, m, scale=L ** -0.5), hop)


def fold_channels_hop(frames, win, hop):
    """Items 1, 2: overlap-add (fold) of multi-channel frames (n, L, C) at a hop of 3 that
    does not divide L: out[t*hop : t*hop+L] += frames[t] * win[:, None]."""
    n, L, C = frames.shape
    out = vnp.zeros(((n - 1) * hop + L, C))
    for t in range(n):
        out[t * hop:t * hop + L] += frames[t] * win[:, None]
    return vnp.sum(vnp.tanh(out) ** 2)


def fold_channels_hop_ref(frames, win, hop):
    n, L, C = frames.shape
    out = np.zeros(((n - 1) * hop + L, C))
    fw = frames * win[:, None]
    for a in range(L):
        out[a:a + hop * (n - 1) + 1:hop] += fw[:, a]
    return np.sum(np.tanh(out) ** 2)


def fold_inputs(rng, n, L, c, hop):
    return normal(rng, n, L, c), np.hanning(L), hop


def negative_step_dilated(x, w, s, d):
    """Item 2: windows walked backwards, x[i : i - k*d : -d] (taps read in reverse at
    dilation d) for i from the end down at step s, stacked and squashed."""
    k = w.shape[0]
    ys = [vnp.sum(x[i:i - k * d:-d] * w) for i in range(x.shape[0] - 1, k * d - 1, -s)]
    return vnp.sum(vnp.tanh(vnp.stack(ys)))


def negative_step_dilated_ref(x, w, s, d):
    k = w.shape[0]
    T = x.shape[0]
    i = np.arange(T - 1, k * d - 1, -s)
    y = sum(x[i - a * d] @ w[a] for a in range(k))
    return np.sum(np.tanh(y))


def negative_step_inputs(rng, T, c, k, s, d):
    return normal(rng, T, c), normal(rng, k, c, scale=(k * c) ** -0.5), s, d


def index_list_dilated(x, w, d):
    """Items 2, 3: dilated windows gathered by Python index lists, x[[t, t+d, ..]] in a
    comprehension, each against the taps."""
    k = w.shape[0]
    n = x.shape[0] - (k - 1) * d
    y = vnp.stack([x[[t + j * d for j in range(k)]].T @ w for t in range(n)])
    return vnp.sum(y ** 2)


def index_list_dilated_ref(x, w, d):
    k = w.shape[0]
    n = x.shape[0] - (k - 1) * d
    y = sum(x[a * d:a * d + n] * w[a] for a in range(k))
    return np.sum(y ** 2)


def index_list_inputs(rng, T, c, k, d):
    return normal(rng, T, c), normal(rng, k, scale=k ** -0.5), d


# ------------------------------------------------------------------ 2-D windows


def max_pool2d_strided(img, s):
    """Item 2: overlapping 3x3 max pooling at stride 2 over a (C, H, W) image, nested
    comprehensions of `np.max` over each patch, then a smooth loss."""
    H, W = img.shape[1:]
    p = 3
    rows = [vnp.stack([vnp.max(img[:, i:i + p, j:j + p], axis=(1, 2))
                       for j in range(0, W - p + 1, s)], axis=-1)
            for i in range(0, H - p + 1, s)]
    return vnp.sum(vnp.tanh(vnp.stack(rows, axis=1)))


def max_pool2d_strided_ref(img, s):
    win = sliding_window_view(img, (3, 3), axis=(1, 2))[:, ::s, ::s]
    return np.sum(np.tanh(win.max(axis=(3, 4))))


def pool_inputs(rng, c, n, s):
    return normal(rng, c, n, n), s


def avg_pool2d_loops(img):
    """Item 2: 2x2 average pooling at stride 2 written into a buffer in nested loops,
    out[i, j] = np.mean(img[2i:2i+2, 2j:2j+2]), then a squared loss."""
    H, W = img.shape[0] // 2, img.shape[1] // 2
    out = vnp.zeros((H, W))
    for i in range(H):
        for j in range(W):
            out[i, j] = vnp.mean(img[2 * i:2 * i + 2, 2 * j:2 * j + 2])
    return vnp.sum((out - 0.5) ** 2)


def avg_pool2d_loops_ref(img):
    H, W = img.shape[0] // 2, img.shape[1] // 2
    out = img[:2 * H, :2 * W].reshape(H, 2, W, 2).mean(axis=(1, 3))
    return np.sum((out - 0.5) ** 2)


def avg_pool_inputs(rng, n):
    return (normal(rng, n, n),)


_SOBEL = np.array([[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]])


def sobel_magnitude(img):
    """Item 2: Sobel edge magnitude, per output row a loop over the 3x3 taps of two
    constant kernels, sqrt(gx**2 + gy**2 + eps) summed."""
    H, W = img.shape[0] - 2, img.shape[1] - 2
    gx = vnp.zeros((H, W))
    gy = vnp.zeros((H, W))
    for a in range(3):
        for b in range(3):
            if _SOBEL[a, b] != 0.0:
                gx = gx + _SOBEL[a, b] * img[a:a + H, b:b + W]
            if _SOBEL[b, a] != 0.0:
                gy = gy + _SOBEL[b, a] * img[a:a + H, b:b + W]
    return vnp.sum(vnp.sqrt(gx ** 2 + gy ** 2 + 1e-3))


def sobel_magnitude_ref(img):
    H, W = img.shape[0] - 2, img.shape[1] - 2
    gx = (img[:H, :W] + 2 * img[1:H + 1, :W] + img[2:, :W]
          - img[:H, 2:] - 2 * img[1:H + 1, 2:] - img[2:, 2:])
    gy = (img[:H, :W] + 2 * img[:H, 1:W + 1] + img[:H, 2:]
          - img[2:, :W] - 2 * img[2:, 1:W + 1] - img[2:, 2:])
    return np.sum(np.sqrt(gx ** 2 + gy ** 2 + 1e-3))


def sobel_pixels(img):
    """Item 2: Sobel edge magnitude written per output pixel, `np.sum(patch * kernel)` for
    both kernels, into a buffer in nested loops."""
    H, W = img.shape[0] - 2, img.shape[1] - 2
    out = vnp.zeros((H, W))
    for i in range(H):
        for j in range(W):
            patch = img[i:i + 3, j:j + 3]
            gx, gy = vnp.sum(patch * _SOBEL), vnp.sum(patch * _SOBEL.T)
            out[i, j] = vnp.sqrt(gx * gx + gy * gy + 1e-3)
    return vnp.sum(out)


def sobel_inputs(rng, n):
    return (normal(rng, n, n),)


def laplacian_rows(u):
    """Items 2, 4: a 5-point Laplacian built row by row (neighbour rows and shifted
    columns), its squared norm: the residual of a Poisson smoother."""
    n = u.shape[0]
    rows = [u[i - 1, 1:-1] + u[i + 1, 1:-1] + u[i, :-2] + u[i, 2:] - 4.0 * u[i, 1:-1]
            for i in range(1, n - 1)]
    return vnp.sum(vnp.stack(rows) ** 2)


def laplacian_rows_ref(u):
    lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
    return np.sum(lap ** 2)


def odd_dilated_conv2d(img, Wt, s, d):
    """Item 2: a multi-channel 2-D convolution at stride s and dilation d over an odd-sized
    image, each output pixel one tensordot of the filters with its dilated patch."""
    F, p = Wt.shape[0], Wt.shape[2]
    span = (p - 1) * d + 1
    H = (img.shape[1] - span) // s + 1
    out = vnp.zeros((F, H, H))
    for i in range(H):
        for j in range(H):
            patch = img[:, i * s:i * s + span:d, j * s:j * s + span:d]
            out[:, i, j] = vnp.tensordot(Wt, patch, axes=3)
    return vnp.sum(vnp.tanh(out))


def odd_dilated_conv2d_ref(img, Wt, s, d):
    p = Wt.shape[2]
    span = (p - 1) * d + 1
    win = sliding_window_view(img, (span, span), axis=(1, 2))[:, ::s, ::s, ::d, ::d]
    return np.sum(np.tanh(np.einsum("chwab,fcab->fhw", win, Wt, optimize=True)))


def odd_conv_inputs(rng, c, n, f, p, s, d):
    return normal(rng, c, n, n), normal(rng, f, c, p, p, scale=(c * p * p) ** -0.5), s, d


PATTERNS = [
    Pattern("swv_conv1d", 2, swv_conv1d, swv_conv1d_ref, swv_inputs,
            {"small": {"T": 9, "c": 2, "k": 3, "f": 2},
             "default": {"T": 3000, "c": 8, "k": 5, "f": 8}}, (0, 1), tags=_V),
    Pattern("while_hop_windows", 2, while_hop_windows, while_hop_windows_ref, while_inputs,
            {"small": {"T": 11, "c": 2, "k": 3, "hop": 2},
             "default": {"T": 4001, "c": 8, "k": 6, "hop": 2}}, (0, 1), tags=_V),
    Pattern("causal_concat_pad", 2, causal_concat_pad, causal_concat_pad_ref, causal_inputs,
            {"small": {"T": 7, "c": 2, "k": 3, "f": 2},
             "default": {"T": 2000, "c": 8, "k": 4, "f": 8}}, (0, 1), tags=_V),
    Pattern("centred_clipped_mean", 2, centred_clipped_mean, centred_clipped_mean_ref,
            clipped_inputs, {"small": {"T": 9, "c": 2, "r": 2},
                             "default": {"T": 2000, "c": 16, "r": 3}}, (0,), tags=_V),
    Pattern("map_dot_conv1d", 2, map_dot_conv1d, map_dot_conv1d_ref, map_dot_inputs,
            {"small": {"T": 9, "k": 3}, "default": {"T": 20000, "k": 9}}, (0, 1), tags=_V),
    Pattern("comprehension_flat_dot", 2, comprehension_flat_dot, comprehension_flat_dot_ref,
            flat_dot_inputs, {"small": {"T": 11, "c": 2, "k": 3},
                              "default": {"T": 4001, "c": 6, "k": 5}}, (0, 1), tags=_V),
    Pattern("last_axis_windows_bct", 2, last_axis_windows_bct, last_axis_windows_bct_ref,
            bct_inputs, {"small": {"B": 2, "c": 2, "T": 8, "f": 3, "k": 3},
                         "default": {"B": 8, "c": 8, "T": 300, "f": 8, "k": 5}}, (0, 1),
            tags=_V),
    Pattern("masked_local_attention", 2, masked_local_attention, masked_local_attention_ref,
            masked_attention_inputs, {"small": {"T": 7, "d": 3, "r": 2},
                                      "default": {"T": 800, "d": 16, "r": 3}}, (0, 1, 2),
            tags=_V),
    Pattern("unfold_frames_hop", 2, unfold_frames_hop, unfold_frames_hop_ref, unfold_inputs,
            {"small": {"T": 30, "L": 8, "m": 3, "hop": 3},
             "default": {"T": 16000, "L": 64, "m": 16, "hop": 24}}, (0, 2), tags=_V),
    Pattern("fold_channels_hop", 1, fold_channels_hop, fold_channels_hop_ref, fold_inputs,
            {"small": {"n": 5, "L": 8, "c": 2, "hop": 3},
             "default": {"n": 600, "L": 8, "c": 16, "hop": 3}}, (0,), tags=_V),
    Pattern("negative_step_dilated", 2, negative_step_dilated, negative_step_dilated_ref,
            negative_step_inputs, {"small": {"T": 19, "c": 2, "k": 3, "s": 3, "d": 2},
                                   "default": {"T": 5001, "c": 8, "k": 3, "s": 3, "d": 2}},
            (0, 1), tags=_V),
    Pattern("index_list_dilated", 3, index_list_dilated, index_list_dilated_ref,
            index_list_inputs, {"small": {"T": 12, "c": 2, "k": 3, "d": 2},
                                "default": {"T": 2000, "c": 16, "k": 3, "d": 2}}, (0, 1),
            tags=_V),
    Pattern("max_pool2d_strided", 2, max_pool2d_strided, max_pool2d_strided_ref, pool_inputs,
            {"small": {"c": 2, "n": 9, "s": 2}, "default": {"c": 8, "n": 65, "s": 2}}, (0,),
            tags=_V),
    Pattern("avg_pool2d_loops", 2, avg_pool2d_loops, avg_pool2d_loops_ref, avg_pool_inputs,
            {"small": {"n": 8}, "default": {"n": 128}}, (0,), tags=_V),
    Pattern("sobel_magnitude", 2, sobel_magnitude, sobel_magnitude_ref, sobel_inputs,
            {"small": {"n": 8}, "default": {"n": 200}}, (0,), tags=_V),
    Pattern("sobel_pixels", 2, sobel_pixels, sobel_magnitude_ref, sobel_inputs,
            {"small": {"n": 7}, "default": {"n": 64}}, (0,), tags=_V),
    Pattern("laplacian_rows", 2, laplacian_rows, laplacian_rows_ref, sobel_inputs,
            {"small": {"n": 7}, "default": {"n": 300}}, (0,), tags=_V),
    Pattern("odd_dilated_conv2d", 2, odd_dilated_conv2d, odd_dilated_conv2d_ref,
            odd_conv_inputs, {"small": {"c": 2, "n": 11, "f": 2, "p": 3, "s": 2, "d": 2},
                              "default": {"c": 4, "n": 37, "f": 8, "p": 3, "s": 2, "d": 2}},
            (0, 1), tags=_V),
]
