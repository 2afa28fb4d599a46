"""Large contractions that are one `np.matmul` as written (BLAS, no copies), outside kernels.

A two-operand einsum `...ij,...jk->...ik` (batch letters broadcasting as NumPy broadcasts
matmul's leading axes) is a (batched) matrix product of the operands as they lie in memory.
Other large contractions go to the NumPy backend's planner.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...ir import Eqn
from .regions import letters


def _suffix(part: str, of: str) -> bool:
    return of.endswith(part) or not part


def matmul_form(spec: str) -> tuple[bool, bool] | None:
    """(swap, True): whether `spec` is matmul(x, y) (swap False) or matmul(y, x) with the
    operands' roles exchanged (swap True); None if it is neither."""
    ls = letters(spec)
    if ls is None or len(ls[0]) != 2:
        return None
    (x, y), out = ls
    for swap, (a, b) in ((False, (x, y)), (True, (y, x))):
        if len(a) < 2 or len(b) < 2 or len(out) < 2:
            continue
        i, j, j2, k = a[-2], a[-1], b[-2], b[-1]
        batch = out[:-2]
        if j != j2 or out[-2:] != i + k or j in out or len({i, j, k}) != 3:
            continue
        if len(set(a)) != len(a) or len(set(b)) != len(b):
            continue
        if _suffix(a[:-2], batch) and _suffix(b[:-2], batch) and \
                set(batch) <= set(a[:-2]) | set(b[:-2]):
            return swap, True
    return None


def lowering(e: Eqn) -> Callable[..., Any] | None:
    """np.matmul for einsum/muladd equation e when it is one, else None."""
    if e.prim.name not in ("einsum", "muladd"):
        return None
    form = matmul_form(e.params["spec"])
    if form is None:
        return None
    swap = form[0]
    x, y = e.inputs[:2]
    out = e.out.aval
    if x.aval.dtype != out.dtype or y.aval.dtype != out.dtype:
        return None
    if e.prim.name == "einsum":
        return (lambda x, y: np.matmul(y, x)) if swap else np.matmul
    c = e.inputs[2].aval
    if c.dtype != out.dtype or np.broadcast_shapes(c.shape, out.shape) != out.shape:
        return None

    def muladd(x: np.ndarray, y: np.ndarray, c: np.ndarray) -> np.ndarray:
        r = np.matmul(y, x) if swap else np.matmul(x, y)
        r += c
        return r
    return muladd
