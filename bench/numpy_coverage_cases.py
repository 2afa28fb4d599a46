"""The calls bench/numpy_coverage.py checks: NumPy functions, ndarray methods, ufunc methods,
np.linalg and np.fft, each written the way ML and scientific code calls it.

Inputs by name (the loop check gives every name but those in SHARED a leading axis of samples):
x, y (3, 4) normal; v, u (4,) normal; M (4, 4) well conditioned; S (4, 4) symmetric positive
definite; P (3, 4) in [0.5, 2]; c (3, 4) in (-0.9, 0.9); G (3, 4) above 1.1; h (3, 4) float32;
n (3, 4) int64 in [-5, 5]; k (3, 4) int64 in [1, 4]; i (5,) int64 indices below 4 (shared);
b (3, 4) bool (shared); q (6,) sorted grid (shared); z (3, 4) complex.
"""
from __future__ import annotations

import numpy as np


def _spd(r):
    a = r.standard_normal((4, 4))
    return a @ a.T + 4 * np.eye(4)


INPUTS = {
    "x": lambda r: r.standard_normal((3, 4)),
    "y": lambda r: r.standard_normal((3, 4)),
    "v": lambda r: r.standard_normal(4),
    "u": lambda r: r.standard_normal(4),
    "M": lambda r: r.standard_normal((4, 4)) + 4 * np.eye(4),
    "S": _spd,
    "P": lambda r: r.uniform(0.5, 2.0, (3, 4)),
    "c": lambda r: r.uniform(-0.9, 0.9, (3, 4)),
    "G": lambda r: r.uniform(1.1, 3.0, (3, 4)),
    "h": lambda r: r.standard_normal((3, 4)).astype(np.float32),
    "n": lambda r: r.integers(-5, 6, (3, 4)),
    "k": lambda r: r.integers(1, 5, (3, 4)),
    "i": lambda r: r.integers(0, 4, 5),
    "b": lambda r: r.random((3, 4)) > 0.5,
    "q": lambda r: np.sort(r.uniform(-2, 2, 6)),
    "z": lambda r: r.standard_normal((3, 4)) + 1j * r.standard_normal((3, 4)),
}
FLOATS = {"x", "y", "v", "u", "M", "S", "P", "c", "G"}
SHARED = {"i", "b", "q"}

