"""autograd.misc.flatten: a pytree of arrays as one float vector, and back.

Both directions are plain vecgrad.numpy code, so they work on traced values too (the flat
vector of `flatten_func` is differentiated through `unflatten`)."""
from __future__ import annotations

from typing import Any

import vecgrad.numpy as vnp
from vecgrad.pytree import flatten as _tree_flatten
from vecgrad.pytree import unflatten as _tree_unflatten


def flatten(value: Any) -> tuple[Any, Any]:
    """(vector, unflatten): the leaves of `value` raveled and concatenated, and the function
    that rebuilds a pytree of `value`'s structure, shapes and dtypes from such a vector."""
    leaves, treedef = _tree_flatten(value)
    leaves = [vnp.asarray(x) for x in leaves]
    shapes = [vnp.shape(x) for x in leaves]
    sizes = [int(vnp.size(x)) for x in leaves]
    flat = vnp.concatenate([vnp.ravel(x) for x in leaves]) if leaves else vnp.zeros(0)

    def unflatten(vector: Any) -> Any:
        out, start = [], 0
        for shape, size in zip(shapes, sizes):
            out.append(vnp.reshape(vector[start:start + size], shape))
            start += size
        return _tree_unflatten(treedef, out)
    return flat, unflatten


def flatten_func(func: Any, example: Any) -> tuple[Any, Any, Any]:
    """(flat_func, unflatten, flat_example) for `func(params, *args)` taking a pytree."""
    flat, unflatten = flatten(example)

    def flat_func(vector: Any, *args: Any) -> Any:
        return func(unflatten(vector), *args)
    return flat_func, unflatten, flat
