"""`custom_jvp` (JAX's API): a `custom_vjp` function whose bwd is the VJP (the transpose) of
the user's JVP rule with respect to its tangents, computed with `vg.vjp`: so it sits above
the API, while custom_vjp (custom.py) sits below the backends, which lower its primitive."""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from . import numpy as vnp
from .custom import custom_vjp
from .errors import ArgumentError, _where, user_src
from .linear_maps import vjp
from .pytree import flatten, unflatten
from .tracing import current_builder

__all__ = ["custom_jvp"]


class custom_jvp:
    """A function with a user-defined JVP, as `jax.custom_jvp`:

        @vg.custom_jvp
        def f(x): ...
        @f.defjvp
        def f_jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            return f(x), <linear in t>

    Reverse mode uses the transpose of the rule's tangent map (its VJP with respect to the
    tangents), so grad, vjp, jacrev and hessian all follow the rule; `nondiff_argnums` as in
    custom_vjp (passed to the rule first)."""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        self._vjp = custom_vjp(fun, nondiff_argnums)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Callable | None = None
        functools.update_wrapper(self, fun)

    def defjvp(self, jvp: Callable) -> Callable:
        """Set the JVP rule `jvp(*nondiff, primals, tangents) -> (out, tangent_out)`."""
        self.jvp = jvp
        nd = self.nondiff_argnums

        def fwd(*args: Any) -> Any:
            return self.fun(*args), tuple(a for i, a in enumerate(args) if i not in nd)

        def bwd(*rest: Any) -> tuple:
            *static, primals, ct = rest

            def tangent_map(*ts: Any) -> Any:
                return jvp(*static, primals, ts)[1]
            zeros = [_zeros_like(x) for x in primals]
            _, pull = vjp(tangent_map, *zeros)
            return pull(ct)
        self._vjp.defvjp(fwd, bwd)
        return jvp

    def __call__(self, *args: Any) -> Any:
        if self.jvp is None and current_builder() is not None:
            raise ArgumentError(f"custom_jvp function {self.__name__} was called without a "
                                f"rule: decorate one with @{self.__name__}.defjvp"
                                f"{_where(user_src())}")
        return self._vjp(*args)


def _zeros_like(x: Any) -> Any:
    leaves, td = flatten(x)
    return unflatten(td, [vnp.zeros_like(v) for v in leaves])
