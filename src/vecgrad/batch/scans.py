"""The scans pass: recurrences that batching left sequential become loops and scans.

    roll (recur + roll)  ->  each loop: hoist, split, and recognize linear scans (loops)
    ->  batch again (the work hanging off a recurrence, now reading stacked values)

Runs in the forward pipeline after batching, and on the gradient graph (`loops`: the
backward loops the VJP of a loop emits get the same treatment, and the forward loop is shared
with its residual-storing copy).
"""
from __future__ import annotations

from .. import primitives as P
from ..ir import Graph, dce
from ..notes import Sequential, Unbatched
from .batching import batch
from .loops import emit_loop, optimize_loops, share_forward
from .prune import prune_loop_outputs
from .recur import Region
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


_NONLINEAR = frozenset([P.exp, P.log, P.log1p, P.expm1, P.sqrt, P.tanh, P.sin, P.cos,
                        P.logistic, P.tan, P.sinh, P.cosh, P.arcsin, P.arccos, P.arctan,
                        P.arcsinh, P.arccosh, P.arctanh, P.log2, P.log10, P.exp2, P.cbrt,
                        P.reciprocal])
_WRITES = frozenset([P.setitem, P.setitem_add, P.concatenate, P.stack])


def _sequential(g: Graph, r: Region) -> bool:
    """Whether batching would leave this recurrence of the trace as it is: a nonlinear
    function (tanh, exp, ...) of the carry is no sum, product, running extreme or buffer
    batching could turn into a reduction or a scan; and it is the only copy of its step
    (independent copies, say one RNN per sequence, batching merges first: one loop on a
    batched state)."""
    members = [g.eqns[i].prim for i in r.steps[0]]
    return r.share >= 0.9 and any(p in _NONLINEAR for p in members) and \
        not any(p in _WRITES for p in members)


def recurrences(g: Graph) -> Graph:
    """Roll, on the traced graph, the recurrences batching could not break: batching then
    works on what feeds and reads the loop, not on every step of a sequential chain."""
    rolled, notes = roll(g, emit_loop, _sequential, rounds=12)
    if not notes:
        return g
    return rolled.replace(notes=rolled.notes + tuple(notes))


__all__ = ["loops", "recurrences", "scans"]
