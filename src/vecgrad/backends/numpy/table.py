"""The NumPy backend's lowering table, keyed by primitive name (see lowering.Lowering);
a primitive without an entry runs its impl."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import primitives as P
from ...ir import Aval, Eqn
from . import (
    accumulate,
    clamp,
    gathers,
    logaddexp,
    pairwise,
    planner,
    reductions,
    rows,
    select,
    signal,
    structural,
    transpose,
)
from .lowering import PLAIN, Lowering

LOWERINGS: dict[str, Lowering] = {
    **structural.LOWERINGS, **gathers.LOWERINGS, **reductions.LOWERINGS,
    **planner.LOWERINGS, **transpose.LOWERINGS, **signal.LOWERINGS,
    **pairwise.LOWERINGS, **accumulate.LOWERINGS,
}  # (and "loop", which generates its step's code with codegen: set by the package)


def entry(prim: Any) -> Lowering:
    """The table's entry for a primitive (PLAIN where it has none)."""
    return LOWERINGS.get(prim.name, PLAIN)


def lowered(e: Eqn) -> Callable[..., Any]:
    """The callable the generated code runs for equation e (its params bound)."""
    if e.prim is P.where:  # (a select of x or +0.0: a bit mask, see select)
        fn = select.zero_select(e)
        if fn is not None:
            return fn
    if e.prim is P.maximum or e.prim is P.minimum:  # (a scalar bound: the clip loop)
        fn = clamp.clamp(e)
        if fn is not None:
            return fn
    if e.prim is P.logaddexp:  # (NumPy's scalar loop: its SIMD exp and log1p instead)
        fn = logaddexp.logaddexp(e)
        if fn is not None:
            return fn
    return lower(e.prim, e.params, [a.aval for a in e.inputs])


def lower(prim: Any, params: dict, avals: list[Aval]) -> Callable[..., Any]:
    """The callable the generated code runs for `prim` with these params on operands of
    these avals."""
    make = entry(prim).lower
    if make is not None:
        return make(avals, **params)
    impl = prim.impl
    if params:
        return lambda *xs: impl(*xs, **params)
    return (prim.elementwise and rows.plan(impl, avals)) or impl


def is_view(prim: Any) -> bool:
    """Whether this backend may return a view of the operand (the result owns no memory)."""
    return entry(prim).view


__all__ = ["LOWERINGS", "Lowering", "entry", "is_view", "lower", "lowered"]
