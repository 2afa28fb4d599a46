"""`vecgrad.scipy.linalg`: scipy.linalg for traced code, with gradients (as jax.scipy.linalg).

Triangular and Cholesky solves read only the triangle SciPy reads (the gradient is zero on
the other one). Decompositions and norms share vecgrad.numpy.linalg's primitives.
"""
from __future__ import annotations

from typing import Any

import numpy as _np

from .. import numpy as vnp
from .. import primitives as P
from ..errors import ShapeError, unsupported
from ..numpy import linalg as _la

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "det", "eigh", "expm", "inv",
           "norm", "pinv", "qr", "solve", "solve_banded", "solve_sylvester", "solve_triangular",
           "sqrtm", "svd", "svdvals"]

det, inv, norm, svdvals = _la.det, _la.inv, _la.norm, _la.svdvals


def _rhs(a: Any, b: Any, name: str) -> tuple:
    """(a, b as a stack of matrices, whether b was a vector), batch axes broadcast."""
    a = _la._mat(a, name)
    b = _la._floating(vnp.asarray(b))
    n = vnp.shape(a)[-1]
    vec = len(vnp.shape(b)) == 1 or (len(vnp.shape(b)) == len(vnp.shape(a)) - 1
                                     and vnp.shape(b)[-1] == n and len(vnp.shape(a)) > 2)
    if vec:
        b = vnp.expand_dims(b, -1)
    if vnp.shape(b)[-2] != n:
        raise ShapeError(f"{name}: a of shape {vnp.shape(a)} and b of shape {vnp.shape(b)} "
                         "are incompatible")
    a, b = _la._bcast_batch(a, b)
    return a, b, vec


def _finish(x: Any, vec: bool) -> Any:
    return vnp.squeeze(x, -1) if vec else x


def _trans(trans: Any) -> tuple[bool, bool]:
    """(transpose, conjugate) of op(a)."""
    if trans in (0, "N", "n"):
        return False, False
    if trans in (1, "T", "t"):
        return True, False
    if trans in (2, "C", "c"):
        return True, True
    raise ValueError(f"invalid trans {trans!r}: use 0/'N', 1/'T' or 2/'C'")


def solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     check_finite: bool = True) -> Any:
    """Solve `op(a) x = b` with a triangular (only its lower or upper triangle is read)."""
    a, b, vec = _rhs(a, b, "solve_triangular")
    transpose, conj = _trans(trans)
    if conj and _np.dtype(a.dtype).kind == "c":
        a = vnp.conj(a)
    x = P.triangular_solve(a, b, lower=bool(lower), trans=transpose,
                           unit_diagonal=bool(unit_diagonal))
    return _finish(x, vec)


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Any:
    """The Cholesky factor: upper (a = U^T U, from a's upper triangle) unless `lower`."""
    return _la.cholesky(a, upper=not lower)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple:
    """(c, lower): the factor in one triangle of c, a's own entries in the other (as SciPy's
    LAPACK call leaves them)."""
    a = _la._mat(a, "cho_factor")
    n = vnp.shape(a)[-1]
    f = cholesky(a, lower=lower)
    rest = _np.triu(_np.ones((n, n)), 1) if lower else _np.tril(_np.ones((n, n)), -1)
    return f + a * rest.astype(a.dtype), bool(lower)


def cho_solve(c_and_lower: tuple, b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Any:
    """Solve `a x = b` given `cho_factor(a)`."""
    c, lower = c_and_lower
    c, b, vec = _rhs(c, b, "cho_solve")
    ch = vnp.conj(c) if _np.dtype(c.dtype).kind == "c" else c  # (a = L L^H or U^H U)
    y = P.triangular_solve(c if lower else ch, b, lower=bool(lower), trans=not lower,
                           unit_diagonal=False)
    x = P.triangular_solve(ch if lower else c, y, lower=bool(lower), trans=bool(lower),
                           unit_diagonal=False)
    return _finish(x, vec)


def _from_triangle(a: Any, lower: bool, hermitian: bool) -> Any:
    """The symmetric (or Hermitian, with a real diagonal) matrix of a's lower or upper
    triangle."""
    n = vnp.shape(a)[-1]
    tri = (_np.tril if lower else _np.triu)(_np.ones((n, n), a.dtype))
    t = a * tri
    other = vnp.swapaxes(t, -1, -2) * (1 - _np.eye(n, dtype=a.dtype))
    if hermitian and _np.dtype(a.dtype).kind == "c":
        t = t - 1j * vnp.imag(t) * _np.eye(n)
        other = vnp.conj(other)
    return t + other


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, check_finite: bool = True, assume_a: Any = None,
          transposed: bool = False) -> Any:
    """Solve `a x = b` (b a vector or a matrix). `assume_a` as SciPy: 'general', 'symmetric'
    / 'hermitian' / 'positive definite' read the triangle `lower` names, 'lower triangular',
    'upper triangular' and 'diagonal' read only that part."""
    a, b, vec = _rhs(a, b, "solve")
    kind = {None: "gen", "general": "gen", "sym": "sym", "symmetric": "sym", "her": "her",
            "hermitian": "her", "pos": "her", "positive definite": "her", "gen": "gen",
            "lower triangular": "lower", "upper triangular": "upper",
            "diagonal": "diagonal"}.get(assume_a)
    if kind is None:
        raise unsupported(f"scipy.linalg.solve with assume_a={assume_a!r}")
    if kind in ("lower", "upper"):
        x = P.triangular_solve(a, b, lower=kind == "lower", trans=bool(transposed),
                               unit_diagonal=False)
        return _finish(x, vec)
    if kind == "diagonal":
        a = a * _np.eye(vnp.shape(a)[-1], dtype=a.dtype)
    elif kind in ("sym", "her"):
        a = _from_triangle(a, bool(lower), kind == "her")
    x = P.solve(vnp.swapaxes(a, -1, -2) if transposed else a, b)
    return _finish(x, vec)


