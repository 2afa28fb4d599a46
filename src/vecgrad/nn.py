"""`vg.nn`: numerically stable neural-network functions with fused VJPs."""
from __future__ import annotations

from typing import Any

from . import numpy as vnp
from . import primitives as P


def _axis(x: Any, axis: int) -> int:
    nd = vnp.ndim(x)
    if not -nd <= axis < nd:
        import numpy as np
        raise np.exceptions.AxisError(axis, nd)
    return axis % nd


def softmax(x: Any, axis: int = -1) -> Any:
    """exp(x) / sum(exp(x)) along `axis`, computed without overflow."""
    return P.softmax(x, axis=_axis(x, axis))


def logsumexp(x: Any, axis: int | None = None, keepdims: bool = False) -> Any:
    """log(sum(exp(x))) along `axis` (all axes when None), computed without overflow."""
    if axis is None:
        x, axis = vnp.reshape(x, (-1,)), 0
    ax = _axis(x, axis)
    out = P.logsumexp(x, axis=ax)
    return vnp.expand_dims(out, ax) if keepdims else out


def log_softmax(x: Any, axis: int = -1) -> Any:
    """x - logsumexp(x) along `axis`."""
    return x - logsumexp(x, axis=axis, keepdims=True)


def relu(x: Any) -> Any:
    """max(x, 0), with gradient 0 at 0."""
    return vnp.where(vnp.greater(x, 0), x, 0.0)


def sigmoid(x: Any) -> Any:
    """The logistic function 1 / (1 + exp(-x)), stable for large |x|."""
    return P.logistic(x)


def softplus(x: Any) -> Any:
    """log(1 + exp(x)), stable for large |x|."""
    return vnp.maximum(x, 0.0) + vnp.log1p(vnp.exp(-vnp.abs(x)))


__all__ = ["log_softmax", "logsumexp", "relu", "sigmoid", "softmax", "softplus"]
