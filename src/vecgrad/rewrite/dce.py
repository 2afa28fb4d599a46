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
            live.update(e.inputs)  # (constants too: they are never an equation's output)
    if len(keep) == len(g.eqns):
        return g
    return g.replace(eqns=tuple(reversed(keep)))