CASES = [
    # -- elementwise math -------------------------------------------------------------------
    "np.exp(x)", "np.expm1(x)", "np.exp2(x)", "np.log(P)", "np.log1p(P)", "np.log2(P)",
    "np.log10(P)", "np.sqrt(P)", "np.cbrt(x)", "np.square(x)", "np.reciprocal(P)",
    "np.power(P, 1.5)", "np.power(P, y)", "np.float_power(P, 2)", "x ** 2", "P ** y",
    "np.abs(x)", "np.absolute(x)", "np.fabs(x)", "np.sign(x)", "np.negative(x)", "np.positive(x)",
    "np.sin(x)", "np.cos(x)", "np.tan(c)", "np.arcsin(c)", "np.arccos(c)", "np.arctan(x)",
    "np.arctan2(x, y)", "np.sinh(x)", "np.cosh(x)", "np.tanh(x)", "np.arcsinh(x)",
    "np.arccosh(G)", "np.arctanh(c)", "np.hypot(x, y)", "np.deg2rad(x)", "np.rad2deg(x)",
    "np.degrees(x)", "np.radians(x)", "np.sinc(x)", "np.logaddexp(x, y)", "np.logaddexp2(x, y)",
    "np.floor(x)", "np.ceil(x)", "np.trunc(x)", "np.rint(x)", "np.round(x, 2)", "np.around(x)",
    "np.fix(x)", "np.mod(x, 0.7)", "np.fmod(x, 0.7)", "np.remainder(n, 3)", "np.divmod(n, 3)",
    "np.floor_divide(x, 0.7)", "x // 0.7", "x % 0.7", "np.true_divide(x, P)", "np.divide(x, 2)",
    "np.multiply(x, y)", "np.add(x, y)", "np.subtract(x, y)", "np.maximum(x, y)",
    "np.minimum(x, 0.0)", "np.fmax(x, y)", "np.fmin(x, y)", "np.clip(x, -0.5, 0.5)",
    "np.clip(x, a_min=-0.5, a_max=None)", "np.clip(x, y, 1.0)", "x.clip(min=0)",
    "np.heaviside(x, 0.5)", "np.copysign(x, y)", "np.nan_to_num(x / (x > 0))",
    "np.nan_to_num(np.log(x), nan=0.0, neginf=-1.0)", "np.exp(x, dtype=np.float32)",
    "np.add(x, y, dtype=np.float32)", "np.signbit(x)", "np.isnan(x)", "np.isinf(x / 0.5)",
    "np.isfinite(x)", "np.isclose(x, y, atol=1.0)", "np.allclose(x, x + 1e-9)",
    "np.array_equal(x, x)", "np.real(z)", "np.imag(z)", "np.conj(z)", "np.angle(z)",
    "np.abs(z)", "np.real_if_close(x)", "np.modf(x)", "np.frexp(x)", "np.ldexp(x, 2)",
    "np.spacing(x)", "np.nextafter(x, y)", "np.gcd(n, 6)", "np.lcm(k, 6)",
    "np.left_shift(k, 2)", "np.bitwise_and(n, 3)", "np.invert(b)", "np.logical_and(b, x > 0)",
    "np.logical_or(b, x > 0)", "np.logical_not(b)", "np.logical_xor(b, x > 0)",
    "np.greater(x, y)", "np.less_equal(x, 0)", "np.equal(n, 2)", "np.not_equal(n, 2)",
    "np.where(x > 0, x, 0.1 * x)", "np.where(b, x, y)", "np.where(x > 0, 1.0, 0.0)",
    "np.select([x < -0.5, x > 0.5], [x ** 2, x], default=0.0)",
    "np.piecewise(x, [x < 0, x >= 0], [lambda t: -t, lambda t: t ** 2])",
    "np.interp(x, q, q ** 2)", "np.interp(v, q, q ** 2, left=0.0, right=1.0)",
    # -- reductions -------------------------------------------------------------------------
    "np.sum(x)", "np.sum(x, axis=0)", "np.sum(x, axis=-1, keepdims=True)",
    "np.sum(x, axis=(0, 1))", "np.sum(h, dtype=np.float64)", "np.sum(n)", "np.sum(b)",
    "np.sum(x, where=b)", "np.sum(x, initial=1.0)", "x.sum(1)", "x.sum(axis=0, keepdims=True)",
    "np.mean(x)", "np.mean(x, axis=1)", "np.mean(x, axis=0, keepdims=True)", "np.mean(n)",
    "np.mean(h)", "np.mean(x, where=b)", "x.mean(-1)", "np.average(x, axis=1)",
    "np.average(x, axis=1, weights=P)", "np.average(x, weights=P, returned=True)",
    "np.var(x)", "np.var(x, axis=0, ddof=1)", "np.std(x, axis=1, keepdims=True)",
    "x.std()", "x.var(ddof=1)", "np.prod(P)", "np.prod(P, axis=1)", "x.prod(0)",
    "np.max(x)", "np.max(x, axis=1)", "np.amax(x, axis=0, keepdims=True)", "np.min(x)",
    "np.amin(x, axis=-1)", "x.max(axis=1)", "x.min()", "np.max(x, axis=0, initial=0.5)",
    "np.max(x, where=b, initial=-1.0)", "np.ptp(x, axis=1)", "np.argmax(x)",
    "np.argmax(x, axis=1)", "np.argmin(x, axis=0)", "x.argmax(-1)",
    "np.argmax(x, axis=1, keepdims=True)", "np.all(x > -3)", "np.any(x > 1, axis=0)",
    "(x > 0).all(axis=1)", "(x > 0).any()", "np.count_nonzero(x > 0)",
    "np.count_nonzero(x > 0, axis=1)", "np.median(x)", "np.median(x, axis=1)",
    "np.quantile(x, 0.3)", "np.quantile(x, [0.25, 0.75], axis=1)", "np.percentile(x, 90, axis=0)",
    "np.nansum(x)", "np.nanmean(x, axis=1)", "np.nanmax(x, axis=0)", "np.nanstd(x)",
    "np.nanmin(x)", "np.nanvar(x, axis=1)", "np.nanargmax(x, axis=1)",
    "np.nanmedian(x, axis=0)", "np.cumsum(x)", "np.cumsum(x, axis=1)", "x.cumsum(0)",
    "np.cumprod(P, axis=1)", "np.nancumsum(x, axis=0)", "np.diff(x)", "np.diff(x, n=2, axis=1)",
    "np.diff(x, axis=0, prepend=0.0)", "np.ediff1d(v)", "np.gradient(v)",
    "np.gradient(x, axis=1)", "np.trapezoid(x, axis=1)", "np.trapezoid(v, dx=0.5)",
    "np.linalg.norm(x)", "np.linalg.norm(x, axis=1)", "np.linalg.norm(x, ord=1, axis=0)",
    "np.linalg.norm(x, axis=1, keepdims=True)", "np.linalg.norm(v, ord=np.inf)",
    "np.linalg.norm(M, ord='fro')", "np.linalg.norm(M, ord=2)", "np.linalg.norm(M, 'nuc')",
    "np.cov(x)", "np.cov(x, rowvar=False)", "np.corrcoef(x)", "np.correlate(v, u, 'full')",
    "np.convolve(v, u)", "np.convolve(v, u, mode='same')", "np.convolve(v, u, mode='valid')",
    "np.histogram(x, bins=4, range=(-2, 2))", "np.bincount(np.abs(n).ravel())",
    "np.bincount(i, weights=v[i])", "np.digitize(x, q)", "np.searchsorted(q, x)",
    "np.searchsorted(q, v, side='right')",
    # -- products ---------------------------------------------------------------------------
    "np.dot(x, v)", "np.dot(v, u)", "x @ M", "M @ v", "np.matmul(x, M)", "x.dot(M)",
    "np.inner(x, y)", "np.outer(v, u)", "np.vdot(v, u)", "np.tensordot(x, M, axes=1)",
    "np.tensordot(x, y, axes=([1], [1]))", "np.tensordot(M, M, axes=2)",
    "np.einsum('ij,jk->ik', x, M)", "np.einsum('ij,ij->i', x, y)", "np.einsum('ii->', M)",
    "np.einsum('i,j->ij', v, u)", "np.einsum('...j,jk', x, M)",
    "np.einsum('ij,kj->ik', x, y, optimize=True)", "np.kron(v, u)", "np.cross(v[:3], u[:3])",
    "np.trace(M)", "M.trace()", "np.linalg.multi_dot([x, M, M])", "np.matrix_power(M, 3)"
    if hasattr(np, "matrix_power") else "np.linalg.matrix_power(M, 3)", "np.vecdot(x, y)",
    "np.linalg.matmul(x, M)", "np.linalg.vecdot(x, y)", "np.linalg.outer(v, u)",
    # -- linalg -----------------------------------------------------------------------------
    "np.linalg.inv(M)", "np.linalg.solve(M, v)", "np.linalg.solve(M, x.T)", "np.linalg.det(M)",
    "np.linalg.slogdet(S)", "np.linalg.cholesky(S)", "np.linalg.eigh(S)", "np.linalg.eigvalsh(S)",
    "np.linalg.svd(x, full_matrices=False)", "np.linalg.svd(x, compute_uv=False)",
    "np.linalg.qr(M)", "np.linalg.pinv(x)", "np.linalg.lstsq(M, v, rcond=None)",
    "np.linalg.matrix_rank(M)", "np.linalg.eig(S)", "np.linalg.eigvals(M)",
    "np.linalg.cond(M)", "np.linalg.matrix_power(M, 2)", "np.linalg.tensorsolve(M, v)",
    "np.linalg.matrix_norm(M)", "np.linalg.vector_norm(x, axis=1)", "np.linalg.diagonal(M)",
    "np.linalg.trace(M)", "np.linalg.inv(M) @ v", "np.linalg.solve(S, M)",
    # -- fft --------------------------------------------------------------------------------
    "np.fft.fft(v)", "np.fft.ifft(v)", "np.fft.rfft(v)", "np.fft.irfft(np.fft.rfft(v))",
    "np.fft.fft2(M)", "np.fft.rfft(x, axis=1)", "np.abs(np.fft.rfft(x, n=8))",
    "np.fft.fftshift(v)", "np.fft.fftfreq(4)", "np.real(np.fft.ifft(np.fft.fft(x) * 2))",
    # -- shapes and joins -------------------------------------------------------------------
    "np.reshape(x, (4, 3))", "x.reshape(-1)", "x.reshape(2, 6)", "x.reshape((2, -1), order='F')",
    "np.ravel(x)", "x.flatten()", "x.ravel(order='F')", "x.T", "np.transpose(x)",
    "x.transpose(1, 0)", "np.swapaxes(x, 0, 1)", "np.moveaxis(x[None], 0, -1)",
    "np.expand_dims(x, 1)", "x[:, None, :]", "np.squeeze(x[None])", "x[None].squeeze(0)",
    "np.atleast_2d(v)", "np.atleast_1d(x[0, 0])", "np.atleast_3d(x)",
    "np.concatenate([x, y])", "np.concatenate((x, y), axis=1)", "np.concatenate([x, y], axis=None)",
    "np.stack([x, y])", "np.stack([x, y], axis=-1)", "np.vstack([x, y])", "np.hstack([x, y])",
    "np.dstack([x, y])", "np.column_stack([v, u])", "np.row_stack([v, u])"
    if hasattr(np, "row_stack") else "np.vstack([v, u])", "np.block([[M, M], [M, M]])",
    "np.split(x, 2, axis=1)", "np.array_split(x, 3, axis=1)", "np.hsplit(x, 2)",
    "np.vsplit(x, 3)", "np.tile(v, 2)", "np.tile(x, (2, 1))", "np.repeat(x, 2, axis=0)",
    "np.repeat(v, [1, 2, 0, 1])", "x.repeat(2)", "np.broadcast_to(v, (3, 4))",
    "np.broadcast_arrays(x, v)", "np.flip(x)", "np.flip(x, axis=1)", "np.fliplr(x)",
    "np.flipud(x)", "np.rot90(x)", "np.roll(x, 1)", "np.roll(x, -1, axis=1)",
    "np.roll(x, (1, 2), axis=(0, 1))", "np.pad(x, 1)", "np.pad(x, ((0, 0), (1, 2)), mode='edge')",
    "np.pad(x, 1, mode='reflect')", "np.pad(x, 1, constant_values=0.5)",
    "np.pad(v, 2, mode='wrap')", "np.diag(v)", "np.diag(M)", "np.diag(M, k=1)",
    "np.diagonal(M)", "M.diagonal(1)", "np.diagflat(v)", "np.tril(M)", "np.triu(M, k=1)",
    "np.tril(M, -1)", "np.append(v, u)", "np.append(x, y, axis=0)", "np.insert(v, 1, 0.5)",
    "np.delete(x, 1, axis=1)", "np.resize(v, 6)", "np.trim_zeros(np.maximum(v, 0))",
    "np.copy(x)", "x.copy()", "np.asarray(x)", "np.array(x)", "np.array([x, y])",
    "np.asarray([v, u, v])", "np.array([[v[0], v[1]], [u[0], u[1]]])",
    "np.ascontiguousarray(x.T)", "np.asfortranarray(x)", "x.astype(np.float32)",
    "x.astype('int64')", "n.astype(float)", "x.astype(np.float32).astype(np.float64)",
    "np.float32(x)", "np.asarray(x, dtype=np.float32)", "np.array(n, dtype=float)",
    "x.view()", "np.meshgrid(v, u)", "np.meshgrid(v, u, indexing='ij')",
    "np.ix_(i, i)", "x[np.ix_([0, 2], [1, 3])]",
    # -- indexing ---------------------------------------------------------------------------
    "x[i % 3]", "x[:, i]", "x[b]", "np.where(b)", "np.nonzero(b)", "np.argwhere(b)",
    "np.flatnonzero(b)", "np.take(v, i)", "np.take(x, i, axis=1)", "x.take(i, axis=1)",
    "np.take_along_axis(x, np.argsort(x, axis=1), axis=1)",
    "np.take_along_axis(x, np.argmax(x, axis=1, keepdims=True), axis=1)",
    "np.put_along_axis(x.copy(), np.argmax(x, axis=1, keepdims=True), 0.0, axis=1)",
    "np.choose(k - 1, [x, y, x, y])", "np.compress([True, False, True], x, axis=0)",
    "np.extract(b, x)", "np.unravel_index(np.argmax(x), x.shape)",
    "np.ravel_multi_index((i, i), (4, 4))", "x[..., 0]", "x[::-1, ::2]", "x[1:, -2:]",
    "x[[0, 2]][:, [1, 3]]", "x[x > 0]", "x[np.arange(3), [0, 1, 2]]",
    "x.flat[[1, 5]]", "x[0, 0]", "np.diag_indices(4)",
    "M[np.diag_indices(4)]", "M[np.tril_indices(4)]", "M[np.triu_indices(4, 1)]",
    "np.indices((2, 3))", "np.select([b], [x], 0.0)",
    # -- sorting, sets ----------------------------------------------------------------------
    "np.sort(x)", "np.sort(x, axis=0)", "np.sort(x, axis=None)", "x.T.copy()",
    "np.argsort(x)", "np.argsort(x, axis=0)", "np.argsort(-x, axis=1, kind='stable')",
    "np.partition(x, 1, axis=1)", "np.argpartition(x, 1, axis=1)[:, :1]", "np.lexsort((n[0], n[1]))",
    "np.unique(n)", "np.unique(n, return_counts=True)", "np.unique(x, axis=0)",
    "np.isin(n, [1, 2])", "np.in1d(n, [1, 2])" if hasattr(np, "in1d") else "np.isin(n, [1, 2, 3])",
    "np.intersect1d(n[0], n[1])", "np.union1d(n[0], n[1])", "np.setdiff1d(n[0], n[1])",
    "np.msort(x)" if hasattr(np, "msort") else "np.sort(x, axis=0)",
    # -- creation ---------------------------------------------------------------------------
    "np.zeros_like(x)", "np.ones_like(x)", "np.full_like(x, 2.0)", "np.empty_like(x).shape",
    "np.zeros_like(x, dtype=np.int32)", "np.zeros(x.shape) + x", "np.ones((3, 4)) * x",
    "np.full(x.shape, 0.5) * x", "np.eye(4) @ M", "np.eye(3, 4, k=1) * x", "np.identity(4) * M",
    "np.arange(4) * v", "np.arange(0.0, 1.0, 0.25) * v", "np.linspace(0, 1, 4) * v",
    "np.linspace(0, 1, 4, endpoint=False) * v", "np.logspace(0, 1, 4) * v",
    "np.geomspace(1, 8, 4) * v", "np.tri(4) * M", "np.vander(v, 3)", "np.vander(v, increasing=True)",
    "np.polyval([1.0, 2.0, 3.0], x)", "np.polyval(v, x)", "np.polyfit(q, q ** 2, 2)",
    "np.poly1d([1.0, 2.0])(x)", "np.polyder([1.0, 2.0, 3.0])", "np.polyint(v)",
    "np.polynomial.polynomial.polyval(x, v)",
    "np.histogram2d(x.ravel(), y.ravel(), bins=3)[0]", "np.fromfunction(lambda a, c: a + c, (2, 3))",
    # -- ndarray methods and attributes ----------------------------------------------------
    "x.shape", "x.ndim", "x.size", "x.dtype", "len(x)", "x.nbytes", "x.itemsize",
    "x.real", "z.imag", "z.conj()", "x.conjugate()", "x.round(1)", "x.sort(axis=1) or x",
    "x.argsort(axis=0)", "x.nonzero()", "x.all()", "x.any(axis=1)", "x.cumprod(axis=1)",
    "x.squeeze()", "x.swapaxes(0, 1)", "x.tolist()", "x.item(3)", "x.fill(0.0) or x",
    "q.searchsorted(v)", "x.__abs__()", "x.__neg__()",
    "x.__matmul__(M)", "-x", "+x", "abs(x)", "x != y", "~b", "b & (x > 0)", "b | (x > 0)",
    "b ^ (x > 0)", "n << 1", "n >> 1", "n & 3", "n | 3", "x.min(axis=0, keepdims=True)",
    "x.max(initial=10.0)", "x.partition(1) or x", "x.setflags(write=True) or x",
    "x.put([0, 5], [1.0, 2.0]) or x", "x.ptp()" if hasattr(np.ndarray, "ptp") else "np.ptp(x)",
    # -- ufunc methods ----------------------------------------------------------------------
    "np.add.reduce(x, axis=1)", "np.add.reduce(x, axis=None)", "np.multiply.reduce(P, axis=0)",
    "np.maximum.reduce(x, axis=1)", "np.minimum.reduce(x)", "np.logical_and.reduce(b, axis=0)",
    "np.add.accumulate(x, axis=1)", "np.maximum.accumulate(x, axis=1)",
    "np.multiply.accumulate(P)", "np.multiply.outer(v, u)", "np.subtract.outer(v, u)",
    "np.add.outer(v, u)", "np.add.reduceat(v, [0, 2])", "np.add.reduceat(x, [0, 1], axis=1)",
    "np.add.at(np.zeros(4), i, 1.0)", "np.add(x, y, out=np.empty_like(x))",
    "np.exp(x, out=np.zeros_like(x))", "np.multiply(x, 2, where=b, out=np.zeros_like(x))",
    "np.add(x, 1.0, where=b)", "np.maximum.at(np.zeros(4), i, 1.0)",
    # -- statistics and special -------------------------------------------------------------
    "np.histogram_bin_edges(x, bins=3)", "np.apply_along_axis(np.sum, 1, x)",
    "np.apply_along_axis(lambda r: r / r.sum(), 0, P)", "np.vectorize(lambda t: t * 2)(x)",
    "np.frompyfunc(lambda t: t * 2, 1, 1)(x)", "np.i0(x)", "np.sinc(x) ** 2",
    "np.finfo(x.dtype).eps * x", "np.iinfo(np.int32).max + n", "np.result_type(x, 1)",
    "np.can_cast(x, np.float32)", "np.promote_types('f4', 'f8')", "np.shape(x)", "np.ndim(x)",
    "np.size(x)", "np.isscalar(x)", "np.iscomplexobj(z)", "np.isrealobj(x)",
    "np.broadcast_shapes((3, 1), (4,))", "np.errstate(all='ignore').__enter__() and x",
    "np.einsum_path('ij,jk', x, M)[0]",
    # -- added in session 25: x[mask] read, index tricks, coordinates, vectorize ----------------
    "np.sum(x[x > 0])", "x[b].mean()", "np.mean(x[x > 0] ** 2)", "np.linalg.norm(v[v > 0])",
    "np.count_nonzero(x[b] > 0)", "x[x[:, 0] > 0].sum(axis=0)", "np.r_[v, 0.0]", "np.c_[v, u]",
    "np.r_[0:2, v]", "np.gradient(v, q[:4])", "np.gradient(x, q[:4], axis=1, edge_order=2)",
    "np.vectorize(np.tanh)(x)", "np.vectorize(lambda s, t: s * t + 1.0)(x, y)",
    # -- added in session 26: masks past the leading axis, np.poly1d of traced coefficients ----
    "np.sum(x[:, x[0] > 0], axis=1)", "x[:, v > 0].mean(axis=1)", "np.sum(x[x[:, 0] > 0, 1:])",
    "np.sum(x[1, v > 0])", "np.poly1d(v)(x)", "np.poly1d(v).deriv()(x)",
    "(np.poly1d(v[:2]) * np.poly1d(u))(x)", "np.poly1d(np.polyfit(q[:4], v, 2))(x)",
    # -- added in session 30: np.vectorize of kernels with Python ifs on an element's value ----
    "np.vectorize(lambda t: t * t if t > 0 else -t)(x)",
    "np.vectorize(lambda s, t: s - t if s > t else 0.5 * (s + t))(x, y)",
    "np.vectorize(lambda t: np.sqrt(t) if t > 0.1 else t, otypes=[float])(x)",
]

