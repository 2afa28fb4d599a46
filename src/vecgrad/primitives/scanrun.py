"""How `affine_scan` (c[t] = a[t] c[t-1] + b[t]) and `linear_scan` (c[t] = A[t] @ c[t-1] +
b[t], k x k matrices) run on NumPy arrays. A runner binds the plan for one set of operand
avals; the NumPy backend binds it once when compiling, the impls build one per call.

affine_scan runs
- step by step for a few steps or wide rows (one in-place multiply-add per step);
- on small arrays, as the closed form P * cumsum(b / P), P the steps' running product,
  where P stays well inside the floating-point range (checked at run time);
- else as a work-efficient associative scan (pairs of steps compose exactly, no division);
- in the order written where a product of many steps overflows.
linear_scan runs as the associative scan over k x k matrices, each product k^2 (or k^3)
whole-array multiply-adds written into its place (np.stack of k^2 products made it 4x
slower), or one matmul where a single matrix serves every step; a single matrix and a small
state run in blocks, each block one product with the powers of the matrix.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from ..ir import Aval

__all__ = ["CLOSED_MAX", "CLOSED_ROW_MAX", "affine_runner", "linear_runner"]


# ------------------------------------------------------------------ affine_scan

def _sequential(a: np.ndarray, b: np.ndarray, init: np.ndarray, out: np.ndarray) -> np.ndarray:
    inv = a.shape[0] == 1
    if out.ndim == 1:  # (rows of one value: numbers, not views)
        c = init
        for t in range(out.shape[0]):
            c = out[t] = a[0 if inv else t] * c + b[t]
        return out
    c = init
    for t in range(out.shape[0]):
        # In place: two passes over the row, no temporaries (a * c + b makes two arrays and
        # copies the second: 12 steps of 1,000 values 42 -> 23 us).
        row = out[t]
        np.multiply(a[0 if inv else t], c, out=row)
        row += b[t]
        c = row
    return out


def _assoc(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out[t] = a[t] * out[t-1] + b[t] with out[-1] = 0, by pairing steps: a scan of the
    composed pairs (a[2k+1] a[2k], a[2k+1] b[2k] + b[2k+1]) gives the odd rows, one more
    step each gives the even rows. O(T) work in O(log T) whole-array passes; no division."""
    T = b.shape[0]
    if T <= 4:
        _sequential(a, b, np.zeros((), out.dtype), out)
        return
    inv = a.shape[0] == 1
    ae = a if inv else a[0:T - 1:2]
    ao = a if inv else a[1::2]
    h = T // 2
    b2 = ao * b[0:2 * h:2] + b[1::2]
    a2 = ao * ae
    odd = out[1::2]
    _assoc(a2, b2, odd)
    out[0] = b[0]
    even = out[2::2]
    np.multiply(a if inv else a[2::2], odd[:even.shape[0]], out=even)
    even += b[2::2]


# The closed form's two prefix scans cost 4-8 ns per value (each value waits for the one
# before it) against the pairing's ~4 ns; its dozen calls against the pairing's six per
# halving. Measured in one process at load 9, pairing against closed: 1,000 steps 36 / 21 us,
# 4,000 52 / 44, 8,000 65 / 74; (1,000, 8) 134 / 74, (500, 16) 99 / 75, (250, 32) 83 / 95,
# (1,000, 16) 363 / 754.
CLOSED_ROW_MAX = 16  # values per row, at most
CLOSED_MAX = 8192  # values in all, at most


