"""Skinny matrix products in blocks that stay in cache.

OpenBLAS (single-threaded, as vecgrad pins it) multiplies a long matrix by a narrow one up
to 2-8x slower per element once the long operand outgrows the cache (process time, load
12, /tmp/windows/s30/skinny.py and atb.py in session 30):
- rows: '(M, K) @ (K, N)' with M long, 4 <= N <= 32 (a filter bank over every window, a dense
  layer over every position): 7,200 x 40 by 40 x 8 190 us, 108 us as 128 KB row blocks
  written into one result; 20,000 x 16 by 16 x 8 233 -> 125 us; 20,000 x 40 by 40 x 16
  3,993 -> 563 us.
- inner: '(M, K) @ (K, N)' with K long and 8 <= M, N <= 64 (a filter bank's gradient, summed
  over every window): 8 x 7,200 by 7,200 x 40 174 -> 123 us, 16 x 20,000 by 20,000 x 40
  4,205 -> 566 us, as 128 KB blocks of K whose products are summed.
Results agree with one product to rounding (BLAS rounds rows at a block's edge, and the
blocks' partial sums, its own way).
Below about a megabyte the blocks' calls cost more than they save (3,000 x 40 by 40 x 8:
36 -> 46 us; 8 x 3,000 by 3,000 x 40: 40 -> 52 us), so both start at BIG bytes.
"""
from __future__ import annotations

import numpy as np

BIG = 1_250_000  # bytes of the long operand(s) from which the product is blocked
BLOCK = 128 * 1024  # bytes of the long operand per block
NARROW = (4, 32)  # the narrow operand's columns, rows blocked (measured from 4 to 32)
SHORT = (8, 64)  # the short sides, inner blocked (measured from 8 to 64; a dot product of
# two long vectors is one pass over memory either way)


def _rows(per_row: int) -> int:
    return max(64, BLOCK // max(1, per_row))


def matmul_blocked(x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """x @ y (2-D) in blocks of the long axis where it is long past the cache; None where
    one product is the better call."""
    (m, k), n = x.shape, y.shape[1]
    if NARROW[0] <= n <= NARROW[1] and x.nbytes >= BIG and m >= 2 * _rows(k * x.itemsize):
        rows = _rows(k * x.itemsize)
        out = np.empty((m, n), np.result_type(x, y))
        for i in range(0, m, rows):
            np.matmul(x[i:i + rows], y, out=out[i:i + rows])
        return out
    if SHORT[0] <= min(m, n) and max(m, n) <= SHORT[1] and x.nbytes + y.nbytes >= BIG and \
            k >= 2 * _rows(max(m, n) * x.itemsize):
        rows = _rows(max(m, n) * x.itemsize)
        acc = np.matmul(x[:, :rows], y[:rows])
        for i in range(rows, k, rows):
            acc += np.matmul(x[:, i:i + rows], y[i:i + rows])
        return acc
    return None


__all__ = ["matmul_blocked"]
