"""Keys that mix a traced integer array with ints, slices, None, Ellipsis and NumPy index
arrays (`x[0, idx, 1:3]`, `x[idx, 2, None] = v`): NumPy's result is basic indexing then one
gather (or one write at the gathered positions), which is how they are traced here.
"""
from __future__ import annotations

from typing import Any

import numpy as _np

from ..errors import TraceError
from ..tracing import Tracer
from ._base import _nd, _shape


def _data_dependent(name: str) -> TraceError:
    return TraceError(f"{name} of a traced array has a data-dependent shape, which vecgrad "
                      "cannot trace (shapes must be known while tracing). Use vnp.where(cond, "
                      "x, y) to select values, or masks multiplied in, instead")


def _standin(shape: tuple) -> _np.ndarray:
    """A data-less array of this shape (to ask NumPy for an index's result shape)."""
    return _np.lib.stride_tricks.as_strided(_np.empty(1, bool), shape, (0,) * len(shape))


def split_basic(x: Any, key: Any) -> tuple[tuple, tuple] | None:
    """For a key mixing traced integer arrays with ints, slices, None, Ellipsis and NumPy
    integer or boolean arrays (`x[0, idx, 1:3]`, `x[idx, 2, None]`): (basic, advanced) with
    x[key] == x[basic][advanced], where basic is the key with each advanced entry -> `:` and
    advanced holds them at their axes of x[basic] among full slices. (The advanced entries
    keep their order and what separates them, so NumPy puts their broadcast shape where it
    did; ints are advanced entries, as in NumPy, unless that place is the same without them.) Raises NumPy's IndexError for an invalid
    key, and the data-dependent TraceError for a traced boolean mask; None for a key
    already of that form."""
    key = tuple(_np.asarray(k) if isinstance(k, list) else k
                for k in (key if isinstance(key, tuple) else (key,)))
    if any(isinstance(k, Tracer) and k.dtype == bool for k in key):
        raise _data_dependent("indexing with a traced boolean mask")
    probe = tuple(_np.zeros(k.shape, k.dtype) if isinstance(k, Tracer) else k for k in key)
    try:
        _standin(_shape(x))[probe]
    except IndexError as e:  # (NumPy's message: too many indices, shapes, bounds)
        raise IndexError(str(e)) from None
    parts: list = []
    for k in key:
        if isinstance(k, _np.ndarray) and k.dtype == bool:
            parts += list(_np.nonzero(k))
        elif k is Ellipsis:
            used = sum(e is not None and e is not Ellipsis for e in probe) + sum(
                e.ndim - 1 for e in probe if isinstance(e, _np.ndarray) and e.dtype == bool)
            parts += [slice(None)] * (_nd(x) - used)
        else:
            parts.append(k)
    ints = [_python_int(k) for k in parts]
    kinds = "".join("b" if k is None or isinstance(k, slice) else "a" for k in parts)
    rest = "".join(c for c, i in zip(kinds, ints) if not i)
    # Python ints stay basic (x[i] is a region of x, which batching sees as one per i)
    # when NumPy puts the advanced axes in the same place without them
    static = "a" in rest and _block_start(kinds) == _block_start(rest)
    basic = tuple(k if k is None or isinstance(k, slice) or static and i else slice(None)
                  for k, i in zip(parts, ints))
    if all(k == slice(None) for k in basic):
        return None
    adv = tuple(slice(None) if k is None or isinstance(k, slice) else k
                for k, i in zip(parts, ints) if not (static and i))
    return basic, adv


def _python_int(k: Any) -> bool:
    return isinstance(k, (int, _np.integer)) and not isinstance(k, (bool, _np.bool_))


def _block_start(kinds: str) -> int:
    """Where NumPy puts the broadcast axes of a key's advanced entries ("a"; "b" for a
    slice or None): in their place if they are adjacent, else first."""
    adv = [i for i, c in enumerate(kinds) if c == "a"]
    return kinds[:adv[0]].count("b") if adv == list(range(adv[0], adv[-1] + 1)) else 0


def write_basic_first(x: Any, key: Any, value: Any) -> bool:
    """`x[key] = value` for a key of `split_basic`'s form: written through the view
    x[basic] (NumPy's region is the same). False for other keys."""
    split = split_basic(x, key)
    if split is None:
        return False
    x[split[0]][split[1]] = value
    return True
