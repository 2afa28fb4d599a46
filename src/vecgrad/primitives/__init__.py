"""Primitives: one record each (core.Primitive), holding its impl, shape rule, VJP rule and
batching rule; the rule conventions are in core's docstring. How a backend runs a primitive
is that backend's lowering table, never a field of the record."""
from __future__ import annotations

from .core import REGISTRY, NoGrad, Primitive, Sparse, register  # noqa: F401
from .cumulative import *
from .elementwise import *
from .fft import *
from .folds import *
from .gathers import *
from .linalg import *
from .loop import *
from .matfun import *
from .matrix import *
from .nn import *
from .odeint import *
from .pairwise import *
from .pickfolds import *
from .products import *
from .scans import *
from .segscans import *
from .signal import *
from .sorting import *
from .special import *
from .spectral import *
from .structural import *
from .ufuncs import *

# Tracing sits below the primitives: it names the ones it applies through hooks.PRIMITIVES,
# filled in here, and Python's operators on tracers are set by .operators.
# isort: off
from ..hooks import PRIMITIVES as _TRACED
from . import operators as _operators
# isort: on

_TRACED.fill(broadcast_to=broadcast_to, cast=cast, einsum=einsum, getitem=getitem, imag=imag,
             real=real, reshape=reshape, setitem=setitem, setitem_add=setitem_add,
             strided=strided, transpose=transpose)
_operators.install()
