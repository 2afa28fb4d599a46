"""The scans pass: recurrences that batching left sequential become loops and scans.

    roll (recur + roll)  ->  each loop: hoist, split, and recognize linear scans (loops)
    ->  batch again (the work hanging off a recurrence, now reading stacked values)

Runs in the forward pipeline after batching, and on the gradient graph (`loops`: the
backward loops the VJP of a loop emits get the same treatment, and the forward loop is shared
with its residual-storing copy).
"""
from __future__ import annotations

from ..ir import Graph, dce
from ..notes import Sequential, Unbatched
from .batching import batch
from .loops import emit_loop, optimize_loops, share_forward
from .prune import prune_loop_outputs
from .roll import roll


def scans(g: Graph) -> Graph:
    """Roll the recurrences of a batched graph into loops and scans (see module doc)."""
    rolled, notes = roll(g, emit_loop)
    if not notes:
        return g
    lines = {s for n in notes for s in n.lines}
    out = batch(rolled.replace(notes=()))  # the work reading the stacked values merges
    # What stays unmerged is what the second batching says (work that hung off a recurrence
    # merged now); nothing is said to be sequential at a line that was rolled.
    def stale(n: object) -> bool:  # (a split group is not stale: it is no recurrence)
        return type(n) is Unbatched or (isinstance(n, Sequential) and n.depends is True)
    # (what the first batching said was left unmerged at a rolled line, the second one
    # says again where it still is: the rest went into the loop)
    kept = tuple(n for n in rolled.notes if not stale(n) and not (
        isinstance(n, Unbatched) and n.src in lines))
    kept += tuple(n for n in out.notes if not (stale(n) and n.src in lines))
    return out.replace(notes=kept + tuple(notes))


def loops(g: Graph) -> Graph:
    """On a gradient graph: run the forward loops once, optimize every loop, and drop the
    stacked outputs nothing reads (residuals the optimized backward no longer needs)."""
    return prune_loop_outputs(dce(optimize_loops(share_forward(g))))


__all__ = ["loops", "scans"]
