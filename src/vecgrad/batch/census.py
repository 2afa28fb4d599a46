"""The primitives a graph uses, counted once for the quick looks before batching's optional
passes (decays, extremes, setchains: each asks whether the graph holds the primitives it
rewrites; one census serves them all, where each used to walk every equation itself)."""
from __future__ import annotations

import weakref
from operator import itemgetter

from ..ir import Graph, Primitive

_PRIM = itemgetter(0)  # an equation's primitive
# (a weak reference to the graph counted last, its census): one tuple, replaced whole, so
# that a census is never read beside another graph's reference
_last: tuple = (lambda: None, frozenset())


def census(g: Graph) -> frozenset[Primitive]:
    """The primitives of g's equations (counted in C, and kept for the graph asked last: the
    looks of one batching pass share it until a pass rewrites the graph)."""
    global _last
    ref, prims = _last
    if ref() is g:
        return prims
    prims = frozenset(map(_PRIM, g.eqns))
    _last = (weakref.ref(g), prims)
    return prims


__all__ = ["census"]
