"""np.select and np.piecewise of `vecgrad.numpy`: values chosen by conditions.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as _np

from .. import primitives as P
from ..tracing import Tracer
from . import _ops
from ._base import _dtype, _nd, _shape, asarray, astype

__all__ = [
    "piecewise",
    "select",
]


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """The entry of the first choice whose condition holds, else `default`."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    for c in condlist:
        if _dtype(c) != bool:
            raise TypeError("invalid entry in condlist: should be boolean ndarray")
    choices = [asarray(c) for c in choicelist]
    # (a Python number default is weak, as in NumPy: bools with 0 are int64, int8 with 0.5
    # float64, float32 with 0 float32)
    dt = _np.result_type(*[_dtype(c) for c in choices], default
                         if isinstance(default, (int, float, complex)) else _dtype(default))
    out = asarray(default) if isinstance(default, Tracer) else _np.asarray(default, dt)
    for c, v in zip(reversed(list(condlist)), reversed(choices)):
        out = _ops.where(c, v, out)
    return astype(out, dt)


def piecewise(x: Any, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any) -> Any:
    """Evaluate `funclist[i]` where `condlist[i]` holds (later conditions win; a value in
    place of a function is a constant; one extra function is the default). The result has x's
    dtype. With traced conditions every function sees the whole array, but values (and
    gradients) are taken only where its condition holds."""
    x = asarray(x)
    if not isinstance(condlist, (list, tuple)) or not condlist or _np.ndim(condlist[0]) == 0 \
            and _nd(x) > 0 and len(condlist) == _shape(x)[0]:
        condlist = [condlist]  # one condition (an array, or a list of bools per entry)
    condlist = list(condlist)
    if len(funclist) == len(condlist) + 1:
        condlist = condlist + [_ops.logical_not(_any_of(condlist))]
    elif len(funclist) != len(condlist):
        raise ValueError(f"with {len(condlist)} condition(s), either {len(condlist)} or "
                         f"{len(condlist) + 1} functions are expected")
    y = _ops.broadcast_to(_np.zeros((), _dtype(x)), _shape(x))
    for cond, f in zip(condlist, funclist):
        c = _ops.broadcast_to(asarray(cond), _shape(x))
        if callable(f):
            inner = _ops.where(c, x, P.stop_gradient(x)) if isinstance(x, Tracer) else x
            v = f(inner, *args, **kw)
        else:
            v = f
        y = _ops.where(c, astype(asarray(v), _dtype(x)), y)
    return y


def _any_of(conds: list) -> Any:
    out = conds[0]
    for c in conds[1:]:
        out = _ops.logical_or(out, c)
    return out
