"""NumPy kernels of the shape, indexing and write primitives: views written inline, writes
done in place into a dead buffer, scatter-adds through a plan built when compiling."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...primitives.structural import is_basic, to_key, write_into
from .gathers import scatter_add_plan
from .lowering import VIEW, Lowering


def _getitem(avals: list, idx: tuple) -> Any:
    key = to_key(idx)
    return lambda x: x[key]


def _add_inplace(base: np.ndarray, v: np.ndarray, idx: tuple) -> np.ndarray:
    if not idx:
        return np.array(base + v, base.dtype)
    if base.__class__ is not np.ndarray:  # a NumPy scalar, indexed as x[None] or x[...]
        base = np.array(base)
    if is_basic(idx):
        base[to_key(idx)] += v
        return base
    return scatter_add_plan(idx, base.shape, base.dtype)(base, v)  # repeats accumulate


def _add(avals: list, idx: tuple) -> Any:
    if is_basic(idx):
        return lambda base, v: _add_inplace(np.array(base), v, idx)
    plan = scatter_add_plan(idx, avals[0].shape, avals[0].dtype)  # (measured while compiling)
    return lambda base, v: plan(np.array(base), v)


def _statements(op: str) -> Callable[..., list[str] | None]:
    """`out[key] op v` on operand 0's buffer (in place) or a copy of it, for a basic index
    into an array (not a 0-d value, which generated code may hold as a NumPy scalar): what
    write_into and _add_inplace do, without their per-call index conversion."""
    def write(out: str, xs: list[str], p: dict, avals: list, bind: Callable,
              inplace: bool) -> list[str] | None:
        idx = p["idx"]
        if not idx or not avals[0].shape or not is_basic(idx):
            return None
        return [f"{out} = {xs[0]}" if inplace else f"{out} = _copy({xs[0]})",
                f"{out}[{bind(to_key(idx))}] {op} {xs[1]}"]
    return write


def _stack(avals: list, axis: int) -> Any:
    """Along the first axis, np.array builds the stack without np.stack's per-operand
    expand_dims and checks: 0.4-1 us against 3-8 us for a few scalars or short vectors (a
    vector assembled from scalars in each step of a rolled loop), never slower when large."""
    if axis:
        return lambda *xs: np.stack(xs, axis)
    dtype = np.result_type(*[a.dtype for a in avals])
    return lambda *xs: np.array(xs, dtype)


LOWERINGS = {
    "getitem": Lowering(lower=_getitem, view=True,
                        inline=lambda xs, p, bind: f"{xs[0]}[{bind(to_key(p['idx']))}]"),
    "setitem": Lowering(inplace=write_into, write=_statements("=")),
    "setitem_add": Lowering(lower=_add, inplace=_add_inplace, write=_statements("+=")),
    "reshape": Lowering(view=True,
                        inline=lambda xs, p, bind: f"{xs[0]}.reshape({bind(p['shape'])})"),
    "transpose": Lowering(view=True,
                          inline=lambda xs, p, bind: f"{xs[0]}.transpose({bind(p['perm'])})"),
    "broadcast_to": VIEW,
    "stack": Lowering(lower=_stack),
}
