"""`np.array` / `np.asarray` of traced values, while a function is traced.

NumPy's array constructors do not dispatch on their argument: `np.array([x, y])` or
`np.asarray(rows)` with traced values asks each tracer for a plain NumPy array, which a
trace does not have (TracedIntoNumpyError). While vecgrad traces a user's function, the
constructors below (`np.array`, `np.asarray`, `np.asanyarray`, `np.ascontiguousarray`,
`np.asfortranarray`) are wrappers: a call *from the user's code* whose argument is a traced
value, or a list / tuple (nested) holding one, is the traced array NumPy would make, with
NumPy's dtype (that of the leaves, Python scalars counting as the default int / float /
complex, as NumPy's array coercion counts them, each leaf cast before the stack, so that
`np.array([t32, 0.1])` keeps 0.1 in float64 as NumPy does), `dtype=` / `copy=` / `ndmin=`
honoured. Any other call (no traced leaf; one from vecgrad or NumPy; other keywords) is
NumPy's own function, unchanged. Outside a trace NumPy is untouched.

NumPy functions that users call on lists of traced values (`np.mean([loss(a, b) for a, b in
pairs])`, `np.linalg.norm([dx, dy])`, `np.dot([a, b], w)`: `LISTS`) dispatch on their array
arguments, but NumPy does not look inside a list; while tracing, a list or tuple argument
holding a traced value becomes the array `np.asarray` makes of it above, and the call goes on
as NumPy's own (now dispatched to vecgrad). Ufuncs are left alone (NumPy matches them by
identity when it dispatches, and they keep their methods). `np.r_[...]` / `np.c_[...]` of
traced items are vnp.r_ / vnp.c_ (NumPy's make each item a plain array first), and
`np.vectorize(f)(...)` of traced arguments calls f per element (numpy/_vectorize.py);
`np.require` of a traced value is vnp.require (NumPy's makes a plain array first), and
numpy.polynomial's polyval / chebval / legval of traced values numpy/_series.py's."""
from __future__ import annotations

import builtins
import importlib
import itertools
import sys
from typing import Any

import numpy as np

from .errors import _is_internal
from .hooks import NUMPY
from .tracing import Tracer, current_builder, noting

NAMES = ("array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray")
_ORIG = {n: getattr(np, n) for n in NAMES}
LISTS = ("mean", "sum", "prod", "max", "min", "amax", "amin", "std", "var", "average",
         "median", "argmax", "argmin", "cumsum", "cumprod", "ptp", "dot", "vdot", "inner",
         "outer", "diff", "sort", "argsort", "clip", "nansum", "nanmean", "nanmax", "nanmin",
         "all", "any", "count_nonzero", "trace", "transpose", "reshape", "ravel", "squeeze",
         "flip", "roll", "tile", "repeat", "cross", "tensordot", "einsum", "linalg.norm",
         "linalg.det", "linalg.inv", "linalg.solve")
_LIST_FUNCS = [(np.linalg if n.startswith("linalg.") else np, n.rpartition(".")[2]) for n in LISTS]
_LIST_ORIG = {(m, n): getattr(m, n) for m, n in _LIST_FUNCS}
assert not any(isinstance(f, np.ufunc) for f in _LIST_ORIG.values())
POSITIONAL = {"array": ("dtype",), "asarray": ("dtype", "order"), "asanyarray": ("dtype", "order"),
              "ascontiguousarray": ("dtype",), "asfortranarray": ("dtype",)}
_INTERNAL: dict[str, bool] = {}  # a caller's file name -> whether vecgrad's or NumPy's
_SCALAR_DTYPES = {bool: np.dtype(bool), float: np.dtype(float), complex: np.dtype(complex)}


def _leaf_dtypes(obj: Any, out: list) -> bool:
    """Collect the dtypes NumPy's coercion sees in `obj`; whether a traced leaf is among
    them (None: a leaf this wrapper does not handle, e.g. an object NumPy converts itself)."""
    if isinstance(obj, Tracer):  # (max(x32[i], 0.0): its dtype in each case, see _dtype)
        out.append(obj if obj._depends else obj.dtype)
        return True
    if type(obj) in (list, tuple):
        found = False
        for e in obj:
            f = _leaf_dtypes(e, out)
            if f is None:
                return None
            found = found or f
        return found
    if isinstance(obj, (np.ndarray, np.generic)):
        out.append(obj.dtype)
    elif type(obj) in _SCALAR_DTYPES:
        out.append(_SCALAR_DTYPES[type(obj)])
    elif type(obj) is int:
        out.append(np.asarray(obj).dtype)  # (int64, or NumPy's choice for a large one)
    else:
        return None
    return False


