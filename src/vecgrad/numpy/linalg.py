"""`vecgrad.numpy.linalg`: norms for traced code."""
from __future__ import annotations

from typing import Any

from ..errors import unsupported
from . import _ops


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """Vector 2-norm, or Frobenius norm of a matrix (`ord` None, 2 for vectors, or 'fro')."""
    nd = _ops.ndim(x)
    n_axes = nd if axis is None else (len(axis) if isinstance(axis, (tuple, list)) else 1)
    if not (ord is None or ord == "fro" and n_axes == 2 or ord == 2 and n_axes == 1):
        raise unsupported(f"numpy.linalg.norm with ord={ord!r}")
    return _ops.sqrt(_ops.sum(_ops.square(x), axis=axis, keepdims=keepdims))


__all__ = ["norm"]