def solve_banded(l_and_u: tuple, ab: Any, b: Any, overwrite_ab: bool = False,
                 overwrite_b: bool = False, check_finite: bool = True) -> Any:
    """Solve `a x = b` for a banded a given in SciPy's diagonal ordered form `ab`
    (a[i, j] = ab[u + i - j, j]); the gradient reaches ab's band entries."""
    low, up = (int(v) for v in l_and_u)
    ab = _la._floating(vnp.asarray(ab))
    rows, n = vnp.shape(ab)
    if rows != low + up + 1:
        raise ValueError(f"invalid values for the number of lower and upper diagonals: l+u+1 "
                         f"({low + up + 1}) does not equal ab.shape[0] ({rows})")
    i, j = _np.indices((n, n))
    k = up + i - j
    inside = (k >= 0) & (k < rows)
    dense = vnp.where(inside, ab[_np.clip(k, 0, rows - 1), j], 0.0)
    return solve(dense, b)


def solve_sylvester(a: Any, b: Any, q: Any) -> Any:
    """Solve the Sylvester equation `a x + x b = q` (gradients in a, b and q)."""
    a, b, q = (_la._mat(x, "solve_sylvester") for x in (a, b, q))
    a, b, q = _la._bcast_batch(a, b, q)
    return P.sylvester(a, b, q)


def sqrtm(A: Any, disp: Any = None, blocksize: Any = None) -> Any:
    """The principal matrix square root. As jax.scipy.linalg.sqrtm the result is always
    complex (SciPy returns a real array when the root happens to be real: take `.real`)."""
    if disp not in (None, True) or blocksize is not None:
        raise unsupported("scipy.linalg.sqrtm with disp=False or blocksize")
    return P.sqrtm(_la._mat(A, "sqrtm"))


def expm(A: Any) -> Any:
    """The matrix exponential (its gradient is another expm, of a block matrix)."""
    return P.expm(_la._mat(A, "expm"))


def eigh(a: Any, b: Any = None, *, lower: bool = True, eigvals_only: bool = False,
         **kw: Any) -> Any:
    """Eigenvalues (and eigenvectors) of a symmetric matrix read from one triangle. The
    eigenvectors are NumPy's (LAPACK syevd): each may have the opposite sign of SciPy's
    (syevr), as in jax.scipy.linalg. The generalized problem (b) and subset selection are
    not supported."""
    if b is not None or kw:
        raise unsupported("scipy.linalg.eigh with b= or " + ", ".join(sorted(kw)))
    uplo = "L" if lower else "U"
    return _la.eigvalsh(a, uplo) if eigvals_only else tuple(_la.eigh(a, uplo))


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, **kw: Any) -> Any:
    """Singular value decomposition (as numpy.linalg.svd; a tuple U, s, Vh)."""
    out = _la.svd(a, full_matrices, compute_uv)
    return tuple(out) if compute_uv else out


def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> Any:
    """QR decomposition with SciPy's modes 'full' (Q square), 'economic' and 'r'."""
    if pivoting or mode not in ("full", "economic", "r"):
        raise unsupported(f"scipy.linalg.qr with mode={mode!r}, pivoting={pivoting}")
    m, n = vnp.shape(a)[-2:]
    if mode == "r":
        return (_la.qr(a, "complete" if m > n else "reduced")[1],)
    return tuple(_la.qr(a, "complete" if mode == "full" else "reduced"))


def pinv(a: Any, *, atol: Any = None, rtol: Any = None, return_rank: bool = False,
         check_finite: bool = True) -> Any:
    """The pseudo-inverse (relative cutoff `rtol`; an absolute `atol` is not supported)."""
    if atol not in (None, 0, 0.0) or return_rank:
        raise unsupported("scipy.linalg.pinv with atol= or return_rank=")
    return _la.pinv(a, rtol=rtol)


def block_diag(*arrs: Any) -> Any:
    """The block-diagonal matrix of the given blocks (1-D blocks are rows)."""
    if not arrs:
        return _np.empty((1, 0))
    blocks = []
    for x in arrs:
        x = vnp.asarray(x)
        nd = len(vnp.shape(x))
        if nd > 2:
            raise ValueError("arguments in the following positions have dimension greater "
                             "than 2")
        blocks.append(vnp.reshape(x, (1, -1)) if nd < 2 else x)
    dt = _np.result_type(*[b.dtype for b in blocks])
    cols = sum(vnp.shape(b)[1] for b in blocks)
    rows, start = [], 0
    for blk in blocks:
        r, c = vnp.shape(blk)
        parts = [_np.zeros((r, start), dt), vnp.astype(blk, dt),
                 _np.zeros((r, cols - start - c), dt)]
        rows.append(vnp.concatenate(parts, axis=1))
        start += c
    return vnp.concatenate(rows, axis=0)
