"""Jacobians (jacrev, jacfwd): the VJP batched over the basis of output cotangents, or the JVP
batched over the basis of input tangents, staged as one graph (see `staging`)."""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .autodiff import jvp_graph, vjp_graph
from .errors import ArgumentError, _where
from .interpret import inline, vmap
from .ir import Atom, Const, Graph, Var
from .pytree import unflatten
from .signature import Call
from .staging import Staged, _backward, fun_src, grad_tree, norm_argnums, trace_call, wrt_leaves
from .tracing import Builder, Tracer, current_builder


def stage_jac(fun: Callable, call: Call, argnums: Any, has_aux: bool, mode: str) -> Staged:
    """jacrev (mode "rev": the VJP batched over the basis of output cotangents) or jacfwd
    ("fwd": the JVP batched over the basis of input tangents). Outputs are one block per
    (output leaf, differentiated leaf), of shape out.shape + in.shape, then the aux leaves."""
    nums = norm_argnums(argnums, call.nargs, fun)
    wrt = wrt_leaves(call, nums, fun, "jacobian")
    tr = trace_call(fun, call, has_aux)
    g, times, stages, out_td, aux_td = tr.graph, tr.times, tr.stages, tr.out_td, tr.aux_td
    n_out = tr.n_out
    for o in g.outputs[:n_out]:
        if o.aval.dtype.kind != "f":
            raise ArgumentError(f"jacobian requires floating-point outputs, got {o.aval.dtype}"
                                f"{_where(fun_src(fun))}")
    t0 = time.perf_counter()
    with Builder(list(g.inputs)) as b:
        blocks, aux = (_jac_rev if mode == "rev" else _jac_fwd)(g, wrt, n_out)
    gg = b.build([a for row in blocks for a in row] + aux)
    times["ad"] = time.perf_counter() - t0
    stages["grad"] = gg
    gg = _backward(gg, times, stages)
    single = isinstance(argnums, int)
    nw = len(wrt)

    def finish(outs: Sequence) -> Any:
        per_out = []
        for k in range(n_out):
            pos = {leaf: k * nw + j for j, leaf in enumerate(wrt)}
            trees = tuple(grad_tree(call.td[0][a], outs, call.ranges[a], pos) for a in nums)
            per_out.append(trees[0] if single else trees)
        jac = unflatten(out_td, per_out)
        return (jac, unflatten(aux_td, outs[n_out * nw:])) if has_aux else jac
    return Staged(gg, finish, tr.closure, 0, times, stages, {"wrt": wrt})


def _basis(avals: list, n: int) -> list[tuple[Atom, bool]]:
    """Seeds for n instances: instance r is the r-th unit vector of all the avals' elements
    laid end to end (for n == 1, ones, unbatched)."""
    if n == 1:
        return [(Const(np.ones(a.shape, a.dtype)), False) for a in avals]
    out, o = [], 0
    for a in avals:
        eye = np.zeros((n, a.size), a.dtype)
        eye[np.arange(o, o + a.size), np.arange(a.size)] = 1
        out.append((Const(eye.reshape((n,) + a.shape)), True))
        o += a.size
    return out


def _rows(x: tuple[Atom, bool], start: int, size: int, n: int, shape: tuple) -> Tracer:
    """Rows start:start+size of a batched result (shared results are the same for every
    row), as an array of shape (size,) + shape."""
    from . import primitives as P
    b = current_builder()
    t = Tracer(b, x[0])
    if not x[1] or n == 1:
        return P.broadcast_to(P.reshape(t, shape=(1,) + shape), shape=(size,) + shape)
    if size != n:
        t = P.getitem(t, idx=P.normalize_index(slice(start, start + size), t.shape))
    return t


def _jac_rev(g: Graph, wrt: list[int], n_out: int) -> tuple[list[list[Atom]], list[Atom]]:
    from . import primitives as P
    outs = [o.aval for o in g.outputs[:n_out]]
    seeds = [Var(a) for a in outs]
    back = vjp_graph(g, wrt, seeds + [None] * (len(g.outputs) - n_out))
    back = back.replace(inputs=back.inputs + tuple(seeds))
    n = sum(a.size for a in outs)
    ins = [(v, False) for v in g.inputs] + _basis(outs, n)
    res = vmap(back, n, ins) if n > 1 else [(a, False) for a in inline(back, [a for a, _ in ins])]
    cts = res[len(g.outputs):]
    blocks, o = [], 0
    for a in outs:
        row = []
        for j, leaf in enumerate(wrt):
            x = g.inputs[leaf].aval
            r = _rows(cts[j], o, a.size, n, x.shape)
            row.append(P.reshape(r, shape=a.shape + x.shape).atom)
        blocks.append(row)
        o += a.size
    return blocks, [a for a, _ in res[n_out:len(g.outputs)]]


def _jac_fwd(g: Graph, wrt: list[int], n_out: int) -> tuple[list[list[Atom]], list[Atom]]:
    from . import primitives as P
    ins_av = [g.inputs[i].aval for i in wrt]
    gj = jvp_graph(g, wrt)
    n = sum(a.size for a in ins_av)
    ins = [(v, False) for v in g.inputs] + _basis(ins_av, n)
    res = vmap(gj, n, ins) if n > 1 else [(a, False) for a in inline(gj, [a for a, _ in ins])]
    tans = res[len(g.outputs):]
    blocks = []
    for k in range(n_out):
        oshape = g.outputs[k].aval.shape
        row, o = [], 0
        for x in ins_av:
            r = _rows(tans[k], o, x.size, n, oshape)  # (x.size,) + oshape
            r = P.reshape(r, shape=(x.size, int(np.prod(oshape, dtype=np.int64))))
            r = P.transpose(r, perm=(1, 0))
            row.append(P.reshape(r, shape=oshape + x.shape).atom)
            o += x.size
        blocks.append(row)
    return blocks, [a for a, _ in res[n_out:len(g.outputs)]]


__all__ = ["stage_jac"]
