"""The index model: a NumPy index normalized to a static, hashable equation parameter (one
entry per axis: an int, an `Sl`, None, or an integer array `Adv`)."""
from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

from .errors import TraceError


class Traced:
    """A value known while tracing only by its shape and dtype: the base of tracing's `Tracer`
    (tracing sits above this module), so that an index can be told to hold one."""

    __slots__ = ()

    def _concrete(self) -> None:
        """Note that the function needed this value concretely."""
        raise NotImplementedError


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
    if any(isinstance(k, Traced) for k in key):
        for k in key:  # (noted: a Python-scalar argument used as an index is made static)
            if isinstance(k, Traced):
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


def _fast_basic(key: tuple, shape: tuple[int, ...], dims: list | None = None) -> tuple | None:
    """The common case (Python ints and slices only, one per axis at most), quickly: this
    runs for every `x[i]` of a traced loop. With a list `dims`, the shape of `x[key]` is
    appended to it as it goes (getitem's shape rule, `index_shape`, without a second pass)."""
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
                sl = whole(d)  # bounds may be traced; and not `whole(d) or ...`: an Sl's
                out.append(_whole(d) if sl is None else sl)  # truth is its Python __len__)
                if dims is not None:
                    dims.append(d)
            else:
                sl = k.indices(d)
                out.append(_new_sl(sl))
                if dims is not None:
                    dims.append(len(range(*sl)))
        else:
            return None
    for d in shape[len(key):]:
        sl = whole(d)
        out.append(_whole(d) if sl is None else sl)
        if dims is not None:
            dims.append(d)
    return BasicIndex(out)


def _norm_int(i: int, dim: int, ax: int) -> int:
    if not -dim <= i < dim:
        raise IndexError(f"index {i} is out of bounds for axis {ax} with size {dim}")
    return i + dim if i < 0 else i


class BasicIndex(tuple):
    """A normalized index known to hold no integer arrays (so `is_basic` need not look)."""

    __slots__ = ()


def ramp_as_basic(idx: tuple) -> BasicIndex | None:
    """The basic index that selects what `idx` does, where its one integer array is a 1-D
    ramp (`x[[2, 5, 8]]` = `x[2:9:3]`, `x[[3, 2, 1]]` = `x[3:0:-1]`, no repeats), None
    otherwise. Same values and shape (ints beside the array stay in place: not `x[0, :, [1,
    2]]`, whose array axis NumPy moves first); the caller keeps the copy's semantics. A ramp
    read as a slice is an affine position, so loops over such lists batch into views."""
    adv = [i for i, k in enumerate(idx) if k.__class__ is Adv]
    if len(adv) != 1:
        return None
    a = idx[adv[0]].arr
    if a.ndim != 1 or not a.size:
        return None
    step = int(a[1] - a[0]) if a.size > 1 else 1
    if step == 0 or (a.size > 2 and not np.array_equal(np.diff(a), np.full(a.size - 1, step))):
        return None
    joint = [i for i, k in enumerate(idx) if k.__class__ is Adv or isinstance(k, int)]
    if joint[-1] - joint[0] != len(joint) - 1:
        return None  # (ints apart from the array: NumPy puts the array's axis first)
    start = int(a[0])
    stop = start + step * a.size
    out = list(idx)
    out[adv[0]] = Sl(start, stop if stop >= 0 else -1, step)
    return BasicIndex(out)


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
    if idx.__class__ is BasicIndex or is_basic(idx):
        return tuple([len(range(*k)) if k.__class__ is Sl else 1 for k in idx
                      if k.__class__ is not int])
    dummy = np.lib.stride_tricks.as_strided(np.zeros(1), shape, (0,) * len(shape))
    return dummy[to_key(idx)].shape


def _is_array_index(k: Any) -> bool:
    """An index entry NumPy treats as an array (advanced) index, of one or more axes."""
    return isinstance(k, list) or not isinstance(k, (slice, int, np.integer, type(None))) \
        and k is not Ellipsis and getattr(k, "ndim", 0) > 0


