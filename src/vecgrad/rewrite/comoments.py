"""Welford's co-moment read at its end: a two-pass sum of centred products.

Welford's update keeps the running means mx_t = mean(x_0..x_t) (my_t likewise) and adds
each step's product of deviations; the forms users write (with dx_t = x_t - mx_{t-1}, the
deviation from the old mean, and t counted from 0):

    C += dx_t * (y_t - my_t)                  (the new mean on one side: Welford, M2 for y = x)
    C += (x_t - mx_t) * dy_t                  (the same, sides swapped)
    C += dx_t * dy_t * t / (t + 1)            (both old means, the weight said: West, Chan)

Batching turns the loop into one contraction over the steps of those factors, the means a
closed form (a cumsum) and its shift by one row. All three terms are equal, since
y_t - my_t = (y_t - my_{t-1}) t / (t + 1), and their sum over t = 0..T is the co-moment

    C_T = sum_t (x_t - mx_T)(y_t - my_T)

(induction: C_T - C_{T-1} = T/(T+1) dx_T dy_T is the classic update, both sides 0 at T = 0).
So the contraction is one of the centred data: no running means, no cumsum, no reverse cumsum
in the gradient. The two-pass form is also the accurate one: its only rounding beyond the
products' is the mean's error d, which adds n d^2 (the cross term sums to zero), where
Welford's loop rounds mx_t at every step (at an offset of 1e8 with unit spread the loop is
off by ~1e-8 relative, the two-pass by ~1e-14: tests/test_comoments.py measures both against
long double).

Recognition is by values, not by the shape of the closed form (which depends on how the user
wrote the update and on what batching made of it): each factor is a difference X - M whose
parts are linear in the graph values they reach through linear equations (views, joins,
sums, constant scalings, cumsums), so evaluating them on one random probe of those values
decides, with probability one, whether M is X's running mean (new or old) as a linear map;
its rounded constants must agree to 1e-11 of the probe's scale. The old mean's first row
(the initial state) is free, as it is multiplied by an exact zero: the new deviation's
first row (checked to be 0 on the probe) or the weight's (t = 0).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Atom, Const, Var
from ..primitives.linalg import make_spec, parse_spec

# Equations a probe evaluates for one contraction (the closed form of a running mean and its
# views take a dozen or two), and the elements its leaves may hold: a bound on compile time.
_EQNS = 96
_ELEMENTS = 1 << 22
_RTOL = 1e-11
_LINEAR = (P.concatenate, P.stack, P.reshape, P.broadcast_to, P.transpose, P.strided,
           P.take, P.neg, P.cumsum, P.reduce_sum, P.add, P.sub)
_SCALED = (P.mul, P.div, P.einsum)


def comoment_of_running_means(e: Any, ctx: Any) -> Any:
    """einsum over the steps t of (x - mx_old)(y - my_new) (or swapped, or both old with the
    weight t/(t+1)) = c * einsum of (x - mean(x))(y - mean(y)), c the weight's constant."""
    if e.out.aval.dtype != np.float64:
        return None
    found = _two_factors(e, ctx)
    if found is None:
        return None
    (f, g), labels, weights, out = found
    for axis, lab in enumerate(labels):
        if lab in out or f.aval.shape[axis] < 3:
            continue
        w = _weight(weights, lab, f.aval.shape[axis])
        found = None if w is None else _scale(ctx, f, g, axis, w, e.src)
        if found is not None:
            return _centred(ctx, e, *found, labels, out, axis)
    return None


