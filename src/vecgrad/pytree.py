"""Pytrees of tuple, list, dict and None with array leaves. Everything else is static: part
of the compile-cache key, and passed to the traced function unchanged."""
from __future__ import annotations

from typing import Any

import numpy as np

_ARRAY = ("*",)

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


def flatten(x: Any, leaves: list | None = None) -> tuple[list, Any]:
    """Returns (array leaves, hashable treedef)."""
    leaves = [] if leaves is None else leaves
    if is_leaf(x) or type(x).__name__ in ("Tracer", "WeakScalar"):
        leaves.append(x)
        return leaves, _ARRAY
    if type(x) in (tuple, list):
        return leaves, (type(x).__name__, tuple(flatten(c, leaves)[1] for c in x))
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # a NamedTuple (e.g. linalg.eigh's)
        return leaves, ("tuple", tuple(flatten(c, leaves)[1] for c in x), type(x))
    if type(x) is dict:
        keys = sorted(x, key=repr)
        return leaves, ("dict", tuple(keys), tuple(flatten(x[k], leaves)[1] for k in keys))
    if x is None:
        return leaves, ("None",)
    try:
        hash(x)
    except TypeError:
        raise TypeError(f"vecgrad cannot use a {type(x).__name__} as an argument: arguments "
                        "are pytrees (tuple, list, dict, None) of NumPy arrays, and any other "
                        "value is static and must be hashable") from None
    return leaves, ("static", type(x), x)


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
    if td is _ARRAY or kind == "*" or kind == "weak":  # (weak: a traced Python number)
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
