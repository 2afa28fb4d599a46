"""The passes after batching do work linear in the graph (issue 11): deterministic counts of
the work a pass does (definitions looked up, operands visited) on graphs of n and 2n
equations, never a clock. Each case is a shape of graph that made a pass quadratic once."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from vecgrad import primitives as P
from vecgrad.inputs import trace
from vecgrad.ir import Aval, Graph, typecheck
from vecgrad.rewrite import engine
from vecgrad.rewrite.simplify import simplify

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


def emitted_operands(g: Graph, monkeypatch: pytest.MonkeyPatch) -> tuple[int, Graph]:
    """Operands of the equations the rules emitted (Ctx.emit) while simplifying g."""
    seen = [0]
    emit = engine.Ctx.emit

    def counted(self, prim, ins, params, src):
        seen[0] += len(ins)
        return emit(self, prim, ins, params, src)
    monkeypatch.setattr(engine.Ctx, "emit", counted)
    out = simplify(g)
    monkeypatch.setattr(engine.Ctx, "emit", emit)
    return seen[0], out


def rows_into_segment_sum(n: int) -> Graph:
    """A segment sum (the cotangent of a gather) then one row added per unbatched read."""
    ids = P.Adv(np.arange(2 * n) % n)

    def f(x, u):
        s = P.segment_sum(P.tanh(u), ids=ids, axis=0, num=n)
        for i in range(n):
            s = P.setitem_add(s, P.sin(x[i]), idx=P.normalize_index(i, (n, 3)))
        return P.mul(s, 2.0)
    return graph(f, (n, 3), (2 * n, 3))


def sum_of_segment_sums(n: int) -> Graph:
    """n segment sums added up one by one (folded from the left and from the right)."""
    ids = P.Adv(np.arange(2 * n) % n)

    def f(u):
        a = P.segment_sum(P.tanh(u), ids=ids, axis=0, num=n)
        b = P.segment_sum(P.sin(u), ids=ids, axis=0, num=n)
        for k in range(n):
            a = P.add(a, P.segment_sum(P.mul(u, float(k)), ids=ids, axis=0, num=n))
            b = P.add(P.segment_sum(P.mul(u, float(-k)), ids=ids, axis=0, num=n), b)
        return a, b
    return graph(f, (2 * n, 3))


@pytest.mark.parametrize("make", [rows_into_segment_sum, sum_of_segment_sums])
def test_joins_of_segment_sums_are_linear_in_the_chain(make, monkeypatch):
    """A chain of joins builds its concatenation once, at its end (was: once per link, each
    one longer: n^2 / 2 operands emitted)."""
    counts = {}
    for n in (100, 200):
        counts[n], g1 = emitted_operands(make(n), monkeypatch)
        joins = [e for e in g1.eqns if e.prim is P.concatenate]
        assert joins and max(len(e.inputs) for e in joins) > n  # the rules fired
        assert not {"setitem_add", "add"} & {e.prim.name for e in g1.eqns}
    assert counts[200] <= 2.2 * counts[100], counts


def _chain_cases(n: int = 6) -> dict[str, Callable]:
    ids = P.Adv(np.arange(2 * n) % n)

    def seg(u):
        return P.segment_sum(P.tanh(u), ids=ids, axis=0, num=n)

    def row(s, x, i, f=P.sin):
        return P.setitem_add(s, f(x[i]), idx=P.normalize_index(i, (n, 3)))

    def read_midway(x, u):  # a link read by another equation too: its join is built there
        s = row(seg(u), x, 0)
        t = row(row(s, x, 1), x, 2, P.cos)
        return P.mul(t, 2.0), P.exp(s)

    def ends_in_part_of_a_row(x, u):  # the last link cannot join
        s = row(row(seg(u), x, 0), x, 1)
        return P.setitem_add(s, P.sin(x[2, :2]), idx=P.normalize_index((2, slice(0, 2)),
                                                                         (n, 3)))

    def output_link(x, u):  # a link that is an output, another read after it
        s = row(row(seg(u), x, 0), x, 1)
        return s, P.exp(row(s, x, 3))

    def reader_rewritten_first(x, u):  # the next link's add is `x + 0`, rewritten by another rule
        return P.mul(P.add(row(seg(u), x, 0), 0.0), 3.0)

    def added_to_no_segment_sum(x, u):  # an add that is no link
        return P.add(row(row(seg(u), x, 0), x, 1), P.exp(x))
    return {f.__name__: f for f in (read_midway, ends_in_part_of_a_row, output_link,
                                    reader_rewritten_first, added_to_no_segment_sum)}


@pytest.mark.parametrize("name", sorted(_chain_cases()))
def test_deferred_joins_are_built_where_read(name):
    """A join deferred along a chain is built as soon as anything but the next link reads
    it: the simplified graph computes the same values, and every write of a whole row is
    joined but those onto a value read twice (which the rules leave, as before)."""
    from vecgrad.ir import eval_graph
    g0 = graph(_chain_cases()[name], (6, 3), (12, 3))
    g1 = typecheck(simplify(g0))
    r = np.random.default_rng(0)
    xs = [r.standard_normal(v.aval.shape) for v in g0.inputs]
    for a, b in zip(eval_graph(g0, *xs), eval_graph(g1, *xs), strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-13, atol=1e-13)
    whole_rows = [e for e in g1.eqns if e.prim is P.setitem_add and
                  e.inputs[1].aval.shape == (3,)]
    assert len(whole_rows) == {"read_midway": 2, "output_link": 1}.get(name, 0), name


def accumulation(n: int) -> Graph:
    """`s = s + x[i]` (and `- x[i]` every third i) over n rows, then `s + (2 x[0] + 3 x[1])`."""
    def f(x):
        s = P.add(x[0], x[1])
        for i in range(2, n):
            s = P.sub(s, x[i]) if i % 3 == 0 else P.add(s, x[i])
        return P.add(s, P.add(P.mul(x[0], 2.0), P.mul(x[1], 3.0)))
    return graph(f, (n, 3))


def test_add_chains_grow_in_place(monkeypatch):
    """An accumulation is one chain grown in place (was: one Sum per add, each taking the
    last one's terms): the Sums made do not grow with n, and the chain holds the loop's terms
    and signs in order, and its adds in program order."""
    from vecgrad.batch import chains
    made = [0]
    init = chains.Sum.__init__

    def counted(self, *a):
        made[0] += 1
        init(self, *a)
    monkeypatch.setattr(chains.Sum, "__init__", counted)
    counts = {}
    for n in (50, 100):
        g = accumulation(n)
        made[0] = 0
        found, absorbed = chains.sums(g)
        counts[n] = made[0]
        adds = [e for e in g.eqns if e.prim in (P.add, P.sub)]
        rows = [e.out for e in g.eqns if e.prim is P.getitem][:n]  # (then x[0], x[1] again)
        muls = [e.out for e in g.eqns if e.prim is P.mul]
        (v, c), = found.items()
        assert v is g.outputs[0] and c.eqns == adds
        assert absorbed == {e.out for e in adds[:-1]}
        assert c.terms == rows + muls
        assert c.signs == [1, 1] + [-1 if i % 3 == 0 else 1 for i in range(2, n)] + [1, 1]
    assert counts[100] == counts[50], counts
