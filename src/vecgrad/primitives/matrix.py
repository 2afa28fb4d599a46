"""Dense linear-algebra primitives on stacks of matrices: solve, inv, det, slogdet, triangular
solves, cholesky and pinv (the decompositions with several results are in `spectral`).

NumPy's batch semantics: the last two axes are the matrix, leading axes are batch axes. All
operands of one primitive have the same batch axes (vecgrad.numpy.linalg broadcasts them
first; the AD driver sums broadcast cotangents back), so every batching rule is the same:
stack the shared operands too and call the primitive again.

A primitive that reads one triangle only (cholesky, and eigh in `spectral`) is differentiated
as exactly that function of its input: the cotangent is zero on the triangle it never reads.
The VJPs are the stable formulations: triangular solves for cholesky, solves for solve.
"""
from __future__ import annotations

import string
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ShapeError
from ..ir import Aval
from .core import REGISTRY, NoGrad, Primitive, register
from .elementwise import conj, eq, imag, real, where
from .linalg import einsum
from .structural import Sl, broadcast_to, getitem, reshape, transpose

__all__ = [
    "cholesky",
    "det",
    "inv",
    "pinv",
    "slogdet",
    "solve",
    "triangular_solve",
]


# --- helpers every linalg VJP uses (emitting IR through other primitives) ------------------

def lin_dtype(*dts: np.dtype, name: str = "linalg") -> np.dtype:
    """The dtype NumPy's linalg computes in: integers and bools become float64."""
    dt = np.result_type(*dts)
    if dt.kind in "biu":
        return np.dtype(np.float64)
    if dt.kind not in "fc" or dt.itemsize < 4:
        raise TypeError(f"{name}: array type {dt} is unsupported in linalg")
    return dt


def check_square(x: Aval, name: str) -> int:
    """The matrix size of a stack of square matrices, or a ShapeError."""
    if x.ndim < 2:
        raise ShapeError(f"{name}: {x.ndim}-dimensional array given. Array must be at least "
                         "two-dimensional")
    if x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"{name}: last 2 dimensions of the array must be square (shape "
                         f"{x.shape})")
    return x.shape[-1]


def mT(x: Any) -> Any:
    """Swap the last two axes."""
    n = x.ndim
    return transpose(x, perm=tuple(range(n - 2)) + (n - 1, n - 2))


def cj(x: Any) -> Any:
    """The complex conjugate (no operation for real values)."""
    return conj(x) if x.dtype.kind == "c" else x


def mH(x: Any) -> Any:
    """The conjugate transpose of the last two axes."""
    return cj(mT(x))


def mm(a: Any, b: Any) -> Any:
    """Matrix product of two stacks with the same batch axes."""
    bt = string.ascii_lowercase[:a.ndim - 2]
    return einsum(a, b, spec=f"{bt}xy,{bt}yz->{bt}xz")


def diag_part(x: Any) -> Any:
    """The diagonals of a stack of square matrices."""
    bt = string.ascii_lowercase[:x.ndim - 2]
    return einsum(x, spec=f"{bt}xx->{bt}x")


def diag_mat(v: Any) -> Any:
    """Diagonal matrices with the last axis of v on their diagonals."""
    n = v.shape[-1]
    return reshape(v, shape=v.shape + (1,)) * np.eye(n, dtype=v.dtype)


def expand2(v: Any) -> Any:
    """v with two unit axes appended (a per-matrix scalar that broadcasts over matrices)."""
    return reshape(v, shape=v.shape + (1, 1))


def tri_mask(n: int, m: int, lower: bool, k: int, dtype: np.dtype) -> np.ndarray:
    """The 0/1 mask of a triangle: on and below diagonal k (lower) or on and above it."""
    ones = np.ones((n, m), dtype)
    return np.tril(ones, k) if lower else np.triu(ones, k)


