"""The `ufunc` object of `vecgrad.numpy`: a traced function with NumPy's ufunc methods
(`reduce`, `accumulate`, `outer`, `at`, `reduceat`), and the writes of a result into `out=`.

`ufunc.at` accumulates at repeated indices as NumPy's unbuffered `at` does (`np.add.at(buf,
idx, v)`, a traced index included); `reduce` and `accumulate` run vecgrad.numpy's reductions
and scans named by ufunc (`_REDUCE`, `_ACCUMULATE`). The table of ufuncs is `_ufuncs`.
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as _np

from .. import primitives as P
from ..errors import (
    CastingError,
    TracedIntoNumpyError,
    UnsupportedError,
    _where,
    unsupported,
    user_src,
)
from ..tracing import Tracer
from . import _ops
from ._accumulate import index_add
from ._base import _axis1, _dtype, asarray, astype
from ._indexing import take
from ._nn import logsumexp
from ._scatter import index_reduce


class ufunc:
    """A NumPy ufunc for traced code: call it elementwise (with NumPy's broadcasting and
    dtype rules), or use `reduce`, `accumulate`, `outer` and `at` as on `numpy.<name>`."""

    def __init__(self, name: str, fn: Callable, nin: int, nout: int = 1):
        self.__name__ = name
        self._fn = fn
        self.nin, self.nout, self.nargs = nin, nout, nin + nout
        self.__doc__ = fn.__doc__

    def __repr__(self) -> str:
        return f"<vecgrad ufunc '{self.__name__}'>"

    def __call__(self, *args: Any, out: Any = None, where: Any = True, dtype: Any = None,
                 **kw: Any) -> Any:
        casting = kw.pop("casting", "same_kind")
        kw.pop("order", None), kw.pop("subok", None)
        if kw:
            raise unsupported(f"numpy.{self.__name__} with {sorted(kw)}")
        if len(args) > self.nin:  # out given positionally
            args, out = args[:self.nin], args[self.nin:]
        if dtype is not None:
            args = tuple(astype(asarray(a), dtype) for a in args)
        res = self._fn(*args)
        if where is not True:
            o = out[0] if isinstance(out, tuple) and len(out) == 1 else out
            if self.nout != 1 or not isinstance(o, Tracer):
                raise UnsupportedError(
                    f"numpy.{self.__name__} with where= and no traced out= leaves the entries "
                    f"where the condition is False uninitialized in NumPy{_where(user_src(2))}"
                    f": pass out= (a vnp array), or use np.where(cond, np.{self.__name__}"
                    "(...), other)")
            res = _ops.where(where, res, o)
        return res if out is None else _write_out(self.__name__, res, out, casting)

    def reduce(self, a: Any, axis: Any = 0, dtype: Any = None, out: Any = None,
               keepdims: bool = False, **kw: Any) -> Any:
        """`numpy.<ufunc>.reduce`: fold the ufunc over `axis` (0 by default, as NumPy)."""
        fn = _REDUCE.get(self.__name__)
        if fn is None and self.__name__ in _ASSOCIATIVE:
            fn = functools.partial(_tree_reduce, self._fn, getattr(_np, self.__name__).identity)
        takes = _params(fn) if fn is not None else set()
        if fn is None or set(kw) - takes or self.nin != 2:
            raise unsupported(f"numpy.{self.__name__}.reduce" + (f" with {sorted(kw)}" if kw
                                                                  else ""))
        a = asarray(a)
        if dtype is not None and "dtype" in takes:  # (sum/prod accumulate in a narrow
            kw["dtype"] = dtype  # dtype, wrapping as NumPy does)
        elif dtype is not None:
            a = astype(a, dtype)
        res = fn(a, axis=axis, keepdims=keepdims, **kw)
        return res if out is None else _write_out(self.__name__, res, out)

    def accumulate(self, a: Any, axis: int = 0, dtype: Any = None, out: Any = None) -> Any:
        """`numpy.<ufunc>.accumulate`: the running reduction along `axis` (add, multiply,
        maximum, minimum, logical_and/or by scans; other binary ufuncs step by step)."""
        fn = _ACCUMULATE.get(self.__name__)
        if fn is None and self.__name__ in _ASSOCIATIVE:
            fn = functools.partial(_doubling_scan, self._fn)
        elif fn is None and self.nin == 2 and self.nout == 1:
            fn = functools.partial(_sequential_accumulate, self._fn)
        if fn is None:
            raise unsupported(f"numpy.{self.__name__}.accumulate")
        a = asarray(a)
        if dtype is not None:
            a = astype(a, dtype)
        res = fn(a, axis=axis)
        return res if out is None else _write_out(self.__name__, res, out)

    def outer(self, a: Any, b: Any, **kw: Any) -> Any:
        """`numpy.<ufunc>.outer`: the ufunc on every pair, result shape a.shape + b.shape."""
        if self.nin != 2:
            raise ValueError("outer product only supported for binary functions")
        a, b = asarray(a), asarray(b)
        return self(_ops.reshape(a, _ops.shape(a) + (1,) * _ops.ndim(b)), b, **kw)

    def at(self, a: Any, indices: Any, b: Any = None) -> None:
        """`numpy.<ufunc>.at`: apply in place at `indices`, unbuffered (repeated indices
        accumulate). `a` must be a traced, writable array (e.g. made with vnp.zeros)."""
        if not isinstance(a, Tracer):
            if isinstance(b, Tracer) or _has_tracer(indices):
                raise TracedIntoNumpyError()
            return getattr(_np, self.__name__).at(a, indices, *(() if b is None else (b,)))
        if b is not None and self.__name__ in ("maximum", "minimum", "multiply") and (
                _has_tracer(indices) or _repeats(indices, a.shape)) \
                and index_reduce(a, indices, b, self.__name__):
            return None  # (at repeated positions: one scatter_reduce_along)
        if self.__name__ in ("add", "subtract") and b is not None and not _has_tracer(indices) \
                and _np.result_type(a.dtype, asarray(b).dtype) != a.dtype:
            # ufunc.at casts unsafely after each application, a[i] = a.dtype(a[i] + b_j): at
            # distinct positions that is a write of the cast sum (repeated ones: see
            # scatter_add_plan, which runs np.add.at itself for such dtypes)
            idx = P.normalize_index(indices, a.shape)
            if P.is_basic(idx) or not P.has_duplicates(idx, a.shape):
                a[indices] = self(a[indices], b)
                return None
        if self.__name__ in ("add", "subtract"):
            index_add(a, indices, b if self.__name__ == "add" else _ops.negative(b))
            return None
        idx = P.normalize_index(indices, a.shape)
        if not P.is_basic(idx) and P.has_duplicates(idx, a.shape):
            raise unsupported(f"numpy.{self.__name__}.at with repeated indices (only add.at "
                              "and subtract.at accumulate them)")
        args = (a[indices],) if b is None else (a[indices], b)
        a[indices] = self(*args)
        return None

    def reduceat(self, a: Any, indices: Any, axis: int = 0, dtype: Any = None,
                 out: Any = None) -> Any:
        """`numpy.<ufunc>.reduceat` (add, multiply, maximum, minimum) at static `indices`:
        segment i reduces a[indices[i]:indices[i+1]] along `axis` (the last one runs to the
        end), or is a[indices[i]] where indices[i+1] <= indices[i]."""
        name = self.__name__
        if name not in _REDUCEAT or _has_tracer(indices):
            raise unsupported(f"numpy.{name}.reduceat" + (" with traced indices" if
                                                        name in _REDUCEAT else ""))
        a = asarray(a)
        axis = _axis1(axis, _ops.ndim(a))
        n = _ops.shape(a)[axis]
        idx = _np.asarray(indices)  # NumPy's checks and result dtype, on a stand-in:
        want = getattr(_np, name).reduceat(_np.zeros(n, a.dtype), idx, dtype=dtype).dtype
        idx = idx.astype(_np.int64)
        ends = _np.append(idx[1:], n)
        ends = _np.where(ends > idx, ends, idx + 1)
        res = take(astype(a, want) if a.dtype != want else a, idx, axis=axis)
        rest = [(i, j) for i, (s, e) in enumerate(zip(idx, ends)) for j in range(s + 1, e)]
        if rest:
            seg, pos = _np.array(rest).T
            key = (slice(None),) * axis + (seg,)
            getattr(_ops.NAMESPACES["numpy"], name).at(res, key, take(a, pos, axis=axis))
        return res if out is None else _write_out(name, res, out)


_REDUCEAT = ("add", "multiply", "maximum", "minimum")


@functools.cache
def _params(fn: Callable) -> set:
    """The keywords a reduction takes beyond axis and keepdims (initial, where, dtype)."""
    target = getattr(fn, "target", None)
    return set(inspect.signature(target() if target else fn).parameters) & {
        "initial", "where", "dtype"}


def _repeats(indices: Any, shape: tuple) -> bool:
    idx = P.normalize_index(indices, shape)
    return not P.is_basic(idx) and P.has_duplicates(idx, shape)


def _has_tracer(x: Any) -> bool:
    if isinstance(x, Tracer):
        return True
    return isinstance(x, (tuple, list)) and any(_has_tracer(k) for k in x)


def _write_out(name: str, res: Any, out: Any, casting: str = "unsafe") -> Any:
    """Write a ufunc's result into `out=` (a traced buffer) and return it, as NumPy does
    (refusing a cast that `casting` does not allow: a ufunc's call, np.round and np.clip
    refuse float results into an int buffer, 'same_kind'; reductions cast, 'unsafe')."""
    outs = out if isinstance(out, tuple) else (out,)
    ress = res if isinstance(res, tuple) else (res,)
    for o, r in zip(outs, ress):
        if o is None:
            continue
        if not isinstance(o, Tracer):
            raise TracedIntoNumpyError()
        if not _np.can_cast(_dtype(r), o.dtype, casting):
            raise CastingError(name, _dtype(r), o.dtype, user_src(3), casting)
        if _ops.shape(r) != o.shape:
            r = _ops.broadcast_to(r, o.shape)
        o[...] = r
    return out if isinstance(out, tuple) and len(out) > 1 else outs[0]


# --- reductions and scans named by ufunc ----------------------------------------------------

def _lazy(module: str, name: str) -> Callable:
    """vecgrad.numpy's `name` (in its submodule `module`), looked up when called: those
    functions are defined after this module (in the package, or in _scans)."""
    def target() -> Callable:
        vnp = _ops.NAMESPACES["numpy"]
        return getattr(getattr(vnp, module) if module else vnp, name)

    def f(*a: Any, **k: Any) -> Any:
        return target()(*a, **k)
    f.target = target  # type: ignore[attr-defined]
    return f


_REDUCE: dict[str, Callable] = {
    "add": _lazy("", "sum"), "multiply": _lazy("", "prod"), "maximum": _lazy("", "max"),
    "minimum": _lazy("", "min"), "logical_and": _lazy("", "all"),
    "logical_or": _lazy("", "any"), "fmax": _lazy("", "nanmax"), "fmin": _lazy("", "nanmin"),
}
_ACCUMULATE: dict[str, Callable] = {
    "add": _lazy("", "cumsum"), "multiply": _lazy("", "cumprod"),
    "maximum": _lazy("_scans", "cummax"), "minimum": _lazy("_scans", "cummin"),
    "logical_and": _lazy("_scans", "cumall"), "logical_or": _lazy("_scans", "cumany"),
}


def _logaddexp_reduce(a: Any, axis: Any = 0, keepdims: bool = False) -> Any:
    return logsumexp(a, axis=axis, keepdims=keepdims)


_REDUCE["logaddexp"] = _logaddexp_reduce

# Associative ufuncs without a scan primitive: their accumulate is a prefix scan by doubling
# (Hillis-Steele), log2(n) whole-array steps of the ufunc itself, each as stable as one call
# (np.logaddexp.accumulate: a log-space running total, the forward pass of an HMM or CTC).
_ASSOCIATIVE = ("logaddexp", "logaddexp2", "fmax", "fmin", "hypot")


def _doubling_scan(fn: Callable, a: Any, axis: int = 0) -> Any:
    """out[k] = fn(... fn(a[0], a[1]) ..., a[k]) along `axis`, for an associative fn."""
    ax = _axis1(axis, len(_ops.shape(a)))
    n, d = _ops.shape(a)[ax], 1
    out = a
    while d < n:
        lo = tuple(slice(None) if i != ax else slice(0, n - d) for i in range(_ops.ndim(out)))
        hi = tuple(slice(None) if i != ax else slice(d, n) for i in range(_ops.ndim(out)))
        keep = tuple(slice(None) if i != ax else slice(0, d) for i in range(_ops.ndim(out)))
        out = _ops.concatenate([out[keep], fn(out[lo], out[hi])], axis=ax)
        d *= 2
    return out


def _sequential_accumulate(fn: Callable, a: Any, axis: int = 0) -> Any:
    """out[k] = fn(out[k - 1], a[k]) along `axis`, step by step as NumPy computes it, for a
    binary ufunc with neither a scan nor a closed form (power, arctan2, copysign, ...): n - 1
    whole-slice steps, then one stack. (Their reduce stays refused: NumPy 2.4's float reduce
    of these is not that left fold, np.power.reduce([2., 3., 2.]) is 4.0.)"""
    ax = _axis1(axis, len(_ops.shape(a)))
    n = _ops.shape(a)[ax]
    if n == 0:
        return a

    def at(k: int) -> Any:
        return a[tuple(slice(None) if i != ax else k for i in range(_ops.ndim(a)))]
    outs = [at(0)]
    for k in range(1, n):
        outs.append(fn(outs[-1], at(k)))
    if len({_dtype(o) for o in outs}) > 1:  # (a comparison: NumPy has no such loop)
        raise TypeError("accumulate: the ufunc's result has another dtype than its input")
    return _ops.stack(outs, axis=ax)


def _tree_reduce(fn: Callable, identity: Any, a: Any, axis: Any = 0,
                 keepdims: bool = False) -> Any:
    """fn folded over `axis` pairwise (halves combined, log2(n) whole-array steps), for an
    associative fn without a reduction primitive (np.hypot.reduce, np.logaddexp2.reduce);
    one element is fn(identity, it) where the ufunc has one, as NumPy's (|x| for hypot)."""
    if axis is None or isinstance(axis, tuple):
        raise unsupported("a reduction of this ufunc over several axes")
    ax = _axis1(axis, len(_ops.shape(a)))
    n = _ops.shape(a)[ax]
    if n == 0:
        raise ValueError("zero-size array to reduction operation which has no identity")

    def part(x: Any, lo: int, hi: int) -> Any:
        return x[tuple(slice(None) if i != ax else slice(lo, hi) for i in range(_ops.ndim(x)))]
    out = a
    if n == 1 and identity is not None:
        out = fn(_np.asarray(identity, _dtype(a)), out)
    while n > 1:
        h = n // 2
        pair = fn(part(out, 0, h), part(out, h, 2 * h))
        out = pair if n % 2 == 0 else _ops.concatenate([pair, part(out, 2 * h, n)], axis=ax)
        n = (n + 1) // 2
    return out if keepdims else _ops.squeeze(out, ax)


