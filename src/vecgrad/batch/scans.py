"""The scans pass: recurrences that batching left sequential become loops and scans.

    roll (recur + roll)  ->  each loop: hoist, split, and recognize linear scans (loops)
    ->  batch again (the work hanging off a recurrence, now reading stacked values)

Runs in the forward pipeline after batching, and on the gradient graph (`loops`: the
backward loops the VJP of a loop emits get the same treatment, and the forward loop is shared
with its residual-storing copy). Before batching, `recurrences` (the pipeline's `roll` stage)
rolls on the trace the recurrences batching could not break (through a nonlinear function of
the carry, one copy of their step; linear ones that scale a scalar carry, or an array carry by constants), so batching never
walks their steps.
"""
from __future__ import annotations

from collections import Counter
from operator import itemgetter
from typing import Any

from .. import primitives as P
from ..ir import Const, Graph, Var, dce
from ..notes import Sequential, Unbatched
from .batching import batch
from .census import census
from .loops import emit_loop, optimize_loops
from .loopshare import share_forward
from .prune import prune_loop_outputs
from .recur import Region
from .roll import roll, step_order


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
# A buffer's next version. (A stack or concatenate is a new array: a step that assembles a
# vector from scalars of its carry, a force from a position's components or a nested
# gradient's inlined components, is a pure step, rolled like x * tanh(x[0]).)
_WRITES = frozenset([P.setitem, P.setitem_add])


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
    return any(p in _NONLINEAR for p in members) and not _carries_buffer(g, r)


def _carries_buffer(g: Graph, r: Region) -> bool:
    """Whether a write of r's step updates a buffer the step carries (its base the previous
    step's, or a write of this step on one): batching turns those into reductions and
    scans. A write into an array the step makes or reads from outside (the zeros a nested
    gradient's scalar reads scatter into) is a new array, a pure step like a stack."""
    carried: set[int] = set()
    for j in step_order(r.sig):
        if g.eqns[r.steps[0][j]].prim in _WRITES:
            c = r.sig[j][0]
            if c[0] == "p" or c[0] == "g" and c[1] in carried:
                carried.add(j)
    return bool(carried)


_SCALING = frozenset([P.mul, P.div])
MIN_SCALED = 32  # products one after another, at least, for the search for decays


def _scaled(g: Graph, regions: list[Region]) -> list[Region]:
    """Linear recurrences whose step scales a carry (decays, gains, cascades of filters):
    batching can merge no two of their steps, so it walks them one group per operation
    per step (8,000 groups for a cascade of three filters over 4,000 steps) before `scans`
    rolls them up again. Rolled here, the loop's step is recognized as scans at once.
    (Sum chains, which batching makes one reduction, are left to it.) Scalar states, and
    array states whose gains are constants (`constant_gains`)."""
    def scales(r: Region) -> bool:
        return any(g.eqns[i].prim in _SCALING and any(c[0] != "x" for c in r.sig[j])
                   for j, i in enumerate(r.steps[0]))  # (a product on the cycle)
    def scalars(r: Region) -> bool:
        return all(not g.eqns[i].out.aval.shape and g.eqns[i].prim not in _WRITES
                   for i in r.steps[0])
    def constant_gains(r: Region) -> bool:
        # an array state scaled by constants only (a running mean's 1 / (t + 1), a decay):
        # batching would merge its steps' independent work across the cut between two
        # steps (Welford's x[t + 1] - mu and x[t] - mu, one operation on x[t:t+2]), which
        # the scan recognized after it must stack and permute back. A gain computed from
        # other values (an online softmax's exp(m - m')) is left to batching, which finds
        # the running extreme it telescopes with; so is a cycle through anything but
        # elementwise operations (a buffer's rows at traced positions: batching makes
        # those segment sums).
        # (MIN_SCALED steps at least: a path the gate counts; shorter ones batching walks
        # in a few groups anyway)
        steps = [g.eqns[i] for i in r.steps[0]]
        return r.length >= MIN_SCALED and not _coupled(r) and \
            all(e.prim.elementwise for e in steps) and all(
            e.prim not in _SCALING or all(isinstance(a, Const) for a, c in zip(e.inputs, r.sig[j])
                                          if c[0] == "x") for j, e in enumerate(steps))
    return [r for r in regions if (scalars(r) or constant_gains(r)) and
            not _nonlinear(g, r) and scales(r)]