def _two_factors(e: Any, ctx: Any) -> Any:
    """((F, G), F's labels, [(constant, labels)], out): e's operands flattened through
    products are two same-shaped traced factors and constants."""
    ins, out = parse_spec(e.params["spec"])
    traced: list[tuple[Atom, str]] = []
    consts: list[tuple[np.ndarray, str]] = []
    for a, lab in zip(e.inputs, ins, strict=True):
        if not _flatten(ctx, a, lab, traced, consts):
            return None
    if len(traced) != 2 or traced[0][1] != traced[1][1]:
        return None
    (f, lab), (g, _) = traced
    if f.aval != g.aval or len(lab) != f.aval.ndim or len(set(lab)) != len(lab) or \
            not set(out) <= set(lab) or any(not set(ls) <= set(lab) for _, ls in consts):
        return None
    return (f, g), lab, consts, out


def _flatten(ctx: Any, a: Atom, lab: str, traced: list, consts: list) -> bool:
    if isinstance(a, Const):
        consts.append((np.asarray(a.value), lab[len(lab) - np.ndim(a.value):]))
        return True
    m = ctx.def_of(a, P.mul)
    if m is None:
        traced.append((a, lab))
        return len(traced) <= 2
    return all(_flatten(ctx, x, lab[len(lab) - x.aval.ndim:], traced, consts)
               for x in m.inputs)


def _weight(consts: list, lab: str, n: int) -> np.ndarray | None:
    """The constants' product as a vector along `lab` (None: one varies along another
    axis, or is not finite)."""
    w = np.ones(n)
    for v, ls in consts:
        for i, ch in enumerate(ls):
            if ch != lab and v.shape[i] != 1:
                return None
        if lab in ls:
            w = w * v.reshape(-1) if v.shape[ls.index(lab)] == n else w * v.reshape(-1)[0]
        else:
            w = w * v.reshape(-1)[0]
    return w if np.all(np.isfinite(w)) else None


def _scale(ctx: Any, f: Atom, g: Atom, axis: int, w: np.ndarray, src: Any) -> Any:
    """(c, (x, y)) where sum_t w_t F_t G_t = c C_T, the co-moment of data x and y (atoms, or
    (base, index) of a read to make), else None. A factor's data is a term of its
    difference, or a value the probe drew of its shape (a factor batching joined or
    interleaved from pieces: its first and later steps, the new and old deviations of one
    stack); with the row before it where the data is a slice (the mean started at x[0], the
    loop at 1: that step's term is 0 with any mean, so the co-moment is the extended data's)."""
    if not _scans_within_reach(ctx, (f, g)):
        return None
    probe = _Probe(ctx)
    fv, gv = probe.values([f, g]) or (None, None)
    if fv is None:
        return None
    drawn = [(v, s) for v in probe.leaves if v.aval == f.aval for s in (1.0, -1.0)]
    tf, tg = _terms(ctx, f, src), _terms(ctx, g, src)
    for head in (0, 1):
        fs = _data(ctx, probe, tf + tg + drawn, fv, axis, head)
        gs = _data(ctx, probe, tg + tf + drawn, gv, axis, head) if fs else []
        for (fx, fsign, kf), (gx, gsign, kg) in ((p, q) for p in fs for q in gs):
            c = fsign * gsign * _weight_scale(kf, kg, w, head)
            if c:
                return c, (fx, gx)
    return None


def _terms(ctx: Any, v: Atom, src: Any) -> list[tuple[Atom, float]]:
    """(term, sign) for each term of v = a - b that may be the data: (a, 1), (b, -1); of
    v = (a - b)[r] (r basic): the reads a[r], b[r]."""
    d = _difference(ctx, v)
    r = ctx.def_of(v, P.getitem) if d is None else None
    if r is not None and P.is_basic(r.params["idx"]):
        d = _difference(ctx, r.inputs[0])
        d = d and tuple(ctx.emit(P.getitem, (x,), dict(r.params), src) for x in d)
    return [] if d is None else [(d[0], 1.0), (d[1], -1.0)]


