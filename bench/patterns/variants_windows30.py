"""Window variants of session 30 (item 2): convolutions at a stride with a filter bank (rows,
the middle axis of a batch, channels first, 2-D and 3-D patches, padded by np.pad or by
concatenating zeros, dilated, two layers, a while loop, a kernel function passed as an
argument), and local attention with a padding mask or several heads. Each reference is the
hand-vectorized form a user would write: one matrix product per tap of the strided slices
the tap reads (np.einsum over sliding_window_view taken at the stride measured 2-5x slower:
it runs NumPy's einsum loop, not BLAS)."""
from __future__ import annotations

import numpy as np

from .core import Pattern, normal

_V = ("variant", "natural")


# ------------------------------------------------------------------ 1-D, at a stride


def strided_batch_bank(X, W):
    """Item 2: a stride-2 convolution along the time axis of a (B, T, C) batch, each window
    contracted with a (k, C, F) filter bank by an einsum, the outputs stacked on axis 1."""
    k = W.shape[0]
    n = (X.shape[1] - k) // 2 + 1
    ys = [np.einsum("bkc,kcf->bf", X[:, 2 * t:2 * t + k], W) for t in range(n)]
    return np.sum(np.tanh(np.stack(ys, axis=1)))


def _taps_1d(X, W, s, d=1):
    """sum over taps a of X[:, d*a :: s] @ W[a] (n positions): one product per tap."""
    k = W.shape[0]
    n = (X.shape[1] - (k - 1) * d - 1) // s + 1
    return sum(X[:, d * a:d * a + s * (n - 1) + 1:s] @ W[a] for a in range(k))


def strided_batch_bank_ref(X, W):
    return np.sum(np.tanh(_taps_1d(X, W, 2)))


def batch_bank_inputs(rng, B, T, C, F, k):
    return normal(rng, B, T, C), normal(rng, k, C, F, scale=(k * C) ** -0.5)


