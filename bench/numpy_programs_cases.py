"""The programs bench/numpy_programs.py runs (see its docstring); `P` maps each name to
(function, argument shapes, argnums differentiated)."""
import numpy as np

import vecgrad.numpy as vnp

P = {}


def prog(*shapes, argnums=(0,)):
    def deco(f):
        P[f.__name__] = (f, shapes, argnums)
        return f
    return deco


# ---- linalg
@prog((6, 3, 3))
def batched_solve(A):
    out = 0.0
    for i in range(A.shape[0]):
        M = A[i] + 4 * np.eye(3)
        x = np.linalg.solve(M, np.ones(3))
        out = out + np.sum(x ** 2)
    return out


@prog((5, 4, 4))
def slogdet_loop(A):
    tot = 0.0
    for a in A:
        S = a @ a.T + np.eye(4)
        sign, ld = np.linalg.slogdet(S)
        tot = tot + sign * ld
    return tot


@prog((5, 3, 3))
def chol_logdet(A):
    vals = [2 * np.sum(np.log(np.diag(np.linalg.cholesky(a @ a.T + np.eye(3))))) for a in A]
    return sum(vals)


@prog((4, 3, 3))
def inv_trace(A):
    return sum(np.trace(np.linalg.inv(a + 3 * np.eye(3))) for a in A)


@prog((4, 5, 3))
def qr_rows(A):
    tot = 0.0
    for a in A:
        _, r = np.linalg.qr(a)
        tot += np.sum(np.abs(np.diag(r)))
    return tot


@prog((6, 4))
def norms_ord(X):
    out = vnp.zeros(X.shape[0])
    for i in range(X.shape[0]):
        out[i] = np.linalg.norm(X[i], ord=1) + np.linalg.norm(X[i], ord=np.inf) + np.linalg.norm(X[i])
    return np.sum(out)


@prog((4, 3, 3))
def det_fro(A):
    return sum(np.linalg.det(a) + np.linalg.norm(a, 'fro') for a in A)


# ---- einsum
@prog((5, 3, 4), (4, 2))
def einsum_loop(X, W):
    return sum(np.einsum('ij,jk->', x, W) + np.einsum('ij,ij', x, x) for x in X)


@prog((5, 3), (5, 3))
def einsum_rowdot(a, b):
    return np.sum(np.einsum('ni,ni->n', a, b) ** 2)


# ---- cumulative
@prog((5, 6))
def cumsum_rows(X):
    out = vnp.zeros_like(X)
    for i in range(X.shape[0]):
        out[i] = np.cumsum(X[i]) / (np.arange(X.shape[1]) + 1)
    return np.sum(out ** 2)


@prog((5, 6))
def cumprod_diff(X):
    return sum(np.sum(np.diff(np.cumprod(1 + 0.1 * x)) ** 2) for x in X)


@prog((5, 8))
def gradient_rows(X):
    return sum(np.sum(np.gradient(x) ** 2) for x in X)


@prog((5, 8))
def gradient_spacing(X):
    return sum(np.sum(np.gradient(x, 0.5) * x) for x in X)


@prog((5, 8))
def diff_n2(X):
    return sum(np.sum(np.diff(x, n=2) ** 2) + np.sum(np.diff(x, prepend=0.0)) for x in X)


# ---- shape ops
@prog((5, 6))
def roll_pad(X):
    tot = 0.0
    for x in X:
        y = np.pad(x, (1, 2), mode='edge') + np.pad(x, 1, mode='reflect').sum()
        tot = tot + np.sum(np.roll(x, 2) * x) + np.sum(y)
    return tot


@prog((4, 3))
def tile_repeat(X):
    return sum(np.sum(np.tile(x, 2) * np.repeat(x, 2)) for x in X)


@prog((4, 3, 3))
def flip_rot(X):
    return sum(np.sum(np.rot90(x) * np.flip(x, axis=0) + np.fliplr(x)) for x in X)


