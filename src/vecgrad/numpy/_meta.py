"""Metadata, comparisons, dtypes, scalar types, shape constants and data-dependent functions
of `vecgrad.numpy`: what takes or returns shapes, dtypes and booleans rather than values to
differentiate."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as _np

from .. import primitives as P
from ..errors import TraceError
from ..tracing import Tracer, strided
from . import _ops
from ._base import _dtype, _nd, _shape, asarray, astype, queried_dtype
from ._base import copy as _copy
from ._stats import all as all_

__all__ = [
    "ScalarType",
    "allclose",
    "array_equal",
    "array_equiv",
    "asanyarray",
    "ascontiguousarray",
    "asfortranarray",
    "bartlett",
    "blackman",
    "bool",
    "bool_",
    "byte",
    "bytes_",
    "can_cast",
    "cdouble",
    "character",
    "clongdouble",
    "common_type",
    "complex64",
    "complex128",
    "complexfloating",
    "csingle",
    "datetime64",
    "diag_indices",
    "diag_indices_from",
    "double",
    "dtype",
    "einsum_path",
    "errstate",
    "finfo",
    "flexible",
    "float16",
    "floating",
    "generic",
    "get_printoptions",
    "geterr",
    "geterrcall",
    "half",
    "hamming",
    "hanning",
    "iinfo",
    "index_exp",
    "indices",
    "inexact",
    "int8",
    "int16",
    "int32",
    "int64",
    "int_",
    "intc",
    "integer",
    "intersect1d",
    "intp",
    "isclose",
    "iscomplex",
    "iscomplexobj",
    "isdtype",
    "isreal",
    "isrealobj",
    "isscalar",
    "issubdtype",
    "iterable",
    "kaiser",
    "long",
    "longdouble",
    "longlong",
    "mask_indices",
    "min_scalar_type",
    "mintypecode",
    "ndarray",
    "number",
    "object_",
    "printoptions",
    "promote_types",
    "real_if_close",
    "require",
    "result_type",
    "s_",
    "sctypeDict",
    "set_printoptions",
    "setdiff1d",
    "seterr",
    "seterrcall",
    "setxor1d",
    "short",
    "signedinteger",
    "single",
    "size",
    "str_",
    "timedelta64",
    "tri",
    "tril_indices",
    "tril_indices_from",
    "trim_zeros",
    "triu_indices",
    "triu_indices_from",
    "typecodes",
    "typename",
    "ubyte",
    "uint",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "uintc",
    "uintp",
    "ulong",
    "ulonglong",
    "union1d",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    "unsignedinteger",
    "ushort",
    "void",
]


# ------------------------------------------------------------------------------ metadata

def size(a: Any, axis: int | None = None) -> int:
    """The number of elements (along `axis`)."""
    s = _shape(a)
    return math.prod(s) if axis is None else s[axis]


def _dt(x: Any) -> Any:
    return queried_dtype(x) if isinstance(x, Tracer) else x


def result_type(*arrays_and_dtypes: Any) -> _np.dtype:
    """NumPy's result_type (traced arrays count by their dtype, Python scalars are weak)."""
    return _np.result_type(*[_dt(x) for x in arrays_and_dtypes])


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    """Whether the dtype of `from_` casts to `to` under `casting`."""
    return _np.can_cast(_dt(from_), to, casting)


def iscomplexobj(x: Any) -> bool:
    """Whether x has a complex dtype (refused for np.linalg.eig's values, complex or real as
    the values say: valuedtype.EitherComplex)."""
    return queried_dtype(x).kind == "c"


def isrealobj(x: Any) -> bool:
    """Whether x has a non-complex dtype."""
    return not iscomplexobj(x)


def iscomplex(x: Any) -> Any:
    """Elementwise: a nonzero imaginary part."""
    if not (isinstance(x, Tracer) and x._depends) and not iscomplexobj(x):
        return _np.zeros(_shape(x), bool)
    return _ops.not_equal(_ops.imag(x), 0)


