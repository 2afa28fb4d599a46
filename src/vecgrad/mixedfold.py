"""Python's max / min of traced ints and Python floats: `max(counts[i], 0.5)`.

Python compares the items and returns the winner itself: a NumPy int64 scalar where the
traced item wins, the float where the number does, so the result's dtype depends on the
values. vecgrad folds the ints in their dtype and compares the winner with the numbers as
NumPy does (in float64), and holds the value in float64: pybuiltins.EitherScalar with
`_case` the ints' dtype (its NumPy case) and a float64 value.

That value is NumPy's exactly wherever NumPy itself computes with the int in float64 or
complex128 (it converts the int as vecgrad did): `max(n[i], 0.5) * x[i]`, `x[i] / max(n[i],
1e-9)`, `max(n[i], 0.5) > 0.7`, `.astype(float)`. Anything that NumPy computes in the int's
own dtype where the int wins (`+ 1`, `** 2`, `-m`, `> 3`, np.sum of it, returning it) gives
a result whose dtype or value depends on which item won, and is refused with a TraceError
that says what to write instead."""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from .tracing import Tracer

# the dtypes NumPy converts the int to in the operations this value takes part in
_WIDE = (np.dtype(np.float64), np.dtype(np.complex128))


def is_mixed(x: Any) -> bool:
    """Whether `x` is such a fold (its NumPy case an int dtype, its value float64)."""
    return isinstance(x, Tracer) and x._depends and getattr(x, "_case", x.dtype) != x.dtype


def mixed(items: list) -> str | None:
    """'ints': traced 0-d ints of one dtype and Python numbers, a float among them; 'folds':
    such folds (of one int dtype) and Python numbers (a fold of a fold, `min(max(n[i], 0.5),
    2.5)`); else None. No NaN, no bool, no int past 2**53: the fold's value is then the same
    in any order, and each comparison in float64 is NumPy's."""
    traced = [x for x in items if isinstance(x, Tracer)]
    nums = [x for x in items if not isinstance(x, Tracer)]
    if not traced or not nums or any(type(x) not in (int, float) or math.isnan(x) or
                                     abs(x) > 2 ** 53 for x in nums):
        return None
    if all(is_mixed(x) and x._case == traced[0]._case and not x._ndarray for x in traced):
        return "folds"
    if traced[0].dtype.kind not in "iu" or any(
            x.shape != () or x.dtype != traced[0].dtype or x._weak or x._depends
            for x in traced):
        return None
    return "ints" if any(type(x) is float for x in nums) else None


def _numbers(args: Any, me: Tracer) -> list:
    """The Python numbers (and the traced ones' kinds) among a primitive's arguments."""
    out = []
    for a in args:
        if a is me:
            continue
        if isinstance(a, Tracer) and a._weak:
            out.append(a._kind)
        elif isinstance(a, (int, float, complex)) and not isinstance(a, np.generic):
            out.append(a)
    return out


def check_use(me: Any, prim: Any, args: Any, params: dict, dtypes: Any, joins: bool) -> None:
    """`prim(*args)` of the fold `me` (tracing.bind): allowed where NumPy computes in float64
    or complex128 in every case (its int converted as vecgrad did), else refused."""
    if prim.name == "cast":
        out = np.dtype(params.get("dtype", me.dtype))
        if out in _WIDE:
            return
        raise me.ambiguous({me._case, out}, f"the cast to {out}: its")
    if not prim.elementwise and not joins:  # (np.sum / np.reshape of it: int64 or float64)
        raise me.ambiguous(me.outcomes((), True), "this operation's")
    nums = [np.asarray(n).dtype if joins else n for n in _numbers(args, me)]
    pys = [np.asarray(k(0)).dtype if joins else k(0) for k in me._kinds]
    cases = {np.result_type(*dtypes, *nums, c) for c in [me._case, *pys]}
    if len(cases) > 1 or next(iter(cases)) not in _WIDE:
        raise me.ambiguous(cases | {me._case}, "this operation's")

_SAMPLE = {int: 1, float: 1.5, complex: 1.5j}


def check_arithmetic(me: Any, other: Any, base: str, swap: bool, binary: bool) -> None:
    """Python arithmetic of the fold (pybuiltins._either_op): allowed where the int case's
    result is float64 / complex128 (`* 2.0`, `/ 3`, `** 0.5`), else refused (`+ 1`: int64
    arithmetic where the int wins)."""
    if not binary or getattr(other, "_case", None) not in (None, getattr(other, "dtype", None)):
        raise me.ambiguous({me._case, np.dtype(np.float64)}, "this operation's")
    op = getattr(operator, base[1:] if swap else base)
    kinds = other._kinds if hasattr(other, "_kinds") else \
        (type(other._kind),) if isinstance(other, Tracer) else (type(other),)
    dts = set()
    for k in kinds:
        o = other if not isinstance(other, Tracer) else _SAMPLE.get(k, 1)
        a = np.ones((), me._case)[()]
        try:
            r = op(o, a) if swap else op(a, o)
        except (ArithmeticError, TypeError, ValueError):
            dts.add(None)
            continue
        dts.add(np.asarray(r).dtype)
    if not dts <= set(_WIDE):
        got = {d for d in dts if d is not None} | {np.dtype(np.float64)}
        raise me.ambiguous(got, "this operation's")

