"""Shape, indexing and write primitives. Index parameters are static and hashable."""
from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple

import numpy as np

from ..errors import ShapeError, TraceError, _where, user_src
from ..ir import Aval
from .core import Primitive, Sparse, register
from .elementwise import _lift

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


class Sl(NamedTuple):
    """A normalized slice: `range(start, stop, step)` over one axis (stop may be -1)."""

    start: int
    stop: int
    step: int

    def __len__(self) -> int:  # type: ignore[override]
        return len(range(self.start, self.stop, self.step))

    def to_slice(self) -> slice:
        return slice(self.start, None if self.stop < 0 else self.stop, self.step)

    def __repr__(self) -> str:
        return f"{self.start}:{self.stop}" + (f":{self.step}" if self.step != 1 else "")


class Adv:
    """A static integer-array index (hashable by contents)."""

    __slots__ = ("_h", "arr")

    def __init__(self, arr: np.ndarray):
        self.arr = np.array(arr, dtype=np.int64)
        self.arr.flags.writeable = False
        self._h = hash((self.arr.shape, self.arr.tobytes()))

    def __hash__(self) -> int:
        return self._h

    def __eq__(self, o: object) -> bool:
        return isinstance(o, Adv) and o.arr.shape == self.arr.shape and \
            bool(np.array_equal(o.arr, self.arr))

    def __repr__(self) -> str:
        return f"int{list(self.arr.shape)}"


def _consumed(k: Any) -> int:
    if k is None or k is Ellipsis:
        return 0
    if isinstance(k, np.ndarray) and k.dtype == bool:
        return k.ndim
    return 1


def normalize_index(key: Any, shape: tuple[int, ...]) -> tuple:
    """NumPy index -> tuple of int | Sl | None | Adv covering every axis; raises IndexError."""
    key = key if isinstance(key, tuple) else (key,)
    fast = _fast_basic(key, shape)
    if fast is not None:
        return fast
    from ..tracing import Tracer
    if any(isinstance(k, Tracer) for k in key):
        for k in key:  # (noted: a Python-scalar argument used as an index is made static)
            if isinstance(k, Tracer):
                k._concrete()
        raise TraceError("indexing with a traced (data-dependent) index is not supported: "
                         "index values must be known while tracing. Use static Python ints, "
                         "slices or NumPy index arrays, or vnp.where for data-dependent selection")
    key = tuple(np.asarray(k) if isinstance(k, (list, tuple)) else k for k in key)  # (as NumPy)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(_consumed(k) for k in key)
    if used > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, but "
                         f"{used} were indexed")
    out: list = []
    ax = 0
    for k in key:
        if k is Ellipsis:
            n = len(shape) - used
            out += [Sl(*slice(None).indices(shape[ax + i])) for i in range(n)]
            ax += n
        elif k is None:
            out.append(None)
        elif isinstance(k, slice):
            out.append(Sl(*k.indices(shape[ax])))
            ax += 1
        elif isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            out.append(_norm_int(int(k), shape[ax], ax))
            ax += 1
        elif isinstance(k, np.ndarray) and k.dtype == bool:
            if k.shape != shape[ax:ax + k.ndim]:
                raise IndexError(f"boolean index of shape {k.shape} does not match the indexed "
                                 f"axes of shape {shape[ax:ax + k.ndim]}")
            out += [Adv(i) for i in np.nonzero(k)]
            ax += k.ndim
        elif isinstance(k, np.ndarray) and k.dtype.kind in "iu":
            if k.size and (k.min() < -shape[ax] or k.max() >= shape[ax]):
                raise IndexError(f"index out of bounds for axis {ax} with size {shape[ax]}")
            out.append(Adv(np.where(k < 0, k + shape[ax], k)))
            ax += 1
        else:
            raise IndexError(f"unsupported index {k!r}: use ints, slices, None, ..., or "
                             "integer/boolean NumPy arrays")
    out += [Sl(0, d, 1) for d in shape[ax:]]
    return tuple(out) if any(isinstance(k, Adv) for k in out) else BasicIndex(out)


_new_sl = functools.partial(tuple.__new__, Sl)  # Sl((start, stop, step)), without keywords
_WHOLE: dict[int, Sl] = {}  # axis length -> the Sl of the whole axis


def _whole(d: int) -> Sl:
    sl = _WHOLE.get(d)
    if sl is None:
        sl = _WHOLE[d] = _new_sl((0, d, 1))
    return sl


def _fast_basic(key: tuple, shape: tuple[int, ...]) -> tuple | None:
    """The common case (Python ints and slices only, one per axis at most), quickly: this
    runs for every `x[i]` of a traced loop."""
    if len(key) > len(shape):
        return None
    out = []
    whole = _WHOLE.get
    for k, d in zip(key, shape):
        t = k.__class__
        if t is int:
            if not -d <= k < d:
                return None  # let the general path raise the IndexError
            out.append(k + d if k < 0 else k)
        elif t is slice:
            if k.start is None and k.stop is None and k.step is None:  # (not k == ...:
                out.append(whole(d) or _whole(d))  # bounds may be traced)
            else:
                out.append(_new_sl(k.indices(d)))
        else:
            return None
    for d in shape[len(key):]:
        out.append(whole(d) or _whole(d))
    return BasicIndex(out)