@prog((4, 5))
def pad_wrap_const(X):
    return sum(np.sum(np.pad(x, (2, 1), mode='wrap') ** 2 + np.pad(x, 1, constant_values=1.5).sum()) for x in X)


# ---- sort/select
@prog((5, 7))
def sort_topk(X):
    tot = 0.0
    for x in X:
        s = np.sort(x)[::-1]
        tot += np.sum(s[:3])
    return tot


@prog((5, 7))
def argsort_weights(X):
    return sum(np.sum(x[np.argsort(x)] * np.arange(7)) for x in X)


@prog((5, 7))
def argmax_pick(X):
    return sum(x[np.argmax(x)] - x[np.argmin(x)] for x in X)


@prog((5, 7))
def partition_kth(X):
    return sum(np.partition(x, 2)[2] + np.sum(np.partition(x, -2)[-2:]) for x in X)


@prog((5, 7))
def searchsorted_bins(X):
    edges = np.linspace(-2, 2, 5)
    tot = 0.0
    for x in X:
        k = np.searchsorted(edges, x)
        tot = tot + np.sum(x * k)
    return tot


# ---- clip/where/select/piecewise
@prog((5, 7))
def clip_where(X):
    tot = 0.0
    for x in X:
        y = np.where(x > 0, x, 0.1 * x)
        tot = tot + np.sum(np.clip(y, -0.5, 1) ** 2)
    return tot


@prog((5, 7))
def select_huber(X):
    return sum(np.sum(np.select([np.abs(x) < 1, x > 0], [0.5 * x ** 2, x - 0.5], -x - 0.5)) for x in X)


@prog((5, 7))
def piecewise_relu(X):
    return sum(np.sum(np.piecewise(x, [x < 0, x >= 0], [lambda t: 0.1 * t, lambda t: t ** 2])) for x in X)


@prog((5, 7))
def interp_rows(X):
    xp = np.linspace(-3, 3, 9)
    fp = np.sin(xp)
    return sum(np.sum(np.interp(x, xp, fp)) for x in X)


@prog((5, 7), (9,), argnums=(0, 1))
def interp_learned_fp(X, fp):
    xp = np.linspace(-3, 3, 9)
    return sum(np.sum(np.interp(x, xp, fp) ** 2) for x in X)


# ---- conv
@prog((5, 10), (3,), argnums=(0, 1))
def convolve_rows(X, k):
    return sum(np.sum(np.convolve(x, k, mode='valid') ** 2) for x in X)


@prog((5, 10), (3,), argnums=(0, 1))
def correlate_same(X, k):
    return sum(np.sum(np.correlate(x, k, mode='same') ** 2) + np.sum(np.convolve(x, k)) for x in X)


# ---- outer/kron/trace/tril
@prog((5, 3))
def outer_kron(X):
    return sum(np.trace(np.outer(x, x)) + np.sum(np.kron(x, x)) for x in X)


@prog((4, 4, 4))
def tril_triu(X):
    return sum(np.sum(np.tril(x, -1) ** 2) - np.sum(np.triu(x, 1)) + np.trace(x, offset=1) for x in X)


# ---- special elementwise
@prog((5, 7), (5, 7), argnums=(0, 1))
def logaddexp_hypot(a, b):
    tot = 0.0
    for x, y in zip(a, b):
        tot = tot + np.sum(np.logaddexp(x, y) + np.log1p(np.exp(-np.abs(x))) + np.expm1(0.1 * y)
                           + np.hypot(x, y) + np.arctan2(y, x))
    return tot


# ---- nan reductions / stats
@prog((5, 7))
def nan_reductions(X):
    tot = 0.0
    for x in X:
        y = np.where(x > 1.0, np.nan, x)
        tot = tot + np.nansum(y) + np.nanmean(y) + np.nanmax(y) + np.nanstd(y)
    return tot


@prog((5, 7))
def percentile_median(X):
    return sum(np.percentile(x, 75) + np.median(x) + np.quantile(x, 0.1) for x in X)


