"""Before list maps: a read of one index list that several iterations share is one read per
iteration again.

Tracing merges equal operations, so when two iterations of a loop over neighbour lists (or
CSR rows) read one array at equal lists, `X[nbrs[i]]` and `X[nbrs[j]]` with nbrs[i] ==
nbrs[j] (lists of length one collide often), they share one read. List maps (listmaps.py)
number the members by their reads, so the two iterations become one member: its
operations then read two different rows `X[i]` and `X[j]` or two different constants, which
one member cannot hold, and the whole group runs one by one (a graph of 200 nodes with two
repeated lists: 15x the hand-vectorized forward). Here each such read gets one copy per
iteration that uses it, before the lists are tiled; the final CSE merges what no group
took.

Which uses are one iteration's: a use that depends on another use of the same read (the
attention row `p @ X[nb]` after `s = X[nb] @ a`, `p` computed from `s`) is the same
iteration's; uses that depend on none of each other are taken as different iterations'.
Dependence is found in one forward pass that ORs bit sets (Python ints) of the uses each
value descends from: linear in the equations, times the words of the set; at most
MAX_USES uses are followed, else the graph is left as it is.
"""
from __future__ import annotations

from .. import primitives as P
from ..ir import Eqn, Graph, Var
from .lists import _list_read

MAX_USES = 4096  # uses of shared reads followed, at most (the bit sets' width)


def split_shared_reads(g: Graph, is_read) -> Graph:
    """g with each read `is_read` accepts that independent uses share copied per use class
    (module doc); g itself when there is none."""
    users: dict[Var, list[int]] = {}
    reads = {e.out: e for e in g.eqns if is_read(e)}
    if not reads:
        return g
    for i, e in enumerate(g.eqns):
        for a in set(e.inputs):
            if a in reads:
                users.setdefault(a, []).append(i)
    shared = {r: us for r, us in users.items() if len(us) > 1}
    n = sum(len(us) for us in shared.values())
    if not shared or n > MAX_USES:
        return g
    bit = {}
    for us in shared.values():
        for i in us:
            bit[i] = 1 << len(bit)
    tags: dict[Var, int] = {}
    seen: dict[int, int] = {}  # a use -> the uses its inputs descend from
    for i, e in enumerate(g.eqns):
        t = 0
        for a in e.inputs:
            if a.__class__ is Var:
                t |= tags.get(a, 0)
        if i in bit:
            seen[i] = t
            t |= bit[i]
        if t:
            tags[e.out] = t
    copy_at: dict[int, list[tuple[Var, Var]]] = {}  # a use's index -> (read, its copy)
    for r, us in shared.items():
        mine = 0  # (the bits of this read's uses: a use that descends from none of them
        for i in us:  # starts a class of its own at once, so that n independent iterations
            mine |= bit[i]  # sharing one list cost n steps here, not n^2 / 2)
        classes: list[list[int]] = []
        masks: list[int] = []  # (each class's uses as bits)
        for i in us:
            dep = seen[i] & mine
            home = next((k for k, m in enumerate(masks) if dep & m), None) if dep else None
            if home is None:
                classes.append([i])
                masks.append(bit[i])
            else:
                classes[home].append(i)
                masks[home] |= bit[i]
        for c in classes[1:]:
            v = Var(r.aval)
            for i in c:
                copy_at.setdefault(i, []).append((r, v))
    if not copy_at:
        return g
    return _rewired(g, reads, copy_at)


def _rewired(g: Graph, reads: dict[Var, Eqn], copy_at: dict[int, list]) -> Graph:
    """Each copy's read emitted just before the first use it serves; its uses read it."""
    out: list[Eqn] = []
    made: set[Var] = set()
    for i, e in enumerate(g.eqns):
        subs = copy_at.get(i)
        if subs:
            env = {}
            for r, v in subs:
                if v not in made:
                    d = reads[r]
                    out.append(Eqn(d.prim, d.inputs, d.params, v, d.src))
                    made.add(v)
                env[r] = v
            e = Eqn(e.prim, tuple(env.get(a, a) if a.__class__ is Var else a for a in e.inputs),
                    e.params, e.out, e.src)
        out.append(e)
    return g.replace(eqns=tuple(out))


def shared_list_reads(g: Graph) -> Graph:
    """split_shared_reads for reads at one static index list (`x[ids]`, see lists)."""
    return split_shared_reads(g, lambda e: e.prim is P.getitem and _list_read(e) is not None)