def _coupled(r: Region) -> bool:
    """Whether two carries of r's step each read the other's previous value (a rotation's x
    and y): batching merges their products into one stacked operation that `scans` makes one
    linear_scan; rolled first, the loop keeps them apart."""
    reads: list[set] = []  # the previous members each member reads, through its own step
    for sig in r.sig:
        got: set = set()
        for c in sig:
            if c[0] == "p":
                got.add(c[1])
            elif c[0] == "g":
                got |= reads[c[1]]
        reads.append(got)
    return any(i in reads[j] for j in range(len(reads)) for i in reads[j] - {j}
               if j in reads[i])


_PRIM = itemgetter(0)  # an equation's primitive
MIN_CHAIN = 16  # nonlinear operations one after another, at least, for the search to run


def _nonlinear_depth(g: Graph) -> int:
    """The most nonlinear operations on one path of g (a recurrence of T steps through a
    tanh has T)."""
    return _depth(g, _NONLINEAR, MIN_CHAIN)


def _depth(g: Graph, nl: frozenset, least: int, on: Any = None) -> int:
    """The most operations of `nl` on one path of g that a region `recurrences` keeps could
    lie on; 0 where g has fewer than `least` of them. With `on` (the decays of `_scaled`)
    only equations `on` accepts count, and a path runs through no write: a path between two
    steps runs inside them. (Paths through a buffer's versions, a write and a read after it,
    chain every update of the buffer, however independent: counted, they sent a scatter loop
    of scalar products to the search, which found nothing in a fifth of the whole compile.
    So a step that writes into an array of its own rolls here where a path through it
    avoids the writes; one whose every path runs through a write is rolled by `scans` after
    batching, which splits the array into the scalars a gradient's linear scan reads.)"""
    eqns = g.eqns
    # (an upper bound first, in C: most traces hold fewer than `least` such operations, and
    # then the walk below, two Python passes over every equation, is not needed)
    if nl.isdisjoint(census(g)) or sum(map(nl.__contains__, map(_PRIM, eqns))) < least:
        return 0
    ok = [e.prim not in _WRITES and (on is None or on(e)) for e in eqns]
    counts = [k and e.prim in nl for e, k in zip(eqns, ok)]
    if sum(counts) < least:
        return 0
    depth: dict[Var, int] = {}
    get = depth.get
    best = 0
    for e, c, k in zip(eqns, counts, ok):  # (unrolled for one and two operands: this runs
        if not k:  # on every trace)
            continue
        ins = e.inputs
        if len(ins) == 2:
            d = max(get(ins[0], 0), get(ins[1], 0))
        elif len(ins) == 1:
            d = get(ins[0], 0)
        else:
            d = max([get(a, 0) for a in ins], default=0)
        if c:
            d += 1
        if d:
            depth[e.out] = d
            best = max(best, d)
    return best


def _decay_step(e: Any) -> bool:
    """What a step of `_scaled`'s regions holds: scalar results, or elementwise operations
    on arrays (`constant_gains`)."""
    return not e.out.aval.shape or e.prim.elementwise


def scaled_gate(g: Graph) -> bool:
    """Whether `recurrences` searches g for the decays `_scaled` keeps: a chain of at least
    MIN_SCALED products on a path such a region's steps could hold."""
    return _depth(g, _SCALING, MIN_SCALED, _decay_step) >= MIN_SCALED


def _emit_batched(body: Graph, *args: Any, **kwargs: Any) -> Any:
    """emit_loop of a step batched first: the independent work of one step (an LSTM's
    gates) merges as it would have before rolling."""
    return emit_loop(batch(body), *args, **kwargs)


def recurrences(g: Graph) -> Graph:
    """Roll, on the traced graph, the recurrences batching could not break: batching then
    works on what feeds and reads the loop, not on every step of a sequential chain. (Only
    a trace with a long chain of nonlinear operations, or of products, is
    searched: the search costs about what batching does, and a short recurrence batching
    leaves is rolled after it.)"""
    if _nonlinear_depth(g) >= MIN_CHAIN:
        keep = _sequential
    elif scaled_gate(g):
        keep = _scaled
    else:
        return g
    rolled, notes = roll(g, _emit_batched, keep, rounds=12)
    if not notes:
        return g
    return rolled.replace(notes=rolled.notes + tuple(notes))


__all__ = ["loops", "recurrences", "scans"]
