"""Shared pieces of the distributions: standardizing by loc and scale, NaN for invalid
parameters and -inf (log density) outside the support, as scipy.stats returns them."""
from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ... import numpy as vnp

LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
LOG_2PI = math.log(2 * math.pi)


def floats(*xs: Any) -> list:
    """The arguments as float arrays (integers become float64, as SciPy computes)."""
    out = []
    for x in xs:
        x = vnp.asarray(x)
        out.append(vnp.astype(x, np.float64) if np.dtype(x.dtype).kind in "biu" else x)
    return out


def standardize(x: Any, loc: Any, scale: Any) -> tuple:
    """(y, log(scale), valid): y = (x - loc) / scale, valid where scale > 0."""
    x, loc, scale = floats(x, loc, scale)
    valid = vnp.greater(scale, 0)
    s = vnp.where(valid, scale, 1.0)
    return (x - loc) / s, vnp.log(s), valid


def nan_unless(valid: Any, value: Any) -> Any:
    """value where the parameters are valid, NaN elsewhere."""
    return vnp.where(valid, value, np.nan)


def where_in(inside: Any, value: Any, outside: float) -> Any:
    """value inside the support, the constant `outside` elsewhere."""
    return vnp.where(inside, value, outside)


def _then(outer: Any, fn: Any, what: str) -> Any:
    """outer(fn(...)), named `what`, with fn's signature."""
    @functools.wraps(fn)
    def f(*args: Any, **kw: Any) -> Any:
        return outer(fn(*args, **kw))
    f.__name__ = f.__qualname__ = what
    f.__doc__ = f"{outer.__name__}({fn.__name__}(...))."
    return f


def exp_of(logf: Any, what: str) -> Any:
    """A density from its log: exp(logf(...))."""
    return _then(vnp.exp, logf, what)


def log_of(fn: Any, what: str) -> Any:
    """A log CDF (or log survival function) from the CDF: log(fn(...))."""
    return _then(vnp.log, fn, what)


def scipy_rvs(dist: str) -> Any:
    """`rvs` of scipy.stats.<dist> for concrete parameters (random draws cannot be traced:
    they would be frozen into the compiled code)."""
    def rvs(*args: Any, **kw: Any) -> Any:
        from ...errors import RandomStateError, _where, user_src
        from ...pytree import flatten
        if any(type(x).__name__ == "Tracer" for x in flatten((args, kw))[0]):
            src = user_src(2)
            raise RandomStateError(
                f"scipy.stats.{dist}.rvs was called on traced arrays{_where(src)}: the "
                "sample would be frozen into the compiled code. Draw it outside the traced "
                "function and pass it as an argument.", src)
        import scipy.stats
        return getattr(scipy.stats, dist).rvs(*args, **kw)
    rvs.__name__ = rvs.__qualname__ = "rvs"
    rvs.__doc__ = f"Random draws from scipy.stats.{dist} (concrete parameters only)."
    return rvs
