"""Transposing copies: `transpose_copy` (tiled, for a batch axis moved across the others),
`contiguous`, and the lowering of the relayout primitive (a plain or a tiled copy, whichever
`kernels.choose` picks for the shape)."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ... import kernels
from ...ir import Aval
from . import costs
from .lowering import Lowering
from .timing import time_call


def transpose_copy(x: np.ndarray, perm: tuple[int, ...]) -> np.ndarray:
    """`np.ascontiguousarray(x.transpose(perm))`, faster for big arrays whose first axis goes
    last or last axis first (a batch axis moved across the others). NumPy copies those in
    one pass striding across the whole output (2 ns per element here for (160, 1024)
    float32); copying tiles of about 32 KiB keeps the writes in cache (0.45 ns). Measured
    with tiles of 8 to 128 rows on shapes from (160, 256) to (2560, 64)."""
    n = x.ndim
    if x.size < 1 << 15 or n < 2 or not x.flags.c_contiguous:
        return np.ascontiguousarray(np.transpose(x, perm))
    shape = tuple(x.shape[p] for p in perm)
    if perm[-1] == 0:  # tiles along x's first axis, written as the output's last
        rows = x.shape[0]
        tile = costs.tile_rows(x.size // rows * x.itemsize)
        if tile < rows:
            out = np.empty(shape, x.dtype)
            for i in range(0, rows, tile):
                out[..., i:i + tile] = x[i:i + tile].transpose(perm)
            return out
    elif perm == (n - 1,) + tuple(range(n - 1)):  # a 2-D transpose of (rows, last axis)
        cols = x.shape[-1]
        rows = x.size // cols
        x2, tile = x.reshape(rows, cols), costs.tile_rows(cols * x.itemsize)
        if tile < rows:
            out = np.empty((cols, rows), x.dtype)
            for i in range(0, rows, tile):
                out[:, i:i + tile] = x2[i:i + tile].T
            return out.reshape(shape)
    return np.ascontiguousarray(np.transpose(x, perm))


def contiguous(r: np.ndarray) -> np.ndarray:
    """r as a C-contiguous array; a permuted view of contiguous memory (a batched matmul's
    result in another axis order) is copied with transpose_copy."""
    if r.flags.c_contiguous:
        return r
    q = tuple(int(i) for i in np.argsort(r.strides, kind="stable")[::-1])
    buf = r.transpose(q)
    if not buf.flags.c_contiguous:
        return np.ascontiguousarray(r)
    return transpose_copy(buf, tuple(int(i) for i in np.argsort(q)))


def _relayout_lower(avals: list[Aval], perm: tuple[int, ...]) -> Callable[..., np.ndarray]:
    """A plain or a tiled transposing copy, whichever `kernels.choose` picks for the shape."""
    x = avals[0]
    cands = {"plain": lambda v: np.ascontiguousarray(np.transpose(v, perm)),
             "tiled": lambda v: transpose_copy(v, perm)}
    tiles = costs.tile_count(x.shape, perm, x.dtype.itemsize)

    def estimate(m: kernels.Machine) -> dict[str, float]:
        return {"plain": costs.transposed(m, x.shape, perm, x.dtype.itemsize),
                "tiled": costs.transposed(m, x.shape, perm, x.dtype.itemsize, tiled=True)
                + tiles * m.call}

    def measure() -> dict[str, float]:
        v = np.ones(x.shape, x.dtype)
        return {n: time_call(c, [v], 3) for n, c in cands.items()}
    key = (x.shape, kernels.c_strides(x.shape, x.dtype.itemsize), x.dtype.str, perm)
    return cands[kernels.choose("transpose_copy", key, estimate, measure)]


LOWERINGS = {"relayout": Lowering(lower=_relayout_lower)}
kernels.CALIBRATED["tiled"] = transpose_copy  # (the kernel behind Machine.tiled)
