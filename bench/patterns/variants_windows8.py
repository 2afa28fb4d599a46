"""Windows whose elementwise work broadcasts a per-window term back over the window (item 2,
session 24): z-scores of sliding windows, the window's last row or its maximum
subtracted, attention-style pooling inside each window, per-channel affine windows, windows
read backwards, windows along the middle axis of (B, T, C), dilated windows centred on their
mean, 2-D patches centred on theirs, and 1-D convolutions whose input cotangent is one copy of the output's windows (few
output channels, many taps; causal, through zero padding). Each reference is the best
hand-vectorized form found: one pass per tap over contiguous slices."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal, uniform

_V = ("variant",)


def _taps(x, k, d=1):
    """The k tap slices x[a*d : a*d + n] of the windows of x (n windows)."""
    n = x.shape[0] - (k - 1) * d
    return [x[a * d:a * d + n] for a in range(k)]


# ------------------------------------------------------------------ moments of windows


def window_zscore_energy(x, k):
    """Item 2: each window standardized by its own mean and standard deviation, and a
    Cauchy loss of the z-scores summed (a rolling outlier score)."""
    total = 0.0
    for t in range(x.shape[0] - k + 1):
        w = x[t:t + k]
        z = (w - vnp.mean(w, axis=0)) / vnp.sqrt(vnp.var(w, axis=0) + 1e-3)
        total = total + vnp.sum(vnp.log1p(z ** 2))
    return total / k


def window_zscore_energy_ref(x, k):
    taps = _taps(x, k)
    m = sum(taps) / k
    s = np.sqrt(sum((t - m) ** 2 for t in taps) / k + 1e-3)
    return sum(np.sum(np.log1p(((t - m) / s) ** 2)) for t in taps) / k


def moments_inputs(rng, T, C, k):
    return normal(rng, T, C), k


def window_max_gap(x, k):
    """Item 2: the squared gaps between each window's entries and the window's maximum
    (a soft drawdown from the running peak)."""
    total = 0.0
    for t in range(x.shape[0] - k + 1):
        w = x[t:t + k]
        total = total + vnp.sum(vnp.log1p((vnp.max(w, axis=0) - w) ** 2))
    return total


def window_max_gap_ref(x, k):
    taps = _taps(x, k)
    m = np.maximum.reduce(taps)
    return sum(np.sum(np.log1p((m - t) ** 2)) for t in taps)


def window_relative_to_last(x, k):
    """Item 2: each window taken relative to its last row (returns against the newest
    value), squashed and summed."""
    total = 0.0
    for t in range(x.shape[0] - k + 1):
        w = x[t:t + k]
        total = total + vnp.sum(vnp.tanh(w - w[-1]) ** 2)
    return total


def window_relative_to_last_ref(x, k):
    taps = _taps(x, k)
    return sum(np.sum(np.tanh(t - taps[-1]) ** 2) for t in taps)


def window_softmax_pool(x, k):
    """Item 2: attention-style pooling inside each window: weights softmax(w) over the
    window's rows (per channel), the pooled value sum(a * w), then a squared loss."""
    out = []
    for t in range(x.shape[0] - k + 1):
        w = x[t:t + k]
        a = vnp.exp(w - vnp.max(w, axis=0))
        out.append(vnp.sum(a * w, axis=0) / vnp.sum(a, axis=0))
    return vnp.sum(vnp.stack(out) ** 2)


def window_softmax_pool_ref(x, k):
    taps = _taps(x, k)
    m = np.maximum.reduce(taps)
    es = [np.exp(t - m) for t in taps]
    return np.sum((sum(e * t for e, t in zip(es, taps)) / sum(es)) ** 2)


def channel_affine_windows(x, gamma, beta):
    """Item 2: windows centred on their mean, then a per-channel scale and shift (a
    normalization layer's affine part) and a softplus."""
    k = 6
    total = 0.0
    for t in range(x.shape[0] - k + 1):
        w = x[t:t + k]
        h = (w - vnp.mean(w, axis=0)) * gamma + beta
        total = total + vnp.sum(vnp.logaddexp(0.0, h))
    return total


def channel_affine_windows_ref(x, gamma, beta):
    taps = _taps(x, 6)
    m = sum(taps) / 6
    return sum(np.sum(np.logaddexp(0.0, (t - m) * gamma + beta)) for t in taps)


def affine_inputs(rng, T, C):
    return normal(rng, T, C), uniform(rng, C, low=0.5, high=1.5), normal(rng, C, scale=0.1)


# ------------------------------------------------------------------ orders and axes


