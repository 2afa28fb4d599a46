"""Specs of the recurrence primitives: the first-order linear recurrence `affine_scan` and the
rolled `loop` (impl against a plain NumPy loop, VJP by central differences, batching by
stacking). (cumsum, cumprod, cummax and cummin are in specs_numpy.)"""
from __future__ import annotations

import numpy as np
from spec_lib import Spec, normal, with_zeros

from vecgrad.inputs import trace
from vecgrad.ir import Aval, Graph


def affine_ref(init: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """c[t] = a[t] * c[t-1] + b[t], c[-1] = init, as a plain loop."""
    T = b.shape[0]
    rows = []
    c = init
    for t in range(T):
        c = a[t if a.shape[0] > 1 else 0] * c + b[t]
        rows.append(np.broadcast_to(c, np.broadcast_shapes(init.shape, a.shape[1:],
                                                           b.shape[1:])))
    return np.stack(rows)


def contracting(r: np.random.Generator, s: tuple) -> np.ndarray:
    """Recurrence coefficients of either sign, some above 1 in size."""
    return r.uniform(-1.3, 1.3, s)


SPECS: list[Spec] = [
    Spec("affine_scan", ((3,), (6, 3), (6, 3)), affine_ref, gens=(normal, contracting, normal),
         label="vector"),
    Spec("affine_scan", ((), (1,), (9,)), affine_ref, gens=(normal, contracting, normal),
         label="scalar-invariant-a"),
    Spec("affine_scan", ((2, 1), (7, 3), (7, 2, 1)), affine_ref,
         gens=(normal, contracting, normal), label="broadcast"),
    Spec("affine_scan", ((3,), (1, 3), (12, 3)), affine_ref, gens=(normal, contracting, normal),
         label="invariant-a-long"),
    Spec("affine_scan", ((2,), (11, 2), (11, 2)), affine_ref,
         gens=(normal, with_zeros(1), normal), label="zeros-in-a"),
]


def linear_ref(init: np.ndarray, A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """c[t] = A[t] @ c[t-1] + b[t] over the state axis (axis 0 of each step), c[-1] = init,
    as a plain loop; rows (the axes after the state's) broadcast, aligned on the right."""
    T, k = b.shape[:2]
    row = np.broadcast_shapes(init.shape[1:], A.shape[3:], b.shape[2:])

    def pad(x: np.ndarray, lead: int) -> np.ndarray:
        return x.reshape(x.shape[:lead] + (1,) * (len(row) - x.ndim + lead) + x.shape[lead:])
    c = np.broadcast_to(pad(init, 1), (k,) + row)
    A, b = pad(A, 3), pad(b, 2)
    rows = []
    for t in range(T):
        At = A[t if A.shape[0] > 1 else 0]
        c = np.stack([sum(At[i, j] * c[j] for j in range(k)) for i in range(k)]) + b[t]
        rows.append(np.broadcast_to(c, (k,) + row))
    return np.stack(rows)


def small_matrices(r: np.random.Generator, s: tuple) -> np.ndarray:
    """Coupling matrices of either sign whose products stay in range."""
    return r.uniform(-0.6, 0.6, s)


SPECS += [
    Spec("linear_scan", ((2, 3), (6, 2, 2, 3), (6, 2, 3)), linear_ref,
         gens=(normal, small_matrices, normal), label="2x2-vector"),
    Spec("linear_scan", ((2,), (1, 2, 2), (9, 2)), linear_ref,
         gens=(normal, small_matrices, normal), label="2x2-scalar-invariant"),
    Spec("linear_scan", ((3, 1), (7, 3, 3, 4), (7, 3, 1)), linear_ref,
         gens=(normal, small_matrices, normal), label="3x3-broadcast"),
    Spec("linear_scan", ((2, 2), (1, 2, 2), (12, 2, 2)), linear_ref,
         gens=(normal, small_matrices, normal), label="invariant-long"),
]


# ------------------------------------------------------------------ the loop primitive

def step_graph(fn, *shapes: tuple) -> Graph:
    """The graph of a step function traced on float64 inputs of these shapes."""
    b, out = trace(fn, [Aval(s, np.dtype(np.float64)) for s in shapes])
    return b.build([o.atom for o in out])


def loop_ref(fn, n_carry: int, n_xs: int, reverse: bool = False):
    """The NumPy reference of a loop over `fn`: the flat result (carry, then stacked ys)."""
    def ref(*args: np.ndarray) -> np.ndarray:
        carry, xs, consts = args[:n_carry], args[n_carry:n_carry + n_xs], args[n_carry + n_xs:]
        ys = []
        T = xs[0].shape[0] if xs else LOOP_T
        for t in range(T - 1, -1, -1) if reverse else range(T):
            res = fn(*carry, *[x[t] for x in xs], *consts)
            carry, y = res[:n_carry], res[n_carry:]
            ys.append(y)
        ys = ys[::-1] if reverse else ys
        stacked = [np.stack([np.asarray(y[k]) for y in ys]) for k in range(len(ys[0]))]
        return np.concatenate([np.ravel(a) for a in list(carry) + stacked])
    return ref


LOOP_T = 5


def _rnn(h, x, w):
    return np.tanh(w @ h + x), h * 2.0


def _pair(a, b, w):
    return a * w + b, np.sin(b), a


def _pass(c, x):
    return c, x * c


def _states(h, x, w):  # (h_t and h_{t-1} both stacked: the lowering stores one per step)
    hn = np.tanh(w @ h + x)
    return hn, hn, h, hn * 0.5


def _loop_spec(fn, shapes: tuple, n_carry: int, n_xs: int, label: str,
               reverse: bool = False) -> Spec:
    step_shapes = [s[1:] if n_carry <= i < n_carry + n_xs else s for i, s in enumerate(shapes)]
    body = step_graph(fn, *step_shapes)
    return Spec("loop", shapes, loop_ref(fn, n_carry, n_xs, reverse),
                {"body": body, "length": shapes[n_carry][0] if n_xs else LOOP_T,
                 "n_carry": n_carry, "n_xs": n_xs, "reverse": reverse}, label=label)


SPECS += [
    _loop_spec(_rnn, ((3,), (LOOP_T, 3), (3, 3)), 1, 1, "tanh-rnn"),
    _loop_spec(_pair, ((2,), (2,), (2,)), 2, 0, "two-carries-no-xs"),
    _loop_spec(_pass, ((), (LOOP_T,)), 1, 1, "scalar-carry-pass-through"),
    _loop_spec(_rnn, ((3,), (LOOP_T, 3), (3, 3)), 1, 1, "tanh-rnn-reverse", reverse=True),
    _loop_spec(_states, ((3,), (LOOP_T, 3), (3, 3)), 1, 1, "states-in-and-out"),
    _loop_spec(_states, ((3,), (LOOP_T, 3), (3, 3)), 1, 1, "states-in-and-out-reverse",
               reverse=True),
]
