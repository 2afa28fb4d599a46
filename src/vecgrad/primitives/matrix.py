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
from . import NoGrad, Primitive, register
from .linalg import einsum
from .structural import broadcast_to, transpose

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
    from .structural import reshape
    n = v.shape[-1]
    return reshape(v, shape=v.shape + (1,)) * np.eye(n, dtype=v.dtype)


def expand2(v: Any) -> Any:
    """v with two unit axes appended (a per-matrix scalar that broadcasts over matrices)."""
    from .structural import reshape
    return reshape(v, shape=v.shape + (1, 1))


def tri_mask(n: int, m: int, lower: bool, k: int, dtype: np.dtype) -> np.ndarray:
    """The 0/1 mask of a triangle: on and below diagonal k (lower) or on and above it."""
    ones = np.ones((n, m), dtype)
    return np.tril(ones, k) if lower else np.triu(ones, k)


def sym_from_triangle(G: Any, lower: bool) -> Any:
    """The cotangent of A for a function of the symmetric matrix built from one triangle of
    A, given the cotangent G of that symmetric matrix: G + G^T on the triangle off the
    diagonal, G on the diagonal, zero on the triangle that is never read."""
    n = G.shape[-1]
    half = tri_mask(n, n, lower, 0, G.dtype) - 0.5 * np.eye(n, dtype=G.dtype)
    return (G + mT(G)) * half


def safe_recip(d: Any) -> Any:
    """1/d, and 0 where d == 0 (degenerate eigen- or singular values: the terms whose
    derivative does not exist are dropped, which is exact when the function is invariant
    under rotations within the degenerate space, e.g. when it uses the values only)."""
    from .elementwise import eq, where
    zero = eq(d, 0)
    return where(zero, 0.0, 1.0 / where(zero, 1.0, d))


def stacked(name: str) -> Callable:
    """The batching rule of a linalg primitive: NumPy's linalg maps over leading axes, so
    shared operands are broadcast along the batch axis and the primitive is called again."""
    def rule(n: int, batched: tuple[bool, ...], *xs: Any, **params: Any) -> Any:
        from . import REGISTRY
        xs = tuple(x if b else broadcast_to(x, shape=(n,) + x.shape) for x, b in zip(xs, batched))
        return REGISTRY[name](*xs, **params)
    return rule


def linalg_prim(name: str, impl: Callable, shape_rule: Callable, vjp: Callable | None,
                real_grad: bool = False, **kw: Any) -> Primitive:
    """Register a linalg primitive with the stacked batching rule. `real_grad`: its VJP holds
    for real input only; a gradient through complex input raises NoGradientError."""
    if real_grad and vjp is not None:
        vjp = _real_grad_only(name, vjp)
    return register(Primitive(name, impl, shape_rule, vjp, stacked(name), **kw))


def _real_grad_only(name: str, vjp: Callable) -> Callable:
    def rule(g: Any, ans: Any, *xs: Any, **params: Any) -> tuple:
        if any(x.dtype.kind == "c" for x in xs):
            return tuple(NoGrad(f"numpy.linalg.{name} of a complex matrix (its gradient is "
                                "implemented for real input only)") for _ in xs)
        return vjp(g, ans, *xs, **params)
    return rule


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


solve = linalg_prim("solve", np.linalg.solve, _solve_shape, _solve_vjp)


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
    from .structural import Sl, getitem
    glog = getitem(g, idx=tuple(Sl(0, d, 1) for d in g.shape[:-1]) + (1,))
    return (expand2(glog) * mT(inv(a)),)  # the sign is piecewise constant


# (sign, log|det|) packed on a last axis of 2 (the IR has single-output equations)
slogdet = linalg_prim("slogdet", _slogdet, _square_shape("slogdet", 2, (2,)), _slogdet_vjp,
                      real_grad=True)


# --- triangular solves: op(A) X = B with op(A) = A or A^T, one triangle of A read ------------

def _tri_matrix(a: np.ndarray, lower: bool, unit_diagonal: bool) -> np.ndarray:
    n = a.shape[-1]
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t * (1 - np.eye(n, dtype=a.dtype)) + np.eye(n, dtype=a.dtype)
    return t


def _trisolve(a: np.ndarray, b: np.ndarray, lower: bool, trans: bool,
              unit_diagonal: bool) -> np.ndarray:
    t = _tri_matrix(a, lower, unit_diagonal)
    if trans:
        t = np.swapaxes(t, -1, -2)
    return np.linalg.solve(t, b)


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
    # Murray (arXiv:1602.07527): S = L^-T Phi(L^T gL) L^-1, with Phi taking the lower
    # triangle and halving the diagonal; S's symmetric part is the cotangent of A as a
    # symmetric matrix, and A is read through its lower triangle.
    n = ans.shape[-1]
    phi = tri_mask(n, n, True, 0, ans.dtype) - 0.5 * np.eye(n, dtype=ans.dtype)
    p = mm(mT(ans), g) * phi
    y = triangular_solve(ans, p, lower=True, trans=True, unit_diagonal=False)  # L^-T P
    s = mT(triangular_solve(ans, mT(y), lower=True, trans=True, unit_diagonal=False))
    return (sym_from_triangle(0.5 * (s + mT(s)), lower=True),)


cholesky = linalg_prim("cholesky", np.linalg.cholesky, _square_shape("cholesky"), _cholesky_vjp,
                       real_grad=True)


# --- pinv (Moore-Penrose), with the cutoff rcond on singular values -------------------------

def _pinv_shape(a: Aval, rcond: float, hermitian: bool) -> Aval:
    if a.ndim < 2:
        raise ShapeError(f"pinv: {a.ndim}-dimensional array given. Array must be at least "
                         "two-dimensional")
    return Aval(a.shape[:-2] + (a.shape[-1], a.shape[-2]), lin_dtype(a.dtype, name="pinv"))


def _pinv_vjp(g: Any, ans: Any, a: Any, rcond: float, hermitian: bool) -> tuple:
    # Golub & Pereyra: exact where the rank is locally constant
    if hermitian:
        return (NoGrad("numpy.linalg.pinv with hermitian=True (use hermitian=False)"),)
    m, n = a.shape[-2:]
    x = ans  # (n, m)
    im = np.eye(m, dtype=x.dtype) - mm(a, x)
    in_ = np.eye(n, dtype=x.dtype) - mm(x, a)
    d = -mm(mm(x, mT(g)), x) + mm(mm(mm(x, mT(x)), g), im) + mm(mm(in_, g), mm(mT(x), x))
    return (mT(d),)


pinv = linalg_prim("pinv", lambda a, rcond, hermitian: np.linalg.pinv(a, rcond, hermitian),
                   _pinv_shape, _pinv_vjp, real_grad=True)