@prog((5, 7))
def quantile_methods(X):
    return sum(np.quantile(x, [0.25, 0.5], method='nearest').sum() + np.percentile(x, 30, method='lower') for x in X)


@prog((5, 20))
def histogram_weights(X):
    tot = 0.0
    for x in X:
        h, _ = np.histogram(x, bins=5, range=(-3, 3), weights=x ** 2)
        tot = tot + np.sum(h * np.arange(5))
    return tot


# ---- grids
@prog((5, 4))
def meshgrid_rbf(X):
    tot = 0.0
    for x in X:
        a, b = np.meshgrid(x, x)
        tot = tot + np.sum(np.exp(-(a - b) ** 2))
    return tot


@prog((6, 6))
def mgrid_mask(X):
    i, j = np.mgrid[0:6, 0:6]
    return np.sum(np.where(np.abs(i - j) <= 1, X, 0.0) ** 2)


@prog((6, 6))
def indices_mask(X):
    ii, jj = np.indices((6, 6))
    n = np.arange(6)
    mask = n[:, None] >= n[None, :]
    return np.sum(X * (ii < jj)) + np.sum(np.where(mask, X, -np.inf).max(axis=1))


# ---- softmax / logsumexp by hand
@prog((5, 7))
def softmax_hand(X):
    out = vnp.zeros_like(X)
    for i in range(X.shape[0]):
        z = X[i] - np.max(X[i], keepdims=True)
        e = np.exp(z)
        out[i] = e / np.sum(e, keepdims=True)
    return np.sum(out * np.arange(7))


@prog((5, 7))
def logsumexp_hand(X):
    tot = 0.0
    for x in X:
        m = np.max(x)
        tot = tot + m + np.log(np.sum(np.exp(x - m)))
    return tot


# ---- keyword args
@prog((4, 3, 5))
def keywords(X):
    tot = 0.0
    for x in X:
        tot = tot + np.sum(np.mean(x, axis=1, keepdims=True) * x) + np.sum(x, axis=(0, 1)) \
            + np.max(x, axis=0, initial=-10.0).sum() + np.sum(x, where=x > 0) \
            + np.sum(x, dtype=np.float64)
    return tot


@prog((4, 6))
def out_arg(X):
    out = vnp.zeros(6)
    tot = 0.0
    for x in X:
        np.multiply(x, 2.0, out=out)
        tot = tot + np.sum(out * x)
    return tot


@prog((4, 6))
def std_ddof(X):
    return sum(np.std(x, ddof=1) + np.var(x, ddof=1) for x in X)


@prog((5, 6))
def cov_corr(X):
    return np.sum(np.cov(X)) + np.sum(np.corrcoef(X.T) ** 2)


@prog((5, 6))
def unique_counts(X):
    tot = 0.0
    for x in X:
        r = np.round(x)
        u = np.unique(r)
        tot = tot + np.sum(x) * len(u)
    return tot


@prog((5, 6))
def average_weights(X):
    w = np.arange(1, 7.0)
    return sum(np.average(x, weights=w) for x in X)


@prog((6,), (6,), argnums=(0, 1))
def cross_polyval(a, b):
    return np.sum(np.cross(a[:3], b[:3])) + np.polyval(a, 0.5) + np.sum(np.polyval(a, b))


@prog((5, 7))
def cumsum_axis_keep(X):
    return np.sum(np.cumsum(X, axis=1)[:, -1]) + np.sum(np.cumsum(X[::-1], axis=0) ** 2)


@prog((5, 7))
def take_along(X):
    idx = np.argsort(X, axis=1)
    return np.sum(np.take_along_axis(X, idx, axis=1) * np.arange(7))


@prog((5, 7))
def ptp_allclose(X):
    return sum(np.ptp(x) + np.sum(np.abs(x) ** 1.5) for x in X)


@prog((5, 7))
def sinc_heaviside(X):
    return sum(np.sum(np.sinc(x) + np.heaviside(x, 0.5) * x) for x in X)


@prog((8,))
def fft_power(x):
    return np.sum(np.abs(np.fft.rfft(x)) ** 2)