def _data(ctx: Any, probe: Any, cands: list, fv: np.ndarray, axis: int, head: int) -> list:
    """(data, sign, kind) for each candidate of which sign * F is a deviation (the data
    extended by `head` rows before it)."""
    found = []
    for x, sign in cands:
        data = x if head == 0 else _extended(ctx, x, axis)
        vals = None if data is None else probe.values([data if head == 0 else data[0]])
        if vals is None:
            continue
        xv = vals[0] if head == 0 else vals[0][P.to_key(data[1])]
        want = fv.shape[:axis] + (fv.shape[axis] + head,) + fv.shape[axis + 1:]
        kind = xv.shape == want and _kind(sign * fv, xv, axis, head)
        if kind:
            found.append((data, sign, kind))
    return found


def _extended(ctx: Any, x: Atom, axis: int) -> tuple[Atom, tuple] | None:
    """(base, index) of x = base[index] with the row before it along `axis` (x's axis: a
    basic slice of unit step that starts after 0 there; ints elsewhere drop their axes)."""
    r = ctx.def_of(x, P.getitem)
    idx = tuple(r.params["idx"]) if r is not None else ()
    if r is None or not P.is_basic(idx) or len(idx) != r.inputs[0].aval.ndim or \
            not all(isinstance(k, (int, P.Sl)) for k in idx):
        return None
    kept = [i for i, k in enumerate(idx) if isinstance(k, P.Sl)]
    if len(kept) != x.aval.ndim:
        return None
    at = kept[axis]
    k = idx[at]
    if k.step != 1 or k.start < 1:
        return None
    return r.inputs[0], idx[:at] + (P.Sl(k.start - 1, k.stop, 1),) + idx[at + 1:]


def _difference(ctx: Any, v: Atom) -> tuple[Atom, Atom] | None:
    """(X, M) with v = X - M, in the forms the simplifier leaves a difference in."""
    s = ctx.def_of(v, P.sub)
    if s is not None:
        return s.inputs[0], s.inputs[1]
    a = ctx.def_of(v, P.add)
    if a is None:
        return None
    for i in (0, 1):
        neg = _negated(ctx, a.inputs[i])
        if neg is not None:
            return a.inputs[1 - i], neg
    return None


def _negated(ctx: Any, v: Atom) -> Atom | None:
    n = ctx.def_of(v, P.neg)
    if n is not None:
        return n.inputs[0]
    m = ctx.def_of(v, P.mul)
    if m is None:
        return None
    for i in (0, 1):
        c = m.inputs[i]
        if isinstance(c, Const) and np.ndim(c.value) == 0 and c.value == -1:
            return m.inputs[1 - i]
    return None


def _kind(fv: np.ndarray, xv: np.ndarray, axis: int, head: int) -> str:
    """'new' where fv = x - running mean of x, 'old' where it is x - the mean of the rows
    before, for x's rows from `head` on ('' else). Without a head, row 0 is x_0's own: the new
    deviation's must be exactly 0; the old one's (x_0 less the initial state) is free."""
    x = np.moveaxis(xv, axis, 0)
    fv = np.moveaxis(fv, axis, 0)
    count = np.arange(1, x.shape[0] + 1).reshape((-1,) + (1,) * (x.ndim - 1))
    mean = np.cumsum(x, axis=0) / count
    tol = _RTOL * (np.max(np.abs(x)) + 1.0)
    if (head or np.all(fv[0] == 0)) and np.max(np.abs(fv - (x - mean)[head:])) <= tol:
        return "new"
    if np.max(np.abs(fv[1 - head:] - (x[1:] - mean[:-1]))) <= tol:
        return "old"
    return ""


def _weight_scale(kf: str, kg: str, w: np.ndarray, head: int) -> float:
    """c with w_t F_t G_t = c t/(t+1) dx_t dy_t for every step t (t = row + head; at t = 0
    a factor is an exact zero: the new deviation, or the weight)."""
    t = np.arange(len(w)) + head
    live = t >= 1
    if {kf, kg} == {"new", "old"}:
        c = w[live][0]
        return float(c) if np.allclose(w[live], c, rtol=1e-12, atol=0) else 0.0
    if kf == kg == "old" and (head or w[0] == 0):
        c = w[live][0] * (t[live][0] + 1) / t[live][0]
        ok = np.allclose(w[live], c * t[live] / (t[live] + 1), rtol=1e-12, atol=0)
        return float(c) if ok else 0.0
    return 0.0