def _norm_int(i: int, dim: int, ax: int) -> int:
    if not -dim <= i < dim:
        raise IndexError(f"index {i} is out of bounds for axis {ax} with size {dim}")
    return i + dim if i < 0 else i


class BasicIndex(tuple):
    """A normalized index known to hold no integer arrays (so `is_basic` need not look)."""

    __slots__ = ()


def is_basic(idx: tuple) -> bool:
    """Whether a normalized index has no integer-array part (NumPy basic indexing)."""
    return type(idx) is BasicIndex or not any(isinstance(k, Adv) for k in idx)


def to_key(idx: tuple) -> tuple:
    """A normalized index as a NumPy index."""
    return tuple(k.to_slice() if isinstance(k, Sl) else k.arr if isinstance(k, Adv) else k
                 for k in idx)


def has_duplicates(idx: tuple, shape: tuple[int, ...]) -> bool:
    """Whether an advanced index names some position twice (a write there is ambiguous)."""
    advs = [k.arr for k in idx if isinstance(k, Adv)]
    flat = np.ravel_multi_index(np.broadcast_arrays(*advs), [max(a.max(initial=0) + 1, 1)
                                                             for a in advs]).ravel()
    return len(np.unique(flat)) != flat.size


def index_shape(shape: tuple[int, ...], idx: tuple) -> tuple[int, ...]:
    """The shape of `x[idx]` for `x` of this shape."""
    if is_basic(idx):
        return tuple([len(range(*k)) if k.__class__ is Sl else 1 for k in idx
                      if k.__class__ is not int])
    dummy = np.lib.stride_tricks.as_strided(np.zeros(1), shape, (0,) * len(shape))
    return dummy[to_key(idx)].shape


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
    lambda x, idx: Aval(index_shape(x.shape, idx), x.dtype),
    lambda g, ans, x, idx: (Sparse(idx, g),), _getitem_batch))


def _add_shape(base: Aval, v: Aval, idx: tuple) -> Aval:
    if v.dtype.kind == "c" and base.dtype.kind != "c":  # (NumPy's in-place add refuses too)
        raise TypeError(f"cannot add complex values into an array of dtype {base.dtype} in "
                        f"place (x[idx] += v){_where(user_src())}: make x complex first")
    return _write_shape(base, v, idx)


def _write_shape(base: Aval, v: Aval, idx: tuple) -> Aval:
    region = index_shape(base.shape, idx)
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


def _write_batch(prim_name: str) -> Any:
    def rule(n: int, batched: tuple[bool, ...], base: Any, v: Any, idx: tuple) -> Any:
        from .core import REGISTRY
        if not is_basic(idx):
            raise NotBatchable("batched writes through integer-array indices")
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


def _full_shape(shape: tuple[int, ...], dtype: np.dtype, value: float) -> Aval:
    return Aval(shape, np.dtype(dtype))


full = register(Primitive(
    "full", lambda shape, dtype, value: np.full(shape, value, dtype), _full_shape))


def _reshape_shape(x: Aval, shape: tuple[int, ...]) -> Aval:
    if math.prod(shape) != x.size:
        raise ShapeError(f"cannot reshape array of size {x.size} (shape {x.shape}) into "
                         f"shape {shape}")
    return Aval(tuple(shape), x.dtype)


reshape = register(Primitive(
    "reshape", lambda x, shape: np.reshape(x, shape), _reshape_shape,
    lambda g, ans, x, shape: (reshape(g, shape=x.shape),),
    lambda n, b, x, shape: reshape(x, shape=(n,) + shape)))


def _transpose_shape(x: Aval, perm: tuple[int, ...]) -> Aval:
    if sorted(perm) != list(range(x.ndim)):
        raise ShapeError(f"axes {perm} don't match an array of shape {x.shape}")
    return Aval(tuple(x.shape[p] for p in perm), x.dtype)


transpose = register(Primitive(
    "transpose", lambda x, perm: np.transpose(x, perm), _transpose_shape,
    lambda g, ans, x, perm: (transpose(g, perm=tuple(np.argsort(perm).tolist())),),
    lambda n, b, x, perm: transpose(x, perm=(0,) + tuple(p + 1 for p in perm))))


# A transpose that copies into the new order: for an operand that several contractions read
# with their batch axis first (backends/numpy/relayout.py). Rules never look through it.


relayout = register(Primitive(
    "relayout", lambda x, perm: np.ascontiguousarray(np.transpose(np.asarray(x), perm)),
    _transpose_shape,
    lambda g, ans, x, perm: (transpose(g, perm=tuple(np.argsort(perm).tolist())),),
    lambda n, b, x, perm: relayout(x, perm=(0,) + tuple(p + 1 for p in perm))))


def _bcast_shape(x: Aval, shape: tuple[int, ...]) -> Aval:
    try:
        ok = np.broadcast_shapes(x.shape, shape) == tuple(shape)
    except ValueError:
        ok = False
    if not ok:
        raise ShapeError(f"cannot broadcast an array of shape {x.shape} to shape {shape}")
    return Aval(tuple(shape), x.dtype)


broadcast_to = register(Primitive(
    "broadcast_to", lambda x, shape: np.broadcast_to(x, shape), _bcast_shape,
    lambda g, ans, x, shape: (g,),  # the AD driver sums g back to x's shape
    lambda n, b, x, shape: broadcast_to(_lift(x, len(shape)), shape=(n,) + shape)))


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
