"""`vecgrad.scipy.integrate`: scipy.integrate.odeint for traced code, differentiable in the
initial state, the output times and the extra arguments (by the adjoint method)."""
from __future__ import annotations

from typing import Any

import numpy as _np

from .. import numpy as vnp
from .. import primitives as P
from ..errors import unsupported
from ..pytree import flatten, unflatten

__all__ = ["odeint"]

_OPTIONS = ("rtol", "atol", "h0", "hmax", "hmin", "mxstep", "mxordn", "mxords")


def odeint(func: Any, y0: Any, t: Any, args: tuple = (), Dfun: Any = None, col_deriv: int = 0,
           full_output: int = 0, ml: Any = None, mu: Any = None, tfirst: bool = False,
           **options: Any) -> Any:
    """Integrate dy/dt = func(y, t, *args) from y(t[0]) = y0 and return y at the times t
    (shape (len(t), len(y0))), as scipy.integrate.odeint. `func` is written with vecgrad.numpy
    (or plain NumPy calls on its arguments); it is compiled once per signature. Gradients
    flow to y0, t and args; the solver's `rtol`/`atol` bound their accuracy too. `args` may
    hold pytrees (tuples, lists, dicts) of arrays, such as a network's list of (W, b) layers,
    as in autograd."""
    if Dfun is not None or full_output or ml is not None or mu is not None:
        raise unsupported("scipy.integrate.odeint with Dfun, full_output or banded ml/mu")
    bad = sorted(set(options) - set(_OPTIONS))
    if bad:
        raise unsupported(f"scipy.integrate.odeint with {bad}")
    if not isinstance(args, tuple):
        args = (args,)
    leaves, td = flatten(_numbers_as_arrays(args))
    rhs = _rhs(func, td, tfirst)
    kw = tuple(sorted((k, float(v) if k in ("rtol", "atol", "h0", "hmax", "hmin") else int(v))
                      for k, v in options.items() if v is not None))
    y0 = vnp.asarray(y0)
    if vnp.ndim(y0) == 0:
        y0 = vnp.reshape(y0, (1,))
    arrays = [vnp.asarray(a) for a in leaves]
    t = vnp.asarray(t)
    if _np.dtype(t.dtype).kind != "f":
        t = vnp.astype(t, _np.float64)
    return P.odeint(y0, t, *arrays, func=rhs, kw=kw)


_RHS: dict[Any, Any] = {}  # (func, args' treedef, tfirst) -> one function, compiled once


def _rhs(func: Any, td: Any, tfirst: bool) -> Any:
    """func as a right-hand side rhs(y, t, *leaves) of the flattened extra arguments."""
    if td == ("tuple", (("*",),) * len(td[1])) and not tfirst:
        return func  # (the arguments are arrays already)
    key = (func, td, tfirst)
    rhs = _RHS.get(key)
    if rhs is None:
        def rhs(y: Any, tt: Any, *leaves: Any) -> Any:
            a = unflatten(td, leaves)
            return func(tt, y, *a) if tfirst else func(y, tt, *a)
        rhs.__name__ = getattr(func, "__name__", "rhs")
        _RHS[key] = rhs
    return rhs


def _numbers_as_arrays(x: Any) -> Any:
    """Python numbers inside the containers of x as arrays (differentiable, like arrays)."""
    if isinstance(x, (int, float, complex)) and not isinstance(x, bool):
        return _np.asarray(x)
    if type(x) in (tuple, list):
        return type(x)(_numbers_as_arrays(c) for c in x)
    if type(x) is dict:
        return {k: _numbers_as_arrays(c) for k, c in x.items()}
    return x
