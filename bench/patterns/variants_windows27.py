"""Window variants of session 27 (item 2): windows whose taps are weighted one offset at a
time inside the loop (`sum(W[j] * X[i + j] for j in range(k))`, a depthwise filter written
per output row), and more. Each reference is the hand-vectorized form a user would write:
one pass per tap over contiguous slices."""
from __future__ import annotations

import numpy as np

from .core import Pattern, normal

_V = ("variant", "natural")


def offset_weighted_rows(X, W):
    """Item 2: a depthwise filter written per output row, each tap's weight row times the
    input row at its offset: `sum(W[j] * X[i + j] for j in range(k))`."""
    k = len(W)
    out = 0.0
    for i in range(len(X) - k + 1):
        y = sum(W[j] * X[i + j] for j in range(k))
        out = out + np.sum(np.tanh(y))
    return out


def offset_weighted_rows_ref(X, W):
    k, n = len(W), len(X) - len(W) + 1
    return np.sum(np.tanh(sum(W[j] * X[j:j + n] for j in range(k))))


def depthwise_inputs(rng, T, C, k):
    return normal(rng, T, C), normal(rng, k, C) * 0.5


PATTERNS = [
    Pattern("offset_weighted_rows", 2, offset_weighted_rows, offset_weighted_rows_ref,
            depthwise_inputs, {"small": {"T": 9, "C": 3, "k": 3},
                               "default": {"T": 2000, "C": 16, "k": 5}}, (0, 1), tags=_V),
]


def scalar_tap_rows(X, w):
    """Item 2: scalar tap weights times the input rows at each offset, into a buffer."""
    k = len(w)
    n = len(X) - k + 1
    Y = np.zeros((n, X.shape[1]))
    for i in range(n):
        Y[i] = sum(w[j] * X[i + j] for j in range(k))
    return np.sum(np.tanh(Y))


def scalar_tap_rows_ref(X, w):
    k, n = len(w), len(X) - len(w) + 1
    return np.sum(np.tanh(sum(w[j] * X[j:j + n] for j in range(k))))


def scalar_tap_inputs(rng, T, C, k):
    return normal(rng, T, C), normal(rng, k) * 0.5


def offset_weighted_1d(x, w):
    """Item 2: a 1-D filter per output sample, the generator over taps inside a list."""
    k = len(w)
    y = [sum(w[j] * x[i + j] for j in range(k)) for i in range(len(x) - k + 1)]
    return np.sum(np.tanh(np.array(y)))


def offset_weighted_1d_ref(x, w):
    k, n = len(w), len(x) - len(w) + 1
    return np.sum(np.tanh(sum(w[j] * x[j:j + n] for j in range(k))))


def oned_inputs(rng, T, k):
    return normal(rng, T), normal(rng, k) * 0.5


PATTERNS += [
    Pattern("scalar_tap_rows", 2, scalar_tap_rows, scalar_tap_rows_ref,
            scalar_tap_inputs, {"small": {"T": 9, "C": 3, "k": 3},
                                "default": {"T": 2000, "C": 16, "k": 5}}, (0, 1), tags=_V),
    Pattern("offset_weighted_1d", 2, offset_weighted_1d, offset_weighted_1d_ref,
            oned_inputs, {"small": {"T": 9, "k": 3},
                          "default": {"T": 3000, "k": 7}}, (0, 1), tags=_V),
]


def vector_tap_buffer(X, W):
    """Item 2: per-channel tap weights times the input rows at each offset, into a buffer,
    then a squared loss."""
    k, n = len(W), len(X) - len(W) + 1
    Y = np.empty((n, X.shape[1]))
    for i in range(n):
        Y[i] = sum(W[j] * X[i + j] for j in range(k))
    return np.sum(Y ** 2)


def vector_tap_buffer_ref(X, W):
    k, n = len(W), len(X) - len(W) + 1
    return np.sum(sum(W[j] * X[j:j + n] for j in range(k)) ** 2)


def stencil_2d_scalar(img, K):
    """Item 2: a 2-D stencil per output pixel, the kernel's scalar weights times the pixels
    at each offset: `sum(K[a, b] * img[i + a, j + b] ...)` over a and b."""
    p = len(K)
    H, W = img.shape[0] - p + 1, img.shape[1] - p + 1
    out = np.zeros((H, W))
    for i in range(H):
        for j in range(W):
            out[i, j] = sum(K[a, b] * img[i + a, j + b] for a in range(p) for b in range(p))
    return np.sum(np.tanh(out))


def stencil_2d_scalar_ref(img, K):
    p = len(K)
    H, W = img.shape[0] - p + 1, img.shape[1] - p + 1
    return np.sum(np.tanh(sum(K[a, b] * img[a:a + H, b:b + W]
                              for a in range(p) for b in range(p))))


def stencil_inputs(rng, H, p):
    return normal(rng, H, H), normal(rng, p, p) * 0.3


