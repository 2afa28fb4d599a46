"""Fused, numerically stable neural-network primitives with fused VJPs."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError
from ..ir import Aval
from .core import Primitive, register
from .elementwise import (
    _broadcast,
    _keep,
    batch_elementwise,
    exp,
    real_only,
    reduce_along,
    reduce_sum,
    short_last_axis,
)

__all__ = ["logsumexp", "softmax", "softmax_vjp"]


def _axis_ok(x: Aval, axis: int, name: str = "softmax") -> None:
    real_only(name, x)  # (a stable softmax subtracts the maximum: real input only)
    if not 0 <= axis < x.ndim:
        raise ShapeError(f"axis {axis} is out of bounds for an array of shape {x.shape}")


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    n = x.shape[axis]
    if axis == x.ndim - 1 and short_last_axis(x):
        # a short last axis: work on the transposed copy, where each reduction is SIMD
        # over whole rows (see reduce_along), and transpose back once
        e = x.reshape(-1, n).T.copy()  # (not ascontiguousarray: x may be that transpose's
        e -= e.max(0)                  # view, which the in-place steps would overwrite)
        np.exp(e, out=e)
        e /= e.sum(0)
        return np.ascontiguousarray(e.T).reshape(x.shape)
    e = np.exp(x - x.max(axis, keepdims=True))
    e /= e.sum(axis, keepdims=True)
    return e


def _softmax_shape(x: Aval, axis: int) -> Aval:
    _axis_ok(x, axis)
    return x


softmax = register(Primitive(
    "softmax", _softmax, _softmax_shape,
    lambda g, ans, x, axis: (softmax_vjp(g, ans, axis=axis),),
    lambda n, b, x, axis: softmax(x, axis=axis + 1)))


# --- the softmax VJP, fused: J^T g = p * (g - <g, p>) along the axis, in one call ----------

def _softmax_vjp(g: np.ndarray, p: np.ndarray, axis: int) -> np.ndarray:
    """p * (g - <g, p>)."""
    t = np.multiply(g, p)
    t -= p * reduce_along(np.sum, t, (axis,), keepdims=True)
    return t


def _softmax_vjp_shape(g: Aval, p: Aval, axis: int) -> Aval:
    shape = _broadcast(g.shape, p.shape)
    _axis_ok(Aval(shape, p.dtype), axis)
    return Aval(shape, np.result_type(g.dtype, p.dtype))


def _softmax_vjp_vjp(ct: Any, ans: Any, g: Any, p: Any, axis: int) -> tuple:
    # h = p * (g - s), s = <g, p>: linear in g with the same (symmetric) Jacobian; in p,
    # dh = dp * (g - s) - p * <g, dp>
    s = _keep(ans, reduce_sum(g * p, axes=(axis,)), (axis,))
    return (softmax_vjp(ct, p, axis=axis),
            ct * (g - s) - g * _keep(ans, reduce_sum(ct * p, axes=(axis,)), (axis,)))


# batched like a broadcasting op, its axis moved past the batch axis
softmax_vjp = register(Primitive(
    "softmax_vjp", _softmax_vjp, _softmax_vjp_shape, _softmax_vjp_vjp,
    lambda n, b, g, p, axis: batch_elementwise("softmax_vjp")(n, b, g, p, axis=axis + 1)))


def _logsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    # one shifted copy, exponentiated and summed in place (a short last axis transposed once,
    # so both reductions run over whole rows): (3000, 32) 2.3 ms -> 0.4 ms, (200, 16) 15 ->
    # 10 us, measured (fresh temporaries of that size fault their pages in on every call)
    if axis == x.ndim - 1 and short_last_axis(x):
        n = x.shape[-1]
        e = x.reshape(-1, n).T.copy()  # (a copy even where the transpose is contiguous)
        ax, shape = 0, x.shape[:-1]
    else:
        e, ax, shape = x, axis, None
    m = e.max(ax, keepdims=True)
    if not np.isfinite(m).all():  # all -inf (or inf) slices: let exp/log give the limit
        m = np.where(np.isfinite(m), m, 0)
    e = np.subtract(e, m, out=e if shape is not None else None)
    np.exp(e, out=e)
    r = np.log(e.sum(ax))
    r += np.squeeze(m, ax)
    return np.asarray(r if shape is None else r.reshape(shape))


def _lse_shape(x: Aval, axis: int) -> Aval:
    _axis_ok(x, axis, "logsumexp")
    return Aval(x.shape[:axis] + x.shape[axis + 1:], x.dtype)


def _lse_vjp(g: Any, ans: Any, x: Any, axis: int) -> tuple:
    # softmax(x) = exp(x - logsumexp(x)), from the answer at hand: a subtraction and an exp
    # (x - lse <= 0: no overflow), not softmax's max, shift, exp, sum and divide again
    # ((200, 16): 11 -> 4 us; (64, 1000): 350 -> 200 us, measured)
    return (_keep(x, g, (axis,)) * exp(x - _keep(x, ans, (axis,))),)


logsumexp = register(Primitive(
    "logsumexp", _logsumexp, _lse_shape, _lse_vjp,
    lambda n, b, x, axis: logsumexp(x, axis=axis + 1)))
