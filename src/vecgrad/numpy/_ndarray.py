"""The ndarray methods and attributes of traced arrays that are more than a call of the
`vecgrad.numpy` function of the same name, and the table that sets them all on Tracer
(`install`).

Every name of `dir(numpy.ndarray)` is decided in `NDARRAY_API` below: a method or attribute
that works as in NumPy, or one that raises a typed error saying why it cannot (values that
are not known while tracing, memory layout that a traced array does not have).
"""
from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import numpy as _np

from .. import primitives as P
from ..builder import entry
from ..errors import ConcretizationError, TracedIntoNumpyError, unsupported, user_src
from ..tracing import Tracer, as_view, strided
from . import _elementwise, _indexing, _ops, _order
from ._base import astype, queried_dtype
from ._ufuncs import round as round_

# how each name of dir(numpy.ndarray) is provided: "function" (the vecgrad.numpy function
# of the same name, self first), "method" (defined here), "operator" (primitives/operators.py
# binds a primitive), "attribute", "error" (raises a typed error: see the function here), or "absent"
# (NumPy-internal hooks that a traced array must not have)
NDARRAY_API: dict[str, str] = {}


def _reg(kind: str, *names: str) -> None:
    for n in names:
        NDARRAY_API[n] = kind


_reg("function", "all", "any", "argmax", "argmin", "argpartition", "argsort", "choose",
     "clip", "conj", "conjugate", "cumprod", "cumsum", "diagonal", "dot", "flatten", "max",
     "mean", "min", "nonzero", "prod", "ravel", "repeat", "reshape", "round", "searchsorted",
     "squeeze", "std", "sum", "swapaxes", "take", "trace", "transpose", "var")
_reg("method", "astype", "compress", "copy", "fill", "item", "partition", "put", "sort",
     "tolist", "view", "__format__",
     "setflags", "to_device", "__copy__", "__deepcopy__", "__array_namespace__", "__iter__",
     "__len__", "__getitem__", "__setitem__", "__delitem__", "__contains__", "__repr__",
     "__array__", "__array_ufunc__", "__array_function__", "__class_getitem__")
_reg("attribute", "T", "mT", "shape", "dtype", "ndim", "size", "itemsize", "nbytes", "flat",
     "base", "real", "imag", "device", "flags", "__array_priority__", "__hash__", "__doc__")
_reg("operator", *[f"__{p}{n}__" for n in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
    "lshift", "rshift", "divmod") for p in ("", "r", "i") if not (p == "i" and n == "divmod")],
     "__neg__", "__pos__", "__abs__", "__invert__", "__lt__", "__le__", "__gt__", "__ge__",
     "__eq__", "__ne__")
_reg("error", "__bool__", "__float__", "__int__", "__index__", "__complex__", "tobytes",
     "tofile", "dump", "dumps", "data", "ctypes", "strides", "byteswap", "getfield",
     "setfield", "resize", "__setstate__", "__reduce__", "__reduce_ex__", "__dlpack__",
     "__dlpack_device__")
_reg("absent", "__array_finalize__", "__array_interface__", "__array_struct__",
     "__array_wrap__")


def _value_needed(what: str) -> ConcretizationError:
    return ConcretizationError(what, user_src(2))


def item(self: Tracer, *args: Any) -> Any:
    """A Python scalar needs the value: raises ConcretizationError."""
    raise _value_needed(".item()")


def tolist(self: Tracer) -> Any:
    """Python lists need the values: raises ConcretizationError."""
    raise _value_needed(".tolist()")


def tobytes(self: Tracer, order: str = "C") -> bytes:
    """Bytes need the values: raises ConcretizationError."""
    raise _value_needed(".tobytes()")


def dump(self: Tracer, *a: Any, **k: Any) -> None:
    """Saving needs the values: raises ConcretizationError."""
    raise _value_needed("saving (dump/dumps/tofile)")


tofile = dumps = dump