# -- generated: reductions with each axis / keepdims / dtype / out, as functions and methods ----
_RED = ["sum", "mean", "std", "var", "max", "min", "prod", "any", "all", "argmax", "argmin",
        "median", "nansum", "nanmean", "nanmax", "nanstd", "ptp", "cumsum", "cumprod",
        "count_nonzero", "average", "nanmedian", "amax", "nanprod", "nancumprod"]
_METHODS = {"sum", "mean", "std", "var", "max", "min", "prod", "any", "all", "argmax",
            "argmin", "cumsum", "cumprod"}
_NO_KEEPDIMS = {"cumsum", "cumprod", "nancumprod"}
for _f in _RED:
    for _ax in ["None", "0", "-1", "(0, 1)", "(-1, 0)"]:
        for _kd in ([""] if _f in _NO_KEEPDIMS else ["", ", keepdims=True"]):
            CASES.append(f"np.{_f}(x, axis={_ax}{_kd})")
            if _f in _METHODS and _ax != "(-1, 0)":
                CASES.append(f"x.{_f}(axis={_ax}{_kd})")
for _f in ["sum", "mean", "prod", "cumsum", "nansum", "std", "var"]:
    for _dt in ["np.float32", "np.float64", "'f4'", "np.int64"]:
        CASES.append(f"np.{_f}(P, axis=0, dtype={_dt})")
        CASES.append(f"np.{_f}(n, dtype={_dt})")
        CASES.append(f"np.{_f}(h, axis=-1, dtype={_dt})")
