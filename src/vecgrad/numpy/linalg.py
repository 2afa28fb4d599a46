"""`vecgrad.numpy.linalg`: NumPy's linear algebra for traced code, with gradients.

NumPy's stacked-matrix semantics: the last two axes are the matrix and leading axes are batch
axes (broadcast between operands). Decompositions return NumPy's named tuples. Functions that
read one triangle of their input (cholesky, eigh, eigvalsh) are differentiated as exactly that:
the gradient is zero on the triangle they never read (symmetrize the input yourself, e.g.
`(a + a.T) / 2`, for the gradient of a symmetric parametrization).
"""
from __future__ import annotations

import builtins
import math
from typing import Any, NamedTuple

import numpy as _np

from .. import primitives as P
from ..errors import ShapeError, unsupported
from ..primitives.matrix import lin_dtype
from ..primitives.spectral import eigh_shapes, qr_shapes, svd_shapes, unpack
from ..tracing import Tracer
from ..valuedtype import EitherComplex
from . import _contract, _ops
from ._base import _shape, asarray, astype
from ._shape_ops import cross as _cross

__all__ = [
    "EigResult",
    "EighResult",
    "LinAlgError",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "cholesky",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "lstsq",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "multi_dot",
    "norm",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "tensorinv",
    "tensorsolve",
    "trace",
    "vecdot",
    "vector_norm",
]

LinAlgError = _np.linalg.LinAlgError


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class EigResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class SVDResult(NamedTuple):
    U: Any
    S: Any
    Vh: Any


class QRResult(NamedTuple):
    Q: Any
    R: Any


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


def _mat(a: Any, name: str) -> Any:
    """a as an array of at least two axes with a float (or complex) dtype."""
    a = asarray(a)
    if len(_shape(a)) < 2:
        raise ShapeError(f"{name}: {len(_shape(a))}-dimensional array given. Array must be at "
                         "least two-dimensional")
    return _floating(a)


def _floating(a: Any) -> Any:
    dt = _np.dtype(a.dtype)
    return astype(a, lin_dtype(dt)) if dt.kind not in "fc" else a


def _bcast_batch(*xs: Any) -> list:
    """Broadcast the batch axes (all but the last two) of stacks of matrices."""
    batch = _np.broadcast_shapes(*[_shape(x)[:-2] for x in xs])
    return [_ops.broadcast_to(x, batch + _shape(x)[-2:]) for x in xs]


def _mT(x: Any) -> Any:
    return _ops.swapaxes(x, -1, -2)


# ------------------------------------------------------------------------ solves, inverses

def solve(a: Any, b: Any) -> Any:
    """Solve `a @ x = b`. As NumPy 2: b is a vector only when it is 1-D, else a stack of
    matrices; batch axes broadcast."""
    a = _mat(a, "solve")
    b = _floating(asarray(b))
    if len(_shape(b)) == 1:
        a, = _bcast_batch(a)
        x = P.solve(a, _ops.broadcast_to(_ops.reshape(b, (-1, 1)), _shape(a)[:-1] + (1,)))
        return _ops.reshape(x, _shape(x)[:-1])
    a, b = _bcast_batch(a, b)
    return P.solve(a, b)


def inv(a: Any) -> Any:
    """The inverse of each matrix."""
    return P.inv(_mat(a, "inv"))


def det(a: Any) -> Any:
    """The determinant of each matrix (its gradient needs the matrix to be invertible)."""
    return P.det(_mat(a, "det"))


def slogdet(a: Any) -> SlogdetResult:
    """(sign, log|det|) of each matrix; the sign has zero gradient."""
    out = P.slogdet(_mat(a, "slogdet"))
    sign, logdet = unpack(out, [(), ()])
    return SlogdetResult(sign, _real_part(logdet))


def _real_part(x: Any) -> Any:
    """A real result packed with complex ones (eigenvalues of Hermitian matrices, singular
    values, log|det|) as the real array NumPy returns."""
    return _ops.real(x) if _np.dtype(x.dtype).kind == "c" else x


def cholesky(a: Any, /, *, upper: bool = False) -> Any:
    """The Cholesky factor L (a = L L^H) from a's lower triangle, or with `upper=True` the
    factor U = L^H from a's upper triangle."""
    a = _mat(a, "cholesky")
    if upper:  # the upper triangle of a is the lower one of a^H
        return _mH(P.cholesky(_mH(a)))
    return P.cholesky(a)


def _mH(x: Any) -> Any:
    x = _mT(x)
    return _ops.conj(x) if _np.dtype(x.dtype).kind == "c" else x