@prog((4, 6))
def matrix_power(X):
    return sum(np.sum(np.linalg.matrix_power(np.outer(x[:3], x[3:]) * 0.3 + np.eye(3), 3)) for x in X)


@prog((5, 4))
def pinv_lstsq(X):
    y = np.arange(5.0)
    coef = np.linalg.lstsq(X, y, rcond=None)[0]
    return np.sum(coef ** 2) + np.sum(np.linalg.pinv(X))


@prog((3, 4, 4))
def eigh_loop(X):
    return sum(np.sum(np.linalg.eigh(x + x.T)[0] ** 2) + np.sum(np.linalg.eigvalsh(x @ x.T)) for x in X)


@prog((3, 4, 3))
def svd_loop(X):
    return sum(np.sum(np.linalg.svd(x, compute_uv=False)) + np.linalg.norm(x, 2) + np.linalg.norm(x, 'nuc') for x in X)


@prog((5, 7))
def count_nonzero_mask(X):
    return sum(np.sum(x) * np.count_nonzero(x > 0) + np.sum(x[x > 0]) for x in X)


@prog((6, 5))
def buffer_int_count(X):
    counts = vnp.zeros(3, dtype=int)
    acc = vnp.zeros(3)
    for i in range(X.shape[0]):
        k = i % 3
        counts[k] += 1
        acc[k] += np.sum(X[i])
    return np.sum(acc / counts)


@prog((5, 7))
def clip_scalar_kw(X):
    return sum(np.sum(np.clip(x, a_min=None, a_max=0.5)) + np.sum(np.clip(x, 0, None) ** 2) for x in X)


@prog((5, 7))
def round_floor(X):
    return sum(np.sum(x * np.floor(x) + np.round(x, 1) * x + np.sign(x) * x) for x in X)


@prog((4, 6))
def stack_hsplit(X):
    tot = 0.0
    for x in X:
        a, b = np.split(x, 2)
        p, q, r = np.array_split(x, 3)
        tot = tot + np.sum(np.vstack([a, b]) ** 2) + np.sum(np.column_stack([a, b])) + np.sum(p * q * r)
    return tot


@prog((4, 6))
def apply_along(X):
    return np.sum(np.apply_along_axis(lambda r: np.sum(r ** 2), 1, X))


@prog((5, 7))
def nan_to_num_isfinite(X):
    return sum(np.sum(np.nan_to_num(np.log(np.abs(x)), neginf=0.0)) + np.sum(np.isfinite(x) * x) for x in X)


@prog((5, 7))
def logspace_geom(X):
    w = np.logspace(0, 1, 7)
    g = np.geomspace(1, 10, 7)
    return sum(np.dot(x, w) + np.dot(x, g) for x in X)


@prog((5, 7))
def cummax_accumulate(X):
    return sum(np.sum(np.maximum.accumulate(x)) + np.sum(np.minimum.accumulate(x) ** 2) for x in X)


@prog((4, 3, 5))
def moveaxis_swap(X):
    return np.sum(np.moveaxis(X, 0, -1) * np.swapaxes(X, 0, 2).transpose(2, 1, 0).transpose(2, 1, 0).swapaxes(0, 2).transpose(1, 2, 0))


@prog((5, 8))
def diff_axis_pad(X):
    d = np.diff(X, axis=1, append=X[:, :1])
    return np.sum(d ** 2) + np.sum(np.diff(X, axis=0) ** 2)


@prog((6,))
def vander_polyfit(x):
    V = np.vander(x, 3)
    return np.sum(V @ np.ones(3)) + np.sum(np.polyfit(np.arange(6.0), x, 2))


@prog((5, 7))
def amax_keep_argmax_axis(X):
    i = np.argmax(X, axis=1)
    return np.sum(np.amax(X, axis=1, keepdims=True) - X) + np.sum(X[np.arange(5), i])


@prog((5, 7), argnums=())
def float32_buffer(X):
    buf = vnp.zeros(7, dtype=np.float32)
    for x in X:
        buf += x
    return np.sum(buf.astype(np.float64) ** 2)