for _f in ["sum", "mean", "max", "min", "prod", "cumsum", "std", "argmax"]:
    CASES.append(f"np.{_f}(x, axis=1, out=np.zeros_like(x[:, 0]))")
for _f in ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "arctan2",
           "hypot", "logaddexp", "fmax", "copysign"]:
    _a = "P" if _f == "power" else "x"
    CASES.append(f"np.{_f}({_a}, y, out=np.empty_like(x))")
    CASES.append(f"np.{_f}({_a}, y, where=b, out=np.zeros_like(x))")
    CASES.append(f"np.{_f}({_a}, 2)")
    CASES.append(f"np.{_f}(2.0, {_a})")
    CASES.append(f"np.{_f}({_a}, v)")
    CASES.append(f"np.{_f}({_a}[:, :1], v[None, :])")
    CASES.append(f"np.{_f}.reduce({_a}, axis=0)" if _f not in ("arctan2", "hypot", "copysign")
                 else f"np.{_f}({_a}, y, dtype=np.float32)")
    CASES.append(f"np.{_f}.accumulate({_a}, axis=1)")
    CASES.append(f"np.{_f}.outer(v, u)")
    CASES.append(f"np.{_f}(h, 2)")
    CASES.append(f"np.{_f}(h, 2.5)")
    CASES.append(f"np.{_f}(h, np.float64(2.5))")
    CASES.append(f"np.{_f}(n, 2)")
    CASES.append(f"np.{_f}(n, 2.5)")