def ellipsis_separated(key: Any, ndim: int) -> tuple[tuple, int, int] | None:
    """NumPy puts the broadcast shape of advanced indices first when something separates
    them, and an Ellipsis separates them even when it stands for no axis (`x[:, 0, ..., j]`
    of a 3-d x, with j an array, is x[:, 0, j] with its two result axes swapped). For such a
    key: (the key without the Ellipsis, p, k): x[key] is x[that key] with its k axes from
    position p moved first. None for every other key."""
    if key.__class__ is not tuple or not any(_is_array_index(k) for k in key):
        return None
    ells = [i for i, k in enumerate(key) if k is Ellipsis]
    adv = [i for i, k in enumerate(key) if _is_array_index(k) or
           isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))]
    if len(ells) != 1 or not adv[0] < ells[0] < adv[-1]:
        return None
    if any(i not in adv and i != ells[0] for i in range(adv[0], adv[-1] + 1)):
        return None  # (separated by a slice or None anyway: NumPy's rule applies as is)
    arrays = [np.asarray(k) if isinstance(k, list) else k for k in key if _is_array_index(k)]
    if any(a.dtype == bool for a in arrays):
        return None  # (a mask's axes make the Ellipsis non-empty or the key invalid)
    used = sum(k is not None and k is not Ellipsis for k in key)
    if used != ndim:
        return None
    try:
        k = len(np.broadcast_shapes(*[a.shape for a in arrays]))
    except ValueError:
        return None  # (the key is invalid: indexing raises NumPy's IndexError)
    return key[:ells[0]] + key[ells[0] + 1:], adv[0], k


def _is_bool_scalar(k: Any) -> bool:
    return isinstance(k, (bool, np.bool_)) or \
        isinstance(k, np.ndarray) and k.dtype == bool and k.ndim == 0


def split_bool_scalars(key: Any) -> tuple[tuple, tuple] | None:
    """NumPy reads a 0-d boolean index (`x[True]`, `x[False]`, `x[i, True]`) as a new axis
    of length 1 indexed by the advanced index [0] (True) or [] (False). For a key holding
    one: (first, second) with x[key] == x[first][second], `first` the basic index that
    inserts the axes, `second` the key with each boolean made that advanced index. None for
    any other key."""
    key = key if key.__class__ is tuple else (key,)
    if not any(_is_bool_scalar(k) for k in key):
        return None
    first: list = []
    second: list = []
    for k in key:
        if _is_bool_scalar(k):
            first.append(None)
            second.append(np.arange(int(bool(k))))
        elif k is None or k is Ellipsis:
            first.append(k)
            second.append(slice(None) if k is None else k)
        else:
            a = np.asarray(k) if isinstance(k, list) else k
            nd = a.ndim if getattr(a, "dtype", None) == bool else 1  # (a mask: its axes)
            first += [slice(None)] * nd
            second.append(k)
    return tuple(first), tuple(second)


def gather_after_ints(idx: tuple, shape: tuple[int, ...]) -> tuple[tuple, tuple] | None:
    """For a normalized index with integers and one integer array (no new axis), the keys
    (view, gather) with x[idx] == x[view][gather]: the integers and slices as a view, then the
    array on the view's axis, so that a loop's `A[t, idx]` reads a view that moves with t and
    gathers it with one fixed index. None where NumPy places the array's axes differently in
    the two (its advanced indices, the integers and the array, are not adjacent and a slice
    precedes the array: x[idx] then puts the array's axes first)."""
    if any(k is None for k in idx):
        return None
    advs = [i for i, k in enumerate(idx) if isinstance(k, Adv)]
    ints = [i for i, k in enumerate(idx) if isinstance(k, int)]
    if len(advs) != 1 or not ints or ramp_as_basic(idx) is not None:
        return None  # (a ramp is a slice: the whole index reads as one view already)
    a = advs[0]
    lo, hi = min(ints + advs), max(ints + advs)
    if hi - lo + 1 != len(ints) + 1 and any(isinstance(idx[i], Sl) for i in range(a)):
        return None
    view = tuple(slice(None) if i == a else k.to_slice() if isinstance(k, Sl) else k
                 for i, k in enumerate(idx))
    gather = tuple(idx[a].arr if i == a else slice(None) for i, k in enumerate(idx)
                   if not isinstance(k, int))
    return view, gather