def _left_fold(name: str, combine: Callable, scan: Callable, pad: float) -> tuple:
    """`name`.reduce / accumulate (subtract, divide: not associative) by their closed forms:
    a[0] - (a[1] + ... + a[k]), a[0] / (a[1] * ... * a[k])."""
    def split(a: Any, axis: int) -> tuple:
        ax = _axis1(axis, len(_ops.shape(a)))
        first = tuple(slice(None) if i != ax else slice(0, 1) for i in range(_ops.ndim(a)))
        rest = tuple(slice(None) if i != ax else slice(1, None) for i in range(_ops.ndim(a)))
        return ax, a[first], a[rest]

    def reduce(a: Any, axis: Any = 0, keepdims: bool = False) -> Any:
        if axis is None or isinstance(axis, tuple):
            raise unsupported(f"numpy.{name}.reduce over several axes")
        ax, first, rest = split(a, axis)
        r = combine(first, scan.reduce(rest, axis=ax, keepdims=True))
        return r if keepdims else _ops.squeeze(r, ax)

    def accumulate(a: Any, axis: int = 0) -> Any:
        ax, first, rest = split(a, axis)
        pads = _ops.concatenate([_np.full(_ops.shape(first), pad, _dtype(first)), rest], axis=ax)
        return combine(first, scan.accumulate(pads, axis=ax))
    return reduce, accumulate