def isreal(x: Any) -> Any:
    """Elementwise: a zero imaginary part."""
    if not (isinstance(x, Tracer) and x._depends) and not iscomplexobj(x):
        return _np.ones(_shape(x), bool)
    return _ops.equal(_ops.imag(x), 0)


def real_if_close(a: Any, tol: float = 100) -> Any:
    """`a` itself for real input; for complex input the result's dtype depends on the values,
    which vecgrad cannot trace."""
    if not iscomplexobj(a):
        return a
    raise TraceError("numpy.real_if_close of a traced complex array: its result dtype depends "
                     "on the values. Use vnp.real(x) if the imaginary part is negligible")


def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Any:
    """Elementwise |a - b| <= atol + rtol |b| (and equal infinities), as NumPy."""
    y = asarray(b)
    if _dtype(y).kind in "biu":
        y = astype(y, _np.result_type(_dtype(y), 1.0))
    x = asarray(a)
    close = _ops.logical_and(_ops.less_equal(_ops.abs(_ops.subtract(x, y)),
                                             _ops.add(atol, _ops.multiply(rtol, _ops.abs(y)))),
                             P.isfinite(y))
    res = _ops.logical_or(close, _ops.equal(x, y))
    if equal_nan:
        res = _ops.logical_or(res, _ops.logical_and(P.isnan(x), P.isnan(y)))
    return res


def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> Any:
    """Whether all entries are close (a traced boolean: use it in vnp.where, not in `if`)."""
    return all_(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """Same shape and entries (False at once for different shapes)."""
    if _shape(a1) != _shape(a2):
        return False
    eq = _ops.equal(a1, a2)
    if equal_nan:
        eq = _ops.logical_or(eq, _ops.logical_and(P.isnan(a1), P.isnan(a2)))
    return all_(eq)


def array_equiv(a1: Any, a2: Any) -> Any:
    """Equal after broadcasting (False at once if the shapes do not broadcast)."""
    try:
        _np.broadcast_shapes(_shape(a1), _shape(a2))
    except ValueError:
        return False
    return all_(_ops.equal(a1, a2))


def ascontiguousarray(a: Any, dtype: Any = None) -> Any:
    """`a` if it is C-contiguous (as NumPy decides from its strides), else a copy."""
    a = asarray(a) if dtype is None else astype(asarray(a), dtype)
    if isinstance(a, Tracer) and a._view is not None and not strided(a).flags.c_contiguous:
        return a.copy()
    return a if isinstance(a, Tracer) else _np.ascontiguousarray(a)


def asfortranarray(a: Any, dtype: Any = None) -> Any:
    """A copy (vecgrad's arrays are C-ordered; values and gradients are the same)."""
    a = asarray(a) if dtype is None else astype(asarray(a), dtype)
    return a.copy() if isinstance(a, Tracer) else _np.asfortranarray(a)


asanyarray = asarray

_REQUIRE = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F", "F_CONTIGUOUS": "F",
            "FORTRAN": "F", "A": "A", "ALIGNED": "A", "W": "W", "WRITEABLE": "W", "O": "O",
            "OWNDATA": "O", "E": "E", "ENSUREARRAY": "E"}


def require(a: Any, dtype: Any = None, requirements: Any = None, *, like: Any = None) -> Any:
    """`a` itself where it meets the requirements ('C' / 'F' contiguous, 'W' writeable, 'O'
    owning its data, as NumPy decides from its strides: writes through the result then reach
    `a`, as NumPy's), else a copy in that order (or in `dtype`: a new array)."""
    if not isinstance(a, Tracer):
        a = asarray(a)
        if not isinstance(a, Tracer):
            return _np.require(a, dtype, requirements)
    reqs = {_REQUIRE[r.upper()] for r in (requirements or ())} - {"E", "A"}
    if reqs >= {"C", "F"}:
        raise ValueError('Cannot specify both "C" and "F" order')
    order = "C" if "C" in reqs else "F" if "F" in reqs else "A"
    if dtype is not None and _np.dtype(dtype) != a.dtype:
        out = astype(a, dtype)  # (a new array: C-ordered, or as `order` says)
        return _copy(out, order=order) if order == "F" else out
    st = strided(a)
    keep = (order != "C" or st.flags.c_contiguous) and (order != "F" or st.flags.f_contiguous) \
        and ("W" not in reqs or st.flags.writeable) and ("O" not in reqs or a._view is None)
    return a if keep else _copy(a, order=order)