def _closed(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> bool:
    """out[t] = P[t] * cumsum(b / P)[t] with P the running product of a[1:] (a[0] meets the
    zero state): rewrite/closed_form.py's closed form, with P computed at run time. Its
    rounding is bounded as the recurrence's (each b[s] enters scaled by P[t] / P[s], the
    steps' product). False, out unspecified, where P leaves [1 / big, big] (a zero step, a
    long decay) or the result is not finite: the pairing then runs."""
    if out.dtype.kind != "f":
        return False
    big = float(np.finfo(out.dtype).max) ** 0.25  # (as rewrite/closed_form.py's: 1e77, 4e9)
    P = np.empty(out.shape, out.dtype)
    P[0] = 1
    np.cumprod(a[1:] if a.shape == out.shape else np.broadcast_to(a, out.shape)[1:], axis=0,
               out=P[1:])
    m = np.abs(P)
    if not (m.min() >= 1 / big and m.max() <= big):  # (NaN: not in range)
        return False
    np.divide(b, P, out=out)
    np.cumsum(out, axis=0, out=out)
    out *= P
    return bool(np.isfinite(out).all())


def affine_runner(init: Aval, a: Aval, b: Aval) -> Callable[..., np.ndarray]:
    """affine_scan on operands of these avals (which its shape rule accepted), its reshapes
    and its plan chosen once."""
    shape = b.shape[:1] + np.broadcast_shapes(init.shape, a.shape[1:], b.shape[1:])
    dt, T = np.result_type(init.dtype, a.dtype, b.dtype), shape[0]
    pad = lambda x: x.shape[:1] + (1,) * (len(shape) - x.ndim) + x.shape[1:]
    a_shape, a_full, b_shape = pad(a), a.shape[:1] + shape[1:], pad(b)
    width = math.prod(shape[1:])
    # A few steps, or wide rows: one multiply-add per step (about 1.2 us of call each) beats
    # the pairing's extra whole-array passes (about 4-12 ns per value): 12 steps of 1,000
    # values 24 against 68 us, 64 of 1,000 130 against 223 us, 100 of 10,000 1.3 against
    # 13 ms; 300 steps of 128 values keep the pairing, 190 against 360 us.
    sequential = T <= 16 or width >= 512
    closed = width <= CLOSED_ROW_MAX and T * width <= CLOSED_MAX and dt.kind == "f"

    def run(init: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out = np.empty(shape, dt)
        a, b = a.reshape(a_shape), b.reshape(b_shape)  # (np.broadcast_to costs ~3 us a call)
        a = a if a_shape == a_full else np.broadcast_to(a, a_full)
        a = a if a.dtype == dt else a.astype(dt)
        b = b if b_shape == shape else np.broadcast_to(b, shape)
        with np.errstate(all="ignore"):
            if sequential:
                return _sequential(a, b, np.asarray(init, dt), out)
            if np.asarray(init).any():  # the initial state enters through the first step only
                b = np.array(b, dtype=dt)
                b[0] += a[0] * init
            if closed and _closed(a, b, out):
                return out
            _assoc(a, b, out)
            if not np.isfinite(out).all() and np.isfinite(a).all() and np.isfinite(b).all():
                # A product of many steps overflowed where the sequential order does not:
                # run it as written (exactly the unrolled computation).
                _sequential(a, b, np.zeros((), dt), out)
        return out
    return run



# ------------------------------------------------------------------ linear_scan

def _matvec(A: np.ndarray, c: np.ndarray) -> np.ndarray:
    """A (n, k, k, *r) applied to c (n, k, *r): k^2 whole-array products (k is small)."""
    k = A.shape[1]
    if A.size == k * k:  # one matrix: a single call (2 us at 1,000 steps), rows or not
        if c.ndim == 2:
            return c @ A.reshape(k, k).T
        last = (0,) + tuple(range(2, c.ndim)) + (1,)  # (the state axis last, and back)
        back = (0, c.ndim - 1) + tuple(range(1, c.ndim - 1))
        return (c.transpose(last) @ A.reshape(k, k).T).transpose(back)
    out = np.empty(np.broadcast_shapes(A.shape[:1] + A.shape[3:], c.shape[:1] + c.shape[2:])
                   [:1] + (k,) + np.broadcast_shapes(A.shape[3:], c.shape[2:]),
                   np.result_type(A, c))
    for i in range(k):
        row = out[:, i]
        np.multiply(A[:, i, 0], c[:, 0], out=row)
        for j in range(1, k):
            row += A[:, i, j] * c[:, j]
    return out


def _matmul(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """(n, k, k, *r) matrices multiplied step by step: k^3 whole-array products."""
    k = A.shape[1]
    out = np.empty(np.broadcast_shapes(A.shape, B.shape), np.result_type(A, B))
    for i in range(k):
        for j in range(k):
            cell = out[:, i, j]
            np.multiply(A[:, i, 0], B[:, 0, j], out=cell)
            for m in range(1, k):
                cell += A[:, i, m] * B[:, m, j]
    return out


def _lin_sequential(A: np.ndarray, b: np.ndarray, out: np.ndarray) -> np.ndarray:
    c = np.zeros(out.shape[1:], out.dtype)
    for t in range(out.shape[0]):
        c = out[t] = _matvec(A[t if A.shape[0] > 1 else 0][None], c[None])[0] + b[t]
    return out


def _lin_assoc(A: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out[t] = A[t] out[t-1] + b[t], out[-1] = 0, by pairing steps (as `_assoc`)."""
    T = b.shape[0]
    if T <= 4:
        _lin_sequential(A, b, out)
        return
    inv = A.shape[0] == 1
    h = T // 2
    Ao = A if inv else A[1::2]
    b2 = _matvec(Ao if inv else Ao[:h], b[0:2 * h:2])
    b2 += b[1::2]
    if A.size == A.shape[1] ** 2:  # (one matrix)
        M = A.reshape(A.shape[1:3])
        A2 = (M @ M).reshape(A.shape)
    else:
        A2 = _matmul(Ao, A if inv else A[0:T - 1:2])
    odd = out[1::2]
    _lin_assoc(A2, b2, odd)
    out[0] = b[0]
    even = out[2::2]
    n = even.shape[0]
    even[...] = _matvec(A if inv else A[2::2], odd[:n])
    even += b[2::2]


def _powers(M: np.ndarray, n: int) -> np.ndarray:
    """M^0, ..., M^n in rows 0..n of (n + 2, k, k), by doubling: log2(n) batched products."""
    k = M.shape[0]
    P = np.empty((n + 2, k, k), M.dtype)  # (a spare row for the caller)
    P[0] = np.eye(k, dtype=M.dtype)
    P[1:2] = M
    have = 2
    while have <= n:
        m = min(have - 1, n + 1 - have)  # (inputs P[1:have], not the rows written)
        np.matmul(P[have - 1], P[1:m + 1], out=P[have:have + m])  # M^(have-1) M^(j+1)
        have += m
    return P


# One matrix for every step, a small state: blocks of BLOCK steps (`_lin_blocked`) against
# the pairing, thread CPU in one process at load 12 (T steps, k x k, R values a row):
# (2,000, 2, 1) 108 / 266 us, (10,000, 2, 1) 202 / 950, (500, 2, 1) 85 / 122, (2,000, 3, 1)
# 123 / 273, (1,000, 6, 1) 148 / 209; wider states lose: (2,000, 2, 8) 721 / 407,
# (2,000, 4, 4) 692 / 451 (the block products grow as L k^2 R a step). The operators are
# cached by the matrix's bytes and the blocks' last states solved by one more operator
# where their count is small: (2,000, 2, 1) 95 -> 32 us, (500, 3, 1) 84 -> 18 us, (600,
# 2, 1) 81 -> 15 us (process CPU, load 4, one BLAS thread): the per-call cost was the
# dozens of small calls that built the powers, not the products.
BLOCK = 16
BLOCKED_MAX_STATE = 6  # k * R, at most
DIRECT_MAX = 256  # rows of a cached operator for the blocks' last states, at most
OPS_CACHED = 16  # matrices whose operators are kept (each at most DIRECT_MAX^2 values)


@functools.cache
def _toeplitz(L: int) -> np.ndarray:
    """i - s for i, s < L, with L + 1 above the diagonal (the index of a zero block)."""
    D = np.subtract.outer(np.arange(L), np.arange(L))
    D[D < 0] = L + 1
    return D


@functools.lru_cache(maxsize=OPS_CACHED)
def _block_ops(key: bytes, dt: str, k: int, L: int):
    """For M (k x k, from its bytes): the block-Toeplitz operator (L k, L k) of M^(i-s),
    the column of M^1..M^L (L k, k) and M^L; None where a power is not finite."""
    M = np.frombuffer(key, dt).reshape(k, k)
    P = _powers(M, L)
    if not np.isfinite(P[:L + 1]).all():
        return None
    P[L + 1] = 0  # (the zero block, above the diagonal)
    top = P[_toeplitz(L)].transpose(0, 2, 1, 3).reshape(L * k, L * k)  # (i, s): M^(i-s)
    return top, np.ascontiguousarray(P[1:L + 1].reshape(L * k, k)), P[L].copy()


def _lin_blocked(M: np.ndarray, b: np.ndarray, out: np.ndarray, L: int) -> None:
    """out[t] = M out[t-1] + b[t], out[-1] = 0, for one matrix M (k, k) and b (T, k, R), in
    blocks of L steps: out[t] = sum_s M^(t-s) b[s], so each block's own part is one matrix
    product with the block-Toeplitz operator of M^0..M^(L-1); the blocks' last states then
    form a recurrence of nb = T / L steps under M^L (one operator product where nb k is
    small, else blocks again or the pairing), and each block adds M^(i+1) times the state
    before it, one more product. The powers' underflow for long decaying runs is the
    pairing's (which squares M as often). Raises FloatingPointError where a power is not
    finite (the caller pairs the steps instead)."""
    T, k, R = b.shape
    nb = -(-T // L)
    ops = _block_ops(np.ascontiguousarray(M).tobytes(), M.dtype.str, k, L)
    if ops is None:
        raise FloatingPointError
    top, cols, ML = ops
    if nb * L != T:
        bp = np.zeros((nb * L, k, R), b.dtype)
        bp[:T] = b
    else:
        bp = b
    loc = (top @ bp.reshape(nb, L * k, R).transpose(1, 0, 2).reshape(L * k, nb * R)
           ).reshape(L, k, nb, R)  # each block from a zero state
    ends = np.ascontiguousarray(loc[L - 1].transpose(1, 0, 2))  # (nb, k, R)
    carry = _block_ends(ML, ends, L)
    if nb > 1:
        prev = carry[:nb - 1].transpose(1, 0, 2).reshape(k, (nb - 1) * R)
        loc[:, :, 1:] += (cols @ prev).reshape(L, k, nb - 1, R)
    full = loc.transpose(2, 0, 1, 3).reshape(nb * L, k, R)
    out[...] = full[:T].reshape(out.shape)


def _blocked_rows(M: np.ndarray, init: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """`_lin_blocked` for one value a state row: b (T, k), init (k,), M (k, k). A block is a
    row of L k values, so every product multiplies rows by a transposed operator, with no
    copy to move axes, and the one copy of b is the padded one (2,000 steps of a 2 x 2
    system: the runner 54 -> 33 us). None where a power or b is not finite."""
    T, k = b.shape
    L = BLOCK
    nb = -(-T // L)
    ops = _block_ops(M.tobytes(), M.dtype.str, k, L)
    if ops is None or not np.isfinite(b).all():
        return None
    top, cols, ML = ops
    bp = np.zeros((nb * L, k), M.dtype)
    bp[:T] = b
    bp[0] += M @ init  # (the initial state enters at step 0 only)
    loc = bp.reshape(nb, L * k) @ top.T  # each block from a zero state
    if nb > 1:
        carry = _block_ends(ML, loc[:, (L - 1) * k:].reshape(nb, k, 1), L)
        loc[1:] += carry[:nb - 1, :, 0] @ cols.T
    out = loc.reshape(nb * L, k)
    return out if nb * L == T else out[:T].copy()


def _block_ends(ML: np.ndarray, ends: np.ndarray, L: int) -> np.ndarray:
    """The true state at each block's end: the same problem, nb steps under M^L."""
    nb, k, R = ends.shape
    carry = np.empty_like(ends)
    if nb * k <= DIRECT_MAX and nb > 1:
        ops = _block_ops(ML.tobytes(), ML.dtype.str, k, nb)
        if ops is None:
            raise FloatingPointError
        carry[...] = (ops[0] @ ends.reshape(nb * k, R)).reshape(nb, k, R)
    elif nb >= 4 * L:
        _lin_blocked(ML, ends, carry, L)
    else:
        _lin_assoc(ML[None], ends, carry)
    return carry


def _pad_np(x: np.ndarray, lead: int, rank: int) -> np.ndarray:
    """x with unit axes after its first `lead` axes, up to `rank` axes after them."""
    return x.reshape(x.shape[:lead] + (1,) * (rank - x.ndim + lead) + x.shape[lead:])


def linear_runner(init: Aval, A: Aval, b: Aval) -> Callable[..., np.ndarray]:
    """linear_scan on operands of these avals (which its shape rule accepted): init (k, *r0),
    A (T or 1, k, k, *r1), b (T, k, *r2)."""
    row = np.broadcast_shapes(init.shape[1:], A.shape[3:], b.shape[2:])
    k = b.shape[1]
    shape, dt = b.shape[:2] + row, np.result_type(init.dtype, A.dtype, b.dtype)
    width = math.prod(row)
    blocked = shape[0] >= 4 * BLOCK and k * width <= BLOCKED_MAX_STATE and dt.kind in "fc"
    rows = blocked and width == 1 and math.prod(A.shape) == k * k

    def run(init: np.ndarray, A: np.ndarray, b: np.ndarray) -> np.ndarray:
        if rows:
            with np.errstate(all="ignore"):
                try:
                    out = _blocked_rows(np.ascontiguousarray(A.reshape(k, k), dt),
                                        init.reshape(k).astype(dt, copy=False),
                                        b.reshape(shape[:2]))
                except FloatingPointError:  # (M^L's powers overflow: as `_general` does)
                    out = None
                if out is not None and np.isfinite(out).all():
                    return out.reshape(shape)
        return _general(init, A, b)

    def _general(init: np.ndarray, A: np.ndarray, b: np.ndarray) -> np.ndarray:
        # (A's rows of one value stay so: one matrix for every row is one matmul a step)
        A = _pad_np(A, 3, len(row)).astype(dt, copy=False)
        b = np.array(np.broadcast_to(_pad_np(b, 2, len(row)), shape), dtype=dt)
        init = np.broadcast_to(_pad_np(init, 1, len(row)), (k,) + row)
        with np.errstate(all="ignore"):
            b[0] += _matvec(A[:1], init[None])[0]  # the initial state enters at step 0 only
            out = np.empty(shape, dt)
            if blocked and A.size == k * k and np.isfinite(b).all():
                # (a block's product multiplies later steps' b by zero blocks: a NaN or inf
                # there would reach earlier steps, which the loop never lets happen)
                try:
                    _lin_blocked(A.reshape(k, k), b.reshape(shape[:2] + (width,)), out,
                                 BLOCK)
                except FloatingPointError:  # (M^BLOCK overflows: pairing, then as written)
                    _lin_assoc(A, b, out)
            else:
                _lin_assoc(A, b, out)
            if not np.isfinite(out).all() and np.isfinite(A).all() and np.isfinite(b).all():
                _lin_sequential(A, b, out)  # (a product of many steps overflowed: as written)
        return out
    return run
