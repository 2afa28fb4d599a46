"""Products over axes: reduce_prod and its VJP, reduce_prod_grad.

d prod(x) / dx_i is the product of the others, Q_i(x) = prod_{j != i} x_j. Written in IR, the
form that is exact where x has zeros took about a dozen whole-array operations (zero masks, their
counts, wheres); `reduce_prod_grad(g, x, axes) = g * Q(x)` is one primitive instead. Its impl
takes the product; where every product is finite and nonzero (then no factor is 0, inf or
NaN) it divides the product by x, as the IR form did (the same values): two passes over x.
Otherwise it takes the product of the nonzero factors over x, kept where x is the only zero
(there) or where there is none (nowhere else), as the IR form did.

Its own VJP (second order and up) is IR with no division and no zero mask: Q as exclusive
prefix times exclusive suffix products (cumprod, cumprod_grad), which differentiate exactly
at zeros to every order (the masked forms were exact one order only: a mask's derivative is 0).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError
from ..ir import Aval
from .core import Primitive, register
from .cumulative import cumprod, cumprod_grad
from .elementwise import add, mul, reduce_along, reduce_sum, reduction
from .scans import flip, shift_down, shift_up
from .shapes import broadcast_to, full, reshape, transpose

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
        if x.ndim == 2 and np.isfinite(p).all() and 4 * np.count_nonzero(p == 0) <= p.size:
            return _zero_rows(out, np.asarray(g), x, p, axes[0])
        order = [i for i in range(x.ndim) if i not in axes] + list(axes)
        bad = ~ok.reshape(tuple(x.shape[i] for i in order[:x.ndim - len(axes)]))
        lead = tuple(range(1, len(axes) + 1))
        sub = _exact(np.asarray(g)[bad].reshape((-1,) + (1,) * len(axes)),
                     x.transpose(order)[bad], lead)
        out.transpose(order)[bad] = sub
        return out


def _zero_rows(out: np.ndarray, g: np.ndarray, x: np.ndarray, p: np.ndarray,
               axis: int) -> np.ndarray:
    """`out` = g * p / x for a matrix's products along `axis`, every product p finite and a
    few of them 0: right but at the zero factors (0 / 0 there), which get g times the
    product of the others where x is the only zero of its product, else 0. Reads the zero
    products again only, one call per step (the exact form on them took 45 of 65 us CPU
    on (200, 64) with 16 zero columns; this about 23)."""
    xt, ot = (x.T, out.T) if axis == 0 else (x, out)  # (views: one product per row)
    zp = np.flatnonzero(p == 0)  # (p in keepdims form: its flat order is xt's rows')
    rows = xt[zp]
    zero = rows == 0
    q = np.multiply.reduce(rows + zero, axis=1)  # (a zero factor counts as 1)
    q[np.count_nonzero(zero, axis=1) != 1] = 0  # (another zero among the others)
    q = q * g[zp]  # (after: an infinite g times a zero product of others is NaN, as g * 0;
    # not in place: g may be complex where x is real)
    r, col = np.divmod(np.flatnonzero(zero), rows.shape[1])  # (np.nonzero of the 2-D mask
    ot[zp[r], col] = q[r]  # took 4x as long)
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
    # g * Q(x) is linear in g: g's cotangent is sum(u * Q(x)). x's is the VJP of Q written
    # with no division, Q = A * B along the reduced axes (as one axis, first): A = exclusive
    # prefix products (shift_down(cumprod(x))), B = exclusive suffix products (the same on
    # the flipped axis). Its pieces (cumprod, cumprod_grad, shifts, products) differentiate
    # exactly where x has zeros, to every order; a mask of the zeros would not.
    q = reduce_prod_grad(full(shape=g.shape, dtype=g.dtype, value=1.0), x, axes=axes)
    g_ct = reduce_sum(mul(u, q), axes=axes)
    if x.size == 0:
        return g_ct, full(shape=x.shape, dtype=x.dtype, value=0.0)
    perm = tuple(axes) + tuple(i for i in range(x.ndim) if i not in axes)
    x0 = _rows(x, perm, axes)
    w0 = _rows(mul(u, _kd(x, g, axes)), perm, axes)
    one = full(shape=(), dtype=x0.dtype, value=1.0)
    c, cf = cumprod(x0, axis=0), cumprod(flip(x0), axis=0)
    a, b = shift_down(c, one), flip(shift_down(cf, one))
    via_a = cumprod_grad(shift_up(mul(w0, b)), c, x0, axis=0, running=True)
    via_b = flip(cumprod_grad(shift_up(flip(mul(w0, a))), cf, flip(x0), axis=0, running=True))
    x_ct = reshape(add(via_a, via_b), shape=tuple(x.shape[i] for i in perm))
    return g_ct, transpose(x_ct, perm=tuple(np.argsort(perm).tolist()))


def _rows(v: Any, perm: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    """v with the reduced axes first, as one axis."""
    m = int(np.prod([v.shape[i] for i in axes], dtype=np.int64))
    return reshape(transpose(v, perm=perm), shape=(m,) + tuple(v.shape[i] for i in perm[len(axes):]))


def _grad_batch(n: int, batched: tuple, g: Any, x: Any, axes: tuple[int, ...]) -> Any:
    g, x = (v if b else broadcast_to(v, shape=(n,) + v.shape) for v, b in zip((g, x), batched))
    return reduce_prod_grad(g, x, axes=tuple(a + 1 for a in axes))


reduce_prod_grad = register(Primitive("reduce_prod_grad", _grad_impl, _grad_shape, _grad_vjp,
                                      _grad_batch))
