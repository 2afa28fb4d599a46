"""Call signatures: the cache key of a call and the array leaves that compiled code receives.

The arguments of a call (positional and keyword) are pytrees (tuple, list, dict, None) whose
leaves are NumPy arrays and scalars (or tracers, in a nested call). Everything else is
static: hashable, part of the key, passed to the function as it is. The key of a call is its
treedef (structure and static values) and the shape and dtype of each leaf.

- **Python numbers as arguments.** An int, float or complex passed directly as an argument
  (not inside a container) is a *weak* leaf: traced as a 0-d value that takes the dtype of
  the arrays it meets (tracing.WeakScalar), so a new value does not compile again. Where the
  function needs the value itself (a shape, a `range`, an `if`, an index) the argument is
  made static for that function (`static` below, found by the api) and keyed by its value.
  Bools stay static (they are flags), and so do numbers inside containers (index lists,
  shapes, configurations).
- **Big static data.** A list, tuple or dict of at least MEMO_MIN items with no array inside
  (an edge list of index pairs, say) is flattened once and then recognized by identity: a
  tuple of immutable values cannot change, so the same object has the same key; a list or
  dict can, so it is compared with a snapshot taken when it was first seen (a C-speed
  comparison that stops at identical items: about 0.4 ns per item). A list of lists is not
  memoized (an inner list could change unseen) and is flattened on every call.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .ir import Aval
from .pytree import StaticData, _build, is_leaf, leaf_signature
from .tracing import Tracer

ARRAY = ("*",)
MEMO_MIN = 32  # shorter containers are flattened each call (cheaper than a memo lookup)
MEMO_SIZE = 256  # big static containers remembered by identity (cleared when full)
_MEMO: dict[int, tuple[Any, Any, Any]] = {}  # id(container) -> (it, snapshot, its treedef)
_WEAK = {float: ("weak", 0.0), int: ("weak", 0), complex: ("weak", 0j)}
_TO_NUMPY = {float: np.float64, int: np.int64, complex: np.complex128}
_IMMUTABLE = (int, float, complex, bool, str, bytes, type(None), range)


def _frozen(x: Any) -> bool:
    """Whether x can never change (so identity implies equal contents)."""
    t = type(x)
    if t is tuple:
        return all(_frozen(c) for c in x)
    return t in _IMMUTABLE


def _memoize(x: Any, td: Any) -> Any:
    if not all(_frozen(c) for c in (x.values() if type(x) is dict else x)):
        return td
    if len(_MEMO) >= MEMO_SIZE:
        _MEMO.clear()
    snapshot = None if type(x) is tuple else (dict(x) if type(x) is dict else list(x))
    out = ("static", type(x), StaticData(x if snapshot is None else type(x)(snapshot), td))
    _MEMO[id(x)] = (x, snapshot, out)
    return out


def _flat(x: Any, leaves: list) -> Any:
    t = type(x)
    if t is np.ndarray:
        leaves.append(x)
        return ARRAY
    if t is tuple or t is list or t is dict:
        big = len(x) >= MEMO_MIN
        if big:
            hit = _MEMO.get(id(x))
            if hit is not None and hit[0] is x and (t is tuple or x == hit[1]):
                return hit[2]
        n = len(leaves)
        if t is dict:
            keys = sorted(x, key=repr)
            td = ("dict", tuple(keys), tuple([_flat(x[k], leaves) for k in keys]))
        else:
            td = (t.__name__, tuple([_flat(c, leaves) for c in x]))
        return _memoize(x, td) if big and len(leaves) == n else td
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # a NamedTuple, as pytree.flatten
        return ("tuple", tuple([_flat(c, leaves) for c in x]), t)
    if isinstance(x, Tracer) or is_leaf(x):  # (also the arrays of a loaded jax/torch backend)
        leaves.append(x)
        return ARRAY
    if x is None:
        return ("None",)
    try:
        hash(x)
    except TypeError:
        raise TypeError(f"vecgrad cannot use a {t.__name__} as an argument: arguments "
                        "are pytrees (tuple, list, dict, None) of NumPy arrays, and any other "
                        "value is static and must be hashable") from None
    return ("static", t, x)


def _arg(x: Any, leaves: list, weak: bool) -> Any:
    """One argument's treedef; a Python number becomes a weak leaf when `weak`."""
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
    return _flat(x, leaves)


