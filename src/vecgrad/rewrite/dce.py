"""Dead-code elimination: drop equations whose results are never used."""
from __future__ import annotations

from ..ir import Graph, Var


def dce(g: Graph) -> Graph:
    """Keep only the equations that an output depends on."""
    live = {a for a in g.outputs if isinstance(a, Var)}
    keep = []
    for e in reversed(g.eqns):
        if e.out in live:
            keep.append(e)
            live.update(a for a in e.inputs if isinstance(a, Var))
    return g.replace(eqns=tuple(reversed(keep)))
