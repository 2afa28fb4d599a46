"""The NumPy backend's lowering table, keyed by primitive name (see lowering.Lowering);
a primitive without an entry runs its impl."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...ir import Eqn
from . import gathers, reductions, structural
from .loop import lower_loop
from .lowering import PLAIN, Lowering

LOWERINGS: dict[str, Lowering] = {
    **structural.LOWERINGS, **gathers.LOWERINGS, **reductions.LOWERINGS,
    "loop": Lowering(lower=lower_loop),
}


def entry(prim: Any) -> Lowering:
    """The table's entry for a primitive (PLAIN where it has none)."""
    return LOWERINGS.get(prim.name, PLAIN)


def lowered(e: Eqn) -> Callable[..., Any]:
    """The callable the generated code runs for equation e (its params bound)."""
    low = entry(e.prim)
    lower = low.lower or e.prim.lower  # (contractions and relayout: still on the record)
    if lower is not None:
        return lower([a.aval for a in e.inputs], **e.params)
    impl, params = e.prim.impl, e.params
    return impl if not params else lambda *xs: impl(*xs, **params)


def is_view(prim: Any) -> bool:
    """Whether this backend may return a view of the operand (the result owns no memory)."""
    return entry(prim).view


__all__ = ["LOWERINGS", "Lowering", "entry", "is_view", "lowered"]
