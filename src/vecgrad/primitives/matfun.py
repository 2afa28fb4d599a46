"""Matrix functions computed by SciPy (imported on first call): the Sylvester solve, the
matrix exponential and the principal square root, on stacks of matrices like the other linalg
primitives. All three are holomorphic: their VJPs (JAX's convention) use plain transposes."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError
from ..ir import Aval
from .matrix import check_square, lin_dtype, linalg_prim, mm, mT, same_batch
from .structural import BasicIndex, Sl, concatenate, getitem

__all__ = ["expm", "sqrtm", "sylvester"]


def _scipy_linalg() -> Any:
    try:
        import scipy.linalg
    except ImportError:
        raise ImportError("this function needs SciPy: pip install 'vecgrad[scipy]'") from None
    return scipy.linalg


# --- solve_sylvester: A X + X B = Q ----------------------------------------------------------

def _sylvester_shape(a: Aval, b: Aval, q: Aval) -> Aval:
    m, n = check_square(a, "solve_sylvester"), check_square(b, "solve_sylvester")
    same_batch(a, b, q, name="solve_sylvester")
    if q.shape[-2:] != (m, n):
        raise ShapeError(f"solve_sylvester: q of shape {q.shape} does not fit a {a.shape} and "
                         f"b {b.shape}")
    return Aval(q.shape, lin_dtype(a.dtype, b.dtype, q.dtype, name="solve_sylvester"))


def _sylvester_vjp(g: Any, ans: Any, a: Any, b: Any, q: Any) -> tuple:
    # A dX + dX B = dQ - dA X - X dB: the transpose of X -> A X + X B is Y -> A^T Y + Y B^T
    gq = sylvester(mT(a), mT(b), g)
    return -mm(gq, mT(ans)), -mm(mT(ans), gq), gq


sylvester = linalg_prim("sylvester", lambda a, b, q: _scipy_linalg().solve_sylvester(a, b, q),
                        _sylvester_shape, _sylvester_vjp)


# --- expm --------------------------------------------------------------------------------------

def _expm_vjp(g: Any, ans: Any, a: Any) -> tuple:
    # The adjoint of the Frechet derivative L(A, .) is L(A^T, .), and L(A^T, G) is the upper
    # right block of expm([[A^T, G], [0, A^T]]) (Najfeld & Havel)
    n = a.shape[-1]
    at = mT(a)
    zero = np.zeros(a.shape, a.dtype)
    big = concatenate(concatenate(at, g, axis=a.ndim - 1),
                      concatenate(zero, at, axis=a.ndim - 1), axis=a.ndim - 2)
    lead = tuple(Sl(0, d, 1) for d in a.shape[:-2])
    return (getitem(expm(big), idx=BasicIndex(lead + (Sl(0, n, 1), Sl(n, 2 * n, 1)))),)


def _expm_shape(a: Aval) -> Aval:
    check_square(a, "expm")
    return Aval(a.shape, lin_dtype(a.dtype, name="expm"))


expm = linalg_prim("expm", lambda a: _scipy_linalg().expm(a), _expm_shape, _expm_vjp)


# --- sqrtm: the principal square root, always complex (as jax.scipy.linalg.sqrtm) ------------

def _sqrtm(a: np.ndarray) -> np.ndarray:
    sl = _scipy_linalg()
    dt = np.result_type(a.dtype, np.complex64)
    if a.ndim == 2:
        return np.asarray(sl.sqrtm(a), dt)
    flat = a.reshape((-1,) + a.shape[-2:])
    return np.stack([np.asarray(sl.sqrtm(m), dt) for m in flat]).reshape(a.shape)


def _sqrtm_shape(a: Aval) -> Aval:
    check_square(a, "sqrtm")
    return Aval(a.shape, np.result_type(lin_dtype(a.dtype, name="sqrtm"), np.complex64))


# X X = A: dX X + X dX = dA, so dX = sylvester(X, X, dA), and its transpose is
# G -> sylvester(X^T, X^T, G)
sqrtm = linalg_prim("sqrtm", _sqrtm, _sqrtm_shape,
                    lambda g, ans, a: (sylvester(mT(ans), mT(ans), g),))