def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Any:
    """The Moore-Penrose pseudo-inverse (gradient exact where the rank is locally constant)."""
    a = _mat(a, "pinv")
    if rtol is not None:
        if rcond is not None:
            raise ValueError("`rtol` and `rcond` can't be both set.")
        rcond = rtol
    if rcond is not None and not isinstance(rcond, (int, float)):
        raise unsupported("numpy.linalg.pinv with an array rcond")
    return P.pinv(a, rcond=rcond, hermitian=bool(hermitian))


def matrix_power(a: Any, n: int) -> Any:
    """a raised to the integer power n (n < 0 inverts first), by repeated squaring."""
    a = asarray(a)
    shp = _shape(a)
    if len(shp) < 2 or shp[-1] != shp[-2]:
        raise ShapeError(f"matrix_power: last 2 dimensions of the array must be square "
                         f"(shape {shp})")
    n = _np.int64(n).item() if isinstance(n, _np.integer) else n
    if not isinstance(n, int):
        raise TypeError("exponent must be an integer")
    if n == 0:
        return _ops.broadcast_to(_np.eye(shp[-1], dtype=a.dtype), shp)
    if n < 0:
        a, n = inv(a), -n
    result = None
    while n:
        if n & 1:
            result = a if result is None else _contract.matmul(result, a)
        n >>= 1
        if n:
            a = _contract.matmul(a, a)
    return result


def multi_dot(arrays: Any, *, out: Any = None) -> Any:
    """The product of a chain of matrices in the cheapest order (the first may be a row
    vector and the last a column vector, as in NumPy)."""
    if out is not None:
        raise unsupported("numpy.linalg.multi_dot with out=")
    arrays = [asarray(x) for x in arrays]
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    if len(arrays) == 2:
        return _contract.dot(arrays[0], arrays[1])
    first, last = len(_shape(arrays[0])) == 1, len(_shape(arrays[-1])) == 1
    if first:
        arrays[0] = _ops.reshape(arrays[0], (1, -1))
    if last:
        arrays[-1] = _ops.reshape(arrays[-1], (-1, 1))
    if any(len(_shape(x)) != 2 for x in arrays):
        raise ShapeError("multi_dot: the arrays (but the first and last) must be 2-dimensional")
    dims = [_shape(x)[0] for x in arrays] + [_shape(arrays[-1])[1]]
    res = _chain(arrays, _chain_order(dims), 0, len(arrays) - 1)
    if first and last:
        return _ops.reshape(res, ())
    if first or last:
        return _ops.reshape(res, (-1,))
    return res


def _chain_order(p: list[int]) -> list[list[int]]:
    """The optimal parenthesization of a matrix chain (the textbook dynamic program)."""
    n = len(p) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for ln in range(1, n):
        for i in range(n - ln):
            j = i + ln
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(arrays: list, split: list, i: int, j: int) -> Any:
    if i == j:
        return arrays[i]
    k = split[i][j]
    return _contract.dot(_chain(arrays, split, i, k), _chain(arrays, split, k + 1, j))