def backward_windows_decay(x, decay):
    """Item 2: windows read backwards from each position (x[t], x[t-1], ..., x[t-k+1]),
    weighted by a per-lag decay and compared with the window's newest row."""
    k = decay.shape[0]
    total = 0.0
    for t in range(k, x.shape[0]):
        w = x[t:t - k:-1]
        total = total + vnp.sum(decay[:, None] * (w - x[t]) ** 2)
    return total


def backward_windows_decay_ref(x, decay):
    k = decay.shape[0]
    n = x.shape[0] - k
    cur = x[k:k + n]
    return sum(decay[a] * np.sum((x[k - a:k - a + n] - cur) ** 2) for a in range(k))


def decay_inputs(rng, T, C, k):
    return normal(rng, T, C), uniform(rng, k, low=0.2, high=1.0)


def btc_window_centered(x, k):
    """Item 2: windows along the time axis of a (B, T, C) batch, x[:, t:t+k], each less its
    mean over time, absolute deviations summed."""
    total = 0.0
    for t in range(x.shape[1] - k + 1):
        w = x[:, t:t + k]
        total = total + vnp.sum(vnp.sqrt((w - vnp.mean(w, axis=1, keepdims=True)) ** 2 + 0.1))
    return total


def btc_window_centered_ref(x, k):
    n = x.shape[1] - k + 1
    taps = [x[:, a:a + n] for a in range(k)]
    m = sum(taps) / k
    return sum(np.sum(np.sqrt((t - m) ** 2 + 0.1)) for t in taps)


def btc_inputs(rng, B, T, C, k):
    return normal(rng, B, T, C), k


def dilated_centered_windows(x, k, d):
    """Item 2: dilated windows x[t : t + d*(k-1) + 1 : d] centred on their mean, a Cauchy
    loss of the deviations."""
    span = d * (k - 1) + 1
    total = 0.0
    for t in range(x.shape[0] - span + 1):
        w = x[t:t + span:d]
        total = total + vnp.sum(vnp.log1p((w - vnp.mean(w, axis=0)) ** 2))
    return total


def dilated_centered_windows_ref(x, k, d):
    taps = _taps(x, k, d)
    m = sum(taps) / k
    return sum(np.sum(np.log1p((t - m) ** 2)) for t in taps)


def dilated_inputs(rng, T, C, k, d):
    return normal(rng, T, C), k, d


# ------------------------------------------------------------------ convolutions


def narrow_output_conv1d(x, w):
    """Item 2: a 1-D convolution to few output channels with many taps, tensordot of each
    window with the filter bank (its input cotangent: the output's windows, copied once)."""
    k = w.shape[0]
    return vnp.sum(vnp.stack([vnp.tanh(vnp.tensordot(x[t:t + k], w, axes=2))
                              for t in range(x.shape[0] - k + 1)]) ** 2)


def narrow_output_conv1d_ref(x, w):
    k = w.shape[0]
    n = x.shape[0] - k + 1
    return np.sum(np.tanh(sum(x[a:a + n] @ w[a] for a in range(k))) ** 2)


def conv_inputs(rng, T, c, k, o):
    return normal(rng, T, c), normal(rng, k, c, o, scale=(k * c) ** -0.5)


def causal_padded_conv1d(x, w):
    """Item 2: a causal convolution written with explicit left padding: the signal is
    prefixed with k - 1 zero rows, then each output row is the window ending at it."""
    k, c = w.shape[0], x.shape[1]
    xp = vnp.concatenate([vnp.zeros((k - 1, c)), x], axis=0)
    y = vnp.zeros((x.shape[0], w.shape[2]))
    for t in range(x.shape[0]):
        y[t] = vnp.einsum("kc,kco->o", xp[t:t + k], w)
    return vnp.sum(vnp.logaddexp(0.0, y))


def causal_padded_conv1d_ref(x, w):
    k, T = w.shape[0], x.shape[0]
    xp = np.concatenate([np.zeros((k - 1, x.shape[1])), x])
    return np.sum(np.logaddexp(0.0, sum(xp[a:a + T] @ w[a] for a in range(k))))


def conv_relative_windows(x, w):
    """Item 2: each window taken relative to its mean before a filter bank (a
    translation-invariant convolution), then a squared output."""
    k = w.shape[0]
    out = []
    for t in range(x.shape[0] - k + 1):
        win = x[t:t + k]
        out.append(vnp.tensordot(win - vnp.mean(win, axis=0), w, axes=2))
    return vnp.sum(vnp.stack(out) ** 2)