def __contains__(self: Tracer, value: Any) -> bool:
    """`v in x` needs a Python bool: raises ConcretizationError (use vnp.any(x == v))."""
    raise _value_needed("`in` (membership test; use vnp.any(x == v))")


def _no_memory(name: str) -> Any:
    def f(self: Tracer, *a: Any, **k: Any) -> Any:
        raise unsupported(f"ndarray.{name} (a traced array has a shape and dtype but no memory "
                          "layout)")
    f.__name__ = name
    return f


for _n in ("byteswap", "getfield", "setfield", "resize", "__setstate__", "__reduce__",
           "__reduce_ex__"):
    globals()[_n] = _no_memory(_n)


def __dlpack__(self: Tracer, *a: Any, **k: Any) -> Any:
    """A traced array cannot be exported (it has no memory): raises TracedIntoNumpyError."""
    raise TracedIntoNumpyError()


__dlpack_device__ = __dlpack__


def get_strides(self: Tracer) -> Any:
    raise unsupported("ndarray.strides (a traced array has no memory layout)")


def get_data(self: Tracer) -> Any:
    raise TracedIntoNumpyError()


def get_itemsize(self: Tracer) -> int:
    return queried_dtype(self).itemsize


def get_nbytes(self: Tracer) -> int:
    return self.size * queried_dtype(self).itemsize


def get_mT(self: Tracer) -> Any:
    if self.ndim < 2:
        raise ValueError("matrix transpose with ndim < 2 is undefined")
    return _ops.swapaxes(self, -1, -2)


def get_base(self: Tracer) -> Any:
    """The array this one is a view of, or None."""
    return self._view[0] if self._view is not None else None


def get_device(self: Tracer) -> str:
    return "cpu"


def get_flags(self: Tracer) -> Any:
    """`x.flags`, read as NumPy's: attributes (x.flags.c_contiguous) and keys
    (x.flags["C_CONTIGUOUS"], "C", "W", ...); the layout is the one vecgrad gives a view
    (`views.strided`), a new value being C-contiguous."""
    d = strided(self).flags
    return _Flags(c_contiguous=d.c_contiguous, f_contiguous=d.f_contiguous,
                  writeable=not self._readonly, owndata=self._view is None,
                  writebackifcopy=False, aligned=True)


_FLAG_KEYS = {"C": "c_contiguous", "CONTIGUOUS": "c_contiguous", "F": "f_contiguous",
              "FORTRAN": "f_contiguous", "W": "writeable", "O": "owndata", "A": "aligned",
              "X": "writebackifcopy"}


class _Flags(types.SimpleNamespace):
    def __getitem__(self, key: str) -> bool:
        k = str(key).upper()
        name = _FLAG_KEYS.get(k, k.lower())
        if name in vars(self):
            return getattr(self, name)
        if name in ("fnc", "forc", "behaved", "carray", "farray"):
            return getattr(self, name)
        raise KeyError(f"Unknown flag {key!r}")

    @property
    def contiguous(self) -> bool:
        return self.c_contiguous

    @property
    def fnc(self) -> bool:
        return self.f_contiguous and not self.c_contiguous

    @property
    def forc(self) -> bool:
        return self.f_contiguous or self.c_contiguous

    @property
    def behaved(self) -> bool:
        return self.aligned and self.writeable

    @property
    def carray(self) -> bool:
        return self.behaved and self.c_contiguous

    @property
    def farray(self) -> bool:
        return self.behaved and self.f_contiguous and not self.c_contiguous


class _Flat:
    """`x.flat`: a 1-d view for reading, writing and iterating in C order."""

    def __init__(self, x: Tracer):
        self._x = x

    def __len__(self) -> int:
        return self._x.size

    def __iter__(self) -> Any:
        return iter(_ops.ravel(self._x))

    def __getitem__(self, k: Any) -> Any:
        return _ops.reshape(self._x, (-1,))[k]

    def __setitem__(self, k: Any, v: Any) -> None:
        _ops.reshape(self._x, (-1,), always_view=True)[k] = v

    @property
    def base(self) -> Tracer:
        return self._x