def sym_from_triangle(G: Any, lower: bool) -> Any:
    """The cotangent of A for a function of the symmetric (Hermitian) matrix H built from one
    triangle of A, given the cotangent G of H: H_ij = A_ij and H_ji = conj(A_ij) off the
    diagonal and H_ii = Re(A_ii) (LAPACK ignores imaginary diagonals), so A gets G + G^H on
    the triangle off the diagonal, Re(G) on the diagonal, zero on the triangle never read."""
    n = G.shape[-1]
    half = tri_mask(n, n, lower, 0, G.real.dtype) - 0.5 * np.eye(n, dtype=G.real.dtype)
    return (G + mH(G)) * half


def safe_recip(d: Any) -> Any:
    """1/d, and 0 where d == 0 (degenerate eigen- or singular values: the terms whose
    derivative does not exist are dropped, which is exact when the function is invariant
    under rotations within the degenerate space, e.g. when it uses the values only)."""
    zero = eq(d, 0)
    return where(zero, 0.0, 1.0 / where(zero, 1.0, d))


def stacked(name: str) -> Callable:
    """The batching rule of a linalg primitive: NumPy's linalg maps over leading axes, so
    shared operands are broadcast along the batch axis and the primitive is called again."""
    def rule(n: int, batched: tuple[bool, ...], *xs: Any, **params: Any) -> Any:
        xs = tuple(x if b else broadcast_to(x, shape=(n,) + x.shape) for x, b in zip(xs, batched))
        return REGISTRY[name](*xs, **params)
    return rule


def linalg_prim(name: str, impl: Callable, shape_rule: Callable, vjp: Callable | None,
                **kw: Any) -> Primitive:
    """Register a linalg primitive with the stacked batching rule."""
    return register(Primitive(name, impl, shape_rule, vjp, stacked(name), **kw))


def same_batch(*xs: Aval, name: str) -> tuple[int, ...]:
    if len({x.shape[:-2] for x in xs}) != 1:
        raise ShapeError(f"{name}: operands of shapes {[x.shape for x in xs]} must have the "
                         "same batch axes")
    return xs[0].shape[:-2]


# --- solve(a, b): a X = b, b a stack of matrices --------------------------------------------

def _solve_shape(a: Aval, b: Aval) -> Aval:
    n = check_square(a, "solve")
    same_batch(a, b, name="solve")
    if b.shape[-2] != n:
        raise ShapeError(f"solve: a of shape {a.shape} and b of shape {b.shape} do not fit")
    return Aval(b.shape, lin_dtype(a.dtype, b.dtype, name="solve"))


def _solve_vjp(g: Any, ans: Any, a: Any, b: Any) -> tuple:
    gb = solve(mT(a), g)  # b = a x: gb = a^-T g, ga = -gb x^T
    return -mm(gb, mT(ans)), gb


def _solve_batch(n: int, batched: tuple[bool, ...], a: Any, b: Any) -> Any:
    """A shared a and n right-hand sides: one solve with the sides' columns side by side (one
    factorization of a, not n of its broadcast copies); else the stacked rule."""
    if batched[0] or not batched[1]:
        return stacked("solve")(n, batched, a, b)
    r = b.ndim  # b: (n, *batch, N, K) -> (*batch, N, K * n), columns k-major
    cols = transpose(b, perm=tuple(range(1, r)) + (0,))
    x = solve(a, reshape(cols, shape=cols.shape[:-2] + (cols.shape[-2] * n,)))
    x = reshape(x, shape=cols.shape)
    return transpose(x, perm=(r - 1,) + tuple(range(r - 1)))


solve = register(Primitive("solve", np.linalg.solve, _solve_shape, _solve_vjp, _solve_batch))


# --- inv, det, slogdet ---------------------------------------------------------------------

def _square_shape(name: str, reduce: int = 0, tail: tuple = ()) -> Callable:
    def rule(a: Aval) -> Aval:
        check_square(a, name)
        return Aval(a.shape[:a.ndim - reduce] + tail, lin_dtype(a.dtype, name=name))
    return rule


