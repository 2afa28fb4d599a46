"""Graph -> Graph passes and the pipeline that runs them.

    trace -> cse -> batch -> scans -> simplify -> differentiate -> loops -> cse -> simplify
    -> strip -> relayout -> fuse -> codegen
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable

from ..ir import Graph, typecheck
from .batch import batch
from .cse import cse
from .dce import dce
from .markers import strip_ad_markers
from .reassociate import fuse_contractions
from .relayout import relayout
from .scans import loops, scans
from .simplify import fuse, simplify

Pass = Callable[[Graph], Graph]

# The trace is recorded hash-consed (tracing.Builder.emit), so it arrives with CSE done; the
# forward pipeline starts at batching. CSE runs as a pass after AD, which combines rules'
# output from many equations.
# `scans` rolls what batching left sequential (recurrences) into loops and scans; on the
# gradient graph, `loops` shares each forward loop with its residual-storing copy and
# optimizes the backward loops the same way.
FORWARD: list[tuple[str, Pass]] = [("batch", batch), ("scans", scans), ("simplify", simplify)]
BACKWARD: list[tuple[str, Pass]] = [("loops", loops), ("cse", lambda g: cse(dce(g))),
                                     ("simplify", simplify), ("reassociate", fuse_contractions)]
# After FORWARD (jit) or BACKWARD (grad): AD-only markers dropped, then fusions that only the
# backend understands.
LOWER: list[tuple[str, Pass]] = [("strip", strip_ad_markers), ("relayout", relayout),
                                 ("fuse", fuse)]


def run(g: Graph, passes: list[tuple[str, Pass]], times: dict[str, float] | None = None,
        stages: dict[str, Graph] | None = None, check: bool | None = None) -> Graph:
    """Run passes in order. `check` (default: env VECGRAD_TYPECHECK=1) typechecks after each."""
    check = os.environ.get("VECGRAD_TYPECHECK") == "1" if check is None else check
    for name, p in passes:
        t0 = time.perf_counter()
        g = p(g)
        if times is not None:
            times[name] = times.get(name, 0.0) + time.perf_counter() - t0
        if stages is not None:
            stages[name] = g
        if check:
            typecheck(g)
    return g


__all__ = ["BACKWARD", "FORWARD", "LOWER", "batch", "cse", "dce", "fuse", "loops", "relayout",
           "run", "scans", "simplify", "strip_ad_markers"]