# --------------------------------------------------------------- data-dependent shapes

def _data_dependent(name: str) -> Callable:
    npf = getattr(_np, name)

    def f(*args: Any, **kwargs: Any) -> Any:
        if any(isinstance(a, Tracer) for a in (*args, *kwargs.values())):
            raise TraceError(f"numpy.{name} of a traced array has a data-dependent shape, "
                             "which vecgrad cannot trace (shapes must be known while "
                             "tracing). Compute it outside the traced function, or use "
                             "masks (vnp.where) instead")
        return npf(*args, **kwargs)
    f.__name__ = name
    f.__doc__ = f"numpy.{name} of untraced arrays (a traced one has a data-dependent shape)."
    return f


setdiff1d, union1d, intersect1d, setxor1d, trim_zeros = (
    _data_dependent(n) for n in ("setdiff1d", "union1d", "intersect1d", "setxor1d",
                                 "trim_zeros"))
unique_all, unique_counts, unique_inverse, unique_values = (
    _data_dependent(n) for n in ("unique_all", "unique_counts", "unique_inverse",
                                 "unique_values"))


# ------------------------------------------------------------- dtypes and scalar types

class _IntType(type):
    """The metaclass of vnp's integer types: each stands for its NumPy type in comparisons,
    hashing, isinstance and issubclass (so np.issubdtype(x.dtype, vnp.int64), x.dtype ==
    vnp.int64 and {np.int64: ...}[vnp.int64] are NumPy's answers); only `is` tells them
    apart."""

    _base: type

    def __instancecheck__(cls, x: Any) -> bool:
        return isinstance(x, cls._base)

    def __subclasscheck__(cls, c: type) -> bool:
        return issubclass(c, cls._base)

    def __eq__(cls, other: object) -> bool:
        return other is cls or other is cls._base

    def __hash__(cls) -> int:
        return hash(cls._base)


def _int_type(base: type) -> type:
    """An integer scalar type that also casts traced arrays, as autograd's and JAX's:
    `vnp.int64(x)` is `x.astype(np.int64)` for a traced x, and NumPy's own scalar otherwise.
    As a dtype and in comparisons it is NumPy's (np.dtype(vnp.int64) == np.int64)."""
    def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:
        if args and isinstance(args[0], Tracer):
            return astype(args[0], base)
        return base(*args, **kwargs)
    return _IntType(base.__name__, (base,), {"__new__": __new__, "__module__": __name__,
                                             "__doc__": _int_type.__doc__, "_base": base})


int8, int16, int32, int64 = (_int_type(t) for t in (_np.int8, _np.int16, _np.int32, _np.int64))
dtype, finfo, iinfo, ndarray, generic, number = (
    _np.dtype, _np.finfo, _np.iinfo, _np.ndarray, _np.generic, _np.number)
bool_, float16, complex64, complex128, intp, uint8 = (
    _np.bool_, _np.float16, _np.complex64, _np.complex128, _np.intp, _np.uint8)
byte, short, intc, int_, long, longlong, ubyte, ushort, uintc, uint, ulong, ulonglong = (
    _np.byte, _np.short, _np.intc, _np.int_, _np.long, _np.longlong, _np.ubyte, _np.ushort,
    _np.uintc, _np.uint, _np.ulong, _np.ulonglong)
uint16, uint32, uint64, uintp, half, single, double, longdouble = (
    _np.uint16, _np.uint32, _np.uint64, _np.uintp, _np.half, _np.single, _np.double,
    _np.longdouble)
csingle, cdouble, clongdouble = _np.csingle, _np.cdouble, _np.clongdouble
# NumPy's floating-point error and printing settings (they govern vecgrad's compiled NumPy
# code too): autograd.numpy and jax.numpy code calls them through the array namespace.
seterr, geterr, errstate, seterrcall, geterrcall = (
    _np.seterr, _np.geterr, _np.errstate, _np.seterrcall, _np.geterrcall)
