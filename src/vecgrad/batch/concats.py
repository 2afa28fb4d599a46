"""Growing arrays: `out = np.append(out, v)` or `acc = np.concatenate([acc, piece])` in a
loop traces a chain of concatenations, each copying everything before it (quadratic work,
and a different shape each step, so batching cannot merge them). Where each link is read
only by the next one along the same axis, the chain is the one concatenation of all its
pieces,

    concatenate(concatenate(a, b), c) = concatenate(a, b, c)     (the inner read once)

whose pieces, made one per iteration, batching then reads as one stacked value. Each link
is spliced once (a link records its parts, the inner ones by reference, and only the
surviving concatenations are flattened), so the pass is linear in the trace.
"""
from __future__ import annotations

from typing import Any

from .. import primitives as P
from ..ir import Eqn, Graph, Var, uses


def growing_concats(g: Graph) -> bool:
    """Whether some concatenation reads another one along its own axis (a cheap gate)."""
    made = {e.out: e.params["axis"] for e in g.eqns if e.prim is P.concatenate}
    return len(made) > 1 and any(
        e.prim is P.concatenate and any(made.get(a) == e.params["axis"] for a in e.inputs
                                        if isinstance(a, Var)) for e in g.eqns)


def flatten_concats(g: Graph) -> Graph:
    """g with every chain of concatenations whose inner links are read once (by the next
    link, along the same axis) written as one concatenation (see module doc)."""
    n_uses = uses(g)
    outs = set(g.outputs)
    axis: dict[Var, Any] = {}
    parts: dict[Var, list] = {}  # a link's inputs, the spliced inner links as Vars
    inner: set[Var] = set()
    for e in g.eqns:
        if e.prim is not P.concatenate:
            continue
        ax = e.params["axis"]
        axis[e.out] = ax
        ps = []
        for a in e.inputs:
            if isinstance(a, Var) and axis.get(a) == ax and n_uses[a] == 1 and a not in outs:
                inner.add(a)
            ps.append(a)
        parts[e.out] = ps
    if not inner:
        return g
    eqns = []
    for e in g.eqns:
        if e.prim is P.concatenate and e.out not in inner and any(a in inner for a in e.inputs
                                                                   if isinstance(a, Var)):
            e = Eqn(e.prim, tuple(_flat(e.out, parts, inner)), e.params, e.out, e.src)
        eqns.append(e)
    return g.replace(eqns=tuple(eqns))


def _flat(v: Var, parts: dict[Var, list], inner: set[Var]) -> list:
    """The pieces of link v in order, inner links expanded (an explicit stack: chains are
    as long as loops)."""
    out: list = []
    todo = list(reversed(parts[v]))
    while todo:
        a = todo.pop()
        if isinstance(a, Var) and a in inner:
            todo.extend(reversed(parts[a]))
        else:
            out.append(a)
    return out
