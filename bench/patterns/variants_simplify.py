"""Plain NumPy calls, the way users write them (simplify lane, session 23): row norms through
`np.linalg.norm`, `np.einsum` with a repeated operand, softmax, logsumexp and layer norm by
hand, `np.where` chains, `np.clip` before a log, outer products summed in a loop,
`np.tensordot`, cross-entropy with a one-hot matrix built by indexing, cosine similarities
(as a matrix and per pair of rows), and inner loops over a row's few columns with cyclic or
constant coefficients.

Most are straight-line: the natural program is already whole-array code, and the ratio is the
gradient against the same forward, hand-vectorized the way an expert would (logsumexp instead
of log(softmax), take-along instead of a one-hot product, a @ b instead of summed outer
products). The loops' references are the vectorized forms. Targets follow core.TARGETS:
"single" (2x) for an elementwise chain, whose gradient is one more chain of the forward's
size; "parallel" (3x) otherwise, also for a single contraction whose gradient must write an
operand-sized array (2 X * w for sum_ij X_ij^2 w_j: the forward only reads X) or run two
more contractions of the forward's size (both operands of a tensordot)."""
from __future__ import annotations

import numpy as np

import vecgrad.numpy as vnp

from .core import Pattern, normal, uniform

_ROWS = {"small": {"n": 7, "d": 3}, "default": {"n": 4000, "d": 32}}
_MAT = {"small": {"n": 5, "d": 3}, "default": {"n": 400, "d": 64}}


# ------------------------------------------------------------------------------ norms, cosines

def row_norms_loop(X, c):
    """Item 7 (variant): np.linalg.norm of each row's offset from a centre, summed in a loop."""
    total = 0.0
    for i in range(len(X)):
        total = total + np.linalg.norm(X[i] - c)
    return total


def row_norms_loop_ref(X, c):
    return np.sum(np.linalg.norm(X - c, axis=1))


def _xc_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d)


def cosine_similarity_matrix(X):
    """Mixed (plain NumPy, straight-line): rows normalized by np.linalg.norm(keepdims), their Gram
    matrix pushed towards I."""
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    S = Xn @ Xn.T
    return np.sum((S - np.eye(len(X))) ** 2)


def cosine_similarity_matrix_ref(X):
    Xn = X / np.sqrt(np.einsum("ij,ij->i", X, X))[:, None]
    S = Xn @ Xn.T
    np.fill_diagonal(S, S.diagonal() - 1.0)
    return np.sum(S * S)


def _x_inputs(rng, n, d):
    return (normal(rng, n, d),)


def cosine_pairs_loop(A, B):
    """Item 2 (variant): np.dot(a, b) / (norm(a) * norm(b)) per pair of rows, in a loop."""
    total = 0.0
    for i in range(len(A)):
        total = total + np.dot(A[i], B[i]) / (np.linalg.norm(A[i]) * np.linalg.norm(B[i]))
    return total


def cosine_pairs_loop_ref(A, B):
    num = np.einsum("ij,ij->i", A, B)
    return np.sum(num / np.sqrt(np.einsum("ij,ij->i", A, A) * np.einsum("ij,ij->i", B, B)))


def _ab_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, n, d)


# ---------------------------------------------------------------------------- contractions

def einsum_repeated_operand(X, w):
    """Mixed (plain NumPy, straight-line): np.einsum with X twice: a weighted sum of squares,
    sum_ij X_ij X_ij w_j."""
    return np.einsum("ij,ij,j->", X, X, w)


def einsum_repeated_operand_ref(X, w):
    return np.einsum("ij,ij,j->", X, X, w)


def _xw_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d)


def tensordot_tanh(A, B):
    """Mixed (plain NumPy, straight-line): np.tensordot over two axes, then an elementwise tanh and
    a sum."""
    return np.sum(np.tanh(np.tensordot(A, B, axes=([1, 2], [0, 1]))))


def tensordot_tanh_ref(A, B):
    return np.sum(np.tanh(A.reshape(len(A), -1) @ B.reshape(-1, B.shape[-1])))


def _tensordot_inputs(rng, n, d):
    return normal(rng, n, d, 8, scale=0.1), normal(rng, d, 8, 16, scale=0.1)


