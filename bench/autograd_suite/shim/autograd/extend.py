"""autograd.extend: user-defined primitives and their VJPs, as vecgrad custom_vjp functions."""
from __future__ import annotations

from typing import Any

import vecgrad as vg


def primitive(f: Any) -> Any:
    """A function whose gradient defvjp will give (through vg.custom_vjp)."""
    custom = getattr(vg, "custom_vjp", None)
    if custom is None:
        raise NotImplementedError("vecgrad has no custom_vjp yet")
    wrapped = custom(f)
    wrapped._ag_fun = f
    return wrapped


def defvjp(fun: Any, *makers: Any, argnums: Any = None) -> None:
    """makers[k](ans, *args) -> (g -> cotangent of args[argnums[k]])."""
    argnums = list(argnums or range(len(makers)))
    f = fun._ag_fun

    def fwd(*args: Any) -> Any:
        ans = f(*args)
        return ans, (ans, args)

    def bwd(res: Any, g: Any) -> tuple:
        ans, args = res
        cts: list = [None] * len(args)
        for k, mk in zip(argnums, makers):
            if mk is not None and k < len(args):
                cts[k] = mk(ans, *args)(g)
        return tuple(cts)
    fun.defvjp(fwd, bwd)


Box = VSpace = object  # autograd's internals: no counterpart in vecgrad