def get_flat(self: Tracer) -> _Flat:
    return _Flat(self)


# ---------------------------------------------------------------------------- methods

def copy(self: Tracer, order: str = "C") -> Tracer:
    """A copy (free: traced values are immutable SSA values)."""
    return Tracer(self._b, self.atom)


def __copy__(self: Tracer) -> Tracer:
    return copy(self)


def __deepcopy__(self: Tracer, memo: Any = None) -> Tracer:
    return copy(self)


def __array_namespace__(self: Tracer, *, api_version: Any = None) -> Any:
    return _ops.NAMESPACES["numpy"]


def fill(self: Tracer, value: Any) -> None:
    """Set every entry to `value` (in place)."""
    self[...] = value


def sort(self: Tracer, axis: int = -1, kind: Any = None, order: Any = None, *,
         stable: Any = None) -> None:
    """Sort in place along `axis` (a write of the sorted values, as NumPy's)."""
    self[...] = _order.sort(self, axis, kind, order, stable=stable)


def partition(self: Tracer, kth: Any, axis: int = -1, kind: str = "introselect",
              order: Any = None) -> None:
    """Partition in place along `axis`."""
    self[...] = _order.partition(self, kth, axis, kind, order)


def put(self: Tracer, indices: Any, values: Any, mode: str = "raise") -> None:
    """Write `values` at the flat positions `indices` (in place)."""
    _indexing.put(self, indices, values, mode)


def view(self: Tracer, dtype: Any = None, type: Any = None) -> Tracer:
    """A new view of the same data (writes through it reach this array); reinterpreting the
    bytes as another dtype is not traced."""
    if dtype is not None and _np.dtype(dtype) != queried_dtype(self) or type is not None:
        raise unsupported("ndarray.view with another dtype or type (use .astype to convert)")
    out = Tracer(self._b, self.atom)
    if self._depends:  # (eig's w: a view is real where w is)
        out = self._kept(out)
    return as_view(out, self, P.reshape, {"shape": self.shape})


def setflags(self: Tracer, write: Any = None, align: Any = None, uic: Any = None) -> None:
    """Only `write=False` is traced: the array becomes read-only."""
    if write is False:
        self._readonly = True
    elif write is not None:
        raise unsupported("ndarray.setflags(write=True)")


def to_device(self: Tracer, device: Any, /, *, stream: Any = None) -> Tracer:
    if device != "cpu":
        raise unsupported(f"ndarray.to_device({device!r})")
    return self


def astype_(self: Tracer, dtype: Any, order: str = "K", casting: str = "unsafe",
            subok: bool = True, copy: bool = True) -> Any:
    """Cast to `dtype` (a new array unless copy=False and the dtype is already `dtype`)."""
    if not copy and self.dtype == _np.dtype(dtype):
        return self
    return astype(self, dtype)


def compress(self: Tracer, condition: Any, axis: Any = None, out: Any = None) -> Any:
    """The slices where the static `condition` holds."""
    return _indexing.compress(condition, self, axis, out)


def __round__(self: Tracer, ndigits: int | None = None) -> Any:
    """`round(x, n)` of a NumPy scalar is a scalar; `round(x)` is a Python int (its value is
    needed); arrays have no __round__ (TypeError, as NumPy's)."""
    if not self._is_scalar():
        raise TypeError("type numpy.ndarray doesn't define __round__ method")
    if ndigits is None:
        raise _value_needed("round() to a Python int")
    return round_(self, ndigits)


def __format__(self: Tracer, spec: str) -> str:
    """Formatting a value needs it (`f"{x:.3f}"`): ConcretizationError; `f"{x}"` is repr."""
    if spec:
        raise _value_needed(f"formatting with {spec!r}")
    return repr(self)


# -- setting them on Tracer (tracing sits below vecgrad.numpy: the package's __init__ calls
# `install` once all its functions are defined; the operators that are one primitive each
# are set by primitives/operators.py)

