"""Natural variants of the window, stencil and mixed-sum patterns (items 1, 2 and 4), written in
the styles users mix: `enumerate`/`zip` over rows, comprehensions summed with Python's `sum`,
`map` with a kernel function, `+=` against `buf[i] = buf[i] + ...`, odd and negative steps,
dilation, 2-D windows, `if` on Python ints at the boundary, triangular nested loops."""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import vecgrad as vg
import vecgrad.numpy as vnp

from .core import Pattern, normal


def dilated_conv1d(x, w, dil):
    """Item 2 (variant): a dilated convolution, windows x[t : t+(k-1)*dil+1 : dil] with a
    stride inside the slice, written into a buffer row by row."""
    k = w.shape[0]
    span = (k - 1) * dil + 1
    T = x.shape[0] - span + 1
    y = vnp.zeros((T, w.shape[2]))
    for t in range(T):
        y[t] = vnp.tensordot(x[t:t + span:dil], w, axes=2)
    return vnp.sum(vnp.tanh(y))


def dilated_conv1d_ref(x, w, dil):
    k = w.shape[0]
    T = x.shape[0] - (k - 1) * dil
    return np.sum(np.tanh(sum(x[j * dil:j * dil + T] @ w[j] for j in range(k))))


def dilated_inputs(rng, T, c, k, f, dil):
    return normal(rng, T, c), normal(rng, k, c, f, scale=(k * c) ** -0.5), dil


def framed_energy(x, win, hop):
    """Item 2 (variant): STFT-style framing, np.stack of windowed frames x[t:t+n] * win for t in
    range(0, T-n+1, hop) with an odd hop, then a log-energy per frame."""
    n = win.shape[0]
    frames = vnp.stack([x[t:t + n] * win for t in range(0, len(x) - n + 1, hop)])
    return vnp.sum(vnp.log(1.0 + vnp.sum(frames ** 2, axis=1)))


def framed_energy_ref(x, win, hop):
    frames = sliding_window_view(x, win.shape[0])[::hop] * win
    return np.sum(np.log(1.0 + np.sum(frames ** 2, axis=1)))


def framed_inputs(rng, T, n, hop):
    return normal(rng, T), np.hanning(n), hop


def shifted_sum_blur(img, K):
    """Item 2 (variant): a 2-D filter written as a loop over the kernel's offsets, each adding a
    shifted slice of the image: out += K[di, dj] * img[di:di+H, dj:dj+W]."""
    p = K.shape[0]
    H, W = img.shape[0] - p + 1, img.shape[1] - p + 1
    out = vnp.zeros((H, W))
    for di in range(p):
        for dj in range(p):
            out += K[di, dj] * img[di:di + H, dj:dj + W]
    return vnp.sum(vnp.tanh(out) ** 2)


def shifted_sum_blur_ref(img, K):
    p = K.shape[0]
    win = sliding_window_view(img, (p, p))
    return np.sum(np.tanh(np.einsum("ijab,ab->ij", win, K)) ** 2)


def blur_inputs(rng, n, p):
    return normal(rng, n, n), normal(rng, p, p, scale=1.0 / p)


def avgpool_map(img, s):
    """Item 2 (variant): 2-D average pooling with `map` over the patch corners and a patch
    function, results summed with Python's sum after a nonlinearity."""
    n = img.shape[0] // s

    def patch(i, j):
        return vnp.mean(img[i * s:(i + 1) * s, j * s:(j + 1) * s]) ** 2

    corners = [(i, j) for i in range(n) for j in range(n)]
    return sum(map(lambda ij: patch(*ij), corners))  # noqa: C417 - as users write it


def avgpool_map_ref(img, s):
    n = img.shape[0] // s
    return np.sum(img[:n * s, :n * s].reshape(n, s, n, s).mean(axis=(1, 3)) ** 2)


def avgpool_inputs(rng, n, s):
    return normal(rng, n, n), s


def causal_filter_reversed(x, w):
    """Item 2 (variant): a causal filter over range(T-1, k-2, -1) (a negative step), each output
    the window x[t-k+1 : t+1] against taps w, collected in a list and reversed."""
    k = w.shape[0]
    outs = []
    for t in range(len(x) - 1, k - 2, -1):
        outs.append(vnp.sum(x[t - k + 1:t + 1] * w, axis=0))
    y = vnp.stack(outs[::-1])
    return vnp.sum(vnp.sin(y))


def causal_filter_reversed_ref(x, w):
    k = w.shape[0]
    T = len(x) - k + 1
    return np.sum(np.sin(sum(x[j:j + T] * w[j] for j in range(k))))


def causal_filter_inputs(rng, T, c, k):
    return normal(rng, T, c), normal(rng, k, c, scale=k ** -0.5)


def total_variation_zip(x, eps):
    """Item 2 (variant): a smoothed total variation over consecutive rows with zip(x[:-1],
    x[1:]), summed with Python's sum over a generator."""
    return sum(vnp.sum(vnp.sqrt((b - a) ** 2 + eps)) for a, b in zip(x[:-1], x[1:]))  # noqa: RUF007


