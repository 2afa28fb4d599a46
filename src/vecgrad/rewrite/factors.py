"""Sums of products that share a large factor: x * A + x * B = x * (A + B).

A gradient adds the cotangents of one value through several paths, each path a product of
the same upstream cotangent x with its own factors: `n * b + 2 * (a * (n * c))` for
d/dX of sin((b * X + c * X ** 2) * s), one pass over the (n, d) arrays per multiply. With x
taken out, the rest of each term is built small factors first (`2 * c` is a d-vector), and
the sum costs `x * (b + (2 * c) * a)`: three passes instead of five. common_factor (in
scalings.py) covers terms whose rest is small; this rule also takes rests that are large,
where counting the passes of both forms says the factored one is cheaper.

The terms are read through products (and negations) that have no other reader, a few levels
deep: constant work per sum, so a sweep stays linear in the graph.
"""
from __future__ import annotations

import numpy as np

from .. import primitives as P
from ..ir import Atom, Const, Eqn
from .engine import Ctx

DEPTH = 4  # products followed into a term (a gradient's chains of scalings are short)


def _terms(u: Atom, big: int, c: Ctx, depth: int = DEPTH) -> tuple[list[Atom], int, int]:
    """u as a product of factors read through single-reader multiplies and negations:
    (the factors, the sign, the passes over arrays larger than a quarter of `big` of the
    multiplies and negations followed)."""
    large = int(u.aval.size * 4 > big)
    m = c.def_of(u, P.mul) if depth and c.n_uses(u) == 1 else None
    if m is not None and all(a.aval.dtype == u.aval.dtype for a in m.inputs):
        fa, sa, pa = _terms(m.inputs[0], big, c, depth - 1)
        fb, sb, pb = _terms(m.inputs[1], big, c, depth - 1)
        return fa + fb, sa * sb, pa + pb + large
    n = c.def_of(u, P.neg) if depth and c.n_uses(u) == 1 else None
    if n is not None:
        f, s, p = _terms(n.inputs[0], big, c, depth - 1)
        return f, -s, p + large
    return [u], 1, 0


def _plan(factors: list[Atom], big: int) -> tuple[tuple[int, ...] | None, int]:
    """Shape of the product built smallest factors first (None: no factor), and the passes
    of its multiplies over arrays larger than a quarter of `big`."""
    shape, passes = None, 0
    for a in sorted(factors, key=lambda a: a.aval.size):
        if shape is None:
            shape = a.aval.shape
            continue
        shape = np.broadcast_shapes(shape, a.aval.shape)
        passes += int(np.prod(shape, dtype=np.int64)) * 4 > big
    return shape, passes


def _build(factors: list[Atom], e: Eqn, c: Ctx) -> Atom:
    """The product of the factors, smallest first (1 for none)."""
    fs = sorted(factors, key=lambda a: a.aval.size)
    if not fs:
        return Const(np.asarray(1, e.out.aval.dtype))
    acc = fs[0]
    for a in fs[1:]:
        acc = c.emit(P.mul, (acc, a), {}, e.src)
    return acc


def _without(fs: list[Atom], x: Atom) -> list[Atom]:
    i = next(i for i, a in enumerate(fs) if a is x)
    return fs[:i] + fs[i + 1:]


def factor_out_of_sum(e: Eqn, c: Ctx) -> object:
    """x * A + x * B = x * (A + B) (and -), x as large as the sum, A and B products of the
    terms' other factors: where the factored form's passes over large arrays are fewer."""
    out = e.out.aval
    if out.dtype.kind not in "fc" or out.size < 4096:
        return None
    (fu, su, pu), (fv, sv, pv) = (_terms(a, out.size, c) for a in e.inputs)
    if pu + pv == 0:
        return None
    ids = {id(a) for a in fu}
    x = next((a for a in fv if id(a) in ids and a.aval == out), None)
    if x is None:
        return None
    ru, rv = _without(fu, x), _without(fv, x)
    sv = -sv if e.prim is P.sub else sv
    op = P.add if su > 0 and sv > 0 else P.sub
    if su < 0 < sv:
        ru, rv = rv, ru  # B - A
    elif su < 0 and sv < 0:  # -A - B = (-A) - B or (-B) - A: the sign a constant factor of
        neg = Const(np.asarray(-1, out.dtype))  # the rest where it costs least
        ru, rv = min(([*ru, neg], rv), ([*rv, neg], ru), key=lambda p: _plan(p[0], out.size)[1])
    (shu, qu), (shv, qv) = _plan(ru, out.size), _plan(rv, out.size)
    joined = np.broadcast_shapes(*[s for s in (shu, shv) if s is not None])
    if np.broadcast_shapes(joined, x.aval.shape) != out.shape:
        return None
    after = qu + qv + (int(np.prod(joined, dtype=np.int64)) * 4 > out.size) + 1
    if after >= pu + pv + 1:
        return None
    return P.mul, (x, c.emit(op, (_build(ru, e, c), _build(rv, e, c)), {}, e.src)), {}