def _dtype(leaves: list) -> np.dtype:
    """NumPy's dtype of an array of `leaves` (dtypes, and pybuiltins' EitherScalars, whose
    dtype depends on which item won: `np.array([max(x32[i], 0.0), x32[j]])` is float32 where
    x32[i] wins and float64 where 0.0 does), which must be one in every case."""
    dts = [d for d in leaves if not isinstance(d, Tracer)]
    groups: dict = {}  # (the cases of equal leaves: each subset of them may occur)
    for x in leaves:
        if isinstance(x, Tracer):
            c = frozenset(x.cases())
            groups[c] = (groups.get(c, (0, x))[0] + 1, x)
    outs = {np.result_type(*dts, *itertools.chain(*pick)) for pick in itertools.product(
        *[_subsets(c, n) for c, (n, _) in groups.items()])}
    if len(outs) > 1:
        raise next(iter(groups.values()))[1].ambiguous(outs, "this array's")
    return outs.pop()


def _subsets(cases: frozenset, n: int) -> list:
    """The dtypes `n` leaves of these cases may have together (each nonempty subset)."""
    cs = sorted(cases, key=str)
    return [s for k in range(1, min(n, len(cs)) + 1) for s in itertools.combinations(cs, k)]


def _build(obj: Any, dtype: np.dtype) -> Any:
    """The array of nested lists `obj` in `dtype`: each leaf cast, then stacked."""
    if isinstance(obj, Tracer):
        out = NUMPY.asarray(obj, dtype)  # (an either leaf: its cast checks its exactness)
        return Tracer(out._b, out.atom) if out._depends else out
    if type(obj) in (list, tuple):
        if not obj:
            return np.zeros(0, dtype)
        return NUMPY.stack([_build(e, dtype) for e in obj])
    return np.asarray(obj, dtype)


def _traced(obj: Any, dtype: Any, copy: Any, ndmin: int) -> Any:
    dts: list = []
    found = _leaf_dtypes(obj, dts)
    if not found:
        return None
    dt = np.dtype(dtype) if dtype is not None else _dtype(dts)
    out = _build(obj, dt)
    if not isinstance(out, Tracer):
        out = NUMPY.asarray(out)
    if out is obj and copy:  # (np.array copies: a write into the copy leaves obj as it was)
        out = NUMPY.astype(out, dt)
    if out.ndim < ndmin:
        out = NUMPY.reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
    return out


def _internal_caller() -> bool:
    """Whether the wrapper's caller is vecgrad's or NumPy's own code (np.percentile calls
    np.asanyarray on its input and then works on an ndarray: it keeps NumPy's behaviour)."""
    fname = sys._getframe(2).f_code.co_filename
    internal = _INTERNAL.get(fname)
    if internal is None:
        internal = _INTERNAL[fname] = _is_internal(fname)
    return internal


def _wrap(name: str) -> Any:
    orig = _ORIG[name]
    copies = name == "array"

    def wrapper(a: Any = None, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(a, (Tracer, list, tuple)) or _internal_caller():
            return orig(a, *args, **kwargs)
        keys = dict(zip(POSITIONAL[name], args))
        if len(keys) < len(args) or builtins.any(k in keys for k in kwargs):
            return orig(a, *args, **kwargs)
        keys.update(kwargs)
        if not set(keys) <= {"dtype", "copy", "order", "ndmin", "subok"}:
            return orig(a, *args, **kwargs)
        copy = keys.get("copy", copies)
        out = noting(current_builder(), sys._getframe(1), _traced, a, keys.get("dtype"), copy,
                     int(keys.get("ndmin", 0)))
        return orig(a, *args, **kwargs) if out is None else out
    wrapper.__name__, wrapper.__qualname__, wrapper.__doc__ = name, name, orig.__doc__
    wrapper.__wrapped__ = orig
    return wrapper


def _listed(x: Any) -> Any:
    """A list / tuple argument holding a traced value, as the traced array np.asarray makes."""
    if type(x) is list or type(x) is tuple:
        out = _traced(x, None, False, 0)
        if out is not None:
            return out
    return x


def _call_listed(fn: Any, args: tuple, kwargs: dict) -> Any:
    """`fn(*args, **kwargs)` with each list or tuple argument holding a traced value as the
    traced array np.asarray makes of it."""
    return fn(*[_listed(a) for a in args], **{k: _listed(v) for k, v in kwargs.items()})


def _wrap_lists(orig: Any) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if (builtins.any(type(a) is list or type(a) is tuple for a in args) or
                builtins.any(type(v) is list or type(v) is tuple for v in kwargs.values())) \
                and not _internal_caller():
            return noting(current_builder(), sys._getframe(1), _call_listed, orig, args, kwargs)
        return orig(*args, **kwargs)
    wrapper.__name__, wrapper.__qualname__, wrapper.__doc__ = \
        orig.__name__, orig.__qualname__, orig.__doc__
    wrapper.__wrapped__ = orig
    return wrapper


class _Concatenator:
    """np.r_ / np.c_ while tracing: vnp.r_ / vnp.c_ where an item is traced (a traced array,
    or a list holding one) and the call is the user's; NumPy's own otherwise (NumPy's turns
    each item into a plain array, which a traced value is not)."""

    def __init__(self, name: str):
        self.name, self.orig = name, getattr(np, name)

    def __getitem__(self, key: Any) -> Any:
        items = key if type(key) is tuple else (key,)
        if builtins.any(_leaf_dtypes(k, []) for k in items) and not _internal_caller():
            return getattr(NUMPY, self.name)[key]
        return self.orig[key]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.orig, name)

    def __len__(self) -> int:
        return len(self.orig)