def outer_products_summed(a, b, M):
    """Item 4 (variant): np.outer of each pair of rows, accumulated into a matrix, then weighted by
    M."""
    S = vnp.zeros((a.shape[1], b.shape[1]))
    for i in range(len(a)):
        S = S + np.outer(a[i], b[i])
    return np.sum(S * M)


def outer_products_summed_ref(a, b, M):
    return np.sum((a.T @ b) * M)


def _outer_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, n, d), normal(rng, d, d)


# ------------------------------------------------------------- softmax, logsumexp, layer norm

def softmax_by_hand_nll(Z, y):
    """Mixed (plain NumPy, straight-line): softmax by hand (max-shifted exp over its row sum), then
    -log of the label's entry."""
    e = np.exp(Z - np.max(Z, axis=1, keepdims=True))
    p = e / np.sum(e, axis=1, keepdims=True)
    return -np.sum(np.log(p[np.arange(len(Z)), y]))


def softmax_by_hand_nll_ref(Z, y):
    m = Z.max(axis=1)
    lse = m + np.log(np.sum(np.exp(Z - m[:, None]), axis=1))
    return np.sum(lse - Z[np.arange(len(Z)), y])


def _zy_inputs(rng, n, d):
    return normal(rng, n, d), rng.integers(0, d, n)


def logsumexp_by_hand(Z, w):
    """Mixed (plain NumPy, straight-line): logsumexp by hand per row (max, shifted exp, sum, log,
    add back), weighted."""
    m = np.max(Z, axis=1)
    lse = m + np.log(np.sum(np.exp(Z - m[:, None]), axis=1))
    return np.sum(w * lse)


def logsumexp_by_hand_ref(Z, w):
    m = Z.max(axis=1)
    return np.dot(w, m + np.log(np.sum(np.exp(Z - m[:, None]), axis=1)))


def _zw_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, n)


def onehot_cross_entropy(Z, y):
    """Mixed (plain NumPy, straight-line): cross-entropy against a one-hot matrix built by
    indexing into zeros, with a log-softmax by hand."""
    Y = vnp.zeros(Z.shape)  # (np.zeros cannot hold traced values: vecgrad's error says so)
    Y[np.arange(len(Z)), y] = 1.0
    m = np.max(Z, axis=1, keepdims=True)
    logp = Z - m - np.log(np.sum(np.exp(Z - m), axis=1, keepdims=True))
    return -np.sum(Y * logp)


def onehot_cross_entropy_ref(Z, y):
    m = Z.max(axis=1)
    lse = m + np.log(np.sum(np.exp(Z - m[:, None]), axis=1))
    return np.sum(lse - Z[np.arange(len(Z)), y])


def layer_norm_by_hand(X, g, b, T):
    """Mixed (plain NumPy, straight-line): layer norm by hand (mean, variance, normalize, scale,
    shift), against targets."""
    mu = np.mean(X, axis=1, keepdims=True)
    var = np.mean((X - mu) ** 2, axis=1, keepdims=True)
    Y = (X - mu) / np.sqrt(var + 1e-5) * g + b
    return np.sum((Y - T) ** 2)


def layer_norm_by_hand_ref(X, g, b, T):
    Xc = X - X.mean(axis=1, keepdims=True)
    Y = Xc * (1.0 / np.sqrt(np.einsum("ij,ij->i", Xc, Xc) / X.shape[1] + 1e-5))[:, None]
    R = Y * g + (b - T)
    return np.einsum("ij,ij->", R, R)


def _ln_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d), normal(rng, d), normal(rng, n, d)


# --------------------------------------------------------------------- where chains, clipping

def where_chain(x):
    """Mixed (plain NumPy, straight-line): a piecewise function through nested np.where."""
    return np.sum(np.where(x > 1.0, x * x, np.where(x < -1.0, -x, 0.5 * x + 0.5)))


def where_chain_ref(x):
    return np.sum(np.where(x > 1.0, x * x, np.where(x < -1.0, -x, 0.5 * x + 0.5)))


def _flat_inputs(rng, n, d):
    return (normal(rng, n * d, scale=1.5),)