def flatten_call(args: tuple, kwargs: dict, static: frozenset = frozenset(),
                 trace_scalars: bool = True) -> tuple[list, Any, tuple]:
    """(leaves, treedef, signature) of a call. `static`: positions (ints) and keyword names
    of Python-number arguments to treat as static values."""
    leaves: list = []
    tds = tuple([_arg(a, leaves, trace_scalars and i not in static)
                 for i, a in enumerate(args)])
    kw = None
    if kwargs:
        keys = tuple(sorted(kwargs))
        kw = ("dict", keys, tuple([_arg(kwargs[k], leaves, trace_scalars and k not in static)
                                   for k in keys]))
    sig = tuple([(x.shape, x.dtype) if isinstance(x.dtype, np.dtype) else leaf_signature(x)
                 for x in leaves])  # (arrays, NumPy scalars, tracers; torch's own dtypes)
    return leaves, (tds, kw), sig


def array_call(args: tuple) -> tuple[list, Any, tuple]:
    """flatten_call for positional NumPy arrays only (the common call, quickly)."""
    return list(args), ((ARRAY,) * len(args), None), tuple([(x.shape, x.dtype) for x in args])


def unflatten_call(td: Any, leaves: list) -> tuple[tuple, dict]:
    """The (args, kwargs) of a call from its treedef and (new) leaves."""
    it = iter(leaves)
    args = tuple([_build(t, it) for t in td[0]])
    kwargs = {k: _build(t, it) for k, t in zip(td[1][1], td[1][2])} if td[1] else {}
    return args, kwargs


def _count(td: Any) -> int:
    kind = td[0]
    if kind == "*" or kind == "weak":
        return 1
    if kind in ("tuple", "list"):
        return sum(_count(c) for c in td[1])
    if kind == "dict":
        return sum(_count(c) for c in td[2])
    return 0


def _weak_kinds(td: Any, out: list) -> None:
    kind = td[0]
    if kind == "*" or kind == "weak":
        out.append(td[1] if kind == "weak" else None)
    elif kind in ("tuple", "list"):
        for c in td[1]:
            _weak_kinds(c, out)
    elif kind == "dict":
        for c in td[2]:
            _weak_kinds(c, out)


class Call:
    """What compiling needs to know about a call: its treedef, the abstract value of each
    leaf, which leaves are weak Python numbers, and which leaves each argument holds."""

    def __init__(self, td: Any, sig: tuple):
        self.td = td
        self.avals = [Aval(tuple(s), np.dtype(d)) for s, d in sig]
        kinds: list = []
        for t in td[0] + ((td[1],) if td[1] else ()):
            _weak_kinds(t, kinds)
        self.weak = kinds  # per leaf: None, or 0 / 0.0 / 0j for a weak Python number
        self.ranges: list[range] = []  # leaves of each positional argument
        start = 0
        for t in td[0]:
            n = _count(t)
            self.ranges.append(range(start, start + n))
            start += n
        self.kw_positions: list[tuple[str, range]] = []
        if td[1]:
            for k, t in zip(td[1][1], td[1][2]):
                n = _count(t)
                self.kw_positions.append((k, range(start, start + n)))
                start += n

    @property
    def nargs(self) -> int:
        return len(self.td[0])

    def position_of(self, leaf: int) -> int | str:
        """The argument (position or keyword) holding a leaf."""
        for i, r in enumerate(self.ranges):
            if leaf in r:
                return i
        return next(k for k, r in self.kw_positions if leaf in r)


def clear_memo() -> None:
    """Forget the big static containers remembered by identity."""
    _MEMO.clear()