def _vectorize_call(self: Any, *args: Any, **kwargs: Any) -> Any:
    """np.vectorize(pyfunc)(...) while tracing: vecgrad.numpy's where an argument is traced
    and the call is the user's (NumPy's converts the arguments to plain arrays itself)."""
    if (builtins.any(_leaf_dtypes(a, []) for a in args) or builtins.any(
            _leaf_dtypes(v, []) for v in kwargs.values())) and not _internal_caller():
        return NUMPY.vectorized_call(self, args, kwargs)
    return _VECTORIZE_ORIG(self, *args, **kwargs)


class _Poly1dMeta(type):
    """np.poly1d while tracing: vecgrad.numpy's poly1d where the coefficients hold a traced
    value and the call is the user's (NumPy's drops leading zeros: a value-dependent length);
    NumPy's class otherwise, and for isinstance / issubclass and its attributes."""

    def __call__(cls, c_or_r: Any, r: bool = False, variable: Any = None) -> Any:
        if (isinstance(c_or_r, NUMPY.poly1d) or _leaf_dtypes(c_or_r, [])) and \
                not _internal_caller():
            return NUMPY.poly1d(c_or_r, r, variable)
        return _POLY1D_ORIG(c_or_r, r, variable)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, (_POLY1D_ORIG, NUMPY.poly1d))

    def __subclasscheck__(cls, sub: Any) -> bool:
        return issubclass(sub, (_POLY1D_ORIG, NUMPY.poly1d))

    def __getattr__(cls, name: str) -> Any:
        return getattr(_POLY1D_ORIG, name)


class _Poly1d(metaclass=_Poly1dMeta):
    __doc__ = np.poly1d.__doc__


def _require(a: Any, dtype: Any = None, requirements: Any = None, *, like: Any = None) -> Any:
    """np.require while tracing: vecgrad.numpy's where `a` is traced (or a list holding a
    traced value) and the call is the user's (NumPy's makes a plain array of it first)."""
    if _leaf_dtypes(a, []) and like is None and not _internal_caller():
        return NUMPY.require(a, dtype, requirements)
    return _REQUIRE_ORIG(a, dtype, requirements, like=like)


def _series(key: tuple, orig: Any) -> Any:
    """numpy.polynomial's polyval / chebval / legval while tracing: vecgrad.numpy's where x or
    c holds a traced value and the call is the user's (NumPy's make a plain array of c)."""
    def wrapper(x: Any, c: Any, tensor: bool = True) -> Any:
        if (_leaf_dtypes(x, []) or _leaf_dtypes(c, [])) and not _internal_caller():
            return NUMPY.series[key](x, c, tensor)
        return orig(x, c, tensor)
    wrapper.__name__, wrapper.__doc__ = orig.__name__, orig.__doc__
    return wrapper


SERIES = (("numpy.polynomial.polynomial", "polyval"), ("numpy.polynomial.chebyshev", "chebval"),
          ("numpy.polynomial.legendre", "legval"))
_SERIES_ORIG = {(m, n): getattr(importlib.import_module(m), n) for m, n in SERIES}
_SERIES_TRACED = {k: _series(k, f) for k, f in _SERIES_ORIG.items()}
_REQUIRE_ORIG = np.require
_POLY1D_ORIG = np.poly1d
_VECTORIZE_ORIG = np.vectorize.__call__
CONCATENATORS = ("r_", "c_")
_CONCAT_ORIG = {n: getattr(np, n) for n in CONCATENATORS}
_CONCAT_TRACED = {n: _Concatenator(n) for n in CONCATENATORS}
_TRACED = {n: _wrap(n) for n in NAMES}
_LIST_TRACED = {k: _wrap_lists(f) for k, f in _LIST_ORIG.items()}


def patch() -> None:
    """Put the wrappers in place of NumPy's constructors and list-taking functions."""
    for n in NAMES:
        setattr(np, n, _TRACED[n])
    for n in CONCATENATORS:
        setattr(np, n, _CONCAT_TRACED[n])
    np.vectorize.__call__ = _vectorize_call
    np.poly1d = _Poly1d
    np.require = _require
    for (m, n), f in _SERIES_TRACED.items():
        setattr(sys.modules[m], n, f)
    for (m, n), f in _LIST_TRACED.items():
        setattr(m, n, f)


def unpatch() -> None:
    """Put NumPy's own functions back."""
    for n in NAMES:
        setattr(np, n, _ORIG[n])
    for n in CONCATENATORS:
        setattr(np, n, _CONCAT_ORIG[n])
    np.vectorize.__call__ = _VECTORIZE_ORIG
    np.poly1d = _POLY1D_ORIG
    np.require = _REQUIRE_ORIG
    for (m, n), f in _SERIES_ORIG.items():
        setattr(sys.modules[m], n, f)
    for (m, n), f in _LIST_ORIG.items():
        setattr(m, n, f)


__all__ = ["patch", "unpatch"]
