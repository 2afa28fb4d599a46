"""NumPy kernels of the reductions: a sum over a short last axis, or over the leading axes, as a
BLAS product with ones (also inside the fused softmax VJP); complex parts and AD markers as
views; affine_scan and cumprod_grad with their reshapes and plans bound once (the impls' own
choice per call costs about 15 us)."""
from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...ir import Aval
from ...primitives.cumulative import cumprod_grad_runner
from ...primitives.elementwise import reduce_along
from ...primitives.nn import softmax_vjp
from ...primitives.scanrun import affine_runner, linear_runner
from .lowering import VIEW, Lowering


def row_sum(aval: Aval) -> Callable[[np.ndarray], np.ndarray] | None:
    """A sum over the last axis as a BLAS product with ones (bound once, when compiling), or
    None where NumPy's own sum is as good. Short rows are where it pays: 1.2 us against
    1.8 us for (16, 4, 16) float32, 5 against 10 for (160, 4, 16)."""
    if aval.dtype.kind != "f" or aval.ndim < 2 or not 2 <= aval.shape[-1] <= 256:
        return None
    ones = np.ones(aval.shape[-1], aval.dtype)
    return lambda x: np.matmul(x, ones)


def column_sum(aval: Aval, axes: tuple[int, ...]) -> Callable[[np.ndarray], np.ndarray] | None:
    """A sum over the leading axes as a BLAS product of ones with the rows (bound once, when
    compiling), or None where NumPy's own sum is as good. NumPy reduces an outer axis row by
    row, one inner loop per row: 39 us against 4 us for (3000, 16), 7 ms against 27 us for
    (100000, 2), float64 here. Both add each column's entries in order, as one running sum."""
    n = len(axes)
    if aval.dtype not in (np.float32, np.float64) or not 0 < n < aval.ndim or \
            axes != tuple(range(n)) or aval.size == 0:
        return None
    lead, rest = math.prod(aval.shape[:n]), aval.shape[n:]
    ones, flat, red = np.ones(lead, aval.dtype), (lead, math.prod(rest)), np.add.reduce
    if aval.ndim == 2:
        return lambda x: np.matmul(ones, x)

    def run(x: np.ndarray) -> np.ndarray:
        if x.flags.c_contiguous:  # (a view, reshaped without a copy)
            return np.matmul(ones, x.reshape(flat)).reshape(rest)
        return red(x, axes)
    return run


MIDDLE_MIN = 4096  # elements from which a sum over middle axes is worth its own kernel
SHORT_INNER = 32  # a kept last axis shorter than this makes NumPy's reduce loop slow
FEW_SLICES = 16  # reduced positions up to which a sum over strided axes adds slices


def middle_sum(aval: Aval, axes: tuple[int, ...]) -> Callable[[np.ndarray], np.ndarray] | None:
    """A sum over axes that are neither the leading ones nor the last alone, where NumPy's
    reduce runs one inner loop per short row, or None where its reduce is as good:
    - the last axis kept and short: np.einsum ('abc->ac'), which walks the kept axes
      outside: (1994, 7, 16) over axis 1 in 66 us against 202 (np.add.reduce), (4000, 3, 8)
      in 37 against 195 (loaded machine, one process);
    - the last axis summed with others, not as one trailing block (a pooling's blocks
      (12, 2, 12, 2, 12, 2) over (1, 3, 5)): the few reduced positions' slices added in
      place, 12 us against 82 (reduce) and 44 (einsum).
    Each output entry adds its terms in order, as one running sum."""
    n = aval.ndim
    if aval.dtype.kind not in "fc" or n < 2 or aval.size < MIDDLE_MIN or \
            axes == (n - 1,) or axes == tuple(range(len(axes))):
        return None
    if n - 1 not in axes:
        if aval.shape[-1] >= SHORT_INNER:
            return None
        letters = "abcdefghijklmnopqrstuvwxyz"[:n]
        spec = letters + "->" + "".join(c for i, c in enumerate(letters) if i not in axes)
        return lambda x: np.einsum(spec, x)
    reduced = [aval.shape[a] for a in axes]
    if axes == tuple(range(n - len(axes), n)) or not 2 <= math.prod(reduced) <= FEW_SLICES:
        return None  # (a trailing block: one inner loop over it)
    idxs = []
    for sub in np.ndindex(*reduced):
        idx: list[Any] = [slice(None)] * n
        for a, v in zip(axes, sub):
            idx[a] = v
        idxs.append(tuple(idx))
    first, second, rest = idxs[0], idxs[1], idxs[2:]

    def run(x: np.ndarray) -> np.ndarray:
        out = np.add(x[first], x[second])
        for i in rest:
            np.add(out, x[i], out=out)
        return out
    return run


