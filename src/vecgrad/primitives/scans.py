"""The first-order linear recurrences `c[t] = a[t] * c[t-1] + b[t]` (`affine_scan`) and, for
a state of k coupled values, `c[t] = A[t] @ c[t-1] + b[t]` with small k x k matrices
(`linear_scan`); prefix sums, products and extrema are `cumulative`'s.

How they run on NumPy arrays is scanrun's (closed forms in blocks, associative scans, an
eigenbasis for a repeated matrix). affine_scan's VJP is one reverse affine scan: the adjoint of
the recurrence is `lam[t] = g[t] + a[t+1] * lam[t+1]`. linear_scan's is the same with the
transposed matrices, and its matrix cotangent is the outer product lam[t] c[t-1]^T.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError
from ..ir import Aval
from .core import Primitive, register
from .elementwise import mul, reduce_sum
from .scanrun import affine_runner, linear_runner
from .structural import Sl, broadcast_to, concatenate, full, getitem, reshape, transpose

__all__ = ["affine_runner", "affine_scan", "flip", "linear_scan", "moveaxis0", "rev_linear",
           "shift_down", "shift_up"]


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


def shift_up(x: Any) -> Any:
    """[x[1], ..., x[T-1], 0] along axis 0."""
    zero = full(shape=(1,) + x.shape[1:], dtype=x.dtype, value=0.0)
    return concatenate(_rows(x, 1, x.shape[0]), zero, axis=0)


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


def _linear_impl(init: np.ndarray, A: np.ndarray, b: np.ndarray) -> np.ndarray:
    avals = (Aval(np.shape(x), np.asarray(x).dtype) for x in (init, A, b))
    return linear_runner(*avals)(init, A, b)


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
