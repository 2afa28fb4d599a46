"""Layout rules: move transposes toward the consumers of a value, where they cancel against
each other or vanish into a contraction (einsum indexes any layout). Batching moves loop axes
to the front; these rules let the arithmetic run in the arrays' own memory order instead of on
strided transposed views, and drop the transposes back at the end."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Eqn
from ..primitives.linalg import make_spec, parse_spec


def _inverse(perm: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argsort(perm))


def elementwise_of_transposes(e: Eqn, ctx: Any) -> Any:
    """f(transpose(x, p), transpose(y, p), scalar) = transpose(f(x, y, scalar), p)."""
    if not e.prim.elementwise or e.out.aval.ndim < 2:
        return None
    perm, ins = None, []
    for a in e.inputs:
        if a.aval.ndim == 0:
            ins.append(a)
            continue
        t = ctx.def_of(a, P.transpose)
        if t is None or a.aval.shape != e.out.aval.shape or perm not in (None, t.params["perm"]):
            return None
        perm = t.params["perm"]
        ins.append(t.inputs[0])
    if perm is None:
        return None
    inner = ctx.emit(e.prim, tuple(ins), dict(e.params), e.src)
    return P.transpose, (inner,), {"perm": perm}


def _reduced_perm(perm: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    """After reducing `axes` of transpose(x, perm): the permutation of x's reduced result."""
    kept = [p for i, p in enumerate(perm) if i not in axes]  # x's axes, in output order
    order = sorted(kept)
    return tuple(order.index(p) for p in kept)


def reduction_of_transpose(e: Eqn, ctx: Any) -> Any:
    """reduce(transpose(x, p), axes) = transpose(reduce(x, p[axes]), q)."""
    t = ctx.def_of(e.inputs[0], P.transpose)
    if t is None:
        return None
    perm = t.params["perm"]
    if e.prim in (P.softmax, P.logsumexp):
        a = e.params["axis"]
        inner = ctx.emit(e.prim, (t.inputs[0],), {"axis": perm[a]}, e.src)
        q = perm if e.prim is P.softmax else _reduced_perm(perm, (a,))
    else:
        axes = e.params["axes"]
        inner = ctx.emit(e.prim, (t.inputs[0],), {"axes": tuple(sorted(perm[a] for a in axes))},
                         e.src)
        q = _reduced_perm(perm, axes)
    return (P.transpose, (inner,), {"perm": q}) if q != tuple(range(len(q))) else inner


def einsum_of_transpose(e: Eqn, ctx: Any) -> Any:
    """einsum(.., transpose(x, p), ..) indexes x directly with permuted subscripts."""
    ins, out = parse_spec(e.params["spec"])
    new_ins, ops, changed = [], [], False
    for s, a in zip(ins, e.inputs):
        t = ctx.def_of(a, P.transpose)
        if t is None:
            new_ins.append(s)
            ops.append(a)
            continue
        inv = _inverse(t.params["perm"])
        new_ins.append("".join(s[inv[j]] for j in range(len(s))))
        ops.append(t.inputs[0])
        changed = True
    if not changed:
        return None
    return P.einsum, tuple(ops), {"spec": make_spec(new_ins, out)}
