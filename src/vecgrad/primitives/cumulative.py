"""Cumulative sums, products, maxima and minima along one static axis (NumPy's cumsum,
cumprod and `np.maximum.accumulate` / `np.minimum.accumulate`).

The VJP of a prefix sum is a suffix sum (`reverse=True`). cumprod's VJP is `cumprod_grad`:
the exclusive prefix product times a reverse linear recurrence (`scans.rev_linear`), with no
division, so exact where the input has zeros; where the forward's products are all normal
numbers its impl takes the suffix sum of g * c divided by x instead (one scan, not two).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ShapeError
from ..ir import Aval
from .core import Primitive, register
from .elementwise import eq, mul, where
from .scans import affine_runner, affine_scan, moveaxis0, rev_linear, shift_down, shift_up
from .sorting import scatter_add_along
from .structural import broadcast_to, full

__all__ = ["cummax", "cummin", "cumprod", "cumprod_grad", "cumprod_grad_runner", "cumsum"]


def _dtype(fn: Callable, dt: np.dtype) -> np.dtype:
    return fn(np.ones(1, dt)).dtype


def _scan(name: str, fn: Callable, vjp: Callable) -> Primitive:
    """A scan along `axis` (params: axis, and for cumsum `reverse`: a suffix scan)."""
    def shape_rule(x: Aval, axis: int, **p: Any) -> Aval:
        if not 0 <= axis < x.ndim:
            raise ShapeError(f"{name}: axis {axis} out of range for an array of shape {x.shape}")
        return Aval(x.shape, _dtype(fn, x.dtype))

    def impl(x: np.ndarray, axis: int, reverse: bool = False) -> np.ndarray:
        if reverse:
            return np.flip(fn(np.flip(x, axis), axis=axis), axis)
        return fn(x, axis=axis)

    def batch(n: int, b: tuple, x: Any, axis: int, **p: Any) -> Any:
        return prim(x, axis=axis + 1, **p)
    prim = register(Primitive(name, impl, shape_rule, vjp, batch))
    return prim


def _cumsum_vjp(g: Any, ans: Any, x: Any, axis: int, reverse: bool) -> tuple:
    return (cumsum(g, axis=axis, reverse=not reverse),)


def _cumprod_vjp(g: Any, ans: Any, x: Any, axis: int) -> tuple:
    # (ans is cumprod(x) as computed: the impl need not check it bitwise)
    return (g if x.shape[axis] == 0 else cumprod_grad(g, ans, x, axis=axis, running=True),)


# ------------------------------------------------------------------ cumprod_grad
# cumprod_grad(g, c, x) = before(c) * lam, lam[t] = g[t] + x[t+1] lam[t+1], before(c)[t] =
# c[t-1] (1 at t = 0), along `axis`: cumprod's VJP when c = cumprod(x), since
# d c_j / d x_i = prod_{k < i} x_k * prod_{i < k <= j} x_k. Defined for any c (the spec tests
# draw c apart from x), and computed so.

def _exact_np(g: np.ndarray, c: np.ndarray, x: np.ndarray, dt: np.dtype,
              scan: Callable = affine_scan.impl) -> np.ndarray:
    """before(c) * lam along axis 0, with no division (exact where x has zeros); `scan`
    runs affine_scan (its runner, bound to these shapes)."""
    a = np.concatenate([np.zeros_like(x[:1], dt), x[:0:-1]])  # a[s] = x[T-s]
    lam = scan(np.zeros((), dt), a, g[::-1])[::-1]
    before = np.concatenate([np.ones_like(c[:1], dt), c[:-1]])
    return np.multiply(before, lam, dtype=dt)


# Below the smallest normal number / eps a product may have lost digits to underflow, and
# c_j / x_i could differ from the product of the factors it stands for.
def _floor(dt: np.dtype) -> float:
    fi = np.finfo(dt)
    return float(fi.tiny / fi.eps)


def _by_division(g: np.ndarray, c: np.ndarray, x: np.ndarray, floor: float,
                 running: bool = False) -> Any:
    """sum_{j >= t} g_j c_j / x_t (= before(c)[t] * lam[t] when c_j = c_{t-1} x_t ... x_j)
    along axis 0: one suffix sum instead of the recurrence's two scans. None where c is not
    exactly NumPy's running product of x (bitwise; not checked when `running`: c is the
    forward's cumprod(x)), holds a product below `floor` other than zero (underflow), or a
    sum is not finite: the exact form runs then."""
    with np.errstate(all="ignore"):
        low = c.min()  # (products of positive factors: one pass, no |c|)
        if not low >= floor:
            m = np.abs(c)
            low = m.min()
            if not (low >= floor or low == 0 and np.min(m, where=m > 0, initial=np.inf)
                    >= floor):
                return None  # (NaN, a subnormal or underflow)
        if not (running or (c[0] == x[0]).all()
                and (np.multiply(c[:-1], x[1:]) == c[1:]).all()):
            return None  # (where c is nonzero, so is every x up to there)
        if low > 0:
            return _suffix_ratio(g, c, x)
        return _past_zero(g, c, x) if c.ndim == 1 else _columns_past_zero(g, c, x)


def _suffix_ratio(g: np.ndarray, c: np.ndarray, x: np.ndarray) -> Any:
    """sum_{j >= t} g_j c_j / x_t along axis 0; None if a sum is not finite."""
    s = np.multiply(g, c)
    np.add.accumulate(s[::-1], axis=0, out=s[::-1])
    # s[0] sums every term: a sum that overflowed (or met an inf or NaN) makes it inf or NaN
    # too, so one row tells whether all are finite
    return np.divide(s, x, out=s) if np.isfinite(s[0]).all() else None


# Where c reaches zero, at its first zero z (x[z] = 0; zeros persist, c[t] = c[t-1] x[t]):
# before z the ratio (c_j = 0 past z, and so is every d c_j / d x_t, t < z, holding x[z]); at
# z, c[z-1] * sum_{j >= z} g_j x[z+1] ... x[j] (up to the next zero); past z zero, as c[t-1]
# is. An infinite g past z (0 * inf: NaN in the recurrence) runs the exact form.

def _past_zero(g: np.ndarray, c: np.ndarray, x: np.ndarray) -> Any:
    """The division form of a 1-D c with zeros: the ratio up to its first zero z only."""
    z = np.count_nonzero(c)
    out = np.zeros(c.shape, c.dtype)
    if z and (r := _suffix_ratio(g[:z], c[:z], x[:z])) is None:
        return None
    out[:z] = r if z else 0
    return out if _at_zero(out, g, c, x, z) else None


def _at_zero(out: np.ndarray, g: np.ndarray, c: np.ndarray, x: np.ndarray, z: int) -> bool:
    """out at c's first zero z: c[z-1] * sum_{j >= z} g_j x[z+1] ... x[j] (the work ends at
    the next zero of x), zero past it. False where that or g past z is not finite."""
    rest = x[z + 1:]
    stop = np.flatnonzero(rest == 0)
    stop = stop[0] if stop.size else rest.size
    lam = g[z] + np.dot(g[z + 1:z + 1 + stop], np.cumprod(rest[:stop]))
    if not (np.isfinite(lam) and np.isfinite(g[z:]).all()):
        return False
    out[z] = (c[z - 1] if z else 1) * lam
    out[z + 1:] = 0
    return True


ZERO_COLUMNS_MAX = 16  # columns reaching zero, each one's own 1-D pass; more: the recurrence


def _columns_past_zero(g: np.ndarray, c: np.ndarray, x: np.ndarray) -> Any:
    """The division form of rows of c where some columns reach zero: the ratio for all
    (right up to a column's first zero, as c_j = 0 from there on: its terms add 0), then
    each such column (its last product zero: zeros persist) at and past its first zero."""
    T = c.shape[0]
    g2, c2, x2 = (v.reshape(T, -1) for v in (g, c, x))
    cols = np.flatnonzero(c2[-1] == 0)
    out = _suffix_ratio(g2, c2, x2) if cols.size <= ZERO_COLUMNS_MAX else None
    for j in cols if out is not None else ():
        if not _at_zero(out[:, j], g2[:, j], c2[:, j], x2[:, j], np.count_nonzero(c2[:, j])):
            return None
    return None if out is None else out.reshape(c.shape)


def cumprod_grad_runner(g: Aval, c: Aval, x: Aval, axis: int,
                        running: bool = False) -> Callable[..., np.ndarray]:
    """cumprod_grad on operands of these avals, its dtype, axis moves and plan chosen once
    (the NumPy backend binds it when compiling; the impl builds it per call)."""
    dt = _cumprod_grad_shape(g, c, x, axis=axis).dtype
    floor = _floor(dt) if dt.kind == "f" and g.dtype == c.dtype == x.dtype == dt else None
    if g.shape[axis] == 0:
        return lambda g, c, x: np.asarray(g, dt)
    shape = (g.shape[axis],) + g.shape[:axis] + g.shape[axis + 1:]
    scan = affine_runner(Aval((), dt), Aval(shape, dt), Aval(shape, dt))
    front = (lambda v: v) if axis == 0 else (lambda v: np.moveaxis(v, axis, 0))
    back = (lambda v: v) if axis == 0 else (lambda v: np.moveaxis(v, 0, axis))

    def run(g: np.ndarray, c: np.ndarray, x: np.ndarray) -> np.ndarray:
        g, c, x = front(g), front(c), front(x)
        out = None if floor is None else _by_division(g, c, x, floor, running)
        return back(_exact_np(g, c, x, dt, scan) if out is None else out)
    return run


def _cumprod_grad_impl(g: np.ndarray, c: np.ndarray, x: np.ndarray, axis: int,
                       running: bool = False) -> np.ndarray:
    g, c, x = (np.asarray(v) for v in (g, c, x))
    avals = (Aval(v.shape, v.dtype) for v in (g, c, x))
    return cumprod_grad_runner(*avals, axis=axis, running=running)(g, c, x)


def _cumprod_grad_shape(g: Aval, c: Aval, x: Aval, axis: int, running: bool = False) -> Aval:
    if not g.shape == c.shape == x.shape or not 0 <= axis < g.ndim:
        raise ShapeError(f"cumprod_grad: g {g.shape}, c {c.shape} and x {x.shape} need one "
                         f"shape with axis {axis}")
    return Aval(g.shape, np.result_type(g.dtype, c.dtype, x.dtype))


def _cumprod_grad_vjp(u: Any, ans: Any, g: Any, c: Any, x: Any, axis: int,
                      running: bool = False) -> tuple:
    # With h = u * before(c) (lam's cotangent) and mu[j] = x[j] mu[j-1] + h[j] (the
    # recurrence's adjoint, forward): g's cotangent is mu, c's is u[t+1] lam[t+1] (before
    # shifts c down a step) and x's is mu[t-1] lam[t] (x[t] scales lam[t] into lam[t-1]).
    if g.shape[axis] == 0:
        return (u, None, None)
    u0, g0, c0, x0 = (moveaxis0(v, axis) for v in (u, g, c, x))
    lam = rev_linear(x0, g0)
    h = mul(u0, shift_down(c0, full(shape=(), dtype=c0.dtype, value=1.0)))
    zero = full(shape=(), dtype=h.dtype, value=0.0)
    mu = affine_scan(zero, shift_down(shift_up(x0), zero), h)  # (x[0] meets no state)
    back = lambda v: moveaxis0(v, axis, back=True)
    return (back(mu), back(shift_up(mul(u0, lam))), back(mul(lam, shift_down(mu, zero))))


def _cumprod_grad_batch(n: int, batched: tuple, g: Any, c: Any, x: Any, axis: int,
                        running: bool = False) -> Any:
    g, c, x = (v if b else broadcast_to(v, shape=(n,) + v.shape)
               for v, b in zip((g, c, x), batched))
    return cumprod_grad(g, c, x, axis=axis + 1, running=running)


def running_arg(x: Any, ans: Any, axis: int) -> Any:
    """For a running max/min `ans` of x: the index along `axis` of the latest element that
    attains it (where its cotangent goes)."""
    n = x.shape[axis]
    pos = np.arange(n).reshape((n,) + (1,) * (x.ndim - 1 - axis))
    return cummax(where(eq(x, ans), pos, 0), axis=axis)


def _extreme_vjp(g: Any, ans: Any, x: Any, axis: int) -> tuple:
    return (scatter_add_along(g, running_arg(x, ans, axis), axis=axis, size=x.shape[axis]),)


cumsum = _scan("cumsum", np.cumsum, _cumsum_vjp)
cumprod = _scan("cumprod", np.cumprod, _cumprod_vjp)
cummax = _scan("cummax", np.maximum.accumulate, _extreme_vjp)
cummin = _scan("cummin", np.minimum.accumulate, _extreme_vjp)
cumprod_grad = register(Primitive("cumprod_grad", _cumprod_grad_impl, _cumprod_grad_shape,
                                  _cumprod_grad_vjp, _cumprod_grad_batch))
