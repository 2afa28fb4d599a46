"""Re-emitting a graph into the trace being recorded: as it is (`inline`), or batched over a
new leading axis (`vmap`).

Both are tiny interpreters over the IR, as autodidax's `eval_jaxpr`: the environment maps each
var to an atom of the current trace, and each equation is emitted again (hash-consed, with its
source line kept). `inline` is how a transformed function called inside another trace becomes
part of it; `vmap` applies every primitive's batching rule, which is how a Jacobian is one
batched computation over the basis of cotangents (or tangents) rather than n calls.
"""
from __future__ import annotations

from collections.abc import Sequence

from . import primitives as P
from .ir import Atom, Graph, Var
from .tracing import Builder, Tracer, current_builder


def _builder() -> Builder:
    b = current_builder()
    if b is None:
        raise RuntimeError("interpret: no trace is being recorded")
    return b


def inline(g: Graph, atoms: Sequence[Atom]) -> list[Atom]:
    """Emit `g`'s equations into the current trace with its inputs bound to `atoms`; returns
    the atoms of its outputs."""
    b = _builder()
    env: dict[Var, Atom] = dict(zip(g.inputs, atoms))
    saved = b.src
    try:
        for e in g.eqns:
            b.src = e.src
            env[e.out] = b.emit(e.prim, [env[a] if a.__class__ is Var else a
                                         for a in e.inputs], e.params)
    finally:
        b.src = saved
    return [env[a] if a.__class__ is Var else a for a in g.outputs]


def vmap(g: Graph, n: int, ins: Sequence[tuple[Atom, bool]]) -> list[tuple[Atom, bool]]:
    """Emit `n` instances of `g` at once into the current trace. `ins` gives each input as
    (atom, batched): a batched atom has a leading axis of size n (one row per instance), an
    unbatched one is shared by all instances. Returns the outputs the same way. Equations that
    read only shared values stay as they are; the others go through their primitive's
    batching rule, or, where it cannot express the instance (`NotBatchable`), are emitted once
    per instance and stacked (correct, and as slow as a loop)."""
    b = _builder()
    env: dict[Var, tuple[Atom, bool]] = dict(zip(g.inputs, ins))
    saved = b.src
    try:
        for e in g.eqns:
            args = [env[a] if a.__class__ is Var else (a, False) for a in e.inputs]
            b.src = e.src
            if not any(bt for _, bt in args):
                env[e.out] = (b.emit(e.prim, [a for a, _ in args], e.params), False)
            else:
                env[e.out] = (_batched(b, e.prim, n, args, e.params).atom, True)
    finally:
        b.src = saved
    return [env[a] if a.__class__ is Var else (a, False) for a in g.outputs]


def _batched(b: Builder, prim: P.Primitive, n: int, args: list[tuple[Atom, bool]],
             params: dict) -> Tracer:
    flags = tuple(bt for _, bt in args)
    if prim.batch is not None:
        try:
            return prim.batch(n, flags, *[Tracer(b, a) for a, _ in args], **params)
        except P.NotBatchable:
            pass
    rows = []
    for i in range(n):
        ins = [b.emit(P.getitem, [a], {"idx": P.normalize_index(i, a.aval.shape)}) if bt
               else a for a, bt in args]
        rows.append(Tracer(b, b.emit(prim, ins, params)))
    return P.stack(*rows, axis=0)

