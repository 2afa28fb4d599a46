"""Emitting a loop's recognized core as a scan primitive (affine.py's forms): one carry as
cumsum / cumprod / cummax / affine_scan or a Python max/min fold, several carries updated
together linearly as one linear_scan, each computed in the loop's own run order."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Const, Var
from ..tracing import Tracer
from .affine import ONE, ZERO, decayed_extreme, fold_said, one, python_extreme
from .affine import full_slices as _full
from .loopplan import Plan, stacked, value_of


def emit_scan(plan: Plan, lin: Any, env: dict, T: int, operands: list[Any], reverse: bool
               ) -> tuple[dict[int, Any], str, Any]:
    """The scan a linear core is: computed in the order the loop runs its steps (a reversed
    loop scans reversed views) and put back in step order."""
    kind, forms, _ = lin
    i = plan.live[0]
    c, out = plan.carry[i], plan.body.outputs[i]
    init = operands[i]
    s = c.aval.shape
    A, B = forms[out]
    run = (lambda x: P.flip(x)) if reverse else (lambda x: x)  # step order <-> run order
    whole = None
    if kind == "affine_scan":
        a, batched = value_of(A, env) if A is not ONE else (Tracer(init._b, one(c)), False)
        a = run(a) if batched else P.reshape(a, shape=(1,) + a.shape)
        b = run(stacked(value_of(B, env), T)) if B is not ZERO else \
            P.full(shape=(T,) + s, dtype=c.aval.dtype, value=0.0)
        a, b = (v if v.dtype == c.aval.dtype else P.cast(v, dtype=c.aval.dtype) for v in (a, b))
        traj = P.affine_scan(init, a, b)
    else:
        x = run(rows_to(stacked(value_of(A if kind == "cumprod" else B, env), T), s))
        if x.dtype != c.aval.dtype:  # (bool or float32 terms added into a float64 carry)
            x = P.cast(x, dtype=c.aval.dtype)
    if kind in ("decmax", "decmin"):  # (m = max(k m, x): from the initial value)
        v = P.concatenate(row_of(init, s), x, axis=0)
        traj = decayed_extreme(v, A.value, kind == "decmax")
    elif kind.endswith("/post"):  # c[t] = sel(c[t-1], x[t]) + a: see _post_shifted
        traj = _post_shifted(plan, env, init, x, kind, A, run)
    elif kind.startswith("py"):  # (Python's max/min fold: always from the initial value)
        whole = python_extreme(P.concatenate(row_of(init, s), x, axis=0), kind, A)
        traj = P.getitem(whole, idx=(P.Sl(1, T + 1, 1),) + _full(s))
        if init.shape != s or reverse:
            whole = None
    elif kind != "affine_scan":
        neutral = {"cumsum": 0.0, "cumprod": 1.0, "cummax": -np.inf, "cummin": np.inf}[kind]
        prim = {"cumsum": P.cumsum, "cumprod": P.cumprod, "cummax": P.cummax,
                "cummin": P.cummin}[kind]
        kw = {"reverse": False} if prim is P.cumsum else {}
        if isinstance(init.atom, Const) and np.all(init.atom.value == neutral):
            traj = prim(x, axis=0, **kw)
        else:  # the initial value first, so the scan runs in the loop's own order
            whole = prim(P.concatenate(row_of(init, s), x, axis=0), axis=0, **kw)
            traj = P.getitem(whole, idx=(P.Sl(1, T + 1, 1),) + _full(s))
            if init.shape != s or reverse:
                whole = None
    env[out] = (run(traj), True)
    need = [v for v in forms if v in plan.read and v is not out]
    if need:  # core values the post work reads: v = A_v * c[t-1] + B_v, batched
        prev = row_of(init, s) if T == 1 else P.concatenate(
            row_of(init, s), P.getitem(traj, idx=(P.Sl(0, T - 1, 1),) + _full(s)), axis=0)
        env[c] = prev = (run(prev), True)
        for v in need:
            fa, fb = forms[v]
            vs = v.aval.shape  # (a value may hold the carry broadcast over leading axes)
            p0 = prev[0] if vs == s else rows_to(prev[0], vs)
            term = p0 if fa is ONE else p0 * rows_to(stacked(value_of(fa, env), T), vs)
            env[v] = (term if fb is ZERO else
                      term + rows_to(stacked(value_of(fb, env), T), vs), True)
    last = P.getitem(traj, idx=(T - 1,) + _full(s))
    said = fold_said(kind, A) if kind.startswith("py") else kind
    return {i: last}, f"{said} -> {traj.aval}", whole


def _post_shifted(plan: Plan, env: dict, init: Any, x: Any, kind: str, k: Any,
                  run: Any) -> Any:
    """The carry c[t] = z[t] + a of a selection z[t] = sel(c[t-1], x[t]) (the loop cut one
    equation after the shift): z[1] = sel(c[0], x[1]) as the loop selects, then z[t] =
    sel(z[t-1] + a, x[t]), the shifted fold (fold_pick), from it. The selections, which
    the work after the loop reads, are z (in step order); the carries z + a, as the loop's
    own add rounds them."""
    s = init.shape
    base = kind[:-len("/post")]
    first = python_extreme(P.concatenate(row_of(init, s), _rows(x, 0, 1, s), axis=0), base)
    z = python_extreme(P.concatenate(_rows(first, 1, 2, s), _rows(x, 1, x.shape[0], s),
                                     axis=0), base, k) if x.shape[0] > 1 else \
        _rows(first, 1, 2, s)
    sel = next(a for a in plan.core[-1].inputs if isinstance(a, Var))
    env[sel] = (run(z), True)
    return z + np.asarray(k.value)


def _rows(v: Any, a: int, b: int, s: tuple) -> Any:
    return P.getitem(v, idx=(P.Sl(a, b, 1),) + _full(s))


def emit_linear(plan: Plan, forms: dict, env: dict, T: int, operands: list[Any],
                 reverse: bool) -> tuple[dict[int, Any], str]:
    """The linear system of several carries as one `linear_scan` over k x k matrices (per
    element of the state), in the loop's run order; the values post work reads are
    recomputed from the carries' previous states, batched."""
    live = plan.live
    k = len(live)
    cs = [plan.carry[i] for i in live]
    s, dt = cs[0].aval.shape, cs[0].aval.dtype
    b0 = operands[live[0]]._b
    run = (lambda x: P.flip(x)) if reverse else (lambda x: x)

    def part(f: Any) -> tuple[Any, bool]:  # a coefficient or carry-free part, as a value
        if f is ONE or f is ZERO:
            return Tracer(b0, one(cs[0]) if f is ONE else Const(np.zeros((), dt))), False
        v, batched = value_of(f, env)
        return (v if v.dtype == dt else P.cast(v, dtype=dt)), batched
    rows = [forms[plan.body.outputs[i]] for i in live]
    coefs = [[part(r[j]) for j in range(k)] for r in rows]
    if any(bt for row in coefs for _, bt in row):  # (T, k, k, *s): per-step matrices
        A = P.stack(*[P.stack(*[rows_to(stacked(x, T), s) for x in row], axis=1)
                      for row in coefs], axis=1)
        A = run(A)
    else:  # (1, k, k, *s): one matrix for every step
        known = [[_known(x) for x, _ in row] for row in coefs]
        if all(v is not None for row in known for v in row):
            # (a constant matrix stays one: built from traced values, the gradient would
            # compute its cotangent, sum_t g_t c_{t-1}^T, and the simplifier could pack it
            # with the initial state)
            A = Tracer(b0, Const(np.stack([np.stack([np.broadcast_to(np.asarray(v, dt), s)
                                                     for v in row]) for row in known])[None]))
        else:
            A = P.stack(*[P.stack(*[P.broadcast_to(x, shape=s) for x, _ in row], axis=0)
                          for row in coefs], axis=0)
            A = P.reshape(A, shape=(1,) + A.shape)
    B = run(P.stack(*[rows_to(stacked(part(r[k]), T), s) for r in rows], axis=1))
    init = P.stack(*[P.broadcast_to(operands[i] if operands[i].dtype == dt else
                                    P.cast(operands[i], dtype=dt), shape=s) for i in live],
                   axis=0)
    traj = run(P.linear_scan(init, A, B))  # (T, k, *s), in step order
    full = _full(s)
    made = {}
    prev = {}
    for j, i in enumerate(live):
        tj = P.getitem(traj, idx=(P.Sl(0, T, 1), j) + full)
        env[plan.body.outputs[i]] = (tj, True)
        made[i] = P.getitem(tj, idx=(T - 1 if not reverse else 0,) + full)
        first = P.broadcast_to(operands[i], shape=s)
        prev[j] = shift_prev(tj, first, reverse)
    for v in [v for v in forms if v in plan.read and v not in env]:
        f = forms[v]  # v = sum_j A_vj * c_j[t-1] + B_v, batched
        vs = v.aval.shape
        acc = None if f[k] is ZERO else rows_to(stacked(part(f[k]), T), vs)
        for j in range(k):
            if f[j] is ZERO:
                continue
            p = rows_to(prev[j], vs)
            term = p if f[j] is ONE else p * rows_to(stacked(part(f[j]), T), vs)
            acc = term if acc is None else acc + term
        env[v] = (acc if acc is not None else P.full(shape=(T,) + vs, dtype=dt, value=0.0),
                  True)
    for j, c in enumerate(cs):  # (post work reads each step's carry-in)
        env[c] = (prev[j], True)
    return made, f"linear_scan of {k} coupled carries -> {traj.aval}"


