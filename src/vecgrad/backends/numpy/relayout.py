"""Batch-first copies of operands that contractions read with their batch axis elsewhere.

A batched contraction ('wik,wjk->kij': k in both operands and the output) runs as one BLAS
matmul per batch element only when each operand has its batch axis first; with the batch axis
last (the user's layout in seeds/000) NumPy falls back to loops at a few times the cost.
Copying the operand once into batch-first order pays when the copy is shared by several
contractions, as the forward and backward contractions of one gradient are. Whether it pays
depends on shapes and the machine, so it is decided by `kernels.choose` (the cost model, or a
measurement stored on disk): the affected contractions with and without the copies, each with
the plan `plan_einsum` picks, and the copies' cost.
"""
from __future__ import annotations

import numpy as np

from ... import kernels
from ... import primitives as P
from ...ir import Eqn, Graph, Params, Var
from ...primitives.linalg import parse_spec
from . import costs
from .broadcast_layout import broadcast_layout, permuted_spec
from .planner import (
    MAX_TIMED_WORK,
    einsum_cost,
    einsum_work,
    plan_einsum,
)
from .table import lower
from .timing import time_call

Use = tuple[int, int]  # (equation index, operand position)


def _batch_first(e: Eqn, k: int) -> tuple[int, ...] | None:
    """The permutation putting operand k's batch letters first, if the contraction has both
    batch and contracted letters and they are not first already."""
    (a, b), out = parse_spec(e.params["spec"])
    s, other = (a, b) if k == 0 else (b, a)
    if len(set(s)) != len(s) or len(set(other)) != len(other):
        return None
    batch = "".join(c for c in s if c in other and c in out)
    if not batch or not any(c in other and c not in out for c in s) or s.startswith(batch):
        return None
    return tuple(s.index(c) for c in batch + "".join(c for c in s if c not in batch))


def candidates(g: Graph) -> dict[Var, tuple[tuple[int, ...], list[Use]]]:
    """Each einsum operand's most common batch-first permutation and the uses that want it."""
    wants: dict[Var, dict[tuple[int, ...], list[Use]]] = {}
    for i, e in enumerate(g.eqns):
        if e.prim is P.einsum and len(e.inputs) == 2:
            for k, a in enumerate(e.inputs):
                perm = _batch_first(e, k) if isinstance(a, Var) else None
                if perm is not None:
                    wants.setdefault(a, {}).setdefault(perm, []).append((i, k))
    return {x: max(ps.items(), key=lambda pu: len(pu[1])) for x, ps in wants.items()}


def _measured(e: Eqn, spec: str, shapes: list[tuple[int, ...]]) -> float:
    dts = [a.aval.dtype for a in e.inputs]
    xs = [np.ones(s, d) for s, d in zip(shapes, dts)]
    return time_call(plan_einsum(spec, shapes, dts), xs, tries=3)


def _better(e: Eqn, spec: str, shapes: list[tuple[int, ...]]) -> tuple[bool, float]:
    """Whether contraction e runs faster on the copies (`spec` at `shapes`), and by how much
    (seconds, modelled or measured: kernels.choose decides which, and remembers)."""
    dts = [a.aval.dtype for a in e.inputs]
    old = (e.params["spec"], [a.aval.shape for a in e.inputs])
    times: dict[str, float] = {}

    def estimate(m: kernels.Machine) -> dict[str, float]:
        times.update(keep=einsum_cost(*old, dts, m), copy=einsum_cost(spec, shapes, dts, m))
        return dict(times)

    def measure() -> dict[str, float]:
        times.update(keep=_measured(e, *old), copy=_measured(e, spec, shapes))
        return dict(times)
    key = (old[0], tuple(old[1]), spec, tuple(shapes), tuple(d.str for d in dts))
    better = kernels.choose("relayout_use", key, estimate, measure) == "copy"
    if better and not times:  # (a stored choice: the gain is estimated by the model)
        estimate(kernels.REFERENCE if kernels.deterministic() else kernels.machine())
    return better, times.get("keep", 0.0) - times.get("copy", 0.0)


