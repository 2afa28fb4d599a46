"""The compile cache's bound: all the compiled entries (and staged graphs) of all functions in
least-recently-used order, each with its estimated size.

Each function keeps its own dictionary of entries (api.FunCache, found through the function
object); this module orders all of them by last use and, beyond `settings.cache_size` entries
or `settings.cache_bytes` bytes in all, drops the least recently used from their functions'
dictionaries (the most recent entry stays, however large). A call that hits the cache marks
its entry used (one dictionary move). Entries of functions that were garbage collected leave
the order at the next insertion.

An entry's size is estimated from the graphs it keeps (about `EQN_BYTES` per equation: the
generated code holds a callable and a name per equation too) and the constant arrays they
capture, counted once each.
"""
from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any

from .config import settings
from .ir import Const, Graph

EQN_BYTES = 600  # an equation, its output var, params and memo slots, and its line of code

# id(value) -> (weak reference to its FunCache, its key there, its estimated bytes)
_ORDER: OrderedDict[int, tuple[weakref.ref, tuple, int]] = OrderedDict()
_TOTAL = [0]  # estimated bytes of everything in _ORDER


def used(value: Any) -> None:
    """`value` was just used (a cache hit): it becomes the most recently used."""
    touch(id(value))


def touch(vid: int, _move: Any = _ORDER.move_to_end) -> None:
    """`used`, by the value's id (the hot path of a cache hit)."""
    try:
        _move(vid)
    except KeyError:  # (not counted: stored while the cache was being cleared)
        pass


def added(cache: Any, key: tuple, value: Any) -> None:
    """`value` was stored in `cache.entries[key]`: count it, then drop the least recently
    used entries while the cache holds too many or too much."""
    _purge_dead()
    old = _ORDER.pop(id(value), None)
    if old is not None:
        _TOTAL[0] -= old[2]
    size = nbytes(value)
    _ORDER[id(value)] = (weakref.ref(cache), key, size)
    _TOTAL[0] += size
    while len(_ORDER) > 1 and (len(_ORDER) > settings.cache_size or
                               _TOTAL[0] > settings.cache_bytes):
        vid, (ref, k, n) = _ORDER.popitem(last=False)
        _TOTAL[0] -= n
        c = ref()
        if c is not None and id(c.entries.get(k)) == vid:
            del c.entries[k]


def removed(value: Any) -> None:
    """`value` left its cache by other means (its function's cache dropped it)."""
    rec = _ORDER.pop(id(value), None)
    if rec is not None:
        _TOTAL[0] -= rec[2]


def clear() -> None:
    """Forget every entry (vg.clear_cache empties the functions' dictionaries)."""
    _ORDER.clear()
    _TOTAL[0] = 0


def stats() -> dict[str, int]:
    """How many entries the cache holds, and their estimated bytes."""
    _purge_dead()
    return {"entries": len(_ORDER), "bytes": _TOTAL[0]}


def _purge_dead() -> None:
    dead = [vid for vid, (ref, k, _) in _ORDER.items()
            if ref() is None or id(ref().entries.get(k)) != vid]
    for vid in dead:
        _TOTAL[0] -= _ORDER.pop(vid)[2]


def nbytes(value: Any) -> int:
    """Estimated bytes held by a cached entry or staged graph: its graphs and constants."""
    graphs: dict[int, Graph] = {}
    for g in _graphs(value):
        graphs[id(g)] = g
    consts: dict[int, int] = {}
    eqns = 0
    for g in graphs.values():
        eqns += _count(g, consts)
    return eqns * EQN_BYTES + sum(consts.values()) + len(getattr(
        getattr(value, "compiled", None), "source", ""))


def _graphs(value: Any) -> list[Graph]:
    out = [g for g in (getattr(value, "graph", None),) if isinstance(g, Graph)]
    out += [g for g in getattr(value, "stages", {}).values() if isinstance(g, Graph)]
    for c in (getattr(value, "compiled", None),
              getattr(value, "meta", {}).get("backward") if hasattr(value, "meta") else None):
        g = getattr(c, "graph", None)
        if isinstance(g, Graph):
            out.append(g)
    return out


def _count(g: Graph, consts: dict[int, int]) -> int:
    n = len(g.eqns)
    for e in g.eqns:
        for a in e.inputs:
            if a.__class__ is Const:
                consts[id(a.value)] = a.value.nbytes
        for v in e.params.values():
            if isinstance(v, Graph):  # a loop's body
                n += _count(v, consts)
    for a in g.outputs:
        if a.__class__ is Const:
            consts[id(a.value)] = a.value.nbytes
    return n