def _known(x: Any, depth: int = 3) -> Any:
    """The value of a traced scalar computed from constants only (a coefficient such as
    `neg 1.0`, which the simplifier would fold later), or None."""
    a = x.atom
    if isinstance(a, Const):
        return a.value
    if depth == 0 or a.aval.shape:
        return None
    for e in reversed(x._b.eqns[-KNOWN_WINDOW:]):  # (coefficients are emitted just before)
        if e.out is a:
            vals = [_known(Tracer(x._b, i), depth - 1) for i in e.inputs]
            return None if any(v is None for v in vals) else e.prim.impl(*vals, **e.params)
    return None


KNOWN_WINDOW = 64


def shift_prev(traj: Any, first: Any, reverse: bool) -> Any:
    """The state before each step, in step order: [first, traj[0], ..., traj[T-2]] (for a
    loop run backwards, [traj[1], ..., traj[T-1], first])."""
    T = traj.shape[0]
    if T == 1:
        return P.reshape(first, shape=(1,) + first.shape)
    if reverse:
        return P.flip(P.shift_down(P.flip(traj), first))
    return P.shift_down(traj, first)


def row_of(x: Any, s: tuple[int, ...]) -> Any:
    """x broadcast to the state shape s, as one row (1, *s)."""
    return P.reshape(P.broadcast_to(x, shape=s), shape=(1,) + s)


def rows_to(x: Any, s: tuple[int, ...]) -> Any:
    """Stacked values (T, *r), each broadcast to the state shape s: (T, *s)."""
    T = x.shape[0]
    x = P.reshape(x, shape=(T,) + (1,) * (len(s) - x.ndim + 1) + x.shape[1:])
    return P.broadcast_to(x, shape=(T,) + s) if x.shape[1:] != s else x


