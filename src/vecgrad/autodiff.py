"""Reverse-mode AD over the IR. VJP rules emit IR into the same builder, so the backward
graph goes through the same passes as the forward one.

The driver owns two concerns so that no rule has to: cotangents that have a broadcast shape
are summed back to the input's shape, and cotangents of reads through indices (`Sparse`) are
accumulated into one buffer per array instead of one dense zero array per read.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import primitives as P
from .errors import NoGradientError
from .ir import Atom, Aval, Const, Graph, Var
from .tracing import Builder, Tracer


def _unbroadcast(ct: Tracer, aval: Aval) -> Tracer:
    lead = ct.ndim - len(aval.shape)
    axes = list(range(lead)) + [lead + i for i, d in enumerate(aval.shape)
                                if d == 1 and ct.shape[lead + i] != 1]
    if axes:
        ct = P.reduce_sum(ct, axes=tuple(axes))
    if ct.shape != aval.shape:
        ct = P.reshape(ct, shape=aval.shape)
    if ct.dtype != aval.dtype:
        ct = P.cast(ct, dtype=aval.dtype)
    return ct


class _Accum:
    """Cotangent contributions of one variable: dense terms and indexed (sparse) terms."""

    def __init__(self) -> None:
        self.dense: list[Tracer] = []
        self.sparse: list[P.Sparse] = []
        self.src = None  # the line of the first use: where the accumulation is reported

    def add(self, ct: Tracer | P.Sparse, aval: Aval, src: Any = None) -> None:
        self.src = self.src or src
        if isinstance(ct, P.Sparse):
            self.sparse.append(ct)
        else:
            self.dense.append(_unbroadcast(ct, aval))

    def total(self, b: Builder, aval: Aval) -> Tracer:
        b.src = b.src or self.src
        acc = None
        for d in self.dense:
            acc = d if acc is None else acc + d
        if self.sparse:
            if acc is None:  # one zero buffer per array, however many reads it had
                acc = Tracer(b, b.emit(P.full, [], {"shape": aval.shape, "dtype": aval.dtype,
                                                    "value": 0.0}))
            for s in self.sparse:
                acc = P.setitem_add(acc, P.cast(s.g, dtype=aval.dtype) if s.g.dtype != aval.dtype
                                    else s.g, idx=s.idx)
        return acc


def _active(g: Graph, wrt: Sequence[int]) -> set[Var]:
    active = {g.inputs[i] for i in wrt}
    for e in g.eqns:
        if e.prim.vjp is not None and any(isinstance(a, Var) and a in active for a in e.inputs):
            active.add(e.out)
    return active


def vjp_graph(g: Graph, wrt: Sequence[int], seeds: Sequence[Atom | None] | None = None
              ) -> Graph:
    """Differentiate `g`. Cotangent seeds per output: given atoms (e.g. the constant 1 for
    `grad`), `None` for outputs without one, or by default new graph inputs appended after
    g's inputs. The result's outputs are g's outputs followed by one cotangent per `wrt`."""
    b = Builder(g.inputs)
    if seeds is None:
        seeds = [Var(o.aval) for o in g.outputs]
        b.inputs += seeds
    b.eqns.extend(g.eqns)
    active = _active(g, wrt)
    acc: dict[Var, _Accum] = {}
    with b:
        for out, seed in zip(g.outputs, seeds):
            if seed is not None and isinstance(out, Var) and out in active:
                acc.setdefault(out, _Accum()).add(Tracer(b, seed), out.aval)
        for e in reversed(g.eqns):
            a = acc.pop(e.out, None)
            if a is None:
                continue
            b.src = e.src  # backward equations report the forward line they came from
            ct = a.total(b, e.out.aval)
            ins = [Tracer(b, x) for x in e.inputs]
            cts = e.prim.vjp(ct, Tracer(b, e.out), *ins, **e.params)
            for x, c in zip(e.inputs, cts):
                if c is not None and isinstance(x, Var) and x in active \
                        and x.aval.dtype.kind in "fc":
                    if isinstance(c, P.NoGrad):
                        raise NoGradientError(c.what, e.src)
                    acc.setdefault(x, _Accum()).add(c, x.aval, e.src)
        b.src = None
        grads: list[Atom] = []
        for i in wrt:
            x = g.inputs[i]
            a = acc.pop(x, None)
            grads.append(a.total(b, x.aval).atom if a else
                         Const(np.zeros(x.aval.shape, x.aval.dtype)))
    return b.build(list(g.outputs) + grads, g.notes)
