"""Shape, indexing and write primitives. Index parameters are static and hashable."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError, _where, user_src
from ..index import (  # noqa: F401 (the index model, re-exported)
    Adv,
    BasicIndex,
    Sl,
    _fast_basic,
    has_duplicates,
    index_shape,
    is_basic,
    normalize_index,
    to_key,
)
from ..ir import Aval, new_aval
from .core import REGISTRY, Primitive, Sparse, register
from .shapes import _lift, broadcast_to, full, relayout, reshape, transpose

__all__ = [
    "Adv",
    "BasicIndex",
    "NotBatchable",
    "Sl",
    "broadcast_to",
    "concatenate",
    "full",
    "getitem",
    "has_duplicates",
    "index_shape",
    "is_basic",
    "normalize_index",
    "relayout",
    "reshape",
    "setitem",
    "setitem_add",
    "stack",
    "to_key",
    "transpose",
]


class NotBatchable(Exception):
    """A batching rule cannot express this instance; the pass keeps it unbatched."""


def _getitem_batch(n: int, batched: tuple[bool, ...], x: Any, idx: tuple) -> Any:
    out = getitem(x, idx=(Sl(0, n, 1),) + idx)
    # Next to an index array, ints are advanced indices too. When a slice or None separates
    # advanced indices, NumPy puts their axes first, ahead of the batch axis: move it back.
    advs = [] if is_basic(idx) else [i for i, k in enumerate(idx) if isinstance(k, (Adv, int))]
    if advs and advs[-1] - advs[0] + 1 != len(advs):
        k = len(np.broadcast_shapes(*[a.arr.shape for a in idx if isinstance(a, Adv)]))
        out = transpose(out, perm=(k,) + tuple(range(k)) + tuple(range(k + 1, out.ndim)))
    return out


getitem = register(Primitive(
    "getitem", lambda x, idx: x[to_key(idx)],
    lambda x, idx: new_aval((index_shape(x.shape, idx), x.dtype)),
    lambda g, ans, x, idx: (Sparse(idx, g),), _getitem_batch))


def _add_shape(base: Aval, v: Aval, idx: tuple) -> Aval:
    if v.dtype.kind == "c" and base.dtype.kind != "c":  # (NumPy's in-place add refuses too)
        raise TypeError(f"cannot add complex values into an array of dtype {base.dtype} in "
                        f"place (x[idx] += v){_where(user_src())}: make x complex first")
    return _write_shape(base, v, idx)


def _write_shape(base: Aval, v: Aval, idx: tuple) -> Aval:
    region = index_shape(base.shape, idx)
    if v.shape == region or not v.shape:  # (the common cases, without NumPy's slow helper)
        return base
    try:
        ok = np.broadcast_shapes(v.shape, region) == region
    except ValueError:
        ok = False
    if not ok:
        raise ShapeError(f"could not broadcast input array from shape {v.shape} into shape "
                         f"{region} (writing into an array of shape {base.shape})")
    return base


def _set(base: np.ndarray, v: np.ndarray, idx: tuple) -> np.ndarray:
    return write_into(np.array(base), v, idx)  # (an ndarray also where base is 0-d scalar)


def write_into(base: np.ndarray, v: np.ndarray, idx: tuple) -> np.ndarray:
    """base[idx] = v, into base's memory (a new 0-d array where idx is empty: generated code
    may hold a 0-d value as a NumPy scalar)."""
    if not idx:  # the whole of a 0-d value (in generated code, possibly a NumPy scalar)
        return np.array(v, base.dtype)
    if base.__class__ is not np.ndarray:  # a NumPy scalar, indexed as x[None] or x[...]
        base = np.array(base)
    base[to_key(idx)] = v
    return base


def _add(base: np.ndarray, v: np.ndarray, idx: tuple) -> np.ndarray:
    """The reference semantics: np.add.at (unbuffered: repeated indices accumulate)."""
    out = np.array(base)  # (an ndarray also where base is 0-d scalar)
    if not idx:
        return np.array(out + v, out.dtype)
    if is_basic(idx):
        out[to_key(idx)] += v
    else:
        np.add.at(out, to_key(idx), v)
    return out


def _joint_advanced(idx: tuple) -> bool:
    """Whether an index's integer arrays and ints stand next to each other: the region keeps
    its axes in place (NumPy moves them first only when something separates them), so a
    leading batch slice leaves them where they were (`np.add.at(out[r], idx, v)` for every r
    is one write at (:, idx))."""
    adv = [i for i, k in enumerate(idx) if isinstance(k, (Adv, int))]
    return bool(adv) and adv[-1] - adv[0] == len(adv) - 1


def _write_batch(prim_name: str) -> Any:
    def rule(n: int, batched: tuple[bool, ...], base: Any, v: Any, idx: tuple) -> Any:
        if not is_basic(idx) and not _joint_advanced(idx):
            raise NotBatchable("batched writes through integer-array indices apart from "
                               "each other (NumPy moves their axes first)")
        if not batched[0]:
            base = broadcast_to(base, shape=(n,) + base.shape)
        if batched[1]:
            v = _lift(v, len(index_shape(base.shape[1:], idx)))
        return REGISTRY[prim_name](base, v, idx=(Sl(0, n, 1),) + idx)
    return rule


setitem = register(Primitive(
    "setitem", _set, _write_shape,
    lambda g, ans, base, v, idx: (setitem(g, 0.0, idx=idx), getitem(g, idx=idx)),
    _write_batch("setitem")))
setitem_add = register(Primitive(
    "setitem_add", _add, _add_shape,
    lambda g, ans, base, v, idx: (g, getitem(g, idx=idx)),
    _write_batch("setitem_add")))


def _concat_shape(*xs: Aval, axis: int) -> Aval:
    r = xs[0].ndim
    if any(x.ndim != r for x in xs) or not 0 <= axis < r:
        raise ShapeError(f"concatenate: operands of shapes {[x.shape for x in xs]} along axis "
                         f"{axis} must have equal rank")
    for x in xs:
        if x.shape[:axis] + x.shape[axis + 1:] != xs[0].shape[:axis] + xs[0].shape[axis + 1:]:
            raise ShapeError(f"concatenate: shapes {[x.shape for x in xs]} differ off axis {axis}")
    shape = list(xs[0].shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    return Aval(tuple(shape), np.result_type(*[x.dtype for x in xs]))


def _concat_vjp(g: Any, ans: Any, *xs: Any, axis: int) -> tuple:
    out, start = [], 0
    for x in xs:
        stop = start + x.shape[axis]
        idx = tuple(Sl(start, stop, 1) if i == axis else Sl(0, d, 1) for i, d in enumerate(g.shape))
        out.append(getitem(g, idx=idx))
        start = stop
    return tuple(out)


def _concat_batch(n: int, batched: tuple[bool, ...], *xs: Any, axis: int) -> Any:
    xs2 = [x if b else broadcast_to(x, shape=(n,) + x.shape) for x, b in zip(xs, batched)]
    return concatenate(*xs2, axis=axis + 1)


concatenate = register(Primitive(
    "concatenate", lambda *xs, axis: np.concatenate(xs, axis), _concat_shape, _concat_vjp,
    _concat_batch))


def _stack_shape(*xs: Aval, axis: int) -> Aval:
    if any(x.shape != xs[0].shape for x in xs) or not 0 <= axis <= xs[0].ndim:
        raise ShapeError(f"stack: all input arrays must have the same shape, got "
                         f"{[x.shape for x in xs]} (axis {axis})")
    s = xs[0].shape
    return Aval(s[:axis] + (len(xs),) + s[axis:], np.result_type(*[x.dtype for x in xs]))


def _stack_vjp(g: Any, ans: Any, *xs: Any, axis: int) -> tuple:
    full = tuple(Sl(0, d, 1) for d in g.shape)
    return tuple(getitem(g, idx=full[:axis] + (i,) + full[axis + 1:]) for i in range(len(xs)))


def _stack_batch(n: int, batched: tuple[bool, ...], *xs: Any, axis: int) -> Any:
    xs2 = [x if b else broadcast_to(x, shape=(n,) + x.shape) for x, b in zip(xs, batched)]
    return stack(*xs2, axis=axis + 1)


stack = register(Primitive(
    "stack", lambda *xs, axis: np.stack(xs, axis), _stack_shape, _stack_vjp, _stack_batch))
