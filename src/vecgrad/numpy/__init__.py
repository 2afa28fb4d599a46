"""`vecgrad.numpy`: the NumPy API for traced code (`import vecgrad.numpy as vnp`).

Every function accepts tracers, NumPy arrays and Python scalars. Outside a trace it computes
eagerly with NumPy. Plain `np.*` calls on traced arrays dispatch here through
`__array_ufunc__` and `__array_function__`.
"""
from __future__ import annotations

import sys as _sys

from numpy import e, euler_gamma, float32, float64, inf, int32, int64, nan, newaxis, pi  # noqa: F401

from ._base import array, asarray, astype, copy, zeros  # noqa: F401  (the package's own names)

# The order matters: later modules extend names of earlier ones (e.g. the elementwise
# functions of _ops become ufuncs with methods in _ufuncs).
# isort: off
from . import fft, lib, linalg
from ._ops import *
from ._creation import *
from ._contract import *
from ._ufuncs import *
from ._shape_ops import *
from ._tiling import *
from ._pad import *
from ._histdd import *
from ._stats import *
from ._scans import *
from ._nanstats import *
from ._choose import *
from ._gradient import *
from ._order import *
from ._indexing import *
from ._accumulate import *
from ._polynomial import *
from ._poly1d import *
from ._meta import *
from ._misc import *
from ._bits import *
from . import _ndarray, _ops
from ._accumulate import accumulate_at_read as _accumulate_at_read
from ._indexing import traced_getitem as _traced_getitem
from ._indexing import traced_row as _traced_row
from ._indexing import write_at_traced as _write_at_traced
from ._mixed_keys import write_basic_first as _write_basic_first
from ._masked import write_masked as _write_masked
from ._scatter import write_at_index_array as _write_at_index_array
from ._accumulate import wrote_at_read as _wrote_at_read
from ._ops import dispatch_function
from ._misc import traced_vectorize as _traced_vectorize
from ._series import SERIES as _SERIES
from ._ufuncs import dispatch_ufunc
from ..hooks import NUMPY as _NUMPY
# isort: on

# Tracing sits below this package: it calls these functions through hooks.NUMPY (as does
# odeint's VJP), and the ndarray methods of traced arrays are set on Tracer by
# _ndarray.install.
_NUMPY.fill(accumulate_at_read=_accumulate_at_read, asarray=asarray, astype=astype, c_=c_,
            concatenate=concatenate, r_=r_, dispatch_function=dispatch_function,
            dispatch_ufunc=dispatch_ufunc, poly1d=poly1d, ravel=ravel, require=require, reshape=reshape, series=_SERIES, stack=stack, sum=sum,
            traced_getitem=_traced_getitem, traced_row=_traced_row,
            vectorized_call=_traced_vectorize, where=where,
            write_at_index_array=_write_at_index_array, write_at_traced=_write_at_traced,
            write_basic_first=_write_basic_first, write_masked=_write_masked,
            wrote_at_read=_wrote_at_read, zeros=zeros)
_ops.NAMESPACES.update({"numpy": _sys.modules[__name__], "numpy.linalg": linalg,
                       "numpy.fft": fft, "numpy.lib.stride_tricks": lib.stride_tricks})
_ndarray.install(_sys.modules[__name__])

__all__ = [n for n in dir() if not n.startswith("_") and n not in (  # (the API, not its helpers)
    "builtins", "annotations", "Any", "P", "Tracer", "const_tracer", "ArrayLike",
    "dispatch_function", "dispatch_ufunc", "unsupported")]

# `from __future__ import annotations` binds this name; it is not part of the API.
del annotations
