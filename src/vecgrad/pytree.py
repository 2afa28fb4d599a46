"""Pytrees of tuple, list, dict and None with array leaves. Everything else is static: part
of the compile-cache key, and passed to the traced function unchanged."""
from __future__ import annotations

from typing import Any

import numpy as np

from .errors import ArgumentError, _where, user_src
from .tracing import Tracer

ARRAY = ("*",)
MEMO_MIN = 32  # shorter containers are flattened each call (cheaper than a memo lookup)
MEMO_SIZE = 256  # big static containers remembered by identity (cleared when full)
_MEMO: dict[int, tuple[Any, Any, Any]] = {}  # id(container) -> (it, snapshot, its treedef)
_IMMUTABLE = (int, float, complex, bool, str, bytes, type(None), range)
_TO_NUMPY = {float: np.float64, int: np.int64, complex: np.complex128}

# Array types that are leaves, and how to read each one's (shape, dtype) without copying it.
# The JAX and torch backends add theirs when they load (the core imports neither package).
_LEAF_TYPES: tuple[type, ...] = (np.ndarray, np.generic)
_SIGNATURES: dict[type, Any] = {}


def register_leaf(cls: type, signature: Any) -> None:
    """Make arrays of type `cls` leaves; `signature(x)` gives their (shape, NumPy dtype)."""
    global _LEAF_TYPES
    if cls not in _LEAF_TYPES:
        _LEAF_TYPES = _LEAF_TYPES + (cls,)
    _SIGNATURES[cls] = signature