def _inv_vjp(g: Any, ans: Any, a: Any) -> tuple:
    t = mT(ans)
    return (-mm(mm(t, g), t),)  # d inv = -inv da inv


inv = linalg_prim("inv", np.linalg.inv, _square_shape("inv"), _inv_vjp)

# d det = det tr(a^-1 da); singular matrices raise LinAlgError in the backward pass
det = linalg_prim("det", np.linalg.det, _square_shape("det", 2),
                  lambda g, ans, a: (expand2(g * ans) * mT(inv(a)),))


def _slogdet(a: np.ndarray) -> np.ndarray:
    sign, logabs = np.linalg.slogdet(a)
    return np.stack([sign, logabs.astype(sign.dtype)], -1)


def _slogdet_vjp(g: Any, ans: Any, a: Any) -> tuple:
    # d log|det| = Re tr(a^-1 da) and d sign = i sign Im tr(a^-1 da): the cotangent of
    # tr(a^-1 da) is Re(g_log) + i Im(g_sign sign) (for real a, g_log), and of da that times a^-T
    whole = tuple(Sl(0, d, 1) for d in g.shape[:-1])
    glog = getitem(g, idx=whole + (1,))
    if a.dtype.kind == "c":
        sign = getitem(ans, idx=whole + (0,))
        glog = real(glog) + 1j * imag(getitem(g, idx=whole + (0,)) * sign)
    return (expand2(glog) * mT(inv(a)),)


# (sign, log|det|) packed on a last axis of 2 (the IR has single-output equations)
slogdet = linalg_prim("slogdet", _slogdet, _square_shape("slogdet", 2, (2,)), _slogdet_vjp)


# --- triangular solves: op(A) X = B with op(A) = A or A^T, one triangle of A read ------------

def _tri_matrix(a: np.ndarray, lower: bool, unit_diagonal: bool) -> np.ndarray:
    n = a.shape[-1]
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t * (1 - np.eye(n, dtype=a.dtype)) + np.eye(n, dtype=a.dtype)
    return t


def _trisolve(a: np.ndarray, b: np.ndarray, lower: bool, trans: bool,
              unit_diagonal: bool) -> np.ndarray:
    n = a.shape[-1]
    if n <= SUBST_ORDER and a.size >= SUBST_STACK * n * n:  # (it reads a's triangle only)
        x = _substitute(np.swapaxes(a, -1, -2) if trans else a, b, lower != trans,
                        unit_diagonal)
        if x is not None:
            return x
    t = _tri_matrix(a, lower, unit_diagonal)
    if trans:
        t = np.swapaxes(t, -1, -2)
    return np.linalg.solve(t, b)


# A stack of small triangular systems: np.linalg.solve factors each matrix in a LAPACK call of
# its own (about 0.5-3 us each); substitution solves one row of every matrix per step (n
# steps of two batched operations). Measured, solve against substitution: 128 of 4 x 4 51 /
# 31 us, 512 of 4 x 4 397 / 65, 128 of 8 x 8 141 / 79, 512 of 16 x 16 10.3 / 3.2 ms; 8 of
# 4 x 4 7 / 18, 32 of 8 x 8 39 / 47: below 64 matrices solve stays.
SUBST_ORDER = 16  # matrix order, at most
SUBST_STACK = 64  # matrices in the stack, at least


def _substitute(t: np.ndarray, b: np.ndarray, lower: bool, unit: bool) -> np.ndarray | None:
    """X with T X = b, T the lower (or upper) triangle of each matrix of t, its diagonal ones
    where `unit`: forward (back) substitution, reading that triangle only. None where a
    diagonal entry is zero, for np.linalg.solve to raise its LinAlgError as NumPy does."""
    d = None if unit else np.diagonal(t, axis1=-2, axis2=-1)
    if d is not None and not d.all():
        return None
    n = t.shape[-1]
    x = np.empty(b.shape, lin_dtype(t.dtype, b.dtype, name="solve"))
    for i in range(n) if lower else range(n - 1, -1, -1):
        done = slice(0, i) if lower else slice(i + 1, n)
        r = b[..., i, :]
        if i if lower else i < n - 1:
            r = r - np.einsum("...j,...jm->...m", t[..., i, done], x[..., done, :])
        if d is None:
            x[..., i, :] = r
        else:
            np.divide(r, d[..., i, None], out=x[..., i, :])
    return x


