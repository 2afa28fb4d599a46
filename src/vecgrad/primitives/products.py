"""Products over axes: reduce_prod and its VJP, reduce_prod_grad.

d prod(x) / dx_i is the product of the others, Q_i(x) = prod_{j != i} x_j. Written in IR, the
form that is exact where x has zeros took about a dozen whole-array operations (zero masks, their
counts, wheres); `reduce_prod_grad(g, x, axes) = g * Q(x)` is one primitive instead. Its impl
takes the product; where every product is finite and nonzero (then no factor is 0, inf or
NaN) it divides the product by x, as the IR form did (the same values): two passes over x.
Otherwise it takes the product of the nonzero factors over x, kept where x is the only zero
(there) or where there is none (nowhere else), as the IR form did.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError
from ..ir import Aval
from .core import Primitive, register
from .elementwise import cast, div, eq, mul, reduce_along, reduce_sum, reduction, sub, where
from .shapes import broadcast_to, full, reshape

__all__ = ["reduce_prod", "reduce_prod_grad"]


def _kd(x: Any, v: Any, axes: tuple[int, ...]) -> Any:
    """A reduced value in keepdims form (broadcasting where it meets x)."""
    return reshape(v, shape=tuple(1 if i in axes else d for i, d in enumerate(x.shape)))


def _prod_vjp(g: Any, ans: Any, x: Any, axes: tuple[int, ...]) -> tuple:
    return (reduce_prod_grad(g, x, axes=axes),)


reduce_prod = reduction("reduce_prod", np.prod, _prod_vjp)


def _grad_impl(g: np.ndarray, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    gk = g.reshape(tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    with np.errstate(all="ignore"):
        p = reduce_along(np.prod, x, axes, keepdims=True)
        ok = np.isfinite(p) & (p != 0)  # (then no factor of that product is 0, inf or NaN)
        if ok.all():
            return gk * p / x
        if x.ndim == len(axes) or not ok.any():
            return _exact(gk, x, axes)
        out = gk * p / x  # then the exact form on the products that are not ok only
        order = [i for i in range(x.ndim) if i not in axes] + list(axes)
        bad = ~ok.reshape(tuple(x.shape[i] for i in order[:x.ndim - len(axes)]))
        lead = tuple(range(1, len(axes) + 1))
        sub = _exact(np.asarray(g)[bad].reshape((-1,) + (1,) * len(axes)),
                     x.transpose(order)[bad], lead)
        out.transpose(order)[bad] = sub
        return out


def _exact(gk: np.ndarray, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """g times the product of the other factors where products may be 0, inf or NaN: the
    product of the nonzero factors over x, kept where x is the only zero or there is none."""
    zero = x == 0
    xs = np.where(zero, 1, x)
    n0 = np.sum(zero, axis=axes, keepdims=True)
    keep = np.where(zero, n0 == 1, n0 == 0)
    return gk * reduce_along(np.prod, xs, axes, keepdims=True) / xs * keep


def _grad_shape(g: Aval, x: Aval, axes: tuple[int, ...]) -> Aval:
    if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
        raise ShapeError(f"reduce_prod_grad: axis {axes} out of range for shape {x.shape}")
    if g.shape != tuple(d for i, d in enumerate(x.shape) if i not in axes):
        raise ShapeError(f"reduce_prod_grad: g {g.shape} is not x {x.shape} reduced over "
                         f"{axes}")
    return Aval(x.shape, np.result_type(g.dtype, x.dtype))


def _grad_vjp(u: Any, ans: Any, g: Any, x: Any, axes: tuple[int, ...]) -> tuple:
    # g * Q(x) is linear in g: g's cotangent is sum(u * Q(x)). x's is g * (H u), H the
    # Hessian of prod(x): (H u)_k = sum_{i != k} u_i prod_{j != i, k} x_j. With Z the zeros,
    # N the product of the other factors, R = sum_{i not in Z} u_i / x_i, W = sum_{i in Z} u_i:
    # at a nonzero x_k, N / x_k times R - u_k / x_k (no zero), W (one zero) or 0; at a zero,
    # N times R (it is the only zero), W - u_k (one other zero) or 0 (two or more).
    q = reduce_prod_grad(full(shape=g.shape, dtype=g.dtype, value=1.0), x, axes=axes)
    zero = eq(x, 0)
    xs = where(zero, 1.0, x)
    n0 = _kd(x, reduce_sum(cast(zero, dtype=np.dtype(np.int64)), axes=axes), axes)
    nz = _kd(x, reduce_prod(xs, axes=axes), axes)
    r = _kd(x, reduce_sum(where(zero, 0.0, div(u, xs)), axes=axes), axes)
    w = _kd(x, reduce_sum(where(zero, u, 0.0), axes=axes), axes)
    one, two = eq(n0, 1), eq(n0, 2)
    at_other = div(nz, xs) * where(eq(n0, 0), sub(r, div(u, xs)), where(one, w, 0.0))
    at_zero = nz * where(one, r, where(two, sub(w, u), 0.0))
    hu = where(zero, at_zero, at_other)
    return reduce_sum(mul(u, q), axes=axes), mul(_kd(x, g, axes), hu)


def _grad_batch(n: int, batched: tuple, g: Any, x: Any, axes: tuple[int, ...]) -> Any:
    g, x = (v if b else broadcast_to(v, shape=(n,) + v.shape) for v, b in zip((g, x), batched))
    return reduce_prod_grad(g, x, axes=tuple(a + 1 for a in axes))


reduce_prod_grad = register(Primitive("reduce_prod_grad", _grad_impl, _grad_shape, _grad_vjp,
                                      _grad_batch))