def stencil_rows_hwc(img, K):
    """Item 2: a 2-D stencil per output row of a channels-last image: each tap's scalar
    weight times the image rows' patch at its offset, `K[a, b] * img[i + a, b:b + W]`."""
    p = len(K)
    H, W = img.shape[0] - p + 1, img.shape[1] - p + 1
    total = 0.0
    for i in range(H):
        row = sum(K[a, b] * img[i + a, b:b + W] for a in range(p) for b in range(p))
        total = total + np.sum(np.log1p(row ** 2))
    return total


def stencil_rows_hwc_ref(img, K):
    p = len(K)
    H, W = img.shape[0] - p + 1, img.shape[1] - p + 1
    y = sum(K[a, b] * img[a:a + H, b:b + W] for a in range(p) for b in range(p))
    return np.sum(np.log1p(y ** 2))


def hwc_inputs(rng, H, C, p):
    return normal(rng, H, H, C), normal(rng, p, p) * 0.3


def dilated_tap_rows(X, w, d):
    """Item 2: dilated taps per output row, `w[j] * X[i + d * j]`, a running sum."""
    k = len(w)
    out = 0.0
    for i in range(len(X) - d * (k - 1)):
        out = out + np.sum(np.sin(sum(w[j] * X[i + d * j] for j in range(k))))
    return out


def dilated_tap_rows_ref(X, w, d):
    k = len(w)
    n = len(X) - d * (k - 1)
    return np.sum(np.sin(sum(w[j] * X[d * j:d * j + n] for j in range(k))))


def dilated_inputs(rng, T, C, k, d):
    return normal(rng, T, C), normal(rng, k) * 0.5, d


def causal_tap_rows(X, w):
    """Item 2: a causal filter, each output row the weighted past rows `w[j] * X[i - j]`,
    collected in a list and stacked."""
    k = len(w)
    ys = [sum(w[j] * X[i - j] for j in range(k)) for i in range(k - 1, len(X))]
    return np.sum(np.tanh(np.stack(ys)))


def causal_tap_rows_ref(X, w):
    k = len(w)
    n = len(X) - k + 1
    return np.sum(np.tanh(sum(w[j] * X[k - 1 - j:k - 1 - j + n] for j in range(k))))


def strided_tap_rows(X, w, s):
    """Item 2: taps at an output stride, `for i in range(0, T - k + 1, s)`, into a list."""
    k = len(w)
    ys = []
    for i in range(0, len(X) - k + 1, s):
        ys.append(sum(w[j] * X[i + j] for j in range(k)))
    return np.sum(np.array(ys) ** 2)


def strided_tap_rows_ref(X, w, s):
    k = len(w)
    n = (len(X) - k) // s + 1
    return np.sum(sum(w[j] * X[j:j + s * (n - 1) + 1:s] for j in range(k)) ** 2)


def strided_inputs(rng, T, C, k, s):
    return normal(rng, T, C), normal(rng, k) * 0.5, s


def matrix_tap_rows(X, W):
    """Item 2: a 1-D convolution per output row, each tap's matrix times the row at its
    offset: `sum(X[i + j] @ W[j] for j in range(k))`."""
    k = len(W)
    out = 0.0
    for i in range(len(X) - k + 1):
        out = out + np.sum(np.tanh(sum(X[i + j] @ W[j] for j in range(k))))
    return out


def matrix_tap_rows_ref(X, W):
    k, n = len(W), len(X) - len(W) + 1
    return np.sum(np.tanh(sum(X[j:j + n] @ W[j] for j in range(k))))


def matrix_tap_inputs(rng, T, C, F, k):
    return normal(rng, T, C), normal(rng, k, C, F) * 0.3


def tap_scored_rows(X, w, v):
    """Item 2: window scores from weighted taps of a nonlinearity, `w[j] * np.tanh(X[i + j])`,
    then a dot with a readout."""
    k = len(w)
    s = 0.0
    for i in range(len(X) - k + 1):
        h = sum(w[j] * np.tanh(X[i + j]) for j in range(k))
        s = s + np.log1p(np.exp(h @ v))
    return s


def tap_scored_rows_ref(X, w, v):
    k, n = len(w), len(X) - len(w) + 1
    t = np.tanh(X)
    return np.sum(np.log1p(np.exp(sum(w[j] * t[j:j + n] for j in range(k)) @ v)))


def scored_inputs(rng, T, C, k):
    return normal(rng, T, C), normal(rng, k) * 0.5, normal(rng, C) * 0.3