def tensorsolve(a: Any, b: Any, axes: Any = None) -> Any:
    """Solve the tensor equation `tensordot(a, x, x.ndim) = b` for x."""
    a, b = asarray(a), asarray(b)
    nd = len(_shape(a))
    if axes is not None:
        allaxes = list(range(nd))
        for k in axes:
            allaxes.remove(k)
            allaxes.insert(nd, k)
        a = _ops.transpose(a, allaxes)
    oldshape = _shape(a)[len(_shape(a)) - (nd - len(_shape(b))):]
    prod = math.prod(oldshape)
    if math.prod(_shape(a)) != prod * prod:
        raise LinAlgError("Input arrays must satisfy the requirement "
                          "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    x = solve(_ops.reshape(a, (prod, prod)), _ops.reshape(b, (prod,)))
    return _ops.reshape(x, oldshape)


def tensorinv(a: Any, ind: int = 2) -> Any:
    """The inverse of an N-dimensional array for tensordot over `ind` axes."""
    a = asarray(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    shp = _shape(a)
    invshape = shp[ind:] + shp[:ind]
    prod = math.prod(shp[ind:])
    return _ops.reshape(inv(_ops.reshape(a, (prod, -1))), invshape)


# ------------------------------------------------------------------------- decompositions

def eigh(a: Any, UPLO: str = "L") -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices, read from the lower
    (UPLO='L') or upper triangle. The eigenvectors' gradient drops the terms of repeated
    eigenvalues (exact when the function does not depend on the choice of basis within a
    repeated eigenvalue's space)."""
    a = _mat(a, "eigh")
    w, v = unpack(P.eigh(a, UPLO=_uplo(UPLO)), eigh_shapes(_shape(a)[-1]))
    return EighResult(_real_part(w), v)


def eig(a: Any) -> EigResult:
    """Eigenvalues and right eigenvectors (columns of norm 1) of general square matrices.
    Of a complex matrix they are complex; of a real one NumPy returns real arrays where
    every eigenvalue is real and complex ones otherwise: traced, they are complex with
    every use checked (valuedtype.EitherComplex: .real, .imag, np.abs, .astype(complex) and
    indexing are NumPy's, other uses refused). Each eigenvector's phase is arbitrary:
    gradients are those of functions that do not depend on it (e.g. of abs(v))."""
    a = _mat(a, "eig")
    w, v = unpack(P.eig(a), eigh_shapes(_shape(a)[-1]))
    if isinstance(a, Tracer) and _np.dtype(a.dtype).kind != "c":
        w, v = EitherComplex.of(w, "np.linalg.eig"), EitherComplex.of(v, "np.linalg.eig")
    return EigResult(w, v)


def eigvals(a: Any) -> Any:
    """Eigenvalues of general square matrices (complex, or real as the values say, as eig's)."""
    return eig(a)[0]


def eigvalsh(a: Any, UPLO: str = "L") -> Any:
    """Eigenvalues (ascending) of symmetric matrices, read from one triangle."""
    return P.eigvalsh(_mat(a, "eigvalsh"), UPLO=_uplo(UPLO))


def _uplo(UPLO: str) -> str:
    u = str(UPLO).upper()
    if u not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return u


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False) -> Any:
    """Singular value decomposition `a = U @ diag(S) @ Vh` (S descending). Gradients need
    `full_matrices=False` for non-square matrices; terms of repeated or zero singular
    values are dropped from the singular vectors' gradient."""
    a = _mat(a, "svd")
    if hermitian:
        raise unsupported("numpy.linalg.svd with hermitian=True (use hermitian=False)")
    if not compute_uv:
        return P.svdvals(a)
    m, n = _shape(a)[-2:]
    full = bool(full_matrices) and m != n
    u, s, vh = unpack(P.svd(a, full_matrices=full), svd_shapes(m, n, full))
    return SVDResult(u, _real_part(s), vh)


def svdvals(x: Any, /) -> Any:
    """The singular values of each matrix, descending."""
    return P.svdvals(_mat(x, "svdvals"))


def qr(a: Any, mode: str = "reduced") -> Any:
    """QR decomposition; modes 'reduced' (default), 'complete' and 'r'. Gradients of
    'complete' need a wide or square matrix (a tall one's extra columns of Q are not unique)."""
    a = _mat(a, "qr")
    if mode not in ("reduced", "complete", "r"):
        raise unsupported(f"numpy.linalg.qr with mode={mode!r}")
    m, n = _shape(a)[-2:]
    complete = mode == "complete" and m > n
    q, r = unpack(P.qr(a, complete=complete), qr_shapes(m, n, complete))
    return r if mode == "r" else QRResult(q, r)


# ---------------------------------------------------------------------------------- norms

def _abs2(x: Any) -> Any:
    if _np.dtype(x.dtype).kind == "c":
        return _ops.real(_ops.multiply(x, _ops.conj(x)))  # |z|^2
    return _ops.square(x)


def _axes_tuple(axis: Any, nd: int) -> tuple[int, ...]:
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for ax in axes:
        if not isinstance(ax, (int, _np.integer)):
            raise TypeError("'axis' must be None, an integer or a tuple of integers")
        if not -nd <= ax < nd:
            raise _np.exceptions.AxisError(int(ax), nd)
        out.append(int(ax) % nd)
    return tuple(out)


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """Matrix or vector norm, with NumPy's `ord`, `axis` and `keepdims`."""
    if x.__class__ is Tracer and ord is None and axis is None and not keepdims and \
            x._atom.aval.dtype.kind == "f":  # (the common case: the 2-norm of all of x)
        return P.sqrt(P.reduce_sum(P.powc(x, p=2), axes=tuple(range(x.ndim))))
    if isinstance(x, (list, tuple)):
        x = asarray(x)
    x = _floating(asarray(x))
    nd = len(_shape(x))
    if axis is None:
        if ord is None:
            r = _ops.sqrt(_ops.sum(_abs2(x)))
            return _ops.reshape(r, (1,) * nd) if keepdims else r
        if nd not in (1, 2):
            raise ValueError("Improper number of dimensions to norm.")
        axis = tuple(range(nd))
    axes = _axes_tuple(axis, nd)
    if len(axes) == 1:
        r = _vector_norm(x, ord, axes)
    elif len(axes) == 2:
        if axes[0] == axes[1]:
            raise ValueError("Duplicate axes given.")
        r = _matrix_norm(x, ord, axes)
    else:
        raise ValueError("Improper number of dimensions to norm.")
    if keepdims:
        r = _ops.reshape(r, tuple(1 if i in axes else d for i, d in enumerate(_shape(x))))
    return r


def _vector_norm(x: Any, ord: Any, axes: tuple[int, ...]) -> Any:
    if ord is None or ord == 2:
        return _ops.sqrt(_ops.sum(_abs2(x), axis=axes))
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")  # noqa: TRY004 (NumPy's)
    if ord == _np.inf:  # (initial=0, as NumPy's: 0 for an empty vector)
        return _ops.max(_ops.abs(x), axis=axes, initial=0)
    if ord == -_np.inf:
        return _ops.min(_ops.abs(x), axis=axes)
    if ord == 0:
        return _ops.sum(astype(_ops.not_equal(x, 0), x.dtype), axis=axes)
    if ord == 1:
        return _ops.sum(_ops.abs(x), axis=axes)
    return _p_norm(x, float(ord), axes)


def _p_norm(x: Any, p: float, axes: tuple[int, ...]) -> Any:
    """(sum |x|^p)^(1/p). Its gradient at zeros is the subgradient 0 (what central
    differences see), not inf * 0 = nan: |x|^p at x = 0 for p < 1, and the outer power at a
    sum of 0 for p > 1, are taken at 1 and selected away."""
    a = _ops.abs(x)
    zero = _ops.equal(a, 0)
    t = _ops.where(zero, 0.0 if p > 0 else _np.inf, _ops.power(_ops.where(zero, 1.0, a), p))
    total = _ops.sum(t, axis=axes)
    if p < 0:  # (a zero entry makes the sum inf and the norm 0, with a zero gradient)
        return _ops.power(total, 1.0 / p)
    none = _ops.equal(total, 0)
    return _ops.where(none, 0.0, _ops.power(_ops.where(none, 1.0, total), 1.0 / p))


def _matrix_norm(x: Any, ord: Any, axes: tuple[int, ...]) -> Any:
    row, col = axes
    if ord is None or ord in ("fro", "f"):
        return _ops.sqrt(_ops.sum(_abs2(x), axis=axes))
    if ord in (2, -2, "nuc"):
        s = svdvals(_ops.moveaxis(x, (row, col), (-2, -1)))
        if ord == "nuc":
            return _ops.sum(s, axis=-1)
        return _ops.max(s, axis=-1, initial=0) if ord == 2 else _ops.min(s, axis=-1)
    if ord in (1, -1, _np.inf, -_np.inf):
        inner, outer = (row, col) if ord in (1, -1) else (col, row)
        if outer > inner:
            outer -= 1
        sums = _ops.sum(_ops.abs(x), axis=inner)
        return _ops.max(sums, axis=outer, initial=0) if ord > 0 else _ops.min(sums, axis=outer)
    raise ValueError("Invalid norm order for matrices.")


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    """The vector norm over `axis` (all axes, flattened, by default), as NumPy 2."""
    x = _floating(asarray(x))
    if axis is None:
        r = _vector_norm(_ops.ravel(x), ord, (0,))
        return _ops.reshape(r, (1,) * len(_shape(x))) if keepdims else r
    return norm(x, ord, axis if isinstance(axis, int) else tuple(axis), keepdims) \
        if (isinstance(axis, int) or len(axis) == 1) else _flat_vector_norm(x, ord, axis,
                                                                           keepdims)


def _flat_vector_norm(x: Any, ord: Any, axis: Any, keepdims: bool) -> Any:
    nd = len(_shape(x))
    axes = _axes_tuple(axis, nd)
    rest = [i for i in range(nd) if i not in axes]
    y = _ops.transpose(x, rest + list(axes))
    y = _ops.reshape(y, tuple(_shape(x)[i] for i in rest) + (-1,))
    r = _vector_norm(y, ord, (len(rest),))
    if keepdims:
        r = _ops.reshape(r, tuple(1 if i in axes else d for i, d in enumerate(_shape(x))))
    return r


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    """The matrix norm over the last two axes, as NumPy 2."""
    return norm(x, ord, (-2, -1), keepdims)


def cond(x: Any, p: Any = None) -> Any:
    """The condition number of each matrix in the norm `p`."""
    x = _mat(x, "cond")
    if 0 in _shape(x)[-2:]:  # (as NumPy, whose message this is)
        raise _np.linalg.LinAlgError("cond is not defined on empty arrays")
    if p is None or p in (2, -2):
        s = svdvals(x)
        big, small = _ops.max(s, axis=-1), _ops.min(s, axis=-1)
        return big / small if p != -2 else small / big
    return norm(x, p, axis=(-2, -1)) * norm(inv(x), p, axis=(-2, -1))


def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Any:
    """The number of singular values above the tolerance (an integer; no gradient)."""
    A = _floating(asarray(A))
    shp = _shape(A)
    if len(shp) < 2:  # as NumPy: 1 unless every entry is zero
        nonzero = _ops.sum(astype(_ops.not_equal(A, 0), _np.int64))
        return astype(_ops.greater(nonzero, 0), _np.int64)
    s = _ops.stop_gradient(svdvals(A))
    smax = _ops.max(s, axis=-1, keepdims=True, initial=0.0)  # (as NumPy: 0 for 0 x 0)
    if tol is None:
        r = rtol if rtol is not None else builtins.max(shp[-2:]) * _np.finfo(s.dtype).eps
        tol = smax * r
    elif rtol is not None:
        raise ValueError("`tol` and `rtol` can't be both set.")
    else:
        tol = _ops.expand_dims(asarray(tol), -1)
    return _ops.sum(astype(_ops.greater(s, tol), _np.int64), axis=-1)


def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple:
    """Least-squares solution of `a @ x = b`: (x, residuals, rank, singular values). The
    residuals are empty, as NumPy's, where a has no more rows than columns; otherwise they
    are the squared norms of the columns of `b - a @ x`, as jax.numpy.linalg.lstsq returns
    them (NumPy's are also empty where a is rank-deficient, a shape known only from the
    data)."""
    a = _mat(a, "lstsq")
    b = _floating(asarray(b))
    vec = len(_shape(b)) == 1
    bm = _ops.reshape(b, (-1, 1)) if vec else b
    m, n = _shape(a)
    if rcond is None:
        rcond = _np.finfo(_np.dtype(a.dtype)).eps * builtins.max(m, n)
    x = _contract.matmul(pinv(a, rcond=float(rcond)), bm)
    resid = (_ops.sum(_ops.square(bm - _contract.matmul(a, x)), axis=0) if m > n else
             _np.zeros(0, _np.empty(0, x.dtype).real.dtype))
    rank = astype(matrix_rank(a, rtol=float(rcond)), _np.int32)  # (LAPACK's int, as NumPy's)
    s = svdvals(a)
    if vec:
        x = _ops.reshape(x, (-1,))
    return x, resid, rank, s


# ---------------------------------------------------------------- array-API namesakes

def matrix_transpose(x: Any, /) -> Any:
    """Swap the last two axes."""
    if len(_shape(x)) < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    return _mT(x)


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """Cross product of 3-vectors along `axis` (NumPy 2's array-API form of np.cross)."""
    x1, x2 = asarray(x1), asarray(x2)
    n1, n2 = _shape(x1)[axis], _shape(x2)[axis]
    if n1 != 3 or n2 != 3:
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they are {n1} and {n2} dimensional instead.")
    return _cross(x1, x2, axis=axis)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """The diagonals (with `offset`) of the matrices on the last two axes."""
    x = asarray(x)
    m, n = _shape(x)[-2:]
    rows = range(builtins.max(0, -offset), m)
    k = builtins.max(0, builtins.min(len(rows), n - builtins.max(0, offset)))
    i = _np.arange(k) + builtins.max(0, -offset)
    return x[..., i, i + offset]


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """Sum of the diagonals on the last two axes."""
    d = diagonal(x, offset=offset)
    return _ops.sum(d if dtype is None else astype(d, dtype), axis=-1)


def outer(x1: Any, x2: Any, /) -> Any:
    """Outer product of two vectors."""
    if len(_shape(x1)) != 1 or len(_shape(x2)) != 1:
        raise ValueError("Input arrays must be one-dimensional")
    return _contract.outer(x1, x2)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """Dot products of vectors along `axis` (broadcasting the others); x1 is conjugated."""
    x1, x2 = asarray(x1), asarray(x2)
    if _np.dtype(x1.dtype).kind == "c":
        x1 = _ops.conj(x1)
    return _ops.sum(_ops.multiply(x1, x2), axis=axis)


matmul = _contract.matmul
tensordot = _contract.tensordot