def leaf_signature(x: Any) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) of a leaf: a NumPy array or scalar, a registered array type, or a
    Python number."""
    for cls, sig in _SIGNATURES.items():
        if isinstance(x, cls):
            return sig(x)
    return np.shape(x), np.result_type(x)


def is_leaf(x: Any) -> bool:
    """NumPy arrays and scalars are leaves (and arrays of registered types)."""
    return isinstance(x, _LEAF_TYPES)


def flatten(x: Any) -> tuple[list, Any]:
    """Returns (array leaves, hashable treedef)."""
    leaves: list = []
    return leaves, flat(x, leaves)


def flat(x: Any, leaves: list, numbers: bool = False) -> Any:
    """x's treedef, appending its array leaves (NumPy arrays and scalars, tracers) to
    `leaves`; with `numbers`, also its Python floats and complex numbers, as weak leaves (a
    differentiated argument's, as JAX's: see signature.py). A list, tuple or dict of at least MEMO_MIN items with no array inside (an edge
    list of index pairs, say) is flattened once and then recognized by identity: a tuple of
    immutable values cannot change, so the same object has the same treedef; a list or dict
    can, so it is compared with a snapshot taken when it was first seen (a C-speed comparison
    that stops at identical items). Containers of containers (a dict of neighbour lists, a
    list of sentences) are compared with a deep snapshot, so an inner list changed in place
    is seen."""
    t = type(x)
    if t is np.ndarray:
        leaves.append(x)
        return ARRAY
    if numbers and (t is float or t is complex):
        leaves.append(_TO_NUMPY[t](x))
        return ("weak", t())
    if t is tuple or t is list or t is dict:
        big = len(x) >= MEMO_MIN and not numbers  # (the memo holds static treedefs only)
        if big:
            hit = _MEMO.get(id(x))
            if hit is not None and hit[0] is x and (hit[1] is None or x == hit[1]):
                return hit[2]
        n = len(leaves)
        if t is dict:
            keys = sorted(x, key=repr)
            td = ("dict", tuple(keys), tuple([flat(x[k], leaves, numbers) for k in keys]))
        else:
            td = (t.__name__, tuple([flat(c, leaves, numbers) for c in x]))
        return _memoize(x, td) if big and len(leaves) == n else td
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # a NamedTuple (e.g. linalg.eigh's)
        return ("tuple", tuple([flat(c, leaves, numbers) for c in x]), t)
    if isinstance(x, Tracer) or is_leaf(x):  # (also the arrays of a loaded jax/torch backend)
        leaves.append(x)
        return ARRAY
    if x is None:
        return ("None",)
    try:
        if t is slice:  # (unhashable before Python 3.12: keyed by its three values)
            return ("static", t, StaticData(x, ("slice", x.start, x.stop, x.step)))
        hash(x)
    except TypeError:
        raise ArgumentError(f"vecgrad cannot use a {t.__name__} as an argument: arguments "
                            "are pytrees (tuple, list, dict, None) of NumPy arrays, and any "
                            "other value is static and must be hashable"
                            f"{_where(user_src())}") from None
    return ("static", t, x)


def _frozen(x: Any) -> bool:
    """Whether x can never change (so identity implies equal contents)."""
    t = type(x)
    if t is tuple:
        return all(_frozen(c) for c in x)
    return t in _IMMUTABLE


def _snapshot(x: Any) -> Any:
    """A deep copy of a static tree of tuples, lists and dicts of immutable values (None when
    x holds something else). Compared with `==` at C speed, it tells whether x changed."""
    t = type(x)
    if t in _IMMUTABLE or t is tuple and _frozen(x):
        return x  # (the same object: `==` stops at identical items)
    if t is tuple or t is list:
        out = []
        for c in x:
            s = _snapshot(c)
            if s is None and c is not None:
                return None
            out.append(s)
        return t(out)
    if t is dict:
        d = {}
        for k, c in x.items():
            s = _snapshot(c)
            if s is None and c is not None or not _frozen(k):
                return None
            d[k] = s
        return d
    return None


def _memoize(x: Any, td: Any) -> Any:
    if _frozen(x):
        snapshot = None  # a tuple of immutable values: identity implies equal contents
    else:
        snapshot = _snapshot(x)  # (containers of containers too: a dict of lists)
        if snapshot is None:
            return td
    if len(_MEMO) >= MEMO_SIZE:
        _MEMO.clear()
    out = ("static", type(x), StaticData(x if snapshot is None else _snapshot(x), td))
    _MEMO[id(x)] = (x, snapshot, out)
    return out


def clear_memo() -> None:
    """Forget the big static containers remembered by identity."""
    _MEMO.clear()


def unflatten(treedef: Any, leaves: Any) -> Any:
    """The inverse of flatten."""
    it = iter(leaves)
    out = _build(treedef, it)
    return out


class StaticData:
    """A big static container in a treedef (see signature.py), keyed by its contents; its
    hash is computed once. `value` is what the traced function receives."""

    __slots__ = ("_hash", "key", "value")

    def __init__(self, value: Any, key: Any):
        self.value = value
        self.key = key  # the structural treedef: what equality compares
        self._hash = hash(key)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or type(other) is StaticData and self._hash == other._hash \
            and self.key == other.key


def _build(td: Any, it: Any) -> Any:
    kind = td[0]
    if kind == "*" or kind == "weak":  # (weak: a traced Python number)
        return next(it)
    if kind == "tuple":
        vals = tuple(_build(c, it) for c in td[1])
        return td[2](*vals) if len(td) > 2 else vals
    if kind == "list":
        return [_build(c, it) for c in td[1]]
    if kind == "dict":
        return {k: _build(c, it) for k, c in zip(td[1], td[2])}
    if kind == "None":
        return None
    v = td[2]
    return v.value if type(v) is StaticData else v


def leaf_kinds(td: Any, out: list) -> list:
    """Appends, per leaf of the treedef, None (an array) or the zero of its Python number
    type (a weak Python-number leaf: 0, 0.0 or 0j); returns `out`."""
    kind = td[0]
    if kind == "*" or kind == "weak":
        out.append(td[1] if kind == "weak" else None)
    elif kind in ("tuple", "list"):
        for c in td[1]:
            leaf_kinds(c, out)
    elif kind == "dict":
        for c in td[2]:
            leaf_kinds(c, out)
    return out


def describe(td: Any) -> str:
    """A short human-readable form of a treedef, for error messages."""
    kind = td[0]
    if kind == "*":
        return "*"
    if kind in ("tuple", "list"):
        o, c = ("(", ")") if kind == "tuple" else ("[", "]")
        return o + ", ".join(describe(x) for x in td[1]) + c
    if kind == "dict":
        return "{" + ", ".join(f"{k!r}: {describe(x)}" for k, x in zip(td[1], td[2])) + "}"
    if kind == "None":
        return "None"
    return f"static {td[1].__name__}"
