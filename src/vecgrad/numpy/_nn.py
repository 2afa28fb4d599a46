"""Numerically stable neural-network functions with fused VJPs (`vg.nn` re-exports them;
here, below the ufuncs, so that `np.logaddexp.reduce` can be logsumexp)."""
from __future__ import annotations

import math
from typing import Any

from .. import primitives as P
from ..errors import ComplexError
from . import _ops
from ._base import _dtype
from ._ops import _axes


def _real(name: str, x: Any) -> None:
    # NumPy orders complex numbers lexicographically, so maximum(z, 0) is defined, but it is
    # not a complex relu or softplus (JAX has none either): refuse rather than answer.
    if _dtype(x).kind == "c":
        raise ComplexError(name, why=f"{name} is defined for real input only")


def _over_axes(prim: P.Primitive, x: Any, axis: Any, reduces: bool) -> Any:
    """`prim` (which works along one axis) along `axis`: an int, a tuple of axes or None (all
    axes). Several axes are moved to the end and merged into one, then restored."""
    nd = _ops.ndim(x)
    axes = _axes(axis, nd)
    if len(axes) == 1:
        return prim(x, axis=axes[0])
    rest = [i for i in range(nd) if i not in axes]
    shp = _ops.shape(x)
    moved = _ops.transpose(x, rest + list(axes))
    flat = _ops.reshape(moved, [shp[i] for i in rest] + [math.prod(shp[i] for i in axes)])
    out = prim(flat, axis=len(rest))
    if reduces:
        return out
    out = _ops.reshape(out, _ops.shape(moved))
    return _ops.transpose(out, [(rest + list(axes)).index(i) for i in range(nd)])


def softmax(x: Any, axis: Any = -1) -> Any:
    """exp(x) / sum(exp(x)) along `axis` (an int, a tuple of axes, or None for all axes, as
    scipy.special.softmax), computed without overflow."""
    return _over_axes(P.softmax, x, axis, reduces=False)


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """log(sum(exp(x))) along `axis` (an int, a tuple of axes, or None for all axes), computed
    without overflow. With `keepdims`, the reduced axes stay with size one (all of them when
    `axis` is None), as scipy.special.logsumexp."""
    out = _over_axes(P.logsumexp, x, axis, reduces=True)
    if keepdims:
        axes = _axes(axis, _ops.ndim(x))
        out = _ops.reshape(out, [1 if i in axes else d for i, d in enumerate(_ops.shape(x))])
    return out


def log_softmax(x: Any, axis: Any = -1) -> Any:
    """x - logsumexp(x) along `axis` (an int, a tuple of axes, or None for all axes)."""
    return x - logsumexp(x, axis=axis, keepdims=True)


def relu(x: Any) -> Any:
    """max(x, 0), with gradient 0 at 0."""
    _real("relu", x)
    return _ops.where(_ops.greater(x, 0), x, 0.0)


def sigmoid(x: Any) -> Any:
    """The logistic function 1 / (1 + exp(-x)), stable for large |x|."""
    return P.logistic(x)


def softplus(x: Any) -> Any:
    """log(1 + exp(x)), stable for large |x|."""
    _real("softplus", x)
    return _ops.maximum(x, 0.0) + _ops.log1p(_ops.exp(-_ops.abs(x)))