PATTERNS += [
    Pattern("vector_tap_buffer", 2, vector_tap_buffer, vector_tap_buffer_ref,
            depthwise_inputs, {"small": {"T": 9, "C": 3, "k": 3},
                               "default": {"T": 2000, "C": 16, "k": 5}}, (0, 1), tags=_V),
    Pattern("stencil_2d_scalar", 2, stencil_2d_scalar, stencil_2d_scalar_ref,
            stencil_inputs, {"small": {"H": 6, "p": 3}, "default": {"H": 66, "p": 3}},
            (0, 1), tags=_V),
    Pattern("stencil_rows_hwc", 2, stencil_rows_hwc, stencil_rows_hwc_ref,
            hwc_inputs, {"small": {"H": 6, "C": 2, "p": 3},
                         "default": {"H": 66, "C": 8, "p": 3}}, (0, 1), tags=_V),
    Pattern("dilated_tap_rows", 2, dilated_tap_rows, dilated_tap_rows_ref,
            dilated_inputs, {"small": {"T": 12, "C": 3, "k": 3, "d": 2},
                             "default": {"T": 2000, "C": 16, "k": 4, "d": 3}}, (0, 1),
            tags=_V),
    Pattern("causal_tap_rows", 2, causal_tap_rows, causal_tap_rows_ref,
            scalar_tap_inputs, {"small": {"T": 9, "C": 3, "k": 3},
                                "default": {"T": 2000, "C": 16, "k": 6}}, (0, 1), tags=_V),
    Pattern("strided_tap_rows", 2, strided_tap_rows, strided_tap_rows_ref,
            strided_inputs, {"small": {"T": 12, "C": 3, "k": 3, "s": 2},
                             "default": {"T": 4000, "C": 16, "k": 5, "s": 2}}, (0, 1),
            tags=_V),
    Pattern("matrix_tap_rows", 2, matrix_tap_rows, matrix_tap_rows_ref,
            matrix_tap_inputs, {"small": {"T": 9, "C": 3, "F": 2, "k": 3},
                                "default": {"T": 1500, "C": 16, "F": 16, "k": 4}}, (0, 1),
            tags=_V),
    Pattern("tap_scored_rows", 2, tap_scored_rows, tap_scored_rows_ref,
            scored_inputs, {"small": {"T": 9, "C": 3, "k": 3},
                            "default": {"T": 2000, "C": 16, "k": 5}}, (0, 1, 2), tags=_V),
]


def neighbourhood_softmax_2d(F, Q):
    """Item 2: 2-D neighbourhood attention, channels last: each pixel's query against its
    3 x 3 neighbours' features, softmax over them, the features pooled by the weights."""
    H, W, C = F.shape
    out = 0.0
    for i in range(H - 2):
        for j in range(W - 2):
            P = F[i:i + 3, j:j + 3].reshape(9, C)
            s = P @ Q[i, j]
            a = np.exp(s - np.max(s))
            out = out + np.sum(np.tanh(a @ P / np.sum(a)))
    return out


def neighbourhood_softmax_2d_ref(F, Q):
    n, m = F.shape[0] - 2, F.shape[1] - 2
    S = np.stack([np.einsum("ijc,ijc->ij", F[a:a + n, b:b + m], Q)
                  for a in range(3) for b in range(3)])
    A = np.exp(S - S.max(axis=0))
    A /= A.sum(axis=0)
    return np.sum(np.tanh(sum(A[3 * a + b, :, :, None] * F[a:a + n, b:b + m]
                              for a in range(3) for b in range(3))))


def neighbourhood_inputs(rng, H, C):
    return normal(rng, H, H, C, scale=0.5), normal(rng, H - 2, H - 2, C, scale=0.5)


def patch_distance_scores(F, Q):
    """Item 2: each pixel's query scored against its 2 x 2 patch of features with an
    einsum over the channels, a log-sum-exp of the scores."""
    total = 0.0
    for i in range(F.shape[0] - 1):
        for j in range(F.shape[1] - 1):
            s = np.einsum("abc,c->ab", F[i:i + 2, j:j + 2], Q[i, j])
            total = total + np.log(np.sum(np.exp(s)))
    return total


def patch_distance_scores_ref(F, Q):
    n, m = F.shape[0] - 1, F.shape[1] - 1
    S = np.stack([np.einsum("ijc,ijc->ij", F[a:a + n, b:b + m], Q)
                  for a in range(2) for b in range(2)])
    return np.sum(np.log(np.sum(np.exp(S), axis=0)))


def patch_inputs(rng, H, C):
    return normal(rng, H, H, C, scale=0.5), normal(rng, H - 1, H - 1, C, scale=0.5)


PATTERNS += [
    Pattern("neighbourhood_softmax_2d", 2, neighbourhood_softmax_2d,
            neighbourhood_softmax_2d_ref, neighbourhood_inputs,
            {"small": {"H": 5, "C": 3}, "default": {"H": 34, "C": 16}}, (0, 1), tags=_V),
    Pattern("patch_distance_scores", 2, patch_distance_scores, patch_distance_scores_ref,
            patch_inputs, {"small": {"H": 4, "C": 3}, "default": {"H": 40, "C": 24}}, (0, 1),
            tags=_V),
]
