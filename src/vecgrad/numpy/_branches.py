"""Python `if`s on an element's value inside np.vectorize's kernel: every path traced.

NumPy runs the kernel on each element, so `np.vectorize(lambda a: a * a if a > 0 else -a)`
takes, element by element, the branch its value picks. While tracing, values are not known;
but the kernel sees one element at a time, so each `bool()` of a one-element traced value is
a branch whose outcome can be chosen: the kernel is run once per sequence of outcomes (a
depth-first walk over them, at most MAX_PATHS paths of at most MAX_DEPTH decisions), each
run noting the conditions it asked about. An element takes path p where its conditions have
p's outcomes (`mask`); the result is NumPy's: the results of the paths selected by their
masks (the masks exclude each other and cover every element).

Gradients: each path runs again on its inputs passed through where(mask, x,
stop_gradient(x)), the same values, so a path that the element does not take (sqrt of a
negative, log of 0) sends its nan or inf cotangent nowhere (where's cotangent is a select).

What cannot be NumPy's exactly raises: paths whose results have different dtypes (NumPy takes
the first element's, which depends on its value: pass `otypes=`), a `while` on values (more
than MAX_DEPTH decisions) or more than MAX_PATHS paths (ConcretizationError, naming the line).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as _np

from .. import primitives as P
from ..errors import ConcretizationError, TraceError, user_src
from ..tracing import BRANCHES
from . import _ops
from ._base import asarray, astype, queried_dtype

__all__: list[str] = []

MAX_PATHS = 16
MAX_DEPTH = 12


class _Plan:
    """The outcomes of one run's bool()s: `prefix` first, then True; the conditions asked."""

    def __init__(self, prefix: tuple[bool, ...]):
        self.prefix, self.taken, self.conds = prefix, [], []

    def __call__(self, cond: Any) -> bool:
        d = len(self.taken)
        if d >= MAX_DEPTH:
            raise ConcretizationError(
                f"bool() more than {MAX_DEPTH} times in one call of np.vectorize's kernel "
                "(a `while` on values?)", user_src(2))
        out = self.prefix[d] if d < len(self.prefix) else True
        self.taken.append(out)
        self.conds.append(cond)
        return out


def _run(call: Callable[[], Any], prefix: tuple[bool, ...]) -> tuple[_Plan, Any]:
    plan = _Plan(prefix)
    BRANCHES.append(plan)
    try:
        return plan, call()
    finally:
        BRANCHES.pop()


def _mask(plan: _Plan) -> Any:
    """Where an element takes plan's path: each condition true or false as plan's outcome."""
    m = None
    for c, out in zip(plan.conds, plan.taken):
        c = c if queried_dtype(c) == _np.bool_ else _ops.not_equal(c, 0)  # (bool(x): x != 0)
        c = c if out else _ops.logical_not(c)
        m = c if m is None else _ops.logical_and(m, c)
    return m


def _guarded(x: Any, mask: Any) -> Any:
    """x, whose gradient is taken only where mask holds."""
    x = asarray(x)
    if queried_dtype(x).kind not in "fc":
        return x
    return _ops.where(mask, x, P.stop_gradient(x))


def _parts(r: Any) -> list:
    return [asarray(v) for v in r] if isinstance(r, tuple) else [asarray(r)]


def branched(pyfunc: Callable, elems: list, keys: list, npos: int,
             otypes: Any) -> Any:
    """pyfunc(*elems[:npos], **dict(zip(keys, elems[npos:]))) as NumPy computes it for one
    element whose value pyfunc may branch on (see the module)."""
    def call(xs: list) -> Callable[[], Any]:
        return lambda: pyfunc(*xs[:npos], **dict(zip(keys, xs[npos:])))

    first, result = _run(call(elems), ())
    if not first.taken:
        return result
    plans, todo = [first], [first.taken[:d] + [False] for d in range(len(first.taken))]
    while todo:
        plan, _ = _run(call(elems), tuple(todo.pop()))
        plans.append(plan)
        todo += [plan.taken[:d] + [False] for d in range(len(plan.prefix), len(plan.taken))]
        if len(plans) + len(todo) > MAX_PATHS:
            raise ConcretizationError(
                f"bool() on more than {MAX_PATHS} paths of np.vectorize's kernel", user_src(2))
    paths = []
    for plan in plans:
        mask = _mask(plan)
        again, res = _run(call([_guarded(e, mask) for e in elems]), tuple(plan.taken))
        assert again.taken == plan.taken, "a kernel's path changed between two runs"
        paths.append((mask, _parts(res), isinstance(res, tuple)))
    return _select(paths, otypes)


def _select(paths: list, otypes: Any) -> Any:
    """The paths' results, each where its mask holds."""
    kinds = {(multi, len(parts)) for _, parts, multi in paths}
    dtypes = {tuple(queried_dtype(v) for v in parts) for _, parts, _ in paths}
    if len(kinds) > 1 or (not otypes and len(dtypes) > 1):
        raise TraceError(
            "np.vectorize's kernel returns different types on different branches "
            f"({' / '.join(str([str(d) for d in ds]) for ds in sorted(dtypes, key=str))}); "
            "NumPy takes the result type from the first element, which depends on its value. "
            "Pass otypes= (for example np.vectorize(f, otypes=[float]))", user_src())
    want = [_np.dtype(t) for t in otypes] if otypes else list(next(iter(dtypes)))
    outs = None
    for mask, parts, _ in reversed(paths):
        parts = [astype(v, t) if queried_dtype(v) != t else v for v, t in zip(parts, want)]
        outs = parts if outs is None else [_ops.where(mask, v, o) for v, o in zip(parts, outs)]
    return tuple(outs) if paths[0][2] else outs[0]
