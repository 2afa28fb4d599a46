"""The NumPy backend's muladd fusion, its last pass before codegen: einsum(x, y) + c becomes
one `muladd` call (NumPy has no GEMM with a bias; this is the nearest). It runs on the graph
that is compiled, so the rewrite rules and AD before it see the plain einsum and add."""
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


RULES: list[Rule] = [
    Rule(P.add, muladd_of_add, "einsum(x, y) + c = muladd(x, y, c): the add in the product"),
]


def fuse_muladd(g: Graph) -> Graph:
    """Run RULES (einsum + add = muladd)."""
    return rewrite(g, RULES)
