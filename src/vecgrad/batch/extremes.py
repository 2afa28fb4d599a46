"""Before batching: chains of scatter-maxima (and minima) into one buffer are one.

`buf[b] = np.maximum(buf[b], v)` in a loop, at traced positions b (`for a, b in zip(src, dst)`)
or at Python-int positions that repeat (`pooled[c] = np.maximum(pooled[c], h[i] @ W)` over a
list of cluster ids), is a chain of writes, each reading the previous one's result: a
recurrence as traced (a rolled loop of 3,000 steps: 50,000x the hand-vectorized
`np.maximum.at`; or one round of the batch pass per repeat of a position: 31x). Maximum and
minimum are associative and commutative and exact, so the chain is one scatter:

    scatter_max(scatter_max(x, v_1, i_1), v_2, i_2) = scatter_max(x, [v_1, v_2], [i_1, i_2])

with the same value as the loop's order, NaNs included (np.maximum.at propagates them as
np.maximum does). Its gradient shares a cotangent among the winners of a position, as np.max
does (the loop's own chain rule at an exact tie between two steps gives 0.5 to each of the
two, a different subgradient; ties of floats computed apart are rare).

The tracer writes a traced-position update as `scatter_reduce_along` (numpy/_indexing.py);
here a basic-index update `x.at[c].set(maximum(x[c], v))` becomes one too, and links whose
result only the next link reads are joined: values and positions concatenated along the
axis, so the per-step values batch as one operation feeding one scatter.
"""
from __future__ import annotations

from .. import primitives as P
from ..ir import Eqn, Graph, Params, Var, uses

_OPS = ("maximum", "minimum")


def scatter_extremes(g: Graph) -> bool:
    """Whether g holds a scatter-max or -min (a quick look)."""
    srd = P.scatter_reduce_along
    return any(e.prim is srd and e.params["op"] in _OPS for e in g.eqns)


def join_extremes(g: Graph) -> Graph:
    """Chains of scatter-maxima (or minima) into one buffer, each link read only by the
    next, become one scatter of the concatenated values and positions (module doc)."""
    srd = P.scatter_reduce_along
    n_uses = uses(g)
    outs = {a for a in g.outputs if a.__class__ is Var}
    defs: dict[Var, Eqn] = {}
    links: dict[Var, list[Eqn]] = {}  # a link's result -> the chain's links up to it
    absorbed: set[int] = set()
    for e in g.eqns:
        defs[e.out] = e
        if e.prim is not srd or e.params["op"] not in _OPS:
            continue
        inner = defs.get(e.inputs[0])
        if inner is not None and inner.out in links and n_uses.get(inner.out) == 1 and \
                inner.out not in outs and inner.params == e.params:
            links[e.out] = links.pop(inner.out) + [e]
            absorbed.add(id(inner))
        else:
            links[e.out] = [e]
    if not absorbed:
        return g
    eqns: list[Eqn] = []
    for e in g.eqns:
        if id(e) in absorbed:
            continue
        chain = links.get(e.out) if e.prim is srd else None
        if chain is None or len(chain) == 1:
            eqns.append(e)
            continue
        axis = e.params["axis"]
        parts = []
        for k in (1, 2):
            ins = tuple(c.inputs[k] for c in chain)
            shape = list(ins[0].aval.shape)
            shape[axis] = sum(a.aval.shape[axis] for a in ins)
            ps = Params({"axis": axis})
            v = Var(P.concatenate.shape_rule(*[a.aval for a in ins], axis=axis))
            eqns.append(Eqn(P.concatenate, ins, ps, v, e.src))
            parts.append(v)
        eqns.append(Eqn(srd, (chain[0].inputs[0], *parts), e.params, e.out, e.src))
    return g.replace(eqns=tuple(eqns))


__all__ = ["join_extremes", "scatter_extremes"]
