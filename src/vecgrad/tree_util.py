"""Pytrees as JAX's `jax.tree_util` sees them, for the code around a gradient: updating a
dict of parameters with its gradients, counting them, zeroing them.

    grads = vg.grad(loss)(params, X)
    params = vg.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)

Containers are tuples, lists, dicts (their keys sorted, as JAX's), namedtuples and None (a
container of nothing); everything else is a leaf: arrays, numbers, strings. (The transforms'
own flattening, vecgrad.pytree, differs on purpose: there, numbers and strings are static
arguments, part of the compile-cache key, not leaves.)
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from .errors import ArgumentError, _where, user_src

__all__ = ["PyTreeDef", "tree_flatten", "tree_leaves", "tree_map", "tree_structure",
           "tree_unflatten"]


class PyTreeDef(NamedTuple):
    """A pytree's structure: its kind ("leaf", "none", "tuple", "list", "dict" or
    "namedtuple"), the node's data (a dict's sorted keys, a namedtuple's class) and its
    children's structures."""

    kind: str
    data: Any
    children: tuple

    @property
    def num_leaves(self) -> int:
        """How many leaves a tree of this structure holds."""
        return 1 if self.kind == "leaf" else sum(c.num_leaves for c in self.children)

    def __repr__(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(repr(c) for c in self.children)
        if self.kind == "dict":
            return "{" + ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.data, self.children)) \
                + "}"
        if self.kind == "list":
            return f"[{inner}]"
        if self.kind == "namedtuple":
            return f"{self.data.__name__}({inner})"
        return f"({inner}{',' if len(self.children) == 1 else ''})"


_LEAF = PyTreeDef("leaf", None, ())
_NONE = PyTreeDef("none", None, ())


def _flat(x: Any, leaves: list, is_leaf: Callable[[Any], bool] | None) -> PyTreeDef:
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    if x is None:
        return _NONE
    if isinstance(x, dict):
        try:
            keys = tuple(sorted(x))
        except TypeError:
            raise ArgumentError(f"tree_util: a dict's keys must sort, as JAX sorts them "
                                f"{_where(user_src())}: {list(x)[:4]}") from None
        return PyTreeDef("dict", keys, tuple(_flat(x[k], leaves, is_leaf) for k in keys))
    if isinstance(x, tuple) and hasattr(type(x), "_fields"):
        return PyTreeDef("namedtuple", type(x), tuple(_flat(c, leaves, is_leaf) for c in x))
    if type(x) in (tuple, list):
        return PyTreeDef(type(x).__name__, None, tuple(_flat(c, leaves, is_leaf) for c in x))
    leaves.append(x)
    return _LEAF


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list, PyTreeDef]:
    """The tree's leaves, in order (a dict's by sorted key), and its structure. `is_leaf`
    may stop the descent at a subtree it accepts, which then counts as one leaf."""
    leaves: list = []
    return leaves, _flat(tree, leaves, is_leaf)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The tree's leaves, in order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The tree's structure, without its leaves."""
    return tree_flatten(tree, is_leaf)[1]


def _build(td: PyTreeDef, it: Any) -> Any:
    if td.kind == "leaf":
        return next(it)
    if td.kind == "none":
        return None
    kids = [_build(c, it) for c in td.children]
    if td.kind == "dict":
        return dict(zip(td.data, kids))
    if td.kind == "namedtuple":
        return td.data(*kids)
    return tuple(kids) if td.kind == "tuple" else kids


def tree_unflatten(treedef: PyTreeDef, leaves: Any) -> Any:
    """A tree of this structure holding these leaves, in order."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ArgumentError(f"tree_unflatten: the structure {treedef!r} holds "
                            f"{treedef.num_leaves} leaves, {len(leaves)} were given "
                            f"{_where(user_src())}")
    return _build(treedef, iter(leaves))


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """The tree of f applied to each leaf of `tree` and the leaves at the same places in
    `rest`, which must have tree's structure (or, as in JAX, extend it below its leaves)."""
    leaves, td = tree_flatten(tree, is_leaf)
    others = []
    for r in rest:
        try:
            others.append(_flat_up_to(td, r))
        except ValueError as ex:
            raise ArgumentError(f"tree_map: the trees' structures differ ({ex}); the first "
                                f"is {td!r}{_where(user_src())}") from None
    return tree_unflatten(td, [f(x, *xs) for x, *xs in zip(leaves, *others)])


def _flat_up_to(td: PyTreeDef, x: Any) -> list:
    """x's subtrees at td's leaves, in order (ValueError where x's nodes differ from td's)."""
    if td.kind == "leaf":
        return [x]
    if td.kind == "none":
        if x is not None:
            raise ValueError(f"None against {type(x).__name__}")
        return []
    if td.kind == "dict":
        if not isinstance(x, dict) or tuple(sorted(x)) != td.data:
            raise ValueError(f"a dict with keys {list(td.data)} against "
                             f"{sorted(x) if isinstance(x, dict) else type(x).__name__}")
        kids = [x[k] for k in td.data]
    else:
        want = td.data if td.kind == "namedtuple" else (tuple if td.kind == "tuple" else list)
        if type(x) is not want or len(x) != len(td.children):
            raise ValueError(f"{td!r} against a {type(x).__name__} of "
                             f"{len(x) if hasattr(x, '__len__') else 1}")
        kids = list(x)
    return [y for c, k in zip(td.children, kids) for y in _flat_up_to(c, k)]
