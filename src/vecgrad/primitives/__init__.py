"""Primitives: one record each (core.Primitive), holding its impl, shape rule, VJP rule and
batching rule; the rule conventions are in core's docstring. How a backend runs a primitive
is that backend's lowering table, never a field of the record."""
from __future__ import annotations

from .core import REGISTRY, NoGrad, Primitive, Sparse, register  # noqa: F401
from .cumulative import *
from .elementwise import *
from .fft import *
from .gathers import *
from .linalg import *
from .loop import *
from .matfun import *
from .matrix import *
from .nn import *
from .odeint import *
from .scans import *
from .sorting import *
from .special import *
from .spectral import *
from .structural import *
from .ufuncs import *
