"""Contractions whose operands are views: overlapping windows that the rewrites chose not
to copy, and operands whose batch letters do not nest. The matmul plan reshapes its
operands into a stack of matrices; for such a view that reshape would copy every window.
BLAS takes a view's matrices as they are when each has one unit stride and a leading
dimension no shorter than a row (`blas_view`), with the batch letters kept as np.matmul's
batch axes where they cannot merge (`BatchForms`); otherwise NumPy's einsum loop reads the
view in place (`unless_overlapping`), and where the model chose the loop for C-ordered
operands, a view the matmul reads in place is measured against it (`loop_unless_views`)."""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ... import kernels
from . import costs
from .timing import timings

# An operand whose elements the contraction uses fewer times than this is not worth copying
# for BLAS when it is an overlapping view (the copy costs more than the products it speeds up:
# a cost volume's windows are each used once; a convolution's windows once per filter).
FEW_USES = 4


def few_uses(work: int, shapes: list) -> tuple[bool, ...]:
    """Per operand: whether the contraction uses each of its elements fewer than FEW_USES
    times (its multiply-adds over its size)."""
    return tuple(work < FEW_USES * max(1, math.prod(s)) for s in shapes)


def unless_overlapping(plan: Callable, loop: Callable, few: tuple[bool, ...]) -> Callable:
    """`plan` (planned for C-ordered operands: the timings and the model see shapes only),
    or NumPy's einsum loop where an operand is a view that reads elements more than once
    (windows that the rewrites chose not to copy, `sliding_window_view(b, (H, W))` against
    an image: 'bc,debc->deb'): reshaping it for a matmul would copy every window (a
    cost-volume's 120 x 120 windows at 25 shifts: 1.5 ms against 76 us), when the
    contraction uses that operand's elements `few` times: windows each used once per filter
    of a convolution are still copied for the matmul (1.9 ms by the loop, 0.8 ms copied).
    A matmul plan that hands such a view to BLAS as it is (`in_place`: windows of rows,
    (n, k, d) with strides (d, d, 1), are k x d matrices of leading dimension d) copies
    nothing and is kept: 'ai,aij->aj' over (1994, 7, 16) windows, 80-85 us by the matmul
    against 113-118 us by the loop (load 4)."""
    fx, fy = few
    if not (fx or fy):
        return plan
    in_place = getattr(plan, "in_place", None)
    kept: dict[tuple, bool] = {}  # the operands' strides -> whether the plan reads them in place

    def run(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if fx and x.base is not None and reads_twice(x) or \
                fy and y.base is not None and reads_twice(y):
            if in_place is None:
                return loop(x, y)
            key = (x.strides, y.strides)
            ok = kept.get(key)
            if ok is None:
                ok = kept[key] = in_place(x, y)
            return plan(x, y) if ok else loop(x, y)
        return plan(x, y)
    return run


def loop_unless_views(spec: str, mm: Callable, loop: Callable) -> Callable:
    """NumPy's einsum loop (chosen for C-ordered operands), or the matmul plan where an
    operand is an overlapping view (windows) that the matmul hands to BLAS as it is: the
    choice made for C order charged the matmul copies the view does not need, and the loop
    reads a view of 4 axes through a slow iterator (windows of a heads-first (H, T, D)
    array, 'ahkd,had->ahk' over (996, 4, 5, 16): loop 297 us, matmul in place 181 us, load
    10; yet 3-row windows of 4 channels: loop 56 us, matmul 120). Which one runs is
    measured once per machine and operand strides (`kernels.choose`, family "einsum_view")
    on the operands themselves; deterministic mode takes the model's."""
    seen: dict[tuple, Callable] = {}  # the operands' strides -> the plan that runs them

    def run(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if not (x.base is not None and reads_twice(x) or y.base is not None and
                reads_twice(y)):
            return loop(x, y)
        key = (x.strides, y.strides)
        plan = seen.get(key)
        if plan is None:
            plan = seen[key] = _view_plan(spec, mm, loop, x, y)
        return plan(x, y)
    return run


def _view_plan(spec: str, mm: Callable, loop: Callable, x: np.ndarray, y: np.ndarray
               ) -> Callable:
    if not mm.in_place(x, y):  # type: ignore[attr-defined]
        return loop
    shapes = [x.shape, y.shape]
    item = max(x.itemsize, y.itemsize)
    key = (spec, tuple(shapes), (x.strides, y.strides), (x.dtype.str, y.dtype.str))
    name = kernels.choose("einsum_view", key, lambda m: {
        "loop": costs.einsum_loop(m, spec, shapes, item),
        "mm": costs.matmul_in_place(m, spec, shapes, item)},
        lambda: dict(zip(("loop", "mm"), timings([loop, mm], [x, y]))), tune=True)
    return mm if name == "mm" else loop


def reads_twice(x: np.ndarray) -> bool:
    """Whether view x has more elements than the array that owns its memory (as_strided's
    views hold their array behind a stand-in object)."""
    owner, b = None, x.base
    while b is not None:
        if isinstance(b, np.ndarray):
            owner = b
        b = getattr(b, "base", None)
    return owner is not None and x.size > owner.size


class BatchForms:
    """The shapes the matmul plan multiplies its (transposed) operands in, per operand
    strides: the batch letters merged into one axis, or kept as batch axes of np.matmul
    where merging them would copy an operand (the letters' strides do not nest: windows
    over the middle axis of a heads-first (H, T, D) array, 'ahkd,had->ahk') and each
    matrix is one BLAS takes as it is: no copy ((996, 4, 5, 16) windows 297 us by the
    einsum loop, 289 copied, 179 in place, load 10)."""

    def __init__(self, merged: tuple, kept: tuple, swapped: tuple):
        self.merged, self.kept, self.swapped = merged, kept, swapped
        self.seen: dict[tuple, tuple] = {}

    def __call__(self, x: np.ndarray, y: np.ndarray) -> tuple:
        key = (x.strides, y.strides)
        f = self.seen.get(key)
        if f is None:
            f = self.seen[key] = self.merged if len(self.kept[0]) < 4 or all(
                _is_view(o, s) for o, s in zip((x, y), self.merged)) or not all(
                blas_view(o, s, t) for o, s, t in zip((x, y), self.kept, self.swapped)) \
                else self.kept
        return f

    def in_place(self, x: np.ndarray, y: np.ndarray) -> bool:
        """Whether the operands are multiplied as they are (no copy of either)."""
        return all(blas_view(o, s, t) for o, s, t in zip((x, y), self(x, y), self.swapped))


def _is_view(x: np.ndarray, shape: tuple[int, ...]) -> bool:
    try:
        np.reshape(x, shape, copy=False)
    except (ValueError, TypeError):
        return False
    return True


BLAS_TYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))


def blas_view(x: np.ndarray, shape: tuple[int, ...], swapped: bool) -> bool:
    """Whether x reshaped to `shape` (a stack of matrices, `swapped` as the matmul plan
    hands them over) is a view whose matrices BLAS takes as they are: one unit stride and
    a leading dimension no shorter than a row (NumPy's matmul copies anything else), of a
    type BLAS has (NumPy multiplies other types, float16 or integers, in a loop of its own
    with no SIMD: there np.einsum's loop is kept)."""
    if x.dtype not in BLAS_TYPES:
        return False
    try:
        v = np.reshape(x, shape, copy=False)
    except (ValueError, TypeError):
        return False
    v = v.swapaxes(-2, -1) if swapped else v
    (r, c), (sr, sc), item = v.shape[-2:], v.strides[-2:], v.itemsize
    return sc == item and (r == 1 or sr >= c * item) or sr == item and (c == 1 or sc >= r * item)


__all__ = ["BLAS_TYPES", "FEW_USES", "BatchForms", "blas_view", "few_uses", "loop_unless_views",
           "reads_twice", "unless_overlapping"]