def _scans_within_reach(ctx: Any, atoms: tuple) -> bool:
    """A cumsum (a running mean's closed form) among the linear equations the factors are
    made by, within the probe's bounds: most contractions are no co-moment and are left
    without evaluating anything."""
    seen: set = set()
    todo, found, size = list(atoms), False, 0
    while todo:
        a = todo.pop()
        e = ctx.def_of(a) if isinstance(a, Var) and a not in seen else None
        if e is None or not _linear(e):
            continue
        seen.add(a)
        size += a.aval.size
        if len(seen) > _EQNS or size > 4 * _ELEMENTS:
            return False
        found = found or e.prim is P.cumsum
        todo.extend(e.inputs)
    return found


class _Probe:
    """Values of linear expressions on one random draw of the values they are linear in."""

    def __init__(self, ctx: Any):
        self.ctx = ctx
        self.memo: dict[Var, np.ndarray] = {}
        self.rng = np.random.default_rng(0x5CA5)
        self.eqns = 0
        self.elements = 0
        self.leaves: list[Var] = []

    def values(self, atoms: list[Atom]) -> list[np.ndarray] | None:
        try:
            return [self.value(a) for a in atoms]
        except _TooBig:
            return None

    def value(self, a: Atom) -> np.ndarray:
        if isinstance(a, Const):
            return np.asarray(a.value)
        if a in self.memo:
            return self.memo[a]
        e = self.ctx.def_of(a)
        if e is not None and _linear(e):
            self.eqns += 1
            if self.eqns > _EQNS:
                raise _TooBig
            ins = [self.value(x) for x in e.inputs]
            with np.errstate(all="ignore"):
                v = np.asarray(e.prim.impl(*ins, **e.params), dtype=np.float64)
        else:
            self.elements += a.aval.size
            if a.aval.dtype != np.float64 or self.elements > _ELEMENTS:
                raise _TooBig
            v = self.rng.standard_normal(a.aval.shape)
            self.leaves.append(a)
        self.memo[a] = v
        return v


class _TooBig(Exception):
    pass


def _linear(e: Any) -> bool:
    """e's result is linear (or affine, through constants) in its traced operands."""
    if e.prim is P.getitem:
        return P.is_basic(e.params["idx"])
    if e.prim in _LINEAR:
        return True
    if e.prim in _SCALED:
        traced = [i for i, a in enumerate(e.inputs) if not isinstance(a, Const)]
        return len(traced) == 1 and (e.prim is not P.div or traced == [0])
    return False


def _centred(ctx: Any, e: Any, scale: float, xs: tuple, labels: str, out: str,
             axis: int) -> Any:
    """scale * einsum(labels, labels -> out) of the data xs less their means."""
    def em(prim: P.Primitive, *ins: Any, **params: Any) -> Any:
        return ctx.emit(prim, ins, params, e.src)

    def centred(x: Any) -> Atom:
        if isinstance(x, tuple):
            x = em(P.getitem, x[0], idx=P.BasicIndex(x[1]))
        shape = x.aval.shape
        keep = tuple(1 if i == axis else d for i, d in enumerate(shape))
        mean = em(P.div, em(P.reduce_sum, x, axes=(axis,)), Const(np.float64(shape[axis])))
        return em(P.sub, x, em(P.reshape, mean, shape=keep))
    res = em(P.einsum, *[centred(x) for x in xs], spec=make_spec([labels, labels], out))
    return P.mul, (res, Const(np.float64(scale))), {}


__all__ = ["comoment_of_running_means"]
