"""Products of small counts in integers, cast to floats once.

The cotangent of np.maximum / np.minimum splits ties as JAX does: 1 where the operand wins,
1/2 at a tie, 0 where it loses (and at NaNs), built as (x >= y) + (x > y) counted in int8 and
cast to the cotangent's float dtype (primitives.elementwise._tie). np.clip is maximum then
minimum, so its gradient multiplies two such masks: two casts to floats and a float product,
three passes writing 8 bytes per element, where the product of the two counts (0..2 each) in
int8 and one cast write 1 + 1 + 8:

    cast(a, f) * cast(b, f) = cast(a * b, f)      a, b integers whose product fits their dtype

Exact: both sides are the same small integer, represented exactly in f. A value's range is
known when it is built from bools cast to integers, integer constants, sums and products.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Const, Eqn

# Definitions followed back to bound an integer value (a longer chain is taken as unbounded).
DEPTH = 8


def value_range(v: Any, ctx: Any, depth: int = 0) -> tuple[int, int] | None:
    """(lo, hi) bounding every entry of the integer value v, where its definition shows it."""
    if v.aval.dtype.kind not in "iub":
        return None
    if isinstance(v, Const):
        return (int(v.value.min()), int(v.value.max())) if v.value.size else None
    if v.aval.dtype.kind == "b":
        return 0, 1
    e = ctx.def_of(v)
    if e is None or depth >= DEPTH:
        return None
    if e.prim is P.cast:
        return value_range(e.inputs[0], ctx, depth + 1)
    if e.prim not in (P.add, P.sub, P.mul) or len(e.inputs) != 2:
        return None
    ra, rb = (value_range(a, ctx, depth + 1) for a in e.inputs)
    if ra is None or rb is None:
        return None
    if e.prim is P.add:
        lo, hi = ra[0] + rb[0], ra[1] + rb[1]
    elif e.prim is P.sub:
        lo, hi = ra[0] - rb[1], ra[1] - rb[0]
    else:
        ps = [x * y for x in ra for y in rb]
        lo, hi = min(ps), max(ps)
    info = np.iinfo(v.aval.dtype)
    return (lo, hi) if info.min <= lo and hi <= info.max else None  # (no wrap-around)


def product_of_counts(e: Eqn, ctx: Any) -> Any:
    """cast(a, f) * cast(b, f) = cast(a * b, f) for integers a, b of one dtype whose product
    stays in its range (module doc), each cast read only here (one cast instead of two)."""
    f = e.out.aval.dtype
    if f.kind != "f" or len(e.inputs) != 2:
        return None
    ca, cb = (ctx.def_of(a, P.cast) for a in e.inputs)
    if ca is None or cb is None or ctx.n_uses(e.inputs[0]) != 1 or \
            ctx.n_uses(e.inputs[1]) != 1 or e.inputs[0] is e.inputs[1]:
        return None
    a, b = ca.inputs[0], cb.inputs[0]
    if a.aval.dtype != b.aval.dtype or a.aval.dtype.kind not in "iu" or \
            ca.out.aval.dtype != f or cb.out.aval.dtype != f:
        return None
    ra, rb = value_range(a, ctx), value_range(b, ctx)
    if ra is None or rb is None:
        return None
    ps = [x * y for x in ra for y in rb]
    info = np.iinfo(a.aval.dtype)
    if min(ps) < info.min or max(ps) > info.max or max(abs(min(ps)), abs(max(ps))) >= \
            2 ** (np.finfo(f).nmant + 1):
        return None
    m = ctx.emit(P.mul, (a, b), {}, e.src)
    return P.cast, (m,), {"dtype": f}


__all__ = ["product_of_counts", "value_range"]