@prog((5, 7))
def bincount_w(X):
    idx = np.array([0, 1, 1, 2, 3, 3, 3])
    return sum(np.sum(np.bincount(idx, weights=x) ** 2) for x in X)


@prog((5, 7))
def digitize_loop(X):
    bins = np.array([-1.0, 0.0, 1.0])
    return sum(np.sum(x * np.digitize(x, bins)) for x in X)


@prog((5, 7))
def isclose_allclose(X):
    return sum(np.sum(np.where(np.isclose(x, 0.0, atol=0.5), 0.0, x)) for x in X)


@prog((5, 7))
def trapz(X):
    return sum(np.trapezoid(x, dx=0.1) for x in X)


@prog((5, 7))
def ediff_cumtrapz(X):
    return sum(np.sum(np.ediff1d(x) ** 2) for x in X)


@prog((5, 5))
def diag_fill(X):
    tot = 0.0
    for i in range(X.shape[0]):
        M = np.outer(X[i], X[i])
        np.fill_diagonal(M, 1.0)
        tot = tot + np.sum(M)
    return tot


@prog((5, 7))
def sort_axis0_kw(X):
    return np.sum(np.sort(X, axis=0)[-1]) + np.sum(np.sort(X, axis=None)[:3]) + np.sum(-np.sort(-X, kind='stable'))


@prog((5, 7))
def median_axis(X):
    return np.sum(np.median(X, axis=0)) + np.sum(np.percentile(X, [10, 90], axis=1))


@prog((5, 7))
def nanmedian_q(X):
    Y = np.where(X > 1, np.nan, X)
    return np.sum(np.nanmedian(Y, axis=1)) + np.nanpercentile(Y, 40) + np.sum(np.nanquantile(Y, 0.5, axis=0))


@prog((5, 7))
def argpartition_topk(X):
    tot = 0.0
    for x in X:
        idx = np.argpartition(x, -3)[-3:]
        tot = tot + np.sum(x[idx])
    return tot


@prog((5, 7))
def lexsort_loop(X):
    tot = 0.0
    for x in X:
        o = np.lexsort((x, np.round(x)))
        tot = tot + np.sum(x[o] * np.arange(7))
    return tot


@prog((5, 4))
def kron_eye(X):
    return sum(np.sum(np.kron(np.eye(2), np.outer(x, x))) for x in X)


@prog((5, 7))
def where_scalar_int(X):
    return sum(np.sum(np.where(x > 0, 1, -1) * x) + np.sum(np.clip(x, -1, 1.0)) for x in X)


@prog((5, 7))
def logical_ops(X):
    return sum(np.sum(x[np.logical_and(x > -1, x < 1)]) + np.sum(np.where(np.logical_or(x < -1, x > 1), x, 0)) for x in X)


@prog((5, 7))
def cumsum_dtype_out(X):
    out = vnp.zeros(7)
    tot = 0.0
    for x in X:
        np.cumsum(x, out=out)
        tot = tot + np.sum(out ** 2)
    return tot


@prog((5, 7))
def einsum_optimize(X):
    return np.einsum('ij,ik,jk->', X, X, np.ones((7, 7)), optimize=True)


@prog((3, 4, 4), (3, 4, 4), argnums=(0, 1))
def matmul_chain(A, B):
    return np.sum(np.linalg.multi_dot([A[0], B[0], A[1]])) + np.sum(np.matmul(A, B)) + np.sum(A @ np.swapaxes(B, -1, -2))


@prog((5, 7))
def float_power_cbrt(X):
    return sum(np.sum(np.cbrt(x) + np.float_power(np.abs(x) + 1, 1.5) + np.square(x) + np.reciprocal(x + 10)) for x in X)


@prog((5, 6))
def ravel_reshape_flatten(X):
    return sum(np.sum(x.reshape(2, 3).T.ravel() * x) + np.sum(x.reshape(-1, 2).flatten()) for x in X)


