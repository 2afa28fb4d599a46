"""The scans pass: recurrences that batching left sequential become loops and scans.

    roll (recur + roll)  ->  each loop: hoist, split, and recognize linear scans (loops)
    ->  batch again (the work hanging off a recurrence, now reading stacked values)

Runs in the forward pipeline after batching, and on the gradient graph (`loops`: the
backward loops the VJP of a loop emits get the same treatment, and the forward loop is shared
with its residual-storing copy). Before batching, `recurrences` (the pipeline's `roll` stage)
rolls on the trace the recurrences batching could not break (through a nonlinear function of
the carry, one copy of their step), so batching never walks their steps.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from .. import primitives as P
from ..ir import Graph, Var, dce
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


def _sequential(g: Graph, regions: list[Region]) -> list[Region]:
    """The recurrences of the trace batching would leave as they are: through a nonlinear
    function (tanh, exp, ...) of the carry, which is no sum, product, running extreme or
    buffer batching could turn into a reduction or a scan; and the only copies of their
    steps: some member's kind of operation (primitive, line, shape) occurs in these regions
    only. (Independent copies of one recurrence, one RNN per sequence, of which the regions
    found hold one, batching merges first: one recurrence on a batched state.)"""
    cands = [r for r in regions if _nonlinear(g, r)]
    if not cands:
        return []
    def kind(i: int) -> tuple:
        e = g.eqns[i]
        return (e.prim, e.src, e.out.aval)
    inside = Counter(kind(i) for r in cands for st in r.steps for i in st)
    total = Counter(k for k in map(kind, range(len(g.eqns))) if k in inside)
    return [r for r in cands if max(inside[kind(i)] / total[kind(i)] for i in r.steps[-1]) >= 0.9]


def _nonlinear(g: Graph, r: Region) -> bool:
    members = [g.eqns[i].prim for i in r.steps[0]]
    return any(p in _NONLINEAR for p in members) and not any(p in _WRITES for p in members)


MIN_CHAIN = 16  # nonlinear operations one after another, at least, for the search to run


def _nonlinear_depth(g: Graph) -> int:
    """The most nonlinear operations on one path of g (a recurrence of T steps through a
    tanh has T)."""
    nl = _NONLINEAR
    if sum(e.prim in nl for e in g.eqns) < MIN_CHAIN:
        return 0
    depth: dict[Var, int] = {}
    get = depth.get
    best = 0
    for e in g.eqns:  # (unrolled for one and two operands: this runs on every trace)
        ins = e.inputs
        if len(ins) == 2:
            d = max(get(ins[0], 0), get(ins[1], 0))
        elif len(ins) == 1:
            d = get(ins[0], 0)
        else:
            d = max([get(a, 0) for a in ins], default=0)
        if e.prim in nl:
            d += 1
        if d:
            depth[e.out] = d
            best = max(best, d)
    return best


def _emit_batched(body: Graph, *args: Any, **kwargs: Any) -> Any:
    """emit_loop of a step batched first: the independent work of one step (an LSTM's
    gates) merges as it would have before rolling."""
    return emit_loop(batch(body), *args, **kwargs)


def recurrences(g: Graph) -> Graph:
    """Roll, on the traced graph, the recurrences batching could not break: batching then
    works on what feeds and reads the loop, not on every step of a sequential chain. (Only
    a trace with a long chain of nonlinear operations is searched: the search costs about
    what batching does, and a short recurrence batching leaves is rolled after it.)"""
    if _nonlinear_depth(g) < MIN_CHAIN:
        return g
    rolled, notes = roll(g, _emit_batched, _sequential, rounds=12)
    if not notes:
        return g
    return rolled.replace(notes=rolled.notes + tuple(notes))


__all__ = ["loops", "recurrences", "scans"]
