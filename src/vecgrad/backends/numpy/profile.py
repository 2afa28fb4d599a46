"""Per-equation timing of a graph: where the time of a compiled function goes."""
from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ...ir import Const, Eqn, Graph
from .table import lowered


def profile_graph(g: Graph, args: Sequence[Any], repeat: int = 5) -> list[tuple[Eqn, float]]:
    """Run `g` one equation at a time on `args`; returns (eqn, min seconds) per equation.
    Timings include NumPy's call overhead, as the generated code pays it too."""
    fns = [lowered(e) for e in g.eqns]
    best = [float("inf")] * len(g.eqns)
    for _ in range(repeat):
        env: dict = dict(zip(g.inputs, args))
        for i, (e, fn) in enumerate(zip(g.eqns, fns)):
            ins = [a.value if isinstance(a, Const) else env[a] for a in e.inputs]
            t0 = time.perf_counter()
            env[e.out] = fn(*ins)
            best[i] = min(best[i], time.perf_counter() - t0)
    return list(zip(g.eqns, best))
