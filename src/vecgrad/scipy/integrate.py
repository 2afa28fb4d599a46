"""`vecgrad.scipy.integrate`: scipy.integrate.odeint for traced code, differentiable in the
initial state, the output times and the extra arguments (by the adjoint method)."""
from __future__ import annotations

from typing import Any

import numpy as _np

from .. import numpy as vnp
from .. import primitives as P
from ..errors import unsupported

__all__ = ["odeint"]

_OPTIONS = ("rtol", "atol", "h0", "hmax", "hmin", "mxstep", "mxordn", "mxords")


def odeint(func: Any, y0: Any, t: Any, args: tuple = (), Dfun: Any = None, col_deriv: int = 0,
           full_output: int = 0, ml: Any = None, mu: Any = None, tfirst: bool = False,
           **options: Any) -> Any:
    """Integrate dy/dt = func(y, t, *args) from y(t[0]) = y0 and return y at the times t
    (shape (len(t), len(y0))), as scipy.integrate.odeint. `func` is written with vecgrad.numpy
    (or plain NumPy calls on its arguments); it is compiled once per signature. Gradients
    flow to y0, t and args; the solver's `rtol`/`atol` bound their accuracy too."""
    if Dfun is not None or full_output or ml is not None or mu is not None:
        raise unsupported("scipy.integrate.odeint with Dfun, full_output or banded ml/mu")
    bad = sorted(set(options) - set(_OPTIONS))
    if bad:
        raise unsupported(f"scipy.integrate.odeint with {bad}")
    if not isinstance(args, tuple):
        args = (args,)
    rhs = (lambda y, tt, *a: func(tt, y, *a)) if tfirst else func
    kw = tuple(sorted((k, float(v) if k in ("rtol", "atol", "h0", "hmax", "hmin") else int(v))
                      for k, v in options.items() if v is not None))
    y0 = vnp.asarray(y0)
    if vnp.ndim(y0) == 0:
        y0 = vnp.reshape(y0, (1,))
    arrays = [vnp.asarray(a) for a in args]
    t = vnp.asarray(t)
    if _np.dtype(t.dtype).kind != "f":
        t = vnp.astype(t, _np.float64)
    return P.odeint(y0, t, *arrays, func=rhs, kw=kw)