def np_pad_strided_bank(x, W):
    """Item 2: a downsampling convolution ('same' padding by np.pad, stride 2) of (T, C)
    rows, the windows written into a preallocated output row by row."""
    k = W.shape[0]
    xp = np.pad(x, ((k // 2, k // 2), (0, 0)))
    n = (xp.shape[0] - k) // 2 + 1
    out = np.zeros((n, W.shape[2]))
    for t in range(n):
        out[t] = np.tensordot(xp[2 * t:2 * t + k], W, axes=2)
    return np.sum(np.log1p(out ** 2))


def np_pad_strided_bank_ref(x, W):
    k = W.shape[0]
    xp = np.pad(x, ((k // 2, k // 2), (0, 0)))
    return np.sum(np.log1p(_taps_1d(xp[None], W, 2)[0] ** 2))


def rows_bank_inputs(rng, T, C, F, k):
    return normal(rng, T, C), normal(rng, k, C, F, scale=(k * C) ** -0.5)


def concat_pad_strided_bank(X, W):
    """Item 2: the batch padded in time by concatenating zeros on both sides, then windows
    at stride 2 through a filter bank, a ReLU-like softplus of each output."""
    k = W.shape[0]
    z = np.zeros((X.shape[0], k - 1, X.shape[2]))
    Xp = np.concatenate([z, X, z], axis=1)
    n = (Xp.shape[1] - k) // 2 + 1
    total = 0.0
    for t in range(n):
        y = np.tensordot(Xp[:, 2 * t:2 * t + k], W, axes=([1, 2], [0, 1]))
        total = total + np.sum(np.logaddexp(0.0, y))
    return total


def concat_pad_strided_bank_ref(X, W):
    k = W.shape[0]
    Xp = np.pad(X, ((0, 0), (k - 1, k - 1), (0, 0)))
    return np.sum(np.logaddexp(0.0, _taps_1d(Xp, W, 2)))


def dilated_strided_batch(X, W):
    """Item 2: taps two rows apart (dilation 2), windows three rows apart (stride 3), along
    the middle axis of a batch, through a filter bank."""
    k = W.shape[0]
    span = 2 * (k - 1) + 1
    n = (X.shape[1] - span) // 3 + 1
    ys = [np.einsum("bkc,kcf->bf", X[:, 3 * t:3 * t + span:2], W) for t in range(n)]
    return np.sum(np.sin(np.stack(ys, axis=1)))


def dilated_strided_batch_ref(X, W):
    return np.sum(np.sin(_taps_1d(X, W, 3, 2)))


def channels_first_strided(x, W):
    """Item 2: channels-first rows (C, T), windows along axis 1 at stride 2 against an
    (F, C, k) filter bank, the outputs stacked as columns."""
    k = W.shape[2]
    n = (x.shape[1] - k) // 2 + 1
    ys = [np.einsum("ck,fck->f", x[:, 2 * t:2 * t + k], W) for t in range(n)]
    return np.sum(np.tanh(np.stack(ys, axis=1)) ** 2)


def channels_first_strided_ref(x, W):
    k = W.shape[2]
    n = (x.shape[1] - k) // 2 + 1
    y = sum(W[:, :, a] @ x[:, a:a + 2 * (n - 1) + 1:2] for a in range(k))
    return np.sum(np.tanh(y) ** 2)


def channels_first_inputs(rng, T, C, F, k):
    return normal(rng, C, T), normal(rng, F, C, k, scale=(k * C) ** -0.5)


def kernel_strided_bank(X, W, layer):
    """Item 2: each stride-2 window handed to a kernel function passed as an argument (a
    dense layer with a tanh), the results summed with Python's sum over a generator."""
    k = W.shape[0]
    return sum(np.sum(layer(X[:, 2 * t:2 * t + k], W))
               for t in range((X.shape[1] - k) // 2 + 1))


def _dense_tanh(w, W):
    return np.tanh(np.tensordot(w, W, axes=([1, 2], [0, 1])))


def kernel_strided_bank_ref(X, W, layer):
    return np.sum(np.tanh(_taps_1d(X, W, 2)))


def kernel_bank_inputs(rng, B, T, C, F, k):
    return batch_bank_inputs(rng, B, T, C, F, k) + (_dense_tanh,)


def two_strided_layers(X, W1, W2):
    """Item 2: two stride-2 convolutions in a row (a downsampling stack), each a loop over
    windows of the previous layer's output."""
    def layer(H, W):
        k = W.shape[0]
        n = (H.shape[1] - k) // 2 + 1
        return np.tanh(np.stack([np.einsum("bkc,kcf->bf", H[:, 2 * t:2 * t + k], W)
                                 for t in range(n)], axis=1))
    return np.sum(layer(layer(X, W1), W2) ** 2)


def two_strided_layers_ref(X, W1, W2):
    return np.sum(np.tanh(_taps_1d(np.tanh(_taps_1d(X, W1, 2)), W2, 2)) ** 2)


def two_layer_inputs(rng, B, T, C, k):
    return (normal(rng, B, T, C), normal(rng, k, C, C, scale=(k * C) ** -0.5),
            normal(rng, k, C, C, scale=(k * C) ** -0.5))


def while_hop_bank(X, W):
    """Item 2: a while loop hopping two rows at a time over a batch, each window flattened
    and multiplied by a dense matrix (a strided patch embedding)."""
    B, _, C = X.shape
    k = W.shape[0] // C
    t, total = 0, 0.0
    while t + k <= X.shape[1]:
        total = total + np.sum(np.tanh(X[:, t:t + k].reshape(B, k * C) @ W))
        t += 2
    return total


def while_hop_bank_ref(X, W):
    C = X.shape[2]
    return np.sum(np.tanh(_taps_1d(X, W.reshape(-1, C, W.shape[1]), 2)))


def hop_inputs(rng, B, T, C, F, k):
    return normal(rng, B, T, C), normal(rng, k * C, F, scale=(k * C) ** -0.5)


PATTERNS = [
    Pattern("strided_batch_bank", 2, strided_batch_bank, strided_batch_bank_ref,
            batch_bank_inputs, {"small": {"B": 2, "T": 13, "C": 3, "F": 2, "k": 5},
                                "default": {"B": 8, "T": 601, "C": 8, "F": 8, "k": 5}},
            (0, 1), tags=_V),
    Pattern("np_pad_strided_bank", 2, np_pad_strided_bank, np_pad_strided_bank_ref,
            rows_bank_inputs, {"small": {"T": 12, "C": 3, "F": 2, "k": 5},
                               "default": {"T": 4000, "C": 16, "F": 16, "k": 5}},
            (0, 1), tags=_V),
    Pattern("concat_pad_strided_bank", 2, concat_pad_strided_bank, concat_pad_strided_bank_ref,
            batch_bank_inputs, {"small": {"B": 2, "T": 11, "C": 3, "F": 2, "k": 4},
                                "default": {"B": 8, "T": 600, "C": 8, "F": 8, "k": 4}},
            (0, 1), tags=_V),
    Pattern("dilated_strided_batch", 2, dilated_strided_batch, dilated_strided_batch_ref,
            batch_bank_inputs, {"small": {"B": 2, "T": 16, "C": 3, "F": 2, "k": 3},
                                "default": {"B": 8, "T": 901, "C": 8, "F": 8, "k": 5}},
            (0, 1), tags=_V),
    Pattern("channels_first_strided", 2, channels_first_strided, channels_first_strided_ref,
            channels_first_inputs, {"small": {"T": 13, "C": 3, "F": 2, "k": 5},
                                    "default": {"T": 3001, "C": 16, "F": 16, "k": 5}},
            (0, 1), tags=_V),
    Pattern("kernel_strided_bank", 2, kernel_strided_bank, kernel_strided_bank_ref,
            kernel_bank_inputs, {"small": {"B": 2, "T": 13, "C": 3, "F": 2, "k": 5},
                                 "default": {"B": 8, "T": 601, "C": 8, "F": 8, "k": 5}},
            (0, 1), tags=_V),
    Pattern("two_strided_layers", 2, two_strided_layers, two_strided_layers_ref,
            two_layer_inputs, {"small": {"B": 2, "T": 21, "C": 3, "k": 5},
                               "default": {"B": 8, "T": 1201, "C": 8, "k": 5}},
            (0, 1, 2), tags=_V),
    Pattern("while_hop_bank", 2, while_hop_bank, while_hop_bank_ref, hop_inputs,
            {"small": {"B": 2, "T": 13, "C": 3, "F": 2, "k": 5},
             "default": {"B": 8, "T": 601, "C": 8, "F": 8, "k": 5}}, (0, 1), tags=_V),
]


# ------------------------------------------------------------------ 2-D and 3-D patches


def strided_patch_bank(img, W):
    """Item 2: 5 x 5 patches of a channels-last image at stride 2 through a (5, 5, C, F)
    filter bank, written into a preallocated feature map pixel by pixel."""
    p = W.shape[0]
    n = (img.shape[0] - p) // 2 + 1
    out = np.zeros((n, n, W.shape[3]))
    for i in range(n):
        for j in range(n):
            out[i, j] = np.einsum("abc,abcf->f", img[2 * i:2 * i + p, 2 * j:2 * j + p], W)
    return np.sum(np.tanh(out) ** 2)


def _taps_2d(img, W, s):
    """sum over taps (a, b) of img[a::s, b::s] @ W[a, b] (n x n positions)."""
    p = W.shape[0]
    n = (img.shape[0] - p) // s + 1
    e = s * (n - 1) + 1
    return sum(img[a:a + e:s, b:b + e:s] @ W[a, b] for a in range(p) for b in range(p))


def strided_patch_bank_ref(img, W):
    return np.sum(np.tanh(_taps_2d(img, W, 2)) ** 2)


def patch_bank_inputs(rng, H, C, F, p):
    return normal(rng, H, H, C), normal(rng, p, p, C, F, scale=(p * p * C) ** -0.5)


def np_pad_patch_bank(img, W):
    """Item 2: an image padded by np.pad ('same'), 3 x 3 patches at stride 2 through a
    filter bank, each output pixel's features through a softplus, a list comprehension."""
    xp = np.pad(img, ((1, 1), (1, 1), (0, 0)))
    n = (xp.shape[0] - 3) // 2 + 1
    ys = [np.tensordot(xp[2 * i:2 * i + 3, 2 * j:2 * j + 3], W, axes=3)
          for i in range(n) for j in range(n)]
    return np.sum(np.logaddexp(0.0, np.stack(ys)))


def np_pad_patch_bank_ref(img, W):
    xp = np.pad(img, ((1, 1), (1, 1), (0, 0)))
    return np.sum(np.logaddexp(0.0, _taps_2d(xp, W, 2)))


def volume_strided_bank(vol, W):
    """Item 2: 3 x 3 x 3 patches of a (D, H, W, C) volume at stride 2 through a filter bank
    (a strided 3-D convolution), three nested loops into a buffer."""
    n = (vol.shape[0] - 3) // 2 + 1
    out = np.zeros((n, n, n, W.shape[4]))
    for i in range(n):
        for j in range(n):
            for k in range(n):
                out[i, j, k] = np.tensordot(vol[2 * i:2 * i + 3, 2 * j:2 * j + 3,
                                                2 * k:2 * k + 3], W, axes=4)
    return np.sum(np.tanh(out))


def volume_strided_bank_ref(vol, W):
    n = (vol.shape[0] - 3) // 2 + 1
    e = 2 * (n - 1) + 1
    return np.sum(np.tanh(sum(vol[a:a + e:2, b:b + e:2, c:c + e:2] @ W[a, b, c]
                              for a in range(3) for b in range(3) for c in range(3))))


def volume_inputs(rng, D, C, F):
    return normal(rng, D, D, D, C), normal(rng, 3, 3, 3, C, F, scale=(27 * C) ** -0.5)


PATTERNS += [
    Pattern("strided_patch_bank", 2, strided_patch_bank, strided_patch_bank_ref,
            patch_bank_inputs, {"small": {"H": 9, "C": 2, "F": 3, "p": 5},
                                "default": {"H": 61, "C": 8, "F": 8, "p": 5}},
            (0, 1), tags=_V),
    Pattern("np_pad_patch_bank", 2, np_pad_patch_bank, np_pad_patch_bank_ref,
            patch_bank_inputs, {"small": {"H": 7, "C": 2, "F": 3, "p": 3},
                                "default": {"H": 64, "C": 8, "F": 16, "p": 3}},
            (0, 1), tags=_V),
    Pattern("volume_strided_bank", 2, volume_strided_bank, volume_strided_bank_ref,
            volume_inputs, {"small": {"D": 5, "C": 2, "F": 2},
                            "default": {"D": 21, "C": 4, "F": 8}}, (0, 1), tags=_V),
]
