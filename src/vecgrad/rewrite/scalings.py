"""Scalings: the factors of a product moved onto its smallest operand.

A gradient scales a cotangent by constants, row weights, signs and divisors, one factor at a
time: each a pass over an array as large as the cotangent. These rules gather the small
factors (a scalar, a row of weights, a sign) into one small product before they meet the large
array, or move them onto a contraction's smaller result or operand: one pass instead of
several. Each keeps the roundings of the original up to reassociation of the small factors.
"""
from __future__ import annotations

import numpy as np

from .. import primitives as P
from ..ir import Const, Eqn
from .engine import Ctx

# Elements below which a pass over an array costs about a NumPy call (a rule that trades one
# pass for a call per reader fires above it).
PASS_OVER_CALL = 4096
# Elements of a product of two constants that `fold` computes while compiling.
FOLDED = 1 << 16


def _small(a: object, big: object) -> bool:
    return a.aval.size * 4 <= big.aval.size and a.aval.dtype == big.aval.dtype


def _unshared(y: object, x: object, c: Ctx) -> bool:
    """Whether a rule may read x in place of y = f(x, small): y has no other reader (a pass
    saved), or x is large enough that a small extra call costs less than the passes that
    reading x directly may save later (y's other readers keep it: no pass added)."""
    if c.n_uses(y) <= 1:  # (0: x + x = 2 * x dropped a read of a value CSE merged into y)
        return True
    if x.aval.size < PASS_OVER_CALL:
        return False
    c.dropped_use(y)
    return True


def small_factors_first(e: Eqn, c: Ctx) -> object:
    """a * (b * x) = (a * b) * x for factors a, b much smaller than x (a gradient's `2 * e`
    then `w * ...`, a vector of weights): one pass over x instead of two (where b * x has
    other readers, still one pass, and the scalings of x then meet: see common_factor).
    Also for constants a, b of any size up to x's where b * x has no other reader: a * b
    folds while compiling (a weight per term, 1 / (t + 1), times a square's VJP's 2)."""
    for a, y in (e.inputs, e.inputs[::-1]):
        m = c.def_of(y, P.mul)
        if m is None or not (_small(a, e.out) or _constant(a, e.out)):
            continue
        for b, x in (m.inputs, m.inputs[::-1]):
            ab = P.mul.shape_rule(a.aval, b.aval)  # (a row and a column: not small)
            small = _small(a, e.out) and _small(b, e.out) and ab.size * 4 <= e.out.aval.size
            folded = _constant(a, e.out) and _constant(b, e.out) and c.n_uses(y) == 1 \
                and ab.size <= FOLDED
            if (small or folded) and x.aval == e.out.aval and \
                    P.mul.shape_rule(ab, x.aval) == e.out.aval and _unshared(y, x, c):
                return P.mul, (c.emit(P.mul, (a, b), {}, e.src), x), {}
    return None


def _constant(a: object, big: object) -> bool:
    """A constant no larger than `big`, of its dtype."""
    return isinstance(a, Const) and a.aval.size <= big.aval.size and \
        a.aval.dtype == big.aval.dtype


def scalar_out(e: Eqn, c: Ctx) -> object:
    """(s * x) * y = s * (x * y) for a scalar s and x, y as large as the product (a loss's
    2 * r times a derivative; of PASS_OVER_CALL elements or more): the scalar outermost,
    where sums and contractions of the product take it onto their (smaller) results or
    operands. The same two roundings; s * x is made only for this product. (Oriented: the
    scalar factors inside a product only decrease; of scalars alone, it would commute them
    around forever.)"""
    if e.out.aval.size < PASS_OVER_CALL:
        return None
    for u, y in (e.inputs, e.inputs[::-1]):
        m = c.def_of(u, P.mul)
        if m is None or c.n_uses(u) != 1 or y.aval != e.out.aval:
            continue
        for s, x in (m.inputs, m.inputs[::-1]):
            if s.aval.ndim == 0 and x.aval == e.out.aval and s.aval.dtype == x.aval.dtype:
                xy = c.emit(P.mul, (x, y), {}, e.src)
                c.stands_for(xy, e.out)  # (read by the product's readers, the scale moved)
                return P.mul, (s, xy), {}
    return None


def _factors(u: object, big: object, c: Ctx) -> list[tuple[object, object]]:
    """The ways u = x * a with a much smaller than `big` (a None: u = x itself)."""
    m = c.def_of(u, P.mul)
    out: list[tuple[object, object]] = [(u, None)]
    if m is not None:
        out += [(x, a) for a, x in (m.inputs, m.inputs[::-1]) if _small(a, big)]
    return out