def total_variation_zip_ref(x, eps):
    return np.sum(np.sqrt(np.diff(x, axis=0) ** 2 + eps))


def tv_inputs(rng, n, d):
    return normal(rng, n, d), 1e-3


def odd_step_diffs(x, w):
    """Item 2 (variant): second differences at every third position, range(2, n, 3), with
    buf[i] = buf[i] + ... accumulating into a scalar-per-row buffer."""
    n = x.shape[0]
    idx = list(range(2, n, 3))
    buf = vnp.zeros(len(idx))
    for r, i in enumerate(idx):
        buf[r] = buf[r] + w @ (x[i] - 2.0 * x[i - 1] + x[i - 2]) ** 2
    return vnp.sum(vnp.log1p(buf))


def odd_step_diffs_ref(x, w):
    m = len(x[2::3])
    d2 = x[2::3] - 2.0 * x[1::3][:m] + x[0::3][:m]
    return np.sum(np.log1p(d2 ** 2 @ w))


def odd_step_inputs(rng, n, d):
    return normal(rng, n, d), np.abs(normal(rng, d))


def boundary_if_stencil(u, kappa):
    """Item 4 (variant): a 1-D diffusion residual, one point at a time, with `if` on the Python
    int i for the two boundary points (one-sided there)."""
    n = u.shape[0]
    r = 0.0
    for i in range(n):
        if i == 0:
            lap = u[1] - u[0]
        elif i == n - 1:
            lap = u[n - 2] - u[n - 1]
        else:
            lap = u[i - 1] - 2.0 * u[i] + u[i + 1]
        r = r + vnp.sum((kappa * lap - u[i] ** 3) ** 2)
    return r


def boundary_if_stencil_ref(u, kappa):
    lap = np.empty_like(u)
    lap[1:-1] = u[:-2] - 2.0 * u[1:-1] + u[2:]
    lap[0] = u[1] - u[0]
    lap[-1] = u[-2] - u[-1]
    return np.sum((kappa * lap - u ** 3) ** 2)


def stencil_inputs(rng, n, d):
    return normal(rng, n, d), 0.3


def three_term_loss(w, X, y, lam, mu):
    """Item 4 (variant): a scalar loss mixed from three kinds of terms per sample: a logistic
    data term, an L2 term on w and a constant offset, the last only on even i (`if`)."""
    loss = 0.0
    for i in range(len(y)):
        z = X[i] @ w
        loss += vnp.logaddexp(0.0, -y[i] * z)
        loss = loss + lam * vnp.sum(w ** 2)
        if i % 2 == 0:
            loss += mu
    return loss / len(y)