def _short_rows(aval: Aval, axes: tuple[int, ...]) -> bool:
    """Whether reduce_along would transpose (many short rows: `short_last_axis`)."""
    s = aval.shape
    return axes == (len(s) - 1,) and 2 <= s[-1] <= 64 and math.prod(s) >= 32 * s[-1]


def _reducer(ufunc: np.ufunc, fn: Callable) -> Callable[..., Callable[..., np.ndarray]]:
    """The kernel of a reduction: the ufunc's own reduce, bound once (np.sum / np.max add
    1-3 us of argument handling per call: a third of a small logsumexp gradient), or
    reduce_along's transposed copy where the rows are short. A whole reduction returns a
    0-d array, as reduce_along does."""
    def lower(avals: list[Aval], axes: tuple[int, ...]) -> Callable[..., np.ndarray]:
        if _short_rows(avals[0], axes):
            return lambda x: reduce_along(fn, x, axes)
        red, arr = ufunc.reduce, np.asarray
        if len(axes) == len(avals[0].shape):  # a 0-d array, not a NumPy scalar: ufuncs
            return lambda x: arr(red(x, axes))  # take it faster, and it reshapes faster
        return lambda x: red(x, axes)
    return lower


def sum_kernel(aval: Aval, axes: tuple[int, ...]) -> Callable[[np.ndarray], np.ndarray]:
    """The fastest of the kernels above for a sum of `aval` over `axes`, else the ufunc's
    reduce (also the einsum planner's, for letters summed in one operand only)."""
    fast = row_sum(aval) if axes == (aval.ndim - 1,) else column_sum(aval, axes)
    return fast or middle_sum(aval, axes) or _reducer(np.add, np.sum)([aval], axes)


def _reduce_sum(avals: list[Aval], axes: tuple[int, ...]) -> Callable[..., np.ndarray]:
    return sum_kernel(avals[0], axes)


def _softmax_vjp(avals: list[Aval], axis: int) -> Any:
    """p * (g - <g, p>), the sum over a last axis by row_sum."""
    out = softmax_vjp.shape_rule(*avals, axis=axis)
    sums = row_sum(out) if axis == out.ndim - 1 else None
    if sums is None:
        return functools.partial(softmax_vjp.impl, axis=axis)

    def run(g: np.ndarray, p: np.ndarray) -> np.ndarray:
        t = np.multiply(g, p)
        t -= p * sums(t)[..., None]
        return t
    return run


LOWERINGS = {
    "reduce_sum": Lowering(lower=_reduce_sum),
    "reduce_max": Lowering(lower=_reducer(np.maximum, np.max)),
    "reduce_min": Lowering(lower=_reducer(np.minimum, np.min)),
    "reduce_prod": Lowering(lower=_reducer(np.multiply, np.prod)),
    "softmax_vjp": Lowering(lower=_softmax_vjp),
    "affine_scan": Lowering(lower=lambda avals: affine_runner(*avals)),  # (plan bound once)
    "linear_scan": Lowering(lower=lambda avals: linear_runner(*avals)),
    "cumprod_grad": Lowering(lower=lambda avals, axis, running=False: cumprod_grad_runner(
        *avals, axis=axis, running=running)),
    "real": VIEW, "imag": VIEW,  # (np.real and np.imag return views)
    "custom_vjp_call": VIEW,  # the value it passes through
}