def common_factor(e: Eqn, c: Ctx) -> object:
    """x * a + x * b = x * (a + b) (and -, and x + x * b = x * (1 + b)) for factors a, b much
    smaller than x: one pass over x instead of two or three (a gradient that scales one
    cotangent by several constants and adds them). Accuracy: a + b is rounded once, as the
    sum of the two products is; the absolute error stays eps * |x| * (|a| + |b|)."""
    u, v = e.inputs
    if e.out.aval.dtype.kind not in "fc" or (c.n_uses(u) > 1 and c.n_uses(v) > 1):
        return None
    for x, a in _factors(u, e.out, c):
        for y, b in _factors(v, e.out, c):
            if x is not y or (a is None and b is None) or x.aval != e.out.aval:
                continue
            one = Const(np.asarray(1, x.aval.dtype))
            s = c.emit(e.prim, (one if a is None else a, one if b is None else b), {}, e.src)
            if P.mul.shape_rule(x.aval, s.aval) == e.out.aval:
                return P.mul, (x, s), {}
    return None


def _scaled_by_constant(u: object, c: Ctx) -> tuple[object, float] | None:
    """(x, a) where u = a * x for a 0-d constant a (u read only here)."""
    m = c.def_of(u, P.mul)
    if m is None or c.n_uses(u) != 1:
        return None
    for a, x in (m.inputs, m.inputs[::-1]):
        if isinstance(a, Const) and a.value.ndim == 0 and x.aval.dtype == a.value.dtype:
            return x, a.value.item()
    return None


def shared_scale(e: Eqn, c: Ctx) -> object:
    """a * x + b * y = a * (x + y) for b = a, = a * (x - y) for b = -a (and -), a and b
    constant scalars: two passes instead of three (a gradient's 2 * d and -2 * d gathered
    back onto one array: the two ends of an edge's squared difference). A power of two as
    a (2 from a square's VJP) keeps every rounding; another a rounds x + y then the product,
    as accurate as the two products and their sum."""
    if e.out.aval.dtype.kind not in "fc":
        return None
    fu, fv = _scaled_by_constant(e.inputs[0], c), _scaled_by_constant(e.inputs[1], c)
    if fu is None or fv is None or fu[1] == 0 or abs(fu[1]) != abs(fv[1]):
        return None
    (x, a), (y, b) = fu, fv
    plus = (b > 0) == (e.prim is P.add)  # a * x + |a| * y, or a * x - |a| * y
    if a > 0:
        inner, ins, factor = (P.add if plus else P.sub), (x, y), a
    elif plus:
        inner, ins, factor = P.sub, (y, x), -a
    else:
        inner, ins, factor = P.add, (x, y), a
    s = c.emit(inner, ins, {}, e.src)
    f = Const(np.asarray(factor, e.out.aval.dtype))
    return (P.mul, (s, f), {}) if P.mul.shape_rule(s.aval, f.aval) == e.out.aval else None


def small_quotients_first(e: Eqn, c: Ctx) -> object:
    """a * (x / b) = (a / b) * x for a, b much smaller than x (`h * k / 2` read by a
    backward step as `(g / 2) * h`): one pass over x instead of two, as (a * x) / b is."""
    for a, y in (e.inputs, e.inputs[::-1]):
        m = c.def_of(y, P.div)
        if m is None or c.n_uses(y) != 1 or not _small(a, e.out):
            continue
        x, b = m.inputs
        if _small(b, e.out) and x.aval == e.out.aval:
            q = c.emit(P.div, (a, b), {}, e.src)
            if P.mul.shape_rule(q.aval, x.aval) == e.out.aval:
                return P.mul, (q, x), {}
    return None


def neg_into_small_factor(e: Eqn, c: Ctx) -> object:
    """-(a * x) = (-a) * x for a factor a much smaller than x: the sign on the small one."""
    m = c.def_of(e.inputs[0], P.mul)
    if m is None:
        return None
    for a, x in (m.inputs, m.inputs[::-1]):
        if _small(a, e.out) and x.aval == e.out.aval and _unshared(e.inputs[0], x, c):
            return P.mul, (c.emit(P.neg, (a,), {}, e.src), x), {}
    return None


def neg_onto_small_factor(e: Eqn, c: Ctx) -> object:
    """(-x) * a = x * (-a) for a factor a much smaller than x."""
    for n, a in (e.inputs, e.inputs[::-1]):
        d = c.def_of(n, P.neg)
        if d is not None and c.n_uses(n) == 1 and _small(a, e.out) and \
                d.inputs[0].aval == e.out.aval:
            return P.mul, (d.inputs[0], c.emit(P.neg, (a,), {}, e.src)), {}
    return None


