"""Contractions with a symmetric matrix: one orientation for both of its sides.

A loss of a Gram or kernel matrix S = f(X X^T) (cosine similarities, an RBF kernel from
sqdist(x, x), an outer product b b^T) gives the gradient through S's two factors: G^T X from
one side and G X from the other, where G is S's cotangent. G is built from S by elementwise
steps with symmetric operands, so it is symmetric itself and the two are one product: written
in one orientation, the engine keeps the second as the first (as CSE would) and the sum of
the two becomes 2 * (G X) (addchain), a matrix product fewer.

A matrix is known symmetric when it is (1) sqdist(x, x); (2) an einsum whose result's two
letters can be exchanged (with its operands) without changing it: x x^T, b b^T,
einsum('ij,j,kj->ik', X, w, X); (3) an elementwise function of symmetric operands of its
shape, scalars and symmetric constants; (4) a transpose of one, or the reshape of one to
its flat (n * n,) form and back (batching fills such matrices entry by entry).

Exchanging the letters of a symmetric operand changes the result by at most the rounding that
made the operand (its two triangles are computed by the same sums, in the same order, up to
the product kernel's blocking): as accurate as the original.
"""
from __future__ import annotations

import itertools
import math
import string
from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Const, Eqn
from ..primitives.linalg import make_spec, parse_spec

# Definitions followed back to find a symmetric matrix (a longer chain is taken as not known).
DEPTH = 24
# Symmetric operands of one einsum whose orientations are tried together.
MAX_OPERANDS = 3


def _swapped(sub: str, p: str, q: str) -> str:
    return sub.translate(str.maketrans(p + q, q + p))


def _einsum_symmetric(e: Eqn) -> bool:
    """Exchanging the result's two letters (and the operands with them) gives the same
    einsum: the same multiset of (operand, subscript) pairs."""
    ins, out = parse_spec(e.params["spec"])
    if len(out) != 2 or out[0] == out[1]:
        return False
    pairs = sorted((id(a), s) for a, s in zip(e.inputs, ins))
    swapped = sorted((id(a), _swapped(s, out[0], out[1])) for a, s in zip(e.inputs, ins))
    return pairs == swapped


def side(v: Any, ctx: Any, depth: int = 0) -> int | None:
    """n where v, of shape (n, n) or its flattening (n * n,), is known symmetric."""
    shape = v.aval.shape
    if len(shape) == 2:
        n = shape[0] if shape[0] == shape[1] else None
    elif len(shape) == 1:
        r = math.isqrt(shape[0])
        n = r if r * r == shape[0] and r > 1 else None
    else:
        n = None
    if n is None or v.aval.dtype.kind not in "fc":
        return None
    if isinstance(v, Const):
        m = v.value.reshape(n, n)
        return n if np.array_equal(m, m.T) else None
    key = ("symmetric", v)
    if key in ctx.memo:
        return ctx.memo[key]
    found = _side(v, n, ctx, depth) if depth < DEPTH else None
    ctx.memo[key] = found
    return found


def _side(v: Any, n: int, ctx: Any, depth: int) -> int | None:
    e = ctx.def_of(v)
    if e is None:
        return None
    if e.prim is P.sqdist:
        return n if e.inputs[0] is e.inputs[1] and v.aval.ndim == 2 else None
    if e.prim is P.einsum:
        return n if v.aval.ndim == 2 and _einsum_symmetric(e) else None
    if e.prim in (P.reshape, P.transpose):
        x = e.inputs[0]
        return n if x.aval.size == n * n and side(x, ctx, depth + 1) == n else None
    if e.prim.elementwise:
        big = [a for a in e.inputs if a.aval.ndim]
        if not big or any(a.aval.shape != v.aval.shape for a in big):
            return None
        return n if all(side(a, ctx, depth + 1) == n for a in big) else None
    return None


def _normal(ins: list[str], out: str) -> str:
    """The spec with its letters renamed in order of first appearance."""
    names: dict[str, str] = {}
    for ch in "".join(ins) + out:
        names.setdefault(ch, string.ascii_letters[len(names)])
    return make_spec(["".join(names[c] for c in s) for s in ins], "".join(names[c] for c in out))


def einsum_of_symmetric(e: Eqn, ctx: Any) -> Any:
    """einsum(.., S as 'ij', ..) = einsum(.., S as 'ji', ..) for symmetric S: of the
    orientations of its symmetric operands, the one whose spec (letters renamed in order of
    appearance) comes first, so that G^T X and G X meet as one product."""
    ins, out = parse_spec(e.params["spec"])
    cands = [k for k, (a, s) in enumerate(zip(e.inputs, ins))
             if a.aval.ndim == 2 and len(set(s)) == 2 and side(a, ctx) is not None]
    if not cands:
        return None
    cands = cands[:MAX_OPERANDS]
    best = None
    for flips in itertools.product((False, True), repeat=len(cands)):
        subs = list(ins)
        for k, f in zip(cands, flips):
            if f:
                subs[k] = subs[k][::-1]
        spec = _normal(subs, out)
        best = spec if best is None or spec < best else best
    if best == e.params["spec"]:
        return None
    return P.einsum, e.inputs, {"spec": best}


__all__ = ["einsum_of_symmetric", "side"]