def _copy_cost(x: Var, perm: tuple[int, ...], m: kernels.Machine | None) -> float:
    if m is None:
        return time_call(lower(P.relayout, {"perm": perm}, [x.aval]),
                         [np.ones(x.aval.shape, x.aval.dtype)], tries=3)
    return costs.transposed(m, x.aval.shape, perm, x.aval.dtype.itemsize, tiled=True)


def _kept(g: Graph, cands: dict) -> dict:
    """Keep the uses in contractions that run faster on the copies, then the copies only if
    what they save clearly outweighs what they cost (modelled or measured, see
    kernels.choose)."""
    new: dict[int, tuple[str, list]] = {}
    for perm, uses in cands.values():
        for i, k in uses:
            e = g.eqns[i]
            spec, shapes = new.get(i, (e.params["spec"], [a.aval.shape for a in e.inputs]))
            shapes = list(shapes)
            shapes[k] = tuple(shapes[k][p] for p in perm)
            new[i] = (permuted_spec(spec, k, perm), shapes)
    saved = 0.0
    for i, (spec, shapes) in list(new.items()):
        better, gain = _better(g.eqns[i], spec, shapes)
        if better:
            saved += gain
        else:
            del new[i]
    kept = {x: (perm, [u for u in uses if u[0] in new]) for x, (perm, uses) in cands.items()}
    kept = {x: pu for x, pu in kept.items() if pu[1]}
    if not kept:
        return {}

    def spent(m: kernels.Machine | None) -> dict[str, float]:
        # a clear win only: timings on a shared machine are noisy
        return {"none": 0.7 * saved, "copies": sum(_copy_cost(x, perm, m)
                                                   for x, (perm, _) in kept.items())}
    key = tuple(sorted((x.aval.shape, perm) for x, (perm, _) in kept.items())) + \
        tuple(sorted(new.values(), key=repr))
    key = repr(key)
    return kept if kernels.choose("relayout", (key,), spent, lambda: spent(None)) == "copies" \
        else {}


def relayout(g: Graph) -> Graph:
    """Give contractions batch-first copies of their operands where that is measured faster
    (after making broadcast results einsums read in a better axis order: broadcast_layout)."""
    g = broadcast_layout(g)
    cands = candidates(g)
    if not cands or any(einsum_work(g.eqns[i].params["spec"],
                                    [a.aval.shape for a in g.eqns[i].inputs]) > MAX_TIMED_WORK
                        for _, uses in cands.values() for i, _ in uses):
        return g
    return with_copies(g, _kept(g, cands))


def with_copies(g: Graph, cands: dict[Var, tuple[tuple[int, ...], list[Use]]]) -> Graph:
    """Insert a relayout of each operand in `cands` (after its definition) and read it in the
    listed uses, with the einsum letters permuted to match."""
    if not cands:
        return g
    copies: dict[Var, Eqn] = {}
    for x, (perm, uses) in cands.items():
        out = Var(P.relayout.shape_rule(x.aval, perm=perm))
        copies[x] = Eqn(P.relayout, (x,), Params({"perm": perm}), out, g.eqns[uses[0][0]].src)
    swap: dict[Use, tuple[Var, tuple[int, ...]]] = {
        u: (copies[x].out, perm) for x, (perm, uses) in cands.items() for u in uses}
    eqns = [copies[x] for x in g.inputs if x in copies]
    for i, e in enumerate(g.eqns):
        for k in (0, 1) if e.prim is P.einsum and len(e.inputs) == 2 else ():
            if (i, k) in swap:
                xr, perm = swap[(i, k)]
                ins = list(e.inputs)
                ins[k] = xr
                e = Eqn(e.prim, tuple(ins), Params({"spec": permuted_spec(e.params["spec"], k, perm)}),
                        e.out, e.src)
        eqns.append(e)
        if e.out in copies:
            eqns.append(copies[e.out])
    return g.replace(eqns=tuple(eqns))