set_printoptions, get_printoptions, printoptions = (
    _np.set_printoptions, _np.get_printoptions, _np.printoptions)
integer, floating, complexfloating, inexact, signedinteger, unsignedinteger = (
    _np.integer, _np.floating, _np.complexfloating, _np.inexact, _np.signedinteger,
    _np.unsignedinteger)
# (`bool` is NumPy's here, as in vnp: np.bool is a dtype, and bool(x) of it is truthiness)
bool, object_, str_, bytes_, void, datetime64, timedelta64, flexible, character = (
    _np.bool, _np.object_, _np.str_, _np.bytes_, _np.void, _np.datetime64, _np.timedelta64,
    _np.flexible, _np.character)
# queries on dtypes and type codes: NumPy's own (they take dtypes, not arrays)
promote_types, issubdtype, isdtype, mintypecode, typename, iterable = (
    _np.promote_types, _np.issubdtype, _np.isdtype, _np.mintypecode, _np.typename,
    _np.iterable)
sctypeDict, typecodes, ScalarType, s_, index_exp = (
    _np.sctypeDict, _np.typecodes, _np.ScalarType, _np.s_, _np.index_exp)


def common_type(*arrays: Any) -> type:
    """NumPy's common_type: the inexact scalar type of the arrays' dtypes (traced ones
    count by their dtype)."""
    return _np.common_type(*[_np.empty(0, _dtype(a)) for a in arrays])


def min_scalar_type(a: Any) -> _np.dtype:
    """NumPy's min_scalar_type: an array's own dtype; for a scalar it depends on the value,
    which a traced scalar does not have."""
    if not isinstance(a, Tracer):
        return _np.min_scalar_type(a)
    if a.ndim:
        return a.dtype
    raise TraceError("numpy.min_scalar_type of a traced scalar depends on its value: use "
                     "its dtype")


def isscalar(x: Any) -> bool:
    """NumPy's isscalar: true of a NumPy scalar (a traced one too: an integer index's read,
    a reduction's result), false of arrays, 0-d ones included."""
    return x._is_scalar() if isinstance(x, Tracer) else _np.isscalar(x)


# ------------------------------------------------------------------ constants of shapes

def _constant(name: str) -> Callable:
    f = getattr(_np, name)

    def g(*args: Any, **kwargs: Any) -> Any:
        return f(*args, **kwargs)
    g.__name__, g.__doc__ = name, f"`numpy.{name}` (a constant: it takes sizes, not arrays)."
    return g


tri, indices, diag_indices, tril_indices, triu_indices, mask_indices = (
    _constant(n) for n in ("tri", "indices", "diag_indices", "tril_indices", "triu_indices",
                           "mask_indices"))
bartlett, blackman, hamming, hanning, kaiser = (
    _constant(n) for n in ("bartlett", "blackman", "hamming", "hanning", "kaiser"))


def diag_indices_from(arr: Any) -> tuple:
    """The indices of the main diagonal of an n-d array with equal dimensions."""
    s = _shape(arr)
    if len(s) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(s)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return _np.diag_indices(s[0], len(s))


def tril_indices_from(arr: Any, k: int = 0) -> tuple:
    """The indices of the lower triangle of a 2-d array."""
    if _nd(arr) != 2:
        raise ValueError("input array must be 2-d")
    return _np.tril_indices(_shape(arr)[-2], k=k, m=_shape(arr)[-1])


def triu_indices_from(arr: Any, k: int = 0) -> tuple:
    """The indices of the upper triangle of a 2-d array."""
    if _nd(arr) != 2:
        raise ValueError("input array must be 2-d")
    return _np.triu_indices(_shape(arr)[-2], k=k, m=_shape(arr)[-1])


def einsum_path(subscripts: str, *operands: Any, optimize: Any = "greedy",
                einsum_call: bool = False) -> Any:
    """NumPy's contraction order for operands of these shapes (a static query)."""
    return _np.einsum_path(subscripts, *[_np.empty(_shape(o), _dtype(o)) for o in operands],
                           optimize=optimize)

