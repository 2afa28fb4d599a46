"""The rewrite engine's cycle guard: rule sets that undo each other, re-create their emitter
through a helper, or grow forever terminate with an exact graph, and raise RewriteCycleError
where rewrites are checked strictly (as in these tests: VECGRAD_TYPECHECK=1)."""
from __future__ import annotations

import numpy as np
import pytest
from test_passes import assert_equivalent, graph, prims

from vecgrad import primitives as P
from vecgrad.errors import RewriteCycleError
from vecgrad.ir import Const, pretty
from vecgrad.rewrite.engine import Ctx, Rule, rewrite
from vecgrad.rewrite.simplify import RULES


def _commute(e, c: Ctx):  # a * b = b * a: every form's next form is the one before it
    return P.mul, e.inputs[::-1], {}


def _double(e, c: Ctx):  # x + x = 2 * x
    x, y = e.inputs
    return (P.mul, (Const(np.asarray(2.0)), x), {}) if x is y else None


def _undouble(e, c: Ctx):  # 2 * x = x + x
    k, x = e.inputs
    if isinstance(k, Const) and k.value.ndim == 0 and k.value == 2.0:
        return P.add, (x, x), {}
    return None


def _neg_as_mul(e, c: Ctx):  # -x = (-1) * x
    return P.mul, (Const(np.asarray(-1.0)), e.inputs[0]), {}


def _mul_as_neg(e, c: Ctx):  # (-1) * x = -x, built as a helper that the first rule rewrites
    k, x = e.inputs
    if isinstance(k, Const) and k.value.ndim == 0 and k.value == -1.0:
        return c.emit(P.neg, (x,), {}, e.src)
    return None


def _grow(e, c: Ctx):  # a * b = (-(-a)) * b: a new form every time, never a repeat
    return P.mul, (c.emit(P.neg, (c.emit(P.neg, e.inputs[:1], {}, e.src),), {}, e.src),
                   e.inputs[1]), {}


def _deepen(e, c: Ctx):  # a * b = -((-a) * b): each helper is a product that deepens again
    return P.neg, (c.emit(P.mul, (c.emit(P.neg, e.inputs[:1], {}, e.src), e.inputs[1]), {},
                          e.src),), {}


CYCLES = {
    "commute": [Rule(P.mul, _commute, "a * b = b * a")],
    "double_undouble": [Rule(P.add, _double, "x + x = 2 * x"),
                        Rule(P.mul, _undouble, "2 * x = x + x")],
    "helper_recreates_emitter": [Rule(P.neg, _neg_as_mul, "-x = (-1) * x"),
                                 Rule(P.mul, _mul_as_neg, "(-1) * x = -x")],
    "growth": [Rule(P.mul, _grow, "a * b = (-(-a)) * b")],
    "deepening": [Rule(P.mul, _deepen, "a * b = -((-a) * b)")],
}


def _program(x, y):
    return -(x * y) + (x + x) * (2.0 * y)


@pytest.mark.parametrize("name", sorted(CYCLES))
def test_cyclic_rules_raise_when_strict(name):
    g = graph(_program, (3, 4), (3, 4))
    with pytest.raises(RewriteCycleError, match="cycle") as info:
        rewrite(g, CYCLES[name], strict=True)
    assert CYCLES[name][-1].algebra in str(info.value) or name == "helper_recreates_emitter"


@pytest.mark.parametrize("name", sorted(CYCLES))
def test_cyclic_rules_terminate_exact_when_not_strict(name):
    g = graph(_program, (3, 4), (3, 4))
    g1 = rewrite(g, CYCLES[name], strict=False)
    assert_equivalent(g, g1)
    assert len(g1.eqns) <= 3 * (Ctx.FUEL + Ctx.DEPTH) * len(g.eqns)  # bounded by the guard


def test_cycle_keeps_a_form_of_the_cycle():
    g = graph(lambda x: x + x, (5,))
    g1 = rewrite(g, CYCLES["double_undouble"], strict=False)
    assert prims(g1) in (["add"], ["mul"]), pretty(g1)
    g2 = rewrite(g, CYCLES["commute"], strict=False)
    assert prims(g2) == ["add"]


def test_growth_is_bounded_by_the_fuel():
    g = graph(lambda x, y: x * y, (2,), (2,))
    g1 = rewrite(g, CYCLES["growth"], strict=False)
    assert_equivalent(g, g1)
    assert len(g1.eqns) == 2 * Ctx.FUEL + 1, pretty(g1)  # (the last form kept as it is)
    with pytest.raises(RewriteCycleError, match=f"{Ctx.FUEL} rewrites of one equation"):
        rewrite(g, CYCLES["growth"], strict=True)


def test_nesting_is_bounded_by_the_depth():
    g = graph(lambda x, y: x * y, (2,), (2,))
    g1 = rewrite(g, CYCLES["deepening"], strict=False)
    assert_equivalent(g, g1)
    assert len(g1.eqns) == 2 * Ctx.DEPTH + 1, pretty(g1)  # (a -a and a - per level)
    with pytest.raises(RewriteCycleError, match=f"nested {Ctx.DEPTH} deep"):
        rewrite(g, CYCLES["deepening"], strict=True)


def test_the_simplifier_has_no_cycle_on_scaled_products():
    """The rules that move scalars out of sums and small factors into products, on the
    products and sums that brought a cycle: strict mode raises if any pair undoes the other."""
    def f(s, x, y, w):
        a = (s * x) * y
        b = s * (x * y)
        c = (w * x) * (s * y) + x * w - (s * x) * w
        return (a + b).sum() + (c * x).sum() + (-(s * x) * y).sum()
    g = graph(f, (), (64, 64), (64, 64), (64,))
    assert_equivalent(g, rewrite(g, RULES, strict=True))


def test_equal_large_uniform_constants_meet():
    """Two zero buffers made apart (large constants are keyed by identity, not contents) with
    the same cotangent added in: the rewrite keeps one scatter, and the product reads it
    twice; zeros of another sign or value stay apart (equal bits only)."""
    import vecgrad.numpy as vnp

    def f(x):
        u = vnp.tanh(x)
        outs = []
        for fill in (0.0, 0.0, -0.0, 1.0):
            z = vnp.full((10, 10), fill)
            z[1:3, 2:5] += u
            outs.append(z)
        return outs[0] * outs[1], outs[2], outs[3]
    g0 = graph(f, (2, 3))
    g1 = rewrite(g0, RULES)
    assert prims(g1).count("setitem_add") == 3, pretty(g1)
    assert_equivalent(g0, g1)
