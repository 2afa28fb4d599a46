"""Narrowing reads: a basic read `v[r]` of a value nothing else reads is computed from the
parts of v's operands that it needs, so only the part read is ever computed.

    f(a, b)[r]              = f(a[r_a], b[r_b])        f elementwise (r_a: r as a broadcasts)
    einsum(spec, *xs)[r]    = einsum(spec', *xs[r_x])  r along output letters (ints drop one)
    reduce_sum(x, axes)[r]  = reduce_sum(x[r_x], axes')

With `read_of_write` (x.at[w].set(v)[r] = x[r] where r and w are disjoint), one element of
a gradient summed over the steps of a loop is read from the stacked cotangents' own column,
not from copies of the whole stacks with their other columns zeroed and summed (an RK4
step's `z[0] = x[0]`: GradBench's ode). Applied only where the value has that one reader
and the read is smaller than the value: the work only shrinks. (A value made while
rewriting may stand for one the input graph reads several times: it is not narrowed.)
"""
from __future__ import annotations

import math
from typing import Any

from .. import primitives as P
from ..ir import Const, Eqn
from ..primitives.linalg import make_spec, parse_spec


def _plain_read(e: Eqn, ctx: Any) -> tuple | None:
    """The read's index, when it is basic, covers every axis without new ones, is smaller
    than the value, and is the value's only reader."""
    r = e.params["idx"]
    v = e.inputs[0]
    if not P.is_basic(r) or len(r) != v.aval.ndim or any(k is None for k in r) or \
            ctx.reads(v) != 1:
        return None
    if math.prod(e.out.aval.shape) >= math.prod(v.aval.shape):
        return None
    return r


def _sub_index(shape: tuple[int, ...], out: tuple[int, ...], r: tuple) -> tuple | None:
    """r (an index over `out`) as it reads an operand of `shape` that broadcasts to `out`
    (None: the operand is read whole, a 0-d one)."""
    if not shape:
        return None
    lead = len(out) - len(shape)
    idx = []
    for d, n, k in zip(shape, out[lead:], r[lead:]):
        if d == n:
            idx.append(k)
        elif isinstance(k, int):  # (d == 1: a broadcast axis)
            idx.append(0)
        else:
            idx.append(P.Sl(0, 1, 1))
    return tuple(idx)


def _read(ctx: Any, a: Any, idx: tuple | None, src: Any) -> Any:
    if idx is None or all(isinstance(k, P.Sl) and len(k) == d and k.step == 1
                          for k, d in zip(idx, a.aval.shape)):
        return a
    if isinstance(a, Const):
        return Const(a.value[P.to_key(idx)])
    return ctx.emit(P.getitem, (a,), {"idx": P.BasicIndex(idx)}, src)


def read_of_elementwise(e: Eqn, ctx: Any) -> Any:
    """f(a, b)[r] = f(a[r], b[r]) (see module doc)."""
    r = _plain_read(e, ctx)
    d = ctx.def_of(e.inputs[0]) if r is not None else None
    if d is None or not d.prim.elementwise or len(d.inputs) > 3:
        return None
    out = d.out.aval.shape
    ins = tuple(_read(ctx, a, _sub_index(a.aval.shape, out, r), e.src) for a in d.inputs)
    return d.prim, ins, dict(d.params)


def read_of_contraction(e: Eqn, ctx: Any) -> Any:
    """einsum(spec, *xs)[r] and reduce_sum(x, axes)[r] read the operands' parts (module doc)."""
    r = _plain_read(e, ctx)
    d = ctx.def_of(e.inputs[0]) if r is not None else None
    if d is None:
        return None
    if d.prim is P.reduce_sum:
        x, axes = d.inputs[0], tuple(d.params["axes"])
        kept = [i for i in range(x.aval.ndim) if i not in axes]
        at = dict(zip(kept, r))
        idx = tuple(at.get(i, P.Sl(0, x.aval.shape[i], 1)) for i in range(x.aval.ndim))
        gone = [i for i in kept if isinstance(at[i], int)]
        new_axes = tuple(a - sum(g < a for g in gone) for a in axes)
        return P.reduce_sum, (_read(ctx, x, idx, e.src),), {**d.params, "axes": new_axes}
    if d.prim is not P.einsum:
        return None
    ins, out = parse_spec(d.params["spec"])
    at = dict(zip(out, r))
    new_ins, xs = [], []
    for s, a in zip(ins, d.inputs):
        if len(set(s)) != len(s) or any(c in at and a.aval.shape[i] != d.out.aval.shape[
                out.index(c)] for i, c in enumerate(s)):
            return None  # (a diagonal, or an operand broadcast along an output letter)
        idx = tuple(at.get(c, P.Sl(0, n, 1)) for c, n in zip(s, a.aval.shape))
        new_ins.append("".join(c for c in s if not isinstance(at.get(c), int)))
        xs.append(_read(ctx, a, idx, e.src))
    new_out = "".join(c for c in out if not isinstance(at[c], int))
    return P.einsum, tuple(xs), {**d.params, "spec": make_spec(new_ins, new_out)}


__all__ = ["read_of_contraction", "read_of_elementwise"]