def div_of_neg(e: Eqn, c: Ctx) -> object:
    """(-x) / a = x / (-a) for a divisor a much smaller than x (a Gaussian's -d / (2 h^2)):
    one pass over x instead of two (negation is exact)."""
    n = c.def_of(e.inputs[0], P.neg)
    a = e.inputs[1]
    if n is not None and c.n_uses(e.inputs[0]) == 1 and _small(a, e.out) and \
            n.inputs[0].aval == e.out.aval:
        return P.div, (n.inputs[0], c.emit(P.neg, (a,), {}, e.src)), {}
    return None


def div_of_scaled(e: Eqn, c: Ctx) -> object:
    """(a * x) / b = x * (a / b) for a and b much smaller than x (a gradient's row weights
    over a divisor): one pass over x instead of two, as a * (b * x) = (a * b) * x."""
    y, b = e.inputs
    m = c.def_of(y, P.mul)
    if m is None or c.n_uses(y) != 1 or not _small(b, e.out):
        return None
    for a, x in (m.inputs, m.inputs[::-1]):
        if _small(a, e.out) and x.aval == e.out.aval:
            ab = c.emit(P.div, (a, b), {}, e.src)
            if P.mul.shape_rule(x.aval, ab.aval) == e.out.aval:
                return P.mul, (x, ab), {}
    return None


def einsum_of_neg(e: Eqn, c: Ctx) -> object:
    """einsum(.., -x, ..) = -einsum(.., x, ..) where the result is much smaller than x: the
    sign goes on the result (exact), and -x is not made where the contractions are its only
    readers (a gradient's cotangent read by several of them); for x of PASS_OVER_CALL
    elements or more (below, a call per reader costs more than the pass saved). A scalar
    factor alike: einsum(.., s * x, ..) = s * einsum(.., x, ..) (a loss's 2 * r read by the
    contractions of a gradient) where the result is at most half of x, or = einsum(.., x,
    .., s * y, ..) where an operand y is much smaller than x and than the result (an outer
    product's result is larger than x): the scale goes to the smallest array it can."""
    for k, a in enumerate(e.inputs):
        if a.aval.size < PASS_OVER_CALL:
            continue
        n = c.def_of(a, P.neg)
        if n is not None and _small(e.out, a):
            ops = tuple(n.inputs[0] if j == k else o for j, o in enumerate(e.inputs))
            return P.neg, (c.emit(P.einsum, ops, e.params, e.src),), {}
        m = c.def_of(a, P.mul)
        for f, x in (m.inputs, m.inputs[::-1]) if m is not None else ():
            if f.aval.ndim != 0 or x.aval != a.aval or f.aval.dtype != a.aval.dtype:
                continue
            ops = [x if j == k else o for j, o in enumerate(e.inputs)]
            y = min((j for j in range(len(ops)) if j != k), key=lambda j: ops[j].aval.size,
                    default=None)
            if y is not None and _small(ops[y], a) and ops[y].aval.size < e.out.aval.size:
                ops[y] = c.emit(P.mul, (ops[y], f), {}, e.src)
                return P.einsum, tuple(ops), e.params
            if e.out.aval.size * 2 <= a.aval.size:
                return P.mul, (c.emit(P.einsum, tuple(ops), e.params, e.src), f), {}
    return None


# Primitives linear in their first operand, a cotangent (a product's and a running product's
# VJPs): a sign or a scalar factor on their result is one on that operand.
_LINEAR_FIRST = (P.reduce_prod_grad, P.cumprod_grad)


def into_linear_operand(e: Eqn, c: Ctx) -> object:
    """-L(g, ..) = L(-g, ..) and s * L(g, ..) = L(s * g, ..) for L linear in g, s a scalar,
    where g is much smaller than the result (a product's cotangent, one per product) or a
    constant (folded): the factor costs no pass over the result (the gradient of a survival
    product of 1 - p, of a scaled one)."""
    if e.prim is P.neg:
        pairs = ((None, e.inputs[0]),)
    else:
        pairs = (e.inputs, e.inputs[::-1])
    for s, y in pairs:
        if s is not None and (s.aval.ndim != 0 or s.aval.dtype != e.out.aval.dtype):
            continue
        d = next((q for q in (c.def_of(y, p) for p in _LINEAR_FIRST) if q is not None), None)
        if d is None or c.n_uses(y) != 1 or d.out.aval != e.out.aval:
            continue
        g = d.inputs[0]
        if not (g.__class__ is Const or _small(g, e.out)):
            continue
        g = c.emit(P.neg, (g,), {}, e.src) if s is None else c.emit(P.mul, (g, s), {}, e.src)
        return d.prim, (g, *d.inputs[1:]), d.params
    return None

