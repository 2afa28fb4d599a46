"""The NumPy backend's last rewrites before codegen: einsum(x, y) + c becomes one `muladd`
call (NumPy has no GEMM with a bias; this is the nearest), and the first add into a fresh
zero buffer becomes a write (which codegen then computes into the buffer). They run on the
graph that is compiled, so the rewrite rules and AD before them see the plain einsum, add
and chains of adds into zeros (which rules of their own recognize)."""
from __future__ import annotations

from typing import Any

from ... import primitives as P
from ...ir import Eqn, Graph
from ...rewrite.engine import Rule, rewrite


def muladd_of_add(e: Eqn, ctx: Any) -> Any:
    """einsum(x, y) + c = muladd(x, y, c) when c broadcasts into the product: one call, the
    add in the product's buffer (NumPy has no GEMM with a bias; this is the nearest)."""
    for k, a in enumerate(e.inputs):
        s = ctx.def_of(a, P.einsum)
        c = e.inputs[1 - k]
        if s is not None and len(s.inputs) == 2 and ctx.n_uses(a) == 1 and \
                a.aval == e.out.aval:
            return P.muladd, (*s.inputs, c), {"spec": s.params["spec"]}
    return None


def write_into_zeros(e: Eqn, ctx: Any) -> Any:
    """zeros.at[r].add(v) = zeros.at[r].set(v) (a gradient's first cotangent added into a
    buffer): a write, no read of the zeros, and an elementwise v is then computed into the
    region (codegen). 0 + v = v, of v's dtype; a basic index writes each element once, as
    the add did. (Zeros that other chains also start from are copied first either way.)"""
    x, v = e.inputs
    z = ctx.def_of(x, P.full)
    if z is None or z.params["value"] != 0 or len(e.inputs) != 2 or \
            v.aval.dtype != x.aval.dtype or not P.is_basic(e.params["idx"]):
        return None
    return P.setitem, (x, v), dict(e.params)


RULES: list[Rule] = [
    Rule(P.add, muladd_of_add, "einsum(x, y) + c = muladd(x, y, c): the add in the product"),
    Rule(P.setitem_add, write_into_zeros, "zeros.at[r].add(v) = zeros.at[r].set(v)"),
]


def fuse_muladd(g: Graph) -> Graph:
    """Run RULES (einsum + add = muladd; the first add into zeros, a write)."""
    return rewrite(g, RULES)
