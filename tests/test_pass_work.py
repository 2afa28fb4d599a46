"""The passes after batching do work linear in the graph (issue 11): deterministic counts of
the work a pass does (definitions looked up, operands visited) on graphs of n and 2n
equations, never a clock. Each case is a shape of graph that made a pass quadratic once."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from vecgrad import primitives as P
from vecgrad.ir import Aval, Graph, typecheck
from vecgrad.rewrite import engine
from vecgrad.rewrite.simplify import simplify
from vecgrad.tracing import trace

F64 = np.dtype(np.float64)


def graph(fn: Callable, *shapes: tuple[int, ...]) -> Graph:
    b, out = trace(fn, [Aval(s, F64) for s in shapes], hash_cons=False)
    outs = out if isinstance(out, tuple) else (out,)
    return typecheck(b.build([o.atom for o in outs]))


def lookups(g: Graph, monkeypatch: pytest.MonkeyPatch, run: Callable[[Graph], Graph]
            ) -> tuple[int, Graph]:
    """Definitions the rewrite rules looked up (Ctx.def_of calls) while `run` ran on g."""
    calls = [0]
    def_of = engine.Ctx.def_of

    def counted(self, a, prim=None):
        calls[0] += 1
        return def_of(self, a, prim)
    monkeypatch.setattr(engine.Ctx, "def_of", counted)
    out = run(g)
    monkeypatch.setattr(engine.Ctx, "def_of", def_of)
    return calls[0], out


def rows_into_zeros(n: int) -> Graph:
    """The cotangent of reading x (n, 3) row by row: zeros.at[i].add(g_i) for every row, in
    reverse order as reverse mode emits them (gmm's per-point rows)."""
    def f(x):
        z = P.full(shape=(n, 3), dtype=F64, value=0.0)
        for i in reversed(range(n)):
            z = P.setitem_add(z, P.sin(x[i]), idx=P.normalize_index(i, (n, 3)))
        return P.mul(z, 3.0)
    return graph(f, (n, 3))


def test_writes_tiling_zeros_is_linear_in_the_chain(monkeypatch):
    """Each write of the chain extends what the rule knew of the previous one (was: the
    whole chain walked again at every write, n^2 / 2 lookups)."""
    counts = {}
    for n in (200, 400):
        counts[n], g1 = lookups(rows_into_zeros(n), monkeypatch, simplify)
        prims = [e.prim.name for e in g1.eqns]
        assert "concatenate" in prims and "setitem_add" not in prims  # the rule fired
    assert counts[400] <= 2.2 * counts[200], counts


def test_writes_tiling_zeros_chain_matches_the_walk():
    """The chain's summary gives the rewrite the whole walk gave: pieces written out of order,
    a gap (no rewrite), a write twice (no rewrite)."""
    def chain(order):
        def f(x):
            z = P.full(shape=(4, 3), dtype=F64, value=0.0)
            for i in order:
                z = P.setitem_add(z, P.sin(x[i]), idx=P.normalize_index(i, (4, 3)))
            return z
        return [e.prim.name for e in simplify(graph(f, (4, 3))).eqns]
    assert "concatenate" in chain([2, 0, 3, 1])
    assert "concatenate" not in chain([2, 0, 3])
    assert "concatenate" not in chain([2, 0, 1, 1, 3])
    assert "concatenate" not in chain([2, 0, 0, 3])
