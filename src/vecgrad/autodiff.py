"""Automatic differentiation over the IR: reverse mode (`vjp_graph`), forward mode
(`jvp_graph`) and the split of a differentiated graph into its forward and backward parts
(`split_graph`). VJP rules emit IR into the same builder, so the backward graph goes through
the same passes as the forward one, and can itself be differentiated.

The reverse-mode driver owns two concerns so that no rule has to: cotangents that have a
broadcast shape are summed back to the input's shape, and cotangents of reads through indices
(`Sparse`) are accumulated into one buffer per array instead of one dense zero array per read.

**Forward mode is reverse mode transposed** ("the VJP of the VJP"). The backward graph of `f`
maps a cotangent `c` to `J^T c`, linearly in `c`; differentiating *that* graph with respect to
`c`, with `t` as its output cotangent, gives `(J^T)^T t = J t`. So there is one rule table,
the VJP rules (every primitive someone adds with a VJP gets forward mode, Jacobians and
Hessians for free, and the systematic second-order test of the spec list checks the one
property all of them need: that the primitives VJP rules emit have VJPs). It costs no more
at run time than JVP rules would: the cotangent `c` is bound to zeros and dead-code
elimination removes the first backward pass, leaving the forward values and, for each
equation, the transpose of its VJP, which is its JVP (`g * y` transposes to `t * y`). It
costs a second AD pass while compiling, which is linear in the graph.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import primitives as P
from .errors import NoGradientError
from .hooks import AUTODIFF
from .interpret import inline
from .ir import Atom, Aval, Const, Graph, Var, dce
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
        totals: dict[Var, Atom] = {}  # (an input listed twice in wrt gets its gradient twice)
        for i in wrt:
            x = g.inputs[i]
            if x not in totals:
                a = acc.pop(x, None)
                totals[x] = a.total(b, x.aval).atom if a else \
                    Const(np.zeros(x.aval.shape, x.aval.dtype))
    return b.build(list(g.outputs) + [totals[g.inputs[i]] for i in wrt], g.notes)


def jvp_graph(g: Graph, wrt: Sequence[int]) -> Graph:
    """Forward mode (see the module docstring). The result's inputs are g's inputs followed by
    one tangent per `wrt` input; its outputs are g's outputs followed by one tangent per
    output (zeros for outputs that do not depend on the `wrt` inputs)."""
    n_in, n_out = len(g.inputs), len(g.outputs)
    back = vjp_graph(g, wrt)  # inputs: g's, then one cotangent per output
    tangents = [Var(back.outputs[n_out + k].aval) for k in range(len(wrt))]
    fwd = vjp_graph(back, range(n_in, n_in + n_out), [None] * n_out + tangents)
    fwd = fwd.replace(inputs=fwd.inputs + tuple(tangents))
    zeros = [Const(np.zeros(c.aval.shape, c.aval.dtype)) for c in back.inputs[n_in:]]
    with Builder(list(g.inputs) + tangents) as b:  # J t does not depend on the cotangents
        outs = inline(fwd, list(g.inputs) + zeros + tangents)
    keep = outs[:n_out] + outs[n_out + len(wrt):]
    return dce(b.build(keep, g.notes))


def split_graph(g: Graph, n_first: int, n_fwd_outputs: int) -> tuple[Graph, Graph]:
    """Split a differentiated graph whose inputs are primal values followed by seeds
    (cotangents or tangents, from input `n_first` on) into a forward graph (primal inputs ->
    its first `n_fwd_outputs` outputs, then residuals) and a backward graph (residuals, then
    seeds -> its other outputs). An equation belongs to the backward graph when it depends on
    a seed; the residuals are the forward values that the backward graph reads."""
    late = set(g.inputs[n_first:])
    for e in g.eqns:
        if any(a in late for a in e.inputs if a.__class__ is Var):
            late.add(e.out)
    back_outs = g.outputs[n_fwd_outputs:]
    if any(a in late for a in g.outputs[:n_fwd_outputs] if isinstance(a, Var)):
        raise ValueError("split_graph: a forward output depends on a seed")
    residuals: dict[Var, None] = {}
    for e in g.eqns:
        if e.out in late:
            residuals.update((a, None) for a in e.inputs if a.__class__ is Var and a not in late)
    residuals.update((a, None) for a in back_outs if isinstance(a, Var) and a not in late)
    res = list(residuals)
    fwd = dce(Graph(g.inputs[:n_first], tuple(e for e in g.eqns if e.out not in late),
                    tuple(g.outputs[:n_fwd_outputs]) + tuple(res), g.notes))
    bwd = Graph(tuple(res) + g.inputs[n_first:], tuple(e for e in g.eqns if e.out in late),
                tuple(back_outs))
    return fwd, bwd


AUTODIFF.fill(vjp_graph=vjp_graph)  # for the loop primitive's VJP (primitives sit below)
