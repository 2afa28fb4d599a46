"""The first-order linear recurrences `c[t] = a[t] * c[t-1] + b[t]` (`affine_scan`) and, for
a state of k coupled values, `c[t] = A[t] @ c[t-1] + b[t]` with small k x k matrices
(`linear_scan`); prefix sums, products and extrema are `cumulative`'s.

affine_scan runs step by step for a few steps or wide rows; otherwise, on small arrays, as
the closed form P * cumsum(b / P) (P the steps' running product) where P stays well inside
the floating-point range, checked at run time; else as a work-efficient associative scan
(pairs of steps compose exactly, no division), falling back to the sequential order where a
product of many steps overflows. Its VJP is one reverse affine scan: the adjoint of
the recurrence is `lam[t] = g[t] + a[t+1] * lam[t+1]`. linear_scan's is the same with the
transposed matrices, and its matrix cotangent is the outer product lam[t] c[t-1]^T.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ShapeError
from ..ir import Aval
from .core import Primitive, register
from .elementwise import mul, reduce_sum
from .structural import Sl, broadcast_to, concatenate, full, getitem, reshape, transpose

__all__ = ["affine_runner", "affine_scan", "flip", "linear_scan", "moveaxis0", "rev_linear",
           "shift_down"]


# ------------------------------------------------------------------ traced helpers (views)

def flip(x: Any, axis: int = 0) -> Any:
    """x reversed along `axis` (a view)."""
    idx = tuple(Sl(d - 1, -1, -1) if i == axis else Sl(0, d, 1) for i, d in enumerate(x.shape))
    return getitem(x, idx=idx)


def moveaxis0(x: Any, axis: int, back: bool = False) -> Any:
    """Move `axis` to the front (or, with back=True, the front axis to `axis`): a view."""
    if axis == 0:
        return x
    perm = list(range(x.ndim))
    perm.insert(axis, perm.pop(0)) if back else perm.insert(0, perm.pop(axis))
    return transpose(x, perm=tuple(perm))


def _rows(x: Any, start: int, stop: int) -> Any:
    return getitem(x, idx=(Sl(start, stop, 1),) + tuple(Sl(0, d, 1) for d in x.shape[1:]))


def _zeros(shape: tuple[int, ...], dtype: np.dtype) -> Any:
    return full(shape=shape, dtype=dtype, value=0.0)


def shift_down(x: Any, first: Any) -> Any:
    """[first, x[0], ..., x[T-2]] along axis 0 (first broadcasts to x's row shape)."""
    row = reshape(broadcast_to(first, shape=x.shape[1:]), shape=(1,) + x.shape[1:])
    return concatenate(row, _rows(x, 0, x.shape[0] - 1), axis=0) if x.shape[0] > 1 else row


def rev_linear(w: Any, g: Any) -> Any:
    """lam with lam[t] = g[t] + w[t+1] * lam[t+1] along axis 0 (w[0] is not used; a w of
    length 1 is the same for every step): the adjoint of a first-order linear recurrence
    whose step t scales the previous state by w[t]."""
    T = g.shape[0]
    a = w if w.shape[0] == 1 or T == 1 else \
        shift_down(flip(w), _zeros((), w.dtype))  # a[s] = w[T-s]; a[0] meets the zero init
    return flip(affine_scan(_zeros(g.shape[1:], g.dtype), a, flip(g)))


# ------------------------------------------------------------------ affine_scan

def _affine_shape(init: Aval, a: Aval, b: Aval) -> Aval:
    if b.ndim < 1 or a.ndim < 1 or a.shape[0] not in (1, b.shape[0]):
        raise ShapeError(f"affine_scan: a {a.shape} and b {b.shape} need a leading step axis "
                         "(a's of length 1 or b's length)")
    try:
        row = np.broadcast_shapes(init.shape, a.shape[1:], b.shape[1:])
    except ValueError:
        raise ShapeError(f"affine_scan: init {init.shape}, a {a.shape} and b {b.shape} do not "
                         "broadcast") from None
    return Aval((b.shape[0],) + row, np.result_type(init.dtype, a.dtype, b.dtype))


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
    """affine_scan on operands of these avals, its reshapes and its plan chosen once (the
    NumPy backend binds it when compiling; the impl builds it per call)."""
    aval = _affine_shape(init, a, b)
    shape, dt, T = aval.shape, aval.dtype, aval.shape[0]
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


def _affine_impl(init: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    init, a, b = (np.asarray(x) for x in (init, a, b))
    avals = (Aval(x.shape, x.dtype) for x in (init, a, b))
    return affine_runner(*avals)(init, a, b)


def _sum_to(ct: Any, x: Any) -> Any:
    """The cotangent ct (steps, *row) of a step-indexed operand x, summed to x's shape."""
    padded = x.shape[:1] + (1,) * (ct.ndim - x.ndim) + x.shape[1:]
    axes = tuple(i for i, (d, e) in enumerate(zip(padded, ct.shape)) if d == 1 and e != 1)
    ct = reduce_sum(ct, axes=axes) if axes else ct
    return reshape(ct, shape=x.shape) if ct.shape != x.shape else ct


def _affine_vjp(g: Any, ans: Any, init: Any, a: Any, b: Any) -> tuple:
    r = g.ndim - 1
    ap = reshape(a, shape=a.shape[:1] + (1,) * (r + 1 - a.ndim) + a.shape[1:])
    lam = rev_linear(ap, g)
    prev = shift_down(ans, init)  # c[t-1], c[-1] = init
    return (mul(_rows(ap, 0, 1), _rows(lam, 0, 1)), _sum_to(mul(lam, prev), a),
            _sum_to(lam, b))


def _pad(x: Any, lead: int, rank: int) -> Any:
    """x with unit axes after its first `lead` axes, up to `rank` axes after them."""
    k = rank - (x.ndim - lead)
    return reshape(x, shape=x.shape[:lead] + (1,) * k + x.shape[lead:]) if k > 0 else x


def _affine_batch(n: int, batched: tuple[bool, ...], init: Any, a: Any, b: Any) -> Any:
    """Instances stacked on axis 0 become an axis right after the step axis, then move back."""
    fi, fa, fb = batched
    rank = max(init.ndim - fi, a.ndim - 1 - fa, b.ndim - 1 - fb)  # one instance's state rank
    step_first = lambda x: transpose(x, perm=(1, 0) + tuple(range(2, x.ndim)))
    init = _pad(init, 1, rank) if fi else init
    a = step_first(_pad(a, 2, rank)) if fa else _pad(a, 1, rank + 1)
    b = step_first(_pad(b, 2, rank)) if fb else _pad(b, 1, rank + 1)
    if not (fi or fa or fb):
        b = broadcast_to(b, shape=b.shape[:1] + (n,) + b.shape[2:])
    return step_first(affine_scan(init, a, b))


affine_scan = register(Primitive("affine_scan", _affine_impl, _affine_shape, _affine_vjp,
                                 _affine_batch))


# ------------------------------------------------------------------ linear_scan

def _linear_shape(init: Aval, A: Aval, b: Aval) -> Aval:
    """init (k, *r0), A (T or 1, k, k, *r1), b (T, k, *r2) -> (T, k, *r), r the rows
    broadcast."""
    if b.ndim < 2 or A.ndim < 3 or init.ndim < 1:
        raise ShapeError(f"linear_scan: init {init.shape}, A {A.shape} and b {b.shape} need "
                         "a state axis (init (k, ...), A (steps, k, k, ...), b (steps, k, ...))")
    T, k = b.shape[:2]
    if A.shape[0] not in (1, T) or A.shape[1:3] != (k, k) or init.shape[0] != k:
        raise ShapeError(f"linear_scan: init {init.shape}, A {A.shape} and b {b.shape} do "
                         f"not agree on the state size {k} and the {T} steps")
    try:
        row = np.broadcast_shapes(init.shape[1:], A.shape[3:], b.shape[2:])
    except ValueError:
        raise ShapeError(f"linear_scan: the rows of init {init.shape}, A {A.shape} and b "
                         f"{b.shape} do not broadcast") from None
    return Aval((T, k) + row, np.result_type(init.dtype, A.dtype, b.dtype))


def _matvec(A: np.ndarray, c: np.ndarray) -> np.ndarray:
    """A (n, k, k, *r) applied to c (n, k, *r): k^2 whole-array products (k is small)."""
    k = A.shape[1]
    return np.stack([sum(A[:, i, j] * c[:, j] for j in range(k)) for i in range(k)], axis=1)


def _matmul(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    k = A.shape[1]
    return np.stack([np.stack([sum(A[:, i, l] * B[:, l, j] for l in range(k))
                               for j in range(k)], axis=1) for i in range(k)], axis=1)


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
    b2 = _matvec(Ao if inv else Ao[:h], b[0:2 * h:2]) + b[1::2]
    A2 = _matmul(Ao, A if inv else A[0:T - 1:2])
    odd = out[1::2]
    _lin_assoc(A2, b2, odd)
    out[0] = b[0]
    even = out[2::2]
    n = even.shape[0]
    even[...] = _matvec(A if inv else A[2::2], odd[:n]) + b[2::2]


def _linear_impl(init: np.ndarray, A: np.ndarray, b: np.ndarray) -> np.ndarray:
    aval = _linear_shape(Aval(init.shape, init.dtype), Aval(A.shape, A.dtype),
                         Aval(b.shape, b.dtype))
    k, row = aval.shape[1], aval.shape[2:]
    out = np.empty(aval.shape, aval.dtype)
    A = np.broadcast_to(_pad_np(A, 3, len(row)), A.shape[:3] + row).astype(aval.dtype,
                                                                           copy=False)
    b = np.array(np.broadcast_to(_pad_np(b, 2, len(row)), aval.shape), dtype=aval.dtype)
    init = np.broadcast_to(_pad_np(init, 1, len(row)), (k,) + row)
    with np.errstate(all="ignore"):
        # the initial state enters through the first step only
        b[0] += _matvec(A[:1], init[None])[0]
        _lin_assoc(A, b, out)
        if not np.isfinite(out).all() and np.isfinite(A).all() and np.isfinite(b).all():
            _lin_sequential(A, b, out)  # (a product of many steps overflowed: as written)
    return out


def _pad_np(x: np.ndarray, lead: int, rank: int) -> np.ndarray:
    """x with unit axes after its first `lead` axes, up to `rank` axes after them."""
    return x.reshape(x.shape[:lead] + (1,) * (rank - x.ndim + lead) + x.shape[lead:])


def _swap01(x: Any) -> Any:
    """The k x k axes (1, 2) of (steps, k, k, *row) transposed."""
    return transpose(x, perm=(0, 2, 1) + tuple(range(3, x.ndim)))


def _linear_vjp(g: Any, ans: Any, init: Any, A: Any, b: Any) -> tuple:
    T, k = g.shape[:2]
    r = g.ndim - 2
    Ap = reshape(A, shape=A.shape[:3] + (1,) * (r + 3 - A.ndim) + A.shape[3:])
    At = _swap01(Ap)  # lam[t] = g[t] + A[t+1]^T lam[t+1]
    a = At if At.shape[0] == 1 or T == 1 else \
        shift_down(flip(At), _zeros(At.shape[1:], At.dtype))
    lam = flip(linear_scan(_zeros(g.shape[1:], g.dtype), a, flip(g)))
    prev = shift_down(ans, _pad(init, 1, r))  # c[t-1], c[-1] = init
    outer = mul(reshape(lam, shape=(T, k, 1) + lam.shape[2:]),
                reshape(prev, shape=(T, 1, k) + prev.shape[2:]))
    # init's cotangent: A[0]^T lam[0], summed over i of A[0, i, j] lam[0, i]
    l0 = reshape(_rows(lam, 0, 1), shape=(k, 1) + lam.shape[2:])
    gi = reduce_sum(mul(reshape(_rows(Ap, 0, 1), shape=Ap.shape[1:]), l0), axes=(0,))
    return (_sum_lead(gi, init, 1), _sum_lead(outer, A, 3), _sum_lead(lam, b, 2))


def _sum_lead(ct: Any, x: Any, lead: int) -> Any:
    """A cotangent summed to the shape of x, whose row (after its first `lead` axes)
    broadcast to ct's (and a step axis of 1 to ct's steps)."""
    padded = x.shape[:lead] + (1,) * (ct.ndim - x.ndim) + x.shape[lead:]
    axes = tuple(i for i, (d, e) in enumerate(zip(padded, ct.shape)) if d == 1 and e != 1)
    ct = reduce_sum(ct, axes=axes) if axes else ct
    return reshape(ct, shape=x.shape) if ct.shape != x.shape else ct


def _linear_batch(n: int, batched: tuple[bool, ...], init: Any, A: Any, b: Any) -> Any:
    """Instances stacked on axis 0 become the first row axis (after the state axes), then
    move back."""
    fi, fa, fb = batched
    rank = max(init.ndim - 1 - fi, A.ndim - 3 - fa, b.ndim - 2 - fb)  # one instance's row
    def inner(x: Any, lead: int, on: bool) -> Any:
        # x's own row padded to `rank` axes, the instance axis put before it (or a unit one)
        x = _pad(x, lead + on, rank)
        if not on:
            return reshape(x, shape=x.shape[:lead] + (1,) + x.shape[lead:])
        perm = tuple(range(1, lead + 1)) + (0,) + tuple(range(lead + 1, x.ndim))
        return transpose(x, perm=perm)
    init, A, b = inner(init, 1, fi), inner(A, 3, fa), inner(b, 2, fb)
    if not (fi or fa or fb):
        b = broadcast_to(b, shape=b.shape[:2] + (n,) + b.shape[3:])
    out = linear_scan(init, A, b)  # (T, k, n, *row)
    return transpose(out, perm=(2, 0, 1) + tuple(range(3, out.ndim)))


linear_scan = register(Primitive("linear_scan", _linear_impl, _linear_shape, _linear_vjp,
                                 _linear_batch))