for _f in ["exp", "log", "sqrt", "sin", "tanh", "abs", "square", "negative", "floor", "sign",
           "log1p", "expm1", "reciprocal", "arctan", "cosh"]:
    CASES.append(f"np.{_f}(P, out=np.empty_like(P))")
    CASES.append(f"np.{_f}(P, where=b, out=np.ones_like(P))")
    CASES.append(f"np.{_f}(P, dtype=np.float32)")
    CASES.append(f"np.{_f}(n)" if _f not in ("log", "sqrt", "reciprocal", "log1p") else
                 f"np.{_f}(k)")
    CASES.append(f"np.{_f}(h)")
    CASES.append(f"np.{_f}(P[0, 0])")
    CASES.append(f"np.{_f}(b)" if _f in ("abs", "square", "negative", "sign", "floor")
                 else f"np.{_f}(2)")
CASES = list(dict.fromkeys(CASES))

# -- generated: out= written and returned (the buffer must hold the result too) --------------
for _f in ["sum", "mean", "std", "var", "max", "min", "prod", "nansum", "nanmean", "nanstd",
           "nanvar", "nanmax", "nanmin", "nanprod", "median", "nanmedian", "ptp", "amax",
           "amin", "average" if False else "all", "any", "argmax", "argmin", "nanargmax",
           "cumsum", "cumprod", "nancumsum", "trapezoid" if False else "count_nonzero"]:
    _like = "x" if _f in ("cumsum", "cumprod", "nancumsum") else "x[:, 0]"
    _dt = (", dtype=np.intp" if _f in ("argmax", "argmin", "nanargmax", "count_nonzero")
           else ", dtype=bool" if _f in ("all", "any") else "")
    CASES.append(f"(lambda o: (np.{_f}(x, axis=1, out=o), o))(np.zeros_like({_like}{_dt}))"
                 if _f != "count_nonzero" else "np.count_nonzero(x, axis=1)")
