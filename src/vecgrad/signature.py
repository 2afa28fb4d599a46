"""Call signatures: the cache key of a call and the array leaves that compiled code receives.

The arguments of a call (positional and keyword) are pytrees (tuple, list, dict, None) whose
leaves are NumPy arrays and scalars (or tracers, in a nested call). Everything else is
static: hashable, part of the key, passed to the function as it is. The key of a call is its
treedef (structure and static values) and the shape and dtype of each leaf.

- **Python numbers as arguments.** An int, float or complex passed directly as an argument
  (not inside a container) is a *weak* leaf: traced as a 0-d value that takes the dtype of
  the arrays it meets (weak.WeakScalar), so a new value does not compile again. Where the
  function needs the value itself (a shape, a `range`, an `if`, an index) the argument is
  made static for that function (`static` below, found by the api) and keyed by its value.
  Bools stay static (they are flags), and so do numbers inside containers (index lists,
  shapes, configurations), except in a differentiated argument (`deep` below), where, as in
  JAX, floats and complex numbers are weak leaves too, so grad of `{"w": w, "scale": 2.0}`
  gives a gradient for "scale" (ints there are refused: staging.wrt_leaves).
- **Big static data.** A list, tuple or dict of at least MEMO_MIN items with no array inside
  is flattened once and then recognized by identity (see `pytree.flat`, the one flattener of
  arguments and results).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .ir import Aval
from .pytree import _TO_NUMPY, ARRAY, _build, clear_memo, flat, leaf_kinds, leaf_signature
from .tracing import Tracer

__all__ = ["ARRAY", "Call", "array_call", "clear_memo", "flatten_call", "positional_call",
           "unflatten_call"]

_WEAK = {float: ("weak", 0.0), int: ("weak", 0), complex: ("weak", 0j)}


def _arg(x: Any, leaves: list, weak: bool, deep: bool = False) -> Any:
    """One argument's treedef; a Python number becomes a weak leaf when `weak`, and so do the
    floats and complex numbers inside its containers when `deep`."""
    t = type(x)
    if t is np.ndarray:
        leaves.append(x)
        return ARRAY
    if weak and t in _WEAK and (t is not int or -2 ** 63 <= x < 2 ** 63):
        leaves.append(_TO_NUMPY[t](x))
        return _WEAK[t]
    if isinstance(x, Tracer) and x._weak:
        leaves.append(x)
        return ("weak", x._kind)
    return flat(x, leaves, deep and weak)


def flatten_call(args: tuple, kwargs: dict, static: frozenset = frozenset(),
                 trace_scalars: bool = True, deep: frozenset = frozenset()
                 ) -> tuple[list, Any, tuple]:
    """(leaves, treedef, signature) of a call. `static`: positions (ints) and keyword names
    of Python-number arguments to treat as static values; `deep`: positions whose
    containers' Python floats are weak leaves (the differentiated arguments)."""
    leaves: list = []
    tds = tuple([_arg(a, leaves, trace_scalars and i not in static, i in deep)
                 for i, a in enumerate(args)])
    kw = None
    if kwargs:
        keys = tuple(sorted(kwargs))
        kw = ("dict", keys, tuple([_arg(kwargs[k], leaves, trace_scalars and k not in static)
                                   for k in keys]))
    sig = tuple([(x.shape, x.dtype) if isinstance(x.dtype, np.dtype) else leaf_signature(x)
                 for x in leaves])  # (arrays, NumPy scalars, tracers; torch's own dtypes)
    return leaves, (tds, kw), sig


_POSITIONAL = {np.ndarray: ARRAY, np.float64: ARRAY, float: _WEAK[float]}


def positional_call(args: tuple, static: frozenset, trace_scalars: bool
                    ) -> tuple[list, Any, tuple] | None:
    """flatten_call for positional NumPy arrays, float64 scalars and Python floats (weak
    leaves, unless static), quickly: a compiled function called in a Python loop with a
    float and an array (a force at a position, a step size) pays this on every call. None
    for any other call."""
    leaves = list(args)
    tds = []
    for i, x in enumerate(args):
        t = _POSITIONAL.get(type(x))
        if t is None:
            return None
        if t is not ARRAY:
            if not trace_scalars or i in static:
                return None
            leaves[i] = np.float64(x)
        tds.append(t)
    return leaves, (tuple(tds), None), tuple([(x.shape, x.dtype) for x in leaves])


def array_call(args: tuple) -> tuple[list, Any, tuple]:
    """flatten_call for positional NumPy arrays only (the common call, quickly)."""
    return list(args), ((ARRAY,) * len(args), None), tuple([(x.shape, x.dtype) for x in args])


def unflatten_call(td: Any, leaves: list) -> tuple[tuple, dict]:
    """The (args, kwargs) of a call from its treedef and (new) leaves."""
    it = iter(leaves)
    args = tuple([_build(t, it) for t in td[0]])
    kwargs = {k: _build(t, it) for k, t in zip(td[1][1], td[1][2])} if td[1] else {}
    return args, kwargs


class Call:
    """What compiling needs to know about a call: its treedef, the abstract value of each
    leaf, which leaves are weak Python numbers, and which leaves each argument holds."""

    def __init__(self, td: Any, sig: tuple):
        self.td = td
        self.avals = [Aval(tuple(s), np.dtype(d)) for s, d in sig]
        self.weak: list = []  # per leaf: None, or 0 / 0.0 / 0j for a weak Python number
        self.ranges: list[range] = []  # leaves of each positional argument
        for t in td[0]:
            start = len(self.weak)
            self.ranges.append(range(start, len(leaf_kinds(t, self.weak))))
        self.kw_positions: list[tuple[str, range]] = []
        if td[1]:
            for k, t in zip(td[1][1], td[1][2]):
                start = len(self.weak)
                self.kw_positions.append((k, range(start, len(leaf_kinds(t, self.weak)))))

    @property
    def nargs(self) -> int:
        return len(self.td[0])

    def position_of(self, leaf: int) -> int | str:
        """The argument (position or keyword) holding a leaf."""
        for i, r in enumerate(self.ranges):
            if leaf in r:
                return i
        return next(k for k, r in self.kw_positions if leaf in r)
