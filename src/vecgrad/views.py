"""NumPy's memory layout of traced views, simulated: whether a view is C-contiguous, and a
data-less stand-in with the strides NumPy would give it (to ask NumPy whether a reshape or
ravel can be a view)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .hooks import PRIMITIVES as P
from .index import to_key

if TYPE_CHECKING:
    from .tracing import Tracer


# The view record of `x[i]` at one traced integer i of an array of rank >= 2 (a row: NumPy's
# basic indexing makes it a view): re-derived by a gather, written back at i (see
# numpy/_indexing.py's traced_getitem and write_at_traced).
TRACED_ROW = "row at a traced index"


def c_contiguous(x: Tracer) -> bool:
    """Whether NumPy would make `x` C-contiguous, for the common views quickly: a fresh
    value, or a basic index of one that keeps a single run of memory (leading integers,
    then one slice of step 1, then whole axes: x[i], x[i, j:k], x[2:5]); else from its
    strided stand-in."""
    if x._view is None:
        return x._layout is None
    base, prim, params = x._view
    if prim is not P.getitem or base._view is not None or base._layout is not None:
        return bool(strided(x).flags.c_contiguous)
    kept = False  # an axis of length > 1 has been kept: every later one must be whole
    for k, d in zip((k for k in params["idx"] if k is not None), base.shape):
        n = 1 if k.__class__ is int else len(k)
        if kept and d > 1 and (n != d or k.step != 1):
            return False
        if n > 1:
            if k.step != 1:
                return False
            kept = True
    return True


def strided(x: Tracer) -> np.ndarray:
    """A data-less stand-in with the strides NumPy would give `x` (never read: it aliases a
    one-element buffer), to ask NumPy whether a reshape or ravel of `x` can be a view. A
    fresh value is C-contiguous; a view applies its own indexing, transpose, reshape or
    broadcast to its base's stand-in."""
    if x._view is None and x._layout is not None:
        return x._layout
    if x._view is None:
        return _standin(x.shape, _in_order(x.shape, range(len(x.shape)), x.dtype), x.dtype)
    base, prim, params = x._view
    d = strided(base)
    if prim is P.getitem:
        return d[to_key(params["idx"])]
    if prim is TRACED_ROW:
        return d[params["probe"]]
    if prim is P.real:
        return d.real
    if prim is P.imag:
        return d.imag
    if prim is P.transpose:
        return d.transpose(params["perm"])
    if prim is P.broadcast_to:
        return np.broadcast_to(d, params["shape"])
    if prim is P.strided:  # sliding_window_view: the primitive's impl is itself a view
        return P.strided.impl(d, **params)
    if prim is P.einsum:  # a diagonal: NumPy's one-operand einsum is a view (reads nothing)
        return np.einsum(params["spec"], d)
    out = reshaped_view(d, params["shape"])
    assert out is not None, "a reshape view was recorded that NumPy cannot make"
    return out


def fancy_layout(shape: tuple[int, ...], idx: tuple, dtype: np.dtype) -> np.ndarray | None:
    """The stand-in (see `strided`) of `x[idx]` for an integer-array index that does not
    lead: NumPy lays the indexed axes out outermost, then moves them into place (so
    x[:, [0, 3]] is not C-contiguous). None where the result is C-contiguous after all."""
    d = np.lib.stride_tricks.as_strided(np.empty(1, np.int8), shape, (0,) * len(shape))
    r = d[to_key(idx)]
    if r.flags.c_contiguous:
        return None
    return _standin(r.shape, tuple(st * dtype.itemsize for st in r.strides), dtype)


def ufunc_layout(shape: tuple[int, ...], dtype: np.dtype, args: Sequence[Any]
                 ) -> np.ndarray | None:
    """The stand-in of a ufunc's result of `args` (None: C-contiguous). NumPy gives it its
    operands' memory order (order='K'): np.sin(x.T) is F-ordered, so its ravel() is a copy,
    not a view. The axes are ordered as NumPy's iterator orders them (nditer's
    find_best_axis_ordering): an axis moves before a slower one only when every operand that
    strides along both (broadcast and length-1 axes do not vote) strides further along it."""
    ops = [a for a in args if getattr(a, "ndim", 0) > 0]  # (traced or NumPy arrays)
    if all(a.flags.c_contiguous if isinstance(a, np.ndarray) else c_contiguous(a)
           for a in ops):  # (the common case, without building stand-ins)
        return None
    arrays = [a if isinstance(a, np.ndarray) else strided(a) for a in ops]
    votes = [[abs(st) if n > 1 else 0 for st, n in zip(np.broadcast_to(a, shape).strides, shape)]
             for a in arrays]
    perm: list[int] = []
    for k in range(len(shape)):  # insertion, slowest axis first
        pos = len(perm)
        while pos > 0:
            j = perm[pos - 1]
            voting = [v for v in votes if v[k] and v[j]]
            if not (voting and all(v[k] > v[j] for v in voting)):
                break
            pos -= 1
        perm.insert(pos, k)
    if perm == sorted(perm):
        return None
    return _standin(shape, _in_order(shape, perm, dtype), dtype)


def copy_layout(x: Any, order: str) -> np.ndarray | None:
    """The stand-in of NumPy's copy of `x` in `order` (None: C-contiguous): 'F' reverses the
    axes, 'A' is 'F' for a Fortran- and not C-contiguous x, and 'K' keeps x's axis order by
    stride (np.copy(x.T) is F-ordered, so its ravel(order='K') reads x's order)."""
    n = len(x.shape)
    if n < 2 or order == "C" or order == "K" and c_contiguous(x):
        return None
    st = strided(x)
    if order == "A":
        order = "F" if st.flags.f_contiguous and not st.flags.c_contiguous else "C"
    perm = list(range(n))[::-1] if order == "F" else sorted(
        range(n), key=lambda i: -abs(st.strides[i])) if order == "K" else list(range(n))
    if perm == list(range(n)):
        return None
    return _standin(x.shape, _in_order(x.shape, perm, x.dtype), x.dtype)


def _in_order(shape: tuple[int, ...], perm: Sequence[int], dtype: np.dtype) -> tuple[int, ...]:
    """The strides of a contiguous array whose axes run slowest to fastest in `perm` order."""
    st, n = [0] * len(shape), dtype.itemsize
    for k in reversed(perm):
        st[k], n = n, n * shape[k]
    return tuple(st)


def _standin(shape: tuple[int, ...], strides: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return np.lib.stride_tricks.as_strided(np.empty(1, dtype), shape, strides)


def reshaped_view(d: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """`d.reshape(shape)` if NumPy makes it a view, else None (NumPy would copy)."""
    try:
        return np.reshape(d, shape, copy=False)
    except ValueError:
        return None
    except TypeError:  # NumPy < 2.1 has no copy=: setting the shape fails where it would copy
        v = d.view()
        try:
            v.shape = shape
        except AttributeError:
            return None
        return v