for _f in ["quantile", "percentile", "nanquantile", "nanpercentile"]:
    CASES.append(f"(lambda o: (np.{_f}(x, 50, axis=1, out=o), o))(np.zeros_like(x[:, 0]))")
for _f in ["clip", "round", "around", "cumsum", "dot", "matmul", "take", "sort" if False else
           "sqrt", "add", "exp", "maximum", "mod", "modf" if False else "negative"]:
    _args = {"clip": "x, -0.5, 0.5", "round": "x, 1", "around": "x", "cumsum": "x, 1",
             "dot": "x, M", "matmul": "x, M", "take": "x, [0, 1, 1, 2], 1" if False else
             "v, [[0, 1, 2, 0], [1, 1, 2, 3], [3, 2, 1, 0]]", "sqrt": "P", "add": "x, y",
             "exp": "x", "maximum": "x, 0.0", "mod": "x, 0.7", "negative": "x"}[_f]
    CASES.append(f"(lambda o: (np.{_f}({_args}, out=o), o))(np.zeros_like(x))")
CASES.append("(lambda o: (x.clip(-0.5, 0.5, out=o), o))(np.zeros_like(x))")
CASES.append("(lambda o: (x.sum(0, out=o), o))(np.zeros_like(v))")
CASES.append("(lambda o: (np.divmod(x, 0.7, out=(o, o * 0)), o))(np.zeros_like(x))")
CASES.append("(lambda o: (np.modf(x, out=(o, np.zeros_like(x))), o))(np.zeros_like(x))")
CASES = list(dict.fromkeys(CASES))