def clip_then_log(X, w, y):
    """Mixed (plain NumPy, straight-line): logistic predictions clipped with np.clip before the log
    of a cross-entropy."""
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    p = np.clip(p, 1e-7, 1.0 - 1e-7)
    return -np.sum(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def clip_then_log_ref(X, w, y):
    p = np.clip(1.0 / (1.0 + np.exp(-(X @ w))), 1e-7, 1.0 - 1e-7)
    return -np.sum(y * np.log(p) + (1.0 - y) * np.log1p(-p))


def _clip_inputs(rng, n, d):
    return normal(rng, n, d), normal(rng, d, scale=0.3), (uniform(rng, n) > 0.5) * 1.0


# ------------------------------------------------------------ inner loops over a row's columns

def cyclic_column_coeffs(x, X, w):
    """Item 3 (variant): an inner loop over a row's five columns with four coefficients, w[j % 4]."""
    out = vnp.zeros(len(X))
    for i in range(len(X)):
        s = 0.0
        for j in range(X.shape[1]):
            s = s + X[i, j] * w[j % 4]
        out[i] = s * x[i]
    return np.sum(out ** 2)


def cyclic_column_coeffs_ref(x, X, w):
    return np.sum((X @ w[np.arange(X.shape[1]) % 4] * x) ** 2)


def _cyc_inputs(rng, n, d):
    return normal(rng, n), normal(rng, n, 5), normal(rng, 4)


COEF = (0.25, -1.5, 2.0, 0.75)


def constant_column_coeffs(X):
    """Item 4 (variant): a row's columns weighted by a Python tuple of floats, inside a generator
    sum."""
    return sum(np.tanh(sum(X[i, j] * COEF[j] for j in range(4))) for i in range(len(X)))


def constant_column_coeffs_ref(X):
    return np.sum(np.tanh(X @ np.asarray(COEF)))


def _const_inputs(rng, n, d):
    return (normal(rng, n, 4),)


# ------------------------------------------------------------------------------- the suite

ITEMS = {"row_norms_loop": 7, "cosine_pairs_loop": 2, "outer_products_summed": 4,
         "cyclic_column_coeffs": 3, "constant_column_coeffs": 4}  # the rest: straight-line


def _p(name, sizes, argnums, inputs, target):
    mod = globals()
    return Pattern(name, ITEMS.get(name, 0), mod[name], mod[name + "_ref"], inputs, sizes, argnums,
                   target=target, tags=("variant", "simplify", "plain-numpy"))


PATTERNS = [
    _p("row_norms_loop", _ROWS, (0, 1), _xc_inputs, "parallel"),
    _p("cosine_similarity_matrix", _MAT, (0,), _x_inputs, "parallel"),
    _p("cosine_pairs_loop", _ROWS, (0, 1), _ab_inputs, "parallel"),
    _p("einsum_repeated_operand", _ROWS, (0, 1), _xw_inputs, "parallel"),
    _p("tensordot_tanh", {"small": {"n": 5, "d": 3}, "default": {"n": 2000, "d": 16}},
       (0, 1), _tensordot_inputs, "parallel"),
    _p("outer_products_summed", {"small": {"n": 6, "d": 3}, "default": {"n": 2000, "d": 32}},
       (0, 1), _outer_inputs, "parallel"),
    _p("softmax_by_hand_nll", _ROWS, (0,), _zy_inputs, "parallel"),
    _p("logsumexp_by_hand", _ROWS, (0, 1), _zw_inputs, "parallel"),
    _p("onehot_cross_entropy", _ROWS, (0,), _zy_inputs, "parallel"),
    _p("layer_norm_by_hand", _ROWS, (0, 1, 2), _ln_inputs, "parallel"),
    _p("where_chain", _ROWS, (0,), _flat_inputs, "single"),
    _p("clip_then_log", _ROWS, (0, 1), _clip_inputs, "parallel"),
    _p("cyclic_column_coeffs", {"small": {"n": 7, "d": 5}, "default": {"n": 4000, "d": 5}},
       (0, 1, 2), _cyc_inputs, "parallel"),
    _p("constant_column_coeffs", {"small": {"n": 7, "d": 4}, "default": {"n": 4000, "d": 4}},
       (0,), _const_inputs, "parallel"),
]