def three_term_loss_ref(w, X, y, lam, mu):
    n = len(y)
    return (np.sum(np.logaddexp(0.0, -y * (X @ w))) + n * lam * np.sum(w ** 2)
            + mu * ((n + 1) // 2)) / n


def three_term_inputs(rng, n, d):
    return (normal(rng, d, scale=0.1), normal(rng, n, d), np.sign(normal(rng, n)), 1e-3, 0.5)


def elastic_net_coeffs(w, X, y, l1, l2):
    """Item 4 (variant): a least-squares fit plus a penalty accumulated coefficient by
    coefficient, pen += l1 * abs(w[j]) + l2 * w[j] ** 2 for j in range(d)."""
    pen = 0.0
    for j in range(w.shape[0]):
        pen += l1 * vnp.abs(w[j]) + l2 * w[j] ** 2
    return vnp.mean((X @ w - y) ** 2) + pen


def elastic_net_coeffs_ref(w, X, y, l1, l2):
    return np.mean((X @ w - y) ** 2) + l1 * np.sum(np.abs(w)) + l2 * np.sum(w ** 2)


def elastic_inputs(rng, n, d):
    return normal(rng, d), normal(rng, n, d), normal(rng, n), 0.01, 0.1


def softplus_pairs_triangular(x, a):
    """Item 4 (variant): a triangular double loop, for j in range(i+1, n), of a soft pair
    repulsion a * softplus(1 - |x_i - x_j|^2) plus a constant-weight attraction term."""
    n = x.shape[0]
    e = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            d2 = vnp.sum((x[i] - x[j]) ** 2)
            e = e + a * vnp.logaddexp(0.0, 1.0 - d2) + 0.01 * d2
    return e


def softplus_pairs_triangular_ref(x, a):
    i, j = np.triu_indices(len(x), 1)
    d2 = np.sum((x[i] - x[j]) ** 2, axis=1)
    return np.sum(a * np.logaddexp(0.0, 1.0 - d2) + 0.01 * d2)


def triangular_inputs(rng, n, d):
    return normal(rng, n, d), np.array(0.7)


def symmetric_gram_fill(x, ell):
    """Items 1, 4 (variant): a symmetric kernel matrix filled over the upper triangle with both
    K[i, j] and K[j, i] written, the diagonal set apart, then a quadratic form."""
    n = x.shape[0]
    K = vnp.zeros((n, n))
    for i in range(n):
        K[i, i] = 1.0
        for j in range(i + 1, n):
            v = vnp.exp(-vnp.sum((x[i] - x[j]) ** 2) / ell)
            K[i, j] = v
            K[j, i] = v
    return vnp.sum(K * K) + vnp.sum(K)


def symmetric_gram_fill_ref(x, ell):
    d2 = np.sum((x[:, None] - x[None]) ** 2, axis=-1)
    K = np.exp(-d2 / ell)
    return np.sum(K * K) + np.sum(K)


def gram_inputs(rng, n, d):
    return normal(rng, n, d), np.array(2.0)


def row_chain_index(X, Y):
    """Item 1 (variant): a distance table written with chained indexing D[i][j] = ... (a write
    through a row view), then a soft-min per row."""
    n, m = X.shape[0], Y.shape[0]
    D = vnp.zeros((n, m))
    for i in range(n):
        for j in range(m):
            D[i][j] = vnp.sum((X[i] - Y[j]) ** 2)
    return -vnp.sum(vg.nn.logsumexp(-D, axis=1))


def row_chain_index_ref(X, Y):
    D = np.sum((X[:, None] - Y[None]) ** 2, axis=-1)
    m = (-D).max(1, keepdims=True)
    return -np.sum(np.log(np.exp(-D - m).sum(1)) + m[:, 0])


def chain_inputs(rng, n, m, d):
    return normal(rng, n, d), normal(rng, m, d)


PATTERNS = [
    Pattern("dilated_conv1d", 2, dilated_conv1d, dilated_conv1d_ref, dilated_inputs,
            {"small": {"T": 12, "c": 2, "k": 3, "f": 2, "dil": 2},
             "default": {"T": 2000, "c": 16, "k": 3, "f": 8, "dil": 4}}, (0, 1),
            tags=("variant",)),
    Pattern("framed_energy", 2, framed_energy, framed_energy_ref, framed_inputs,
            {"small": {"T": 20, "n": 6, "hop": 3}, "default": {"T": 20000, "n": 64, "hop": 27}},
            (0,), tags=("variant",)),
    Pattern("shifted_sum_blur", 2, shifted_sum_blur, shifted_sum_blur_ref, blur_inputs,
            {"small": {"n": 7, "p": 3}, "default": {"n": 200, "p": 5}}, (0, 1),
            tags=("variant",)),
    Pattern("avgpool_map", 2, avgpool_map, avgpool_map_ref, avgpool_inputs,
            {"small": {"n": 6, "s": 2}, "default": {"n": 192, "s": 3}}, (0,),
            tags=("variant",)),
    Pattern("causal_filter_reversed", 2, causal_filter_reversed, causal_filter_reversed_ref,
            causal_filter_inputs, {"small": {"T": 9, "c": 2, "k": 3},
                                   "default": {"T": 2000, "c": 32, "k": 6}}, (0, 1),
            tags=("variant",)),
    Pattern("total_variation_zip", 2, total_variation_zip, total_variation_zip_ref, tv_inputs,
            {"small": {"n": 6, "d": 3}, "default": {"n": 2000, "d": 32}}, (0,),
            target="single", tags=("variant",)),
    Pattern("odd_step_diffs", 2, odd_step_diffs, odd_step_diffs_ref, odd_step_inputs,
            {"small": {"n": 11, "d": 3}, "default": {"n": 6000, "d": 32}}, (0, 1),
            tags=("variant",)),
    Pattern("boundary_if_stencil", 4, boundary_if_stencil, boundary_if_stencil_ref,
            stencil_inputs, {"small": {"n": 7, "d": 2}, "default": {"n": 3000, "d": 32}}, (0,),
            tags=("variant",)),
    Pattern("three_term_loss", 4, three_term_loss, three_term_loss_ref, three_term_inputs,
            {"small": {"n": 7, "d": 3}, "default": {"n": 3000, "d": 32}}, (0, 1),
            tags=("variant",)),
    Pattern("elastic_net_coeffs", 4, elastic_net_coeffs, elastic_net_coeffs_ref,
            elastic_inputs, {"small": {"n": 6, "d": 4}, "default": {"n": 2000, "d": 300}},
            (0,), tags=("variant",)),
    Pattern("softplus_pairs_triangular", 4, softplus_pairs_triangular,
            softplus_pairs_triangular_ref, triangular_inputs,
            {"small": {"n": 6, "d": 2}, "default": {"n": 150, "d": 3}}, (0, 1),
            tags=("variant",)),
    Pattern("symmetric_gram_fill", 1, symmetric_gram_fill, symmetric_gram_fill_ref,
            gram_inputs, {"small": {"n": 5, "d": 2}, "default": {"n": 120, "d": 4}}, (0, 1),
            tags=("variant",)),
    Pattern("row_chain_index", 1, row_chain_index, row_chain_index_ref, chain_inputs,
            {"small": {"n": 4, "m": 5, "d": 2}, "default": {"n": 100, "m": 80, "d": 8}},
            (0, 1), tags=("variant",)),
]
