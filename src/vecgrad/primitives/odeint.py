"""ODE solutions (scipy.integrate.odeint) as a primitive, differentiated by the adjoint method.

The right-hand side `func(y, t, *args)` is the user's Python function (written with
vecgrad.numpy, or NumPy calls on its arguments): a static parameter of the equation, compiled
with vecgrad once per signature when the solve runs. The VJP emits IR, as every rule does: one
backward `odeint` per interval between output times, of the system augmented with the
adjoint state (Pontryagin's method, as autograd's grad_odeint), whose right-hand side calls
`vg.vjp(func)`. So the VJP is differentiable in turn (grad of grad).

The vecgrad API and vecgrad.numpy sit above the primitives: this module calls them through
hooks.API and hooks.NUMPY, which they fill in when imported.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ShapeError
from ..hooks import API, NUMPY
from ..ir import Aval
from .core import Primitive, register
from .elementwise import real_only
from .structural import NotBatchable

__all__ = ["odeint"]


def _solve(rhs: Any, y0: np.ndarray, t: np.ndarray, kw: tuple) -> np.ndarray:
    try:
        from scipy.integrate import odeint as sp_odeint
    except ImportError:
        raise ImportError("odeint needs SciPy: pip install 'vecgrad[scipy]'") from None
    return sp_odeint(rhs, y0, t, **dict(kw))


def _odeint_impl(y0: np.ndarray, t: np.ndarray, *args: np.ndarray, func: Any,
                 kw: tuple) -> np.ndarray:
    f = API.jit(func)  # (compiled once per signature; later solves reuse it)
    dt = np.result_type(y0, t, *args, np.float64)

    def rhs(y: np.ndarray, tt: float) -> np.ndarray:
        return np.asarray(f(y.astype(dt), np.asarray(tt, dt), *args), dt)
    return _solve(rhs, np.asarray(y0, dt), np.asarray(t, dt), kw)


def _odeint_shape(y0: Aval, t: Aval, *args: Aval, func: Any, kw: tuple) -> Aval:
    real_only("odeint", y0, t, *args, why="scipy.integrate.odeint solves real systems")
    if y0.ndim != 1 or t.ndim != 1:
        raise ShapeError(f"odeint: y0 (shape {y0.shape}) and t (shape {t.shape}) must be "
                         "one-dimensional")
    return Aval((t.shape[0],) + y0.shape, np.result_type(y0.dtype, t.dtype, np.float64))


_AUGMENTED: dict[Any, Any] = {}  # func -> its augmented system (one object: compiled once)


def augmented(func: Any) -> Any:
    """The right-hand side of the adjoint system of dy/dt = func(y, t, *args): the state is
    (y, a, a_t, a_args) and its derivative (func, -a^T df/dy, -a^T df/dt, -a^T df/dargs)."""
    aug = _AUGMENTED.get(func)
    if aug is None:
        def aug(state: Any, tt: Any, *args: Any) -> Any:
            d = (state.shape[0] - 1 - sum(math.prod(np.shape(a)) for a in args)) // 2
            y, adj = state[:d], state[d:2 * d]
            dy, vjp_fn = API.vjp(func, y, tt, *args)
            cts = vjp_fn(-adj)
            parts = [dy, cts[0], NUMPY.reshape(cts[1], (1,))]
            parts += [NUMPY.ravel(c) if c is not None else np.zeros(math.prod(np.shape(a)))
                      for c, a in zip(cts[2:], args)]
            return NUMPY.concatenate(parts)
        _AUGMENTED[func] = aug
    return aug


def _odeint_vjp(g: Any, ans: Any, y0: Any, t: Any, *args: Any, func: Any, kw: tuple) -> tuple:
    n_t, d = ans.shape
    sizes = [math.prod(a.shape) for a in args]
    aug = augmented(func)
    adj_y, adj_t0 = g[-1], NUMPY.zeros((1,))
    adj_args = NUMPY.zeros((sum(sizes),))
    adj_times = []
    for i in range(n_t - 1, 0, -1):
        cur = NUMPY.sum(func(ans[i], t[i], *args) * g[i])  # moving t_i moves y(t_i) along y'
        adj_times.append(cur)
        adj_t0 = adj_t0 - cur
        state = NUMPY.concatenate([ans[i], adj_y, adj_t0, adj_args])
        back = odeint(state, NUMPY.stack([t[i], t[i - 1]]), *args, func=aug, kw=kw)[1]
        adj_y, adj_t0, adj_args = back[d:2 * d] + g[i - 1], back[2 * d:2 * d + 1], \
            back[2 * d + 1:]
    times = NUMPY.concatenate([adj_t0, NUMPY.stack(adj_times[::-1])]) if adj_times else adj_t0
    out, start = [], 0
    for a, n in zip(args, sizes):
        out.append(NUMPY.reshape(adj_args[start:start + n], a.shape))
        start += n
    return (adj_y, times, *out)


def _no_batch(n: int, batched: tuple, *xs: Any, **params: Any) -> Any:
    raise NotBatchable("odeint solves one system per call")


odeint = register(Primitive("odeint", _odeint_impl, _odeint_shape, _odeint_vjp, _no_batch))