def _trisolve_shape(a: Aval, b: Aval, lower: bool, trans: bool, unit_diagonal: bool) -> Aval:
    return _solve_shape(a, b)


def _trisolve_vjp(g: Any, ans: Any, a: Any, b: Any, lower: bool, trans: bool,
                  unit_diagonal: bool) -> tuple:
    gb = triangular_solve(a, g, lower=lower, trans=not trans, unit_diagonal=unit_diagonal)
    gt = -(mm(ans, mT(gb)) if trans else mm(gb, mT(ans)))  # the cotangent of A's triangle
    n = a.shape[-1]
    return gt * tri_mask(n, n, lower, (-1 if lower else 1) if unit_diagonal else 0, a.dtype), gb


triangular_solve = linalg_prim("triangular_solve", _trisolve, _trisolve_shape, _trisolve_vjp)


# --- cholesky: A = L L^T from A's lower triangle ---------------------------------------------

def _cholesky_vjp(g: Any, ans: Any, a: Any) -> tuple:
    # dL = L Phi(L^-1 dA L^-H) (Phi: the lower triangle, diagonal halved; Murray,
    # arXiv:1602.07527, and JAX's rule): its transpose takes G to S = L^-T Phi(L^T G) conj(L)^-1,
    # the cotangent of the Hermitian matrix read from A's lower triangle
    n = ans.shape[-1]
    phi = tri_mask(n, n, True, 0, ans.real.dtype) - 0.5 * np.eye(n, dtype=ans.real.dtype)
    p = mm(mT(ans), g) * phi
    y = triangular_solve(ans, p, lower=True, trans=True, unit_diagonal=False)  # L^-T P
    s = mT(triangular_solve(cj(ans), mT(y), lower=True, trans=True, unit_diagonal=False))
    return (sym_from_triangle(s, lower=True),)


cholesky = linalg_prim("cholesky", np.linalg.cholesky, _square_shape("cholesky"), _cholesky_vjp)


# --- pinv (Moore-Penrose), with the cutoff rcond on singular values -------------------------

def _pinv_shape(a: Aval, rcond: float, hermitian: bool) -> Aval:
    if a.ndim < 2:
        raise ShapeError(f"pinv: {a.ndim}-dimensional array given. Array must be at least "
                         "two-dimensional")
    return Aval(a.shape[:-2] + (a.shape[-1], a.shape[-2]), lin_dtype(a.dtype, name="pinv"))


def _pinv_vjp(g: Any, ans: Any, a: Any, rcond: float, hermitian: bool) -> tuple:
    # Golub & Pereyra: dX = -X dA X + X X^H dA^H (I - A X) + (I - X A) dA^H X^H X, exact where
    # the rank is locally constant; transposed term by term
    if hermitian:
        return (NoGrad("numpy.linalg.pinv with hermitian=True (use hermitian=False)"),)
    m, n = a.shape[-2:]
    x = ans  # (n, m)
    im = np.eye(m, dtype=x.dtype) - mm(a, x)
    in_ = np.eye(n, dtype=x.dtype) - mm(x, a)
    gh = mH(g)
    return (-mm(mm(mT(x), g), mT(x)) + mm(mm(cj(im), gh), cj(mm(x, mH(x))))
            + mm(mm(cj(mm(mH(x), x)), gh), cj(in_)),)


pinv = linalg_prim("pinv", lambda a, rcond, hermitian: np.linalg.pinv(a, rcond, hermitian),
                   _pinv_shape, _pinv_vjp)
