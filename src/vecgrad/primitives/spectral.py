"""Decompositions with several results: eigh, svd and qr (and the value-only eigvalsh and
svdvals, whose VJPs need the vectors).

The IR has single-output equations, so a primitive with several results returns them packed:
each result flattened over its matrix axes and concatenated along one last axis. `unpack`
splits them again with views (getitem + reshape), so the cotangent of an unused result is
zero by the AD driver's usual accounting and the decomposition is computed once.

The VJPs transpose JAX's JVP rules (Giles; Townsend for svd; Walter & Lehmann for qr) for
real and complex input under JAX's convention (the pairing Re(sum(a * b))), with degenerate
eigen- or singular values handled by `safe_recip`. Complex eigen- and singular vectors are
defined up to a phase each: their gradients are those of phase-invariant functions (such as
abs(v) or v v^H), as in JAX.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ShapeError
from ..ir import Aval
from .core import NoGrad
from .elementwise import imag, real
from .matrix import (
    check_square,
    cj,
    diag_mat,
    diag_part,
    lin_dtype,
    linalg_prim,
    mH,
    mm,
    mT,
    safe_recip,
    solve,
    sym_from_triangle,
    tri_mask,
    triangular_solve,
)
from .structural import BasicIndex, Sl, concatenate, getitem, reshape

__all__ = ["eig", "eigh", "eigvalsh", "pack", "qr", "svd", "svdvals", "unpack"]


def pack(outs: list[np.ndarray], nbatch: int) -> np.ndarray:
    """Results with `nbatch` common leading axes, flattened after them and concatenated."""
    dt = np.result_type(*outs)
    return np.concatenate([o.reshape(o.shape[:nbatch] + (-1,)).astype(dt, copy=False)
                           for o in outs], axis=-1)


def unpack(x: Any, shapes: list[tuple[int, ...]]) -> list:
    """The results packed in x (traced or not), given their shapes after the batch axes."""
    batch = x.shape[:-1]
    whole = tuple(Sl(0, d, 1) for d in batch)
    out, start = [], 0
    for s in shapes:
        size = math.prod(s)
        part = getitem(x, idx=BasicIndex(whole + (Sl(start, start + size, 1),)))
        out.append(reshape(part, shape=batch + s))
        start += size
    return out


def _packed_aval(batch: tuple[int, ...], shapes: list[tuple], dtype: np.dtype) -> Aval:
    return Aval(batch + (sum(math.prod(s) for s in shapes),), dtype)


def _outer_diff(w: Any) -> Any:
    """d[..., i, j] = w[..., j] - w[..., i]."""
    b, n = w.shape[:-1], w.shape[-1]
    return reshape(w, shape=b + (1, n)) - reshape(w, shape=b + (n, 1))


def _row(v: Any) -> Any:
    return reshape(v, shape=v.shape[:-1] + (1, v.shape[-1]))


def _col(v: Any) -> Any:
    return reshape(v, shape=v.shape + (1,))


# --- eigh: the eigenvalues (ascending) and eigenvectors of a symmetric matrix --------------
# A is read through one triangle (UPLO), as LAPACK does.

def eigh_shapes(n: int) -> list[tuple[int, ...]]:
    return [(n,), (n, n)]


def _eigh(a: np.ndarray, UPLO: str) -> np.ndarray:
    w, v = np.linalg.eigh(a, UPLO)
    return pack([w, v], a.ndim - 2)


def _eigh_shape(a: Aval, UPLO: str) -> Aval:
    n = check_square(a, "eigh")
    if UPLO not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return _packed_aval(a.shape[:-2], eigh_shapes(n), lin_dtype(a.dtype, name="eigh"))


def _eigh_vjp(g: Any, ans: Any, a: Any, UPLO: str) -> tuple:
    # dw = Re diag(M), dV = V (F o M) with M = V^H dA V: M's cotangent is
    # diag(Re gw) + F o (V^T gV), and dA's is conj(V) (that) V^T
    n = a.shape[-1]
    gw, gv = unpack(g, eigh_shapes(n))
    w, v = unpack(ans, eigh_shapes(n))
    if w.dtype.kind == "c":
        w, gw = real(w), real(gw)
    f = safe_recip(_outer_diff(w))  # 1 / (w_j - w_i) off the diagonal
    G = mm(mm(cj(v), diag_mat(gw) + f * mm(mT(v), gv)), mT(v))
    return (sym_from_triangle(G, lower=UPLO == "L"),)


eigh = linalg_prim("eigh", _eigh, _eigh_shape, _eigh_vjp)


def _eigvalsh_shape(a: Aval, UPLO: str) -> Aval:
    packed = _eigh_shape(a, UPLO)
    return Aval(a.shape[:-1], _real_dtype(packed.dtype))  # (real also for Hermitian input)


def _real_dtype(dt: np.dtype) -> np.dtype:
    return np.empty(0, dt).real.dtype


def _eigvalsh_vjp(g: Any, ans: Any, a: Any, UPLO: str) -> tuple:
    _, v = unpack(eigh(a, UPLO=UPLO), eigh_shapes(a.shape[-1]))
    return (sym_from_triangle(mm(cj(v) * _row(g), mT(v)), lower=UPLO == "L"),)


eigvalsh = linalg_prim("eigvalsh", lambda a, UPLO: np.linalg.eigvalsh(a, UPLO),
                       _eigvalsh_shape, _eigvalsh_vjp)


# --- svd: U, s, Vh with a = U diag(s) Vh ----------------------------------------------------

def svd_shapes(m: int, n: int, full_matrices: bool) -> list[tuple[int, ...]]:
    k = min(m, n)
    return [(m, m), (k,), (n, n)] if full_matrices else [(m, k), (k,), (k, n)]


def _svd(a: np.ndarray, full_matrices: bool) -> np.ndarray:
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
    return pack([u, s, vh], a.ndim - 2)


def _matrix_aval(a: Aval, name: str) -> tuple[int, int]:
    if a.ndim < 2:
        raise ShapeError(f"{name}: {a.ndim}-dimensional array given. Array must be at least "
                         "two-dimensional")
    return a.shape[-2], a.shape[-1]


def _svd_shape(a: Aval, full_matrices: bool) -> Aval:
    m, n = _matrix_aval(a, "svd")
    return _packed_aval(a.shape[:-2], svd_shapes(m, n, full_matrices),
                        lin_dtype(a.dtype, name="svd"))


def _svd_vjp(g: Any, ans: Any, a: Any, full_matrices: bool) -> tuple:
    # JAX's JVP, with dS = U^H dA V: ds = Re diag(dS), dU = U (F o (dS S + S dS^H) + D) and
    # dV = V (F o (S dS + dS^H S)), D = i Im(diag(dS)) / s, plus the parts outside U's (or
    # V's) span for tall (wide) matrices. Transposed: dS's cotangent is C below, dA's is
    # conj(U) C conj(Vh).
    m, n = a.shape[-2:]
    if full_matrices and m != n:
        return (NoGrad("numpy.linalg.svd with full_matrices=True of a non-square matrix (the "
                       "extra singular vectors are not unique): use full_matrices=False"),)
    u, s, vh = unpack(ans, svd_shapes(m, n, False))
    gu, gs, gvh = unpack(g, svd_shapes(m, n, False))
    cplx = u.dtype.kind == "c"
    if cplx:
        s, gs = real(s), real(gs)
    f = safe_recip(_outer_diff(s * s))  # 1 / (s_j^2 - s_i^2) off the diagonal
    z = mm(mT(u), gu)  # U^T gU
    y = mm(cj(vh), mH(gvh))  # V^T gV, with V = Vh^H
    sinv = safe_recip(s)
    core = f * (z - mH(z)) * _row(s) + diag_mat(gs) + _col(s) * (f * (y - mH(y)))
    if cplx:
        core = core + 1j * diag_mat(imag(_diag(z)) * sinv)
    ga = mm(mm(cj(u), core), cj(vh))
    if m > n:  # (I - conj(U) U^T) gU S^-1 V^T
        ga = ga + mm((gu - mm(cj(u), z)) * _row(sinv), cj(vh))
    if m < n:  # conj(U) S^-1 gVh (I - Vh^T conj(Vh))
        ga = ga + mm(cj(u), _col(sinv) * (gvh - mm(mm(gvh, mT(vh)), cj(vh))))
    return (ga,)


svd = linalg_prim("svd", _svd, _svd_shape, _svd_vjp)


def _svdvals_shape(a: Aval) -> Aval:
    m, n = _matrix_aval(a, "svdvals")
    return Aval(a.shape[:-2] + (min(m, n),), _real_dtype(lin_dtype(a.dtype, name="svdvals")))


def _svdvals_vjp(g: Any, ans: Any, a: Any) -> tuple:
    m, n = a.shape[-2:]
    u, _, vh = unpack(svd(a, full_matrices=False), svd_shapes(m, n, False))
    return (mm(cj(u) * _row(g), cj(vh)),)  # ds = Re diag(U^H dA V)


svdvals = linalg_prim("svdvals", lambda a: np.linalg.svd(a, compute_uv=False), _svdvals_shape,
                      _svdvals_vjp)


# --- qr: a = Q R, Q with orthonormal columns, R upper triangular ------------------------------

def qr_shapes(m: int, n: int, complete: bool) -> list[tuple[int, ...]]:
    k = m if complete else min(m, n)
    return [(m, k), (k, n)]


def _qr(a: np.ndarray, complete: bool) -> np.ndarray:
    q, r = np.linalg.qr(a, "complete" if complete else "reduced")
    return pack([q, r], a.ndim - 2)


def _qr_shape(a: Aval, complete: bool) -> Aval:
    m, n = _matrix_aval(a, "qr")
    return _packed_aval(a.shape[:-2], qr_shapes(m, n, complete), lin_dtype(a.dtype, name="qr"))


def _qr_square_vjp(q: Any, r: Any, gq: Any, gr: Any) -> Any:
    """The cotangent of A = QR for m >= n (R square), transposing JAX's JVP (Walter &
    Lehmann): with D = Q^T gQ - gR R^T, it is (gQ + conj(Q) K) R^-T where
    K = -D + tril(D - D^H, -1) + i Im(diag(D)) (for real input, Q copyltu(-D^T))."""
    k = r.shape[-1]
    d = mm(mT(q), gq) - mm(gr, mT(r))
    kk = (d - mH(d)) * tri_mask(k, k, True, -1, r.real.dtype) - d
    if d.dtype.kind == "c":
        kk = kk + 1j * diag_mat(imag(_diag(d)))
    b = gq + mm(cj(q), kk)
    return mT(triangular_solve(r, mT(b), lower=False, trans=False, unit_diagonal=False))


def _diag(x: Any) -> Any:
    return diag_part(x)


def _qr_vjp(g: Any, ans: Any, a: Any, complete: bool) -> tuple:
    m, n = a.shape[-2:]
    if complete and m > n:
        return (NoGrad("numpy.linalg.qr with mode='complete' of a tall matrix (the extra "
                       "columns of Q are not unique): use mode='reduced'"),)
    q, r = unpack(ans, qr_shapes(m, n, False))
    gq, gr = unpack(g, qr_shapes(m, n, False))
    if m >= n:
        return (_qr_square_vjp(q, r, gq, gr),)
    # a = Q [R1 R2]: the first m columns X = Q R1 fix Q; R2 = Q^T Y for the rest
    lead = tuple(Sl(0, d, 1) for d in a.shape[:-1])
    cols = lambda x, lo, hi: getitem(x, idx=BasicIndex(lead + (Sl(lo, hi, 1),)))
    y, gr1, gr2 = cols(a, m, n), cols(gr, 0, m), cols(gr, m, n)
    gx = _qr_square_vjp(q, cols(r, 0, m), gq + mm(cj(y), mH(gr2)), gr1)
    return (concatenate(gx, mm(cj(q), gr2), axis=a.ndim - 1),)


qr = linalg_prim("qr", _qr, _qr_shape, _qr_vjp)


# --- eig: eigenvalues and right eigenvectors of a general square matrix (always complex) -----

def _eig(a: np.ndarray) -> np.ndarray:
    w, v = np.linalg.eig(a)
    dt = np.result_type(w.dtype, np.complex64)
    return pack([w.astype(dt), v.astype(dt)], a.ndim - 2)


def _eig_shape(a: Aval) -> Aval:
    n = check_square(a, "eig")
    dt = lin_dtype(a.dtype, name="eig")
    return _packed_aval(a.shape[:-2], eigh_shapes(n), np.result_type(dt, np.complex64))


def _eig_vjp(g: Any, ans: Any, a: Any) -> tuple:
    # JAX's JVP (arXiv:1701.00392, eq. 4.77) with M = V^-1 dA V: dw = diag(M),
    # dU = V (F o M), and dV = dU - V diag(Re(sum(conj(V) dU))) keeping columns of norm 1.
    # Transposed: gU = gV - conj(V) Re(diag(V^T gV)), M's cotangent diag(gw) + F o (V^T gU),
    # and dA's V^-T (that) V^T.
    n = a.shape[-1]
    gw, gv = unpack(g, eigh_shapes(n))
    w, v = unpack(ans, eigh_shapes(n))
    f = safe_recip(_outer_diff(w))
    gu = gv - cj(v) * _row(real(_diag(mm(mT(v), gv))))
    gm = diag_mat(gw) + f * mm(mT(v), gu)
    return (solve(mT(v), mm(gm, mT(v))),)


eig = linalg_prim("eig", _eig, _eig_shape, _eig_vjp)