# x.f(...) is vecgrad.numpy.f(x, ...) for these
_FUNCTIONS = ["sum", "mean", "max", "min", "prod", "reshape", "transpose", "ravel", "flatten",
              "squeeze", "dot", "clip", "swapaxes", "all", "any", "argmax", "argmin",
              "argpartition", "argsort", "choose", "conj", "conjugate", "cumprod", "cumsum",
              "diagonal", "nonzero", "repeat", "round", "searchsorted", "std", "take",
              "trace", "var"]
# the methods defined in this module
_METHODS = ["fill", "item", "partition", "put", "sort", "tolist", "view", "setflags",
            "to_device", "compress", "tobytes", "tofile", "dump", "dumps", "byteswap",
            "getfield", "setfield", "resize", "__copy__", "__deepcopy__", "__array_namespace__",
            "__contains__", "__format__", "__round__", "__setstate__", "__reduce__",
            "__reduce_ex__", "__dlpack__", "__dlpack_device__"]
_ATTRIBUTES = ["strides", "data", "itemsize", "nbytes", "mT", "base", "device", "flags", "flat"]


def install(vnp: types.ModuleType) -> None:
    """Set the ndarray methods, attributes and array-valued operators on `Tracer`; `vnp` is
    the `vecgrad.numpy` package."""
    def binop(name: str, swap: bool = False) -> Callable:
        if swap:
            return entry(lambda self, other: getattr(vnp, name)(other, self))
        return entry(lambda self, other: getattr(vnp, name)(self, other))

    def method(name: str) -> Callable:
        def m(self: Tracer, *args: Any, **kwargs: Any) -> Any:
            return getattr(vnp, name)(self, *args, **kwargs)
        m.__name__ = name
        m.__doc__ = f"Same as vecgrad.numpy.{name}(self, ...)."
        return entry(m)

    here = globals()
    Tracer.__pow__ = entry(_elementwise.array_power)  # (NumPy's fast path)
    for n, f in [("pow", "power"), ("matmul", "matmul")]:
        if n != "pow":
            setattr(Tracer, f"__{n}__", binop(f))
        setattr(Tracer, f"__r{n}__", binop(f, swap=True))
        setattr(Tracer, f"__i{n}__", entry(lambda self, o, f=f: self._inplace(o, getattr(vnp, f))))
    for n, f in [("neg", "negative"), ("pos", "positive"), ("abs", "abs")]:
        setattr(Tracer, f"__{n}__", method(f))
    for n in _FUNCTIONS:
        setattr(Tracer, n, method(n))
    for n in _METHODS:
        setattr(Tracer, n, here[n])
    Tracer.astype = astype_
    for n in _ATTRIBUTES:
        setattr(Tracer, n, property(here["get_" + n]))
    Tracer.ctypes = Tracer.data
    Tracer.T = property(entry(lambda self: vnp.transpose(self)))
    Tracer.real = property(entry(lambda self: vnp.real(self)))
    Tracer.imag = property(entry(lambda self: vnp.imag(self)))
    # (NumPy's method returns the array itself unless it is complex: a write into the result
    # is a write into the array; the function np.conj makes a new array)
    Tracer.conj = Tracer.conjugate = entry(lambda self: vnp.conj(self)
                                           if self.dtype.kind == "c" else self)
    Tracer.reshape = entry(lambda self, *shape, order="C", copy=None: vnp.reshape(
        self, _shape_args(shape), order, copy=copy))
    Tracer.transpose = entry(lambda self, *axes: vnp.transpose(self, _shape_args(axes)))


def _shape_args(args: tuple) -> Any:
    """`x.reshape(2, 3)`, `x.reshape((2, 3))` and `x.transpose(np.argsort(p))` alike."""
    if len(args) == 1 and isinstance(args[0], (tuple, list, _np.ndarray, type(None))):
        return args[0]
    return args if args else None