def conv_relative_windows_ref(x, w):
    k = w.shape[0]
    taps = _taps(x, k)
    m = sum(taps) / k
    return np.sum((sum(t @ w[a] for a, t in enumerate(taps)) - m @ w.sum(axis=0)) ** 2)


def patch_centered_energy(img, p):
    """Item 2: 2-D patches img[i:i+p, j:j+p] centred on their mean, a Cauchy loss of the
    deviations summed over every patch."""
    total = 0.0
    for i in range(img.shape[0] - p + 1):
        for j in range(img.shape[1] - p + 1):
            w = img[i:i + p, j:j + p]
            total = total + vnp.sum(vnp.log1p((w - vnp.mean(w)) ** 2))
    return total


def patch_centered_energy_ref(img, p):
    H, W = img.shape[0] - p + 1, img.shape[1] - p + 1
    taps = [img[a:a + H, b:b + W] for a in range(p) for b in range(p)]
    m = sum(taps) / (p * p)
    return sum(np.sum(np.log1p((t - m) ** 2)) for t in taps)


def patch_inputs(rng, n, p):
    return normal(rng, n, n), p


PATTERNS = [
    Pattern("window_zscore_energy", 2, window_zscore_energy, window_zscore_energy_ref,
            moments_inputs, {"small": {"T": 12, "C": 2, "k": 3},
                             "default": {"T": 2000, "C": 16, "k": 6}}, (0,), tags=_V),
    Pattern("window_max_gap", 2, window_max_gap, window_max_gap_ref, moments_inputs,
            {"small": {"T": 11, "C": 3, "k": 4}, "default": {"T": 2000, "C": 16, "k": 5}},
            (0,), tags=_V),
    Pattern("window_relative_to_last", 2, window_relative_to_last,
            window_relative_to_last_ref, moments_inputs,
            {"small": {"T": 10, "C": 2, "k": 3}, "default": {"T": 2000, "C": 16, "k": 6}},
            (0,), tags=_V),
    Pattern("window_softmax_pool", 2, window_softmax_pool, window_softmax_pool_ref,
            moments_inputs, {"small": {"T": 10, "C": 2, "k": 3},
                             "default": {"T": 2000, "C": 16, "k": 5}}, (0,), tags=_V),
    Pattern("channel_affine_windows", 2, channel_affine_windows, channel_affine_windows_ref,
            affine_inputs, {"small": {"T": 12, "C": 3}, "default": {"T": 2000, "C": 16}},
            (0, 1, 2), tags=_V),
    Pattern("backward_windows_decay", 2, backward_windows_decay, backward_windows_decay_ref,
            decay_inputs, {"small": {"T": 10, "C": 2, "k": 3},
                           "default": {"T": 2000, "C": 16, "k": 6}}, (0, 1), tags=_V),
    Pattern("btc_window_centered", 2, btc_window_centered, btc_window_centered_ref,
            btc_inputs, {"small": {"B": 2, "T": 9, "C": 2, "k": 3},
                         "default": {"B": 8, "T": 300, "C": 16, "k": 5}}, (0,), tags=_V),
    Pattern("dilated_centered_windows", 2, dilated_centered_windows,
            dilated_centered_windows_ref, dilated_inputs,
            {"small": {"T": 14, "C": 2, "k": 3, "d": 2},
             "default": {"T": 2000, "C": 16, "k": 4, "d": 3}}, (0,), tags=_V),
    Pattern("narrow_output_conv1d", 2, narrow_output_conv1d, narrow_output_conv1d_ref,
            conv_inputs, {"small": {"T": 10, "c": 3, "k": 4, "o": 2},
                          "default": {"T": 3000, "c": 16, "k": 7, "o": 4}}, (0, 1), tags=_V),
    Pattern("causal_padded_conv1d", 2, causal_padded_conv1d, causal_padded_conv1d_ref,
            conv_inputs, {"small": {"T": 8, "c": 2, "k": 3, "o": 2},
                          "default": {"T": 2000, "c": 16, "k": 5, "o": 8}}, (0, 1), tags=_V),
    Pattern("conv_relative_windows", 2, conv_relative_windows, conv_relative_windows_ref,
            conv_inputs, {"small": {"T": 9, "c": 2, "k": 3, "o": 2},
                          "default": {"T": 2000, "c": 16, "k": 5, "o": 8}}, (0, 1), tags=_V),
    Pattern("patch_centered_energy", 2, patch_centered_energy, patch_centered_energy_ref,
            patch_inputs, {"small": {"n": 7, "p": 3}, "default": {"n": 64, "p": 3}}, (0,),
            tags=_V),
]