# -- more keywords users pass ----------------------------------------------------------------
CASES += [
    "np.linalg.norm(x, axis=(0, 1))", "np.linalg.norm(M, ord=-2)", "np.linalg.norm(v, ord=0)",
    "np.linalg.norm(v, ord=-np.inf)", "np.linalg.norm(M, ord=np.inf)", "np.linalg.norm(M, ord=-1)",
    "np.linalg.norm(x, ord=3, axis=1)", "np.linalg.norm(x, 2, 1, True)",
    "np.linalg.qr(M, mode='r')", "np.linalg.qr(x.T, mode='complete')", "np.linalg.qr(x.T)",
    "np.linalg.eigh(S, UPLO='U')", "np.linalg.svd(M)", "np.linalg.svd(x)",
    "np.linalg.solve(np.stack([M, S]), np.stack([v, u]))", "np.linalg.inv(np.stack([M, S]))",
    "np.linalg.det(np.stack([M, S]))", "np.linalg.slogdet(M)", "np.linalg.pinv(M, rcond=1e-10)",
    "np.linalg.pinv(S, hermitian=True)", "np.linalg.matrix_rank(x, tol=1e-8)",
    "np.linalg.cholesky(S, upper=True)", "np.linalg.eigvalsh(S, UPLO='U')",
    "np.linalg.cond(M, 'fro')", "np.linalg.lstsq(x.T, v, rcond=None)[0]",
    "np.fft.fftn(M)", "np.fft.ifftn(M)", "np.fft.rfft2(M)", "np.fft.irfft2(np.fft.rfft2(M))",
    "np.fft.rfftn(x)", "np.fft.hfft(v)", "np.fft.ihfft(v)", "np.fft.fft(v, n=8)",
    "np.fft.fft(x, axis=0)", "np.fft.fft(v, norm='ortho')", "np.fft.ifft(v, norm='forward')",
    "np.fft.ifftshift(x, axes=1)", "np.fft.rfftfreq(8, d=0.5)", "np.abs(np.fft.fft2(x)) ** 2",
    "np.einsum('bij,bjk->bik', np.stack([M, S]), np.stack([S, M]))",
    "np.einsum('i,i->', v, u, optimize='greedy')", "np.einsum('ij->j', x)",
    "np.einsum('ij,ij->', x, y)", "np.einsum('ii->i', M)", "np.einsum('ij,jk,kl->il', x, M, S)",
    "np.matmul(np.stack([x, y]), M)", "np.stack([x, y]) @ M", "np.dot(np.stack([x, y]), v)",
    "np.tensordot(np.stack([x, y]), v, axes=([2], [0]))", "np.inner(v, M)",
    "np.clip(x, -1, 1, out=np.empty_like(x))", "np.clip(n, 0, 3)", "np.clip(h, -0.5, 0.5)",
    "np.cumsum(n, dtype=np.float32)", "np.cumsum(x, axis=None)", "np.diff(v, append=0.0)",
    "np.diff(x, axis=0, prepend=x[:1])", "np.sort(x, kind='stable')", "np.sort(-x, axis=-1)[:, ::-1]",
    "np.argsort(x, axis=None)", "np.argsort(n, kind='stable')", "np.sort(n)",
    "np.take(x, [0, -1], axis=1, mode='wrap')", "np.take(v, [5, -7], mode='clip')",
    "np.take(x, 5)", "np.searchsorted(q, 0.0)", "np.maximum.reduceat(v, [0, 2])",
    "np.logaddexp.reduce(x, axis=1)", "np.logaddexp.accumulate(x, axis=1)",
    "np.fmax.accumulate(x, axis=1)", "np.subtract.reduce(x, axis=1)",
    "np.where(x > 0, x, np.nan)", "np.nanmean(np.where(x > 0, x, np.nan), axis=0)",
    "np.nanmax(np.where(x > 0, x, np.nan))", "np.nansum(np.where(b, x, np.nan), axis=1)",
    "np.isnan(np.where(b, x, np.nan)).sum()", "np.histogram(v, bins=[-1.0, 0.0, 1.0])[0]",
    "np.histogram(x, bins=3, weights=P)[0]", "np.histogram(x, bins=3, density=True)[0]",
    "np.percentile(x, [10, 90], axis=1, method='nearest')", "np.quantile(x, 0.5, method='lower')",
    "np.quantile(x, 0.3, axis=1, keepdims=True)", "np.median(x, axis=(0, 1))",
    "np.cov(x, y)", "np.cov(x, ddof=0)", "np.cov(x, aweights=P[0])", "np.corrcoef(x, y)",
    "np.corrcoef(v, u)", "np.average(x, axis=0, weights=v[:3])", "np.std(x, ddof=1, axis=0)",
    "np.var(x, axis=(0, 1), keepdims=True)", "np.mean(x, axis=(0, 1), keepdims=True)",
    "np.round(x, decimals=-1)", "np.round(n, -1)", "np.around(x, 3)", "x.round(decimals=2)",
    "np.sign(n)", "np.abs(n)", "np.square(n)", "np.sqrt(k)", "np.exp(n)", "np.power(k, 2)",
    "np.power(k, -1.0)", "np.float_power(k, -1)", "n / 2", "n // 2", "n % 3", "n ** 2", "k ** -1.0",
    "-n", "n * 1.5", "n + h", "h * 2", "h + x", "h / 3", "h ** 2", "h // 1", "h.sum()",
    "h.mean()", "h.std()", "np.linalg.norm(h)", "np.exp(h)", "np.dot(h, h.T)", "h @ h.T",
    "np.einsum('ij,ij->i', h, h)", "np.sum(h, axis=0, keepdims=True)", "np.cumsum(h, 1)",
    "np.sort(h)", "np.max(h)", "np.argmax(h)", "np.where(h > 0, h, 0)", "np.where(h > 0, h, 0.0)",
    "np.maximum(h, 0)", "np.clip(h, 0, 1)", "h.astype(np.float64) + x", "np.tanh(h)",
    "np.logaddexp(h, 0)", "np.concatenate([h, x])", "np.stack([h, h])", "np.mean(h, dtype=np.float64)",
    "np.allclose(h, h)", "np.isclose(h, x)", "np.array([h[0, 0], 1.0])", "np.array([h[0, 0], h[1, 1]])",
    "np.asarray(h, dtype=np.float64)", "np.sum(b, axis=0)", "np.mean(b)", "b.sum()",
    "b.astype(int)", "b * 1.0", "b + b", "b * x", "np.cumsum(b)", "np.prod(b)", "b & ~b",
    "np.argmax(b, axis=1)", "np.where(b, 1, 0)", "np.where(b, 1, 0.5)", "np.where(b, n, 0.5)",
    "np.sum(x * b.any(1)[:, None])",
]
CASES = list(dict.fromkeys(CASES))
