"""Packed rows that fill most of a rectangle run on the rectangle, masked (see `packed`).

When the members' rows (`K[:t+1]` for every t: causal attention, a triangle of pairs) fill a
large share of members x span, gathering them one by one into a flat array costs more than
the dense plan a user writes: every member reads the whole span (`K[lo:hi]`, shared, never
copied), the members' own values broadcast along a member axis (`Q[t]` stacked: `Q @ K.T`),
and each sum over a member's rows is a masked reduction over the span (`where(mask, s, 0)`,
`-inf` for a maximum), with a 0/1 mask of which span rows each member owns.

Exactness: a masked entry pairs a member with a row it does not own, a value the loop never
computes ("junk": it may overflow, as `exp` of a score above the member's maximum). The
reductions never see it (the `where` picks the identity, and sends it a cotangent of exactly
0). Junk flows unchanged through operations whose derivatives are finite at finite operands
(products, sums, differences, tanh, ...: 0 times a finite derivative stays 0); before any
other operation (exp, log, sqrt, a division by junk) its masked entries are replaced by the
member's value at a row every member owns (`where(mask, s, s[:, j0])`), so that what is
computed after it, and its derivative, is what the loop computes at that row: finite
wherever the loop's values are. (Junk is finite where the data are: products and sums of
the same finite numbers the loop multiplies and adds.)
"""
from __future__ import annotations

import string
from collections import Counter
from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Atom, Const, Eqn, Params, Var
from ..primitives.linalg import make_spec, parse_spec
from ..rewrite.hoist import dense_pairs_cheaper

DENSE_SHARE = 1 / 3  # the members' rows fill this share of members x span, or more
DENSE_BIAS = 1.0  # dense when its estimated `work` is under this times the packed plan's

# a reduction over the rows -> its segment form: a member's sum, maximum or minimum
REDUCTIONS = {P.reduce_sum: P.segment_sum, P.reduce_max: P.segment_max,
              P.reduce_min: P.segment_min}


def emit(out: list[Eqn], prim: P.Primitive, ins: tuple, params: dict, src: Any,
         var: Var | None = None) -> Var:
    ps = Params(params)
    aval = prim.shape_rule(*[a.aval for a in ins], **ps)
    v = Var(aval) if var is None else var
    out.append(Eqn(prim, tuple(ins), ps, v, src))
    return v


def dense_span(rngs: list[tuple[int, int]]) -> tuple[int, int, int] | None:
    """(lo, hi, j0): the span of the members' row ranges and a row (from lo) that every
    member owns, when there is one (then the ranges cover the span without a gap) and they
    fill DENSE_SHARE of members x span or more; None otherwise."""
    lo, hi = min(r[0] for r in rngs), max(r[1] for r in rngs)
    first, last = max(r[0] for r in rngs), min(r[1] for r in rngs)
    if first >= last or sum(b - a for a, b in rngs) < DENSE_SHARE * len(rngs) * (hi - lo):
        return None
    return lo, hi, first - lo


class _Plan:
    """The emitted equations, the mask and its shapes, the fresh member letter."""

    def __init__(self, chs: list, span: tuple[int, int, int]):
        self.out: list[Eqn] = []
        lo, hi, self.j0 = span
        self.m, self.w = len(chs), hi - lo
        pos = np.arange(lo, hi)
        self.mask = np.stack([(pos >= a) & (pos < b) for a, b in (c.rng for c in chs)])
        self.masks: dict[int, Const] = {}
        self.filled: dict[Var, Var] = {}

    def mask_of(self, ndim: int) -> Const:
        """The mask (members, span) with unit axes after it to `ndim` axes."""
        if ndim not in self.masks:
            self.masks[ndim] = Const(self.mask.reshape(self.mask.shape + (1,) * (ndim - 2)))
        return self.masks[ndim]

    def emit(self, prim: P.Primitive, ins: tuple, params: dict, src: Any,
             var: Var | None = None) -> Var:
        return emit(self.out, prim, ins, params, src, var)

    def masked(self, v: Atom, mem: bool, fill: Atom, src: Any) -> Var:
        """v (members, span, ...) where the member owns the row, else `fill`; a shared v
        (span, ...), without `mem`bers, is spread to every member."""
        mask = self.mask_of(v.aval.ndim + (not mem))
        return self.emit(P.where, (mask, v, fill), {}, src)

    def clean(self, a: tuple, src: Any) -> tuple:
        """An operand without junk: rows with junk get their masked entries replaced by
        the member's entry at row j0 (once per value)."""
        if a[0] != "rows" or not a[3]:
            return a
        v = a[1]
        if v not in self.filled:
            idx = (P.Sl(0, self.m, 1), P.Sl(self.j0, self.j0 + 1, 1)) + tuple(
                P.Sl(0, d, 1) for d in v.aval.shape[2:])
            col = self.emit(P.getitem, (v,), {"idx": P.BasicIndex(idx)}, src)
            self.filled[v] = self.masked(v, True, col, src)
        return ("rows", self.filled[v], True, False)


# estimated cost per element (about a pass of NumPy's elementwise loops) of what a plan
# emits: a gather and a segment reduction also read indices; a product's multiply-adds run
# in BLAS at about an eighth of that; views and reshapes are free
_VIEWS = frozenset([P.getitem, P.reshape])
_SEGMENTS = frozenset(REDUCTIONS.values())


def work(eqns: list[Eqn]) -> float:
    """The estimated cost of a plan's equations (to choose between packed and dense)."""
    total = 0.0
    for e in eqns:
        out = int(np.prod(e.out.aval.shape))
        ins = sum(int(np.prod(a.aval.shape)) for a in e.inputs if isinstance(a, Var))
        if e.prim in _VIEWS:
            continue
        if e.prim is P.einsum:
            dims: dict[str, int] = {}
            for s, a in zip(parse_spec(e.params["spec"])[0], e.inputs):
                dims.update(zip(s, a.aval.shape))
            total += out + ins + int(np.prod(list(dims.values()))) / 8
        elif e.prim is P.take:
            total += 2 * out
        elif e.prim in _SEGMENTS:
            total += 2 * ins
        else:
            total += max(out, ins)
    return total - _pair_products(eqns)


def _pair_products(eqns: list[Eqn]) -> float:
    """What the simplifier saves on the plan's row-wise products of two gathers (packed
    rows dotted with the members' own rows, `K[:t+1] @ Q[t]`): each becomes one product of
    the whole arrays and a gather of its entries where `dense_pairs_cheaper`
    (rewrite/hoist.py `einsum_of_pair_gathers`), so it costs that, not the gathered rows."""
    defs = {e.out: e for e in eqns if e.prim is P.take}
    reads = Counter(a for e in eqns for a in e.inputs if isinstance(a, Var) and a in defs)
    saved = 0.0
    for e in eqns:
        if e.prim is not P.einsum or len(e.inputs) != 2:
            continue
        ins, res = parse_spec(e.params["spec"])
        ts = [defs.get(a) for a in e.inputs]
        if len(ins[0]) != 2 or ins[0] != ins[1] or res != ins[0][:1] or any(
                t is None or t.params["axis"] or t.inputs[0].aval.ndim != 2 or
                reads[t.out] != 1 for t in ts):
            continue
        (n, k), m, pairs = ts[0].inputs[0].aval.shape, ts[1].inputs[0].aval.shape[0], \
            e.out.aval.shape[0]
        if dense_pairs_cheaper(n, m, k, pairs):  # (the gathers' and the product's cost back)
            saved += 2 * 2 * pairs * k + pairs + 2 * pairs * k + pairs * k / 8 - \
                (n * m + n * m * k / 8 + 2 * pairs)
    return saved


def canon(a: int, p: int) -> int:
    """Axis a of a member's value whose rows are at axis p, in the packed (and span's)
    layout: the rows first, the member's other axes after them in order."""
    return 0 if a == p else a + 1 if a < p else a


def unrowed(out: list[Eqn], a: Atom, lead: int, p: int, ndim: int, src: Any) -> Atom:
    """`a` (after `lead` axes of its own, a member's operand right-aligned to a member's
    `ndim` axes with rows at p) without its unit axis at the rows' place, if it has one."""
    at = p - (ndim - (a.aval.ndim - lead))
    if at < 0:
        return a
    shape = a.aval.shape[:lead + at] + a.aval.shape[lead + at + 1:]
    return emit(out, P.reshape, (a,), {"shape": shape}, src)


def _identity(prim: P.Primitive, dtype: np.dtype) -> Const:
    """The identity of a reduction in `dtype` (what a masked entry contributes)."""
    if prim is P.reduce_sum:
        return Const(np.zeros((), dtype))
    big = np.inf if dtype.kind == "f" else np.iinfo(dtype).max
    return Const(np.array(-big if prim is P.reduce_max else big, dtype))


def dense_rows(pat: tuple, chs: list, span: tuple[int, int, int]) -> list[Eqn]:
    """The members' chains (`packed._Chain`s, as `packed._pack` takes them) on the span."""
    pl = _Plan(chs, span)
    lo, hi = span[0], span[0] + pl.w
    reads: dict[tuple, Var] = {}

    def read(key: tuple, src: Any) -> Var:
        if key not in reads:
            b, ix, _ = key
            ix = tuple(P.Sl(lo, hi, 1) if k is None else k for k in ix)
            reads[key] = pl.emit(P.getitem, (b,), {"idx": P.BasicIndex(ix)}, src)
        return reads[key]

    x = read(pat, chs[0].read.src)
    vals: list[tuple] = []  # per equation: its value, whether it has members, and masked junk
    for k, (_, e) in enumerate(chs[0].eqns):
        ops = chs[0].sig[k][2]
        ins, r = [], 0
        for j, o in enumerate(ops):
            if o[0] == "r":
                ins.append(("rows",) + ((x, False, False) if o[1] == -1 else vals[o[1]]))
            elif o[0] == "q":
                ins.append(("rows", read(o[1], e.src), False, False))
            elif o[0] == "e":
                ins.append(("own", vals[o[1]][0], True, e.inputs[j].aval.ndim))
            else:
                atoms = [c.regular[k][r] for c in chs]
                r += 1
                ins.append(_own(pl, atoms, e.src))
        vals.append(_step(pl, e, ins, chs, k, chs[0].sig[k][3]))
    return pl.out


def _own(pl: _Plan, atoms: list[Atom], src: Any) -> tuple:
    """("own", value, has members, each member's ndim): the members' own operands stacked,
    or the shared one as is."""
    a0 = atoms[0]
    if all(a is a0 for a in atoms) or (isinstance(a0, Const) and all(
            isinstance(a, Const) and a.key() == a0.key() for a in atoms)):
        return ("own", a0, False, a0.aval.ndim)
    return ("own", pl.emit(P.stack, tuple(atoms), {"axis": 0}, src), True, a0.aval.ndim)


def _step(pl: _Plan, e: Eqn, ins: list[tuple], chs: list, k: int, pos: tuple) -> tuple:
    """Equation k of the chain on the span, reading rows at axes `pos` of its operands (in
    a member's layout; the span's layout has them first, `canon`): (its value, whether it
    has a member axis, whether its masked entries are junk: values the loop never
    computes)."""
    if e.prim is P.einsum:
        return _einsum(pl, e, ins, chs, k, pos)
    p = next(q for q in pos if q is not None)
    if e.prim in REDUCTIONS:
        _, v, mem, junk = ins[0]
        axes = tuple(canon(a, p) + mem for a in e.params["axes"])
        if p not in e.params["axes"]:
            return pl.emit(e.prim, (v,), {"axes": axes}, e.src), mem, junk
        v = pl.masked(v, mem, _identity(e.prim, v.aval.dtype), e.src)
        return _ends(pl, pl.emit(e.prim, (v,), {"axes": tuple(
            canon(a, p) + 1 for a in e.params["axes"])}, e.src), chs, k)
    if e.prim in (P.getitem, P.reshape):
        _, v, mem, junk = ins[0]
        lead = (pl.m, pl.w) if mem else (pl.w,)
        if e.prim is P.reshape:
            p = {"shape": lead + tuple(e.params["shape"][1:])}
        else:
            p = {"idx": P.BasicIndex(tuple(P.Sl(0, d, 1) for d in lead) +
                                     tuple(e.params["idx"][1:]))}
        return pl.emit(e.prim, (v,), p, e.src), mem, junk
    if not _safe(e, ins):
        ins = [pl.clean(a, e.src) for a in ins]
    nd = e.out.aval.ndim  # (elementwise: its members' operands right-aligned to it)
    args = [a[1] if a[0] == "rows" else _aligned(pl, a[1], a[3], nd, p, e.src) if a[2] else
            a[1] if not p else unrowed(pl.out, a[1], 0, p, nd, e.src) for a in ins]
    return _result(pl.emit(e.prim, tuple(args), dict(e.params), e.src), ins)


# elementwise operations whose derivatives are finite at finite operands (junk included):
# junk reaches them unfilled (its cotangent, exactly 0, times a finite derivative is 0)
_SAFE = frozenset([P.neg, P.abs_, P.sign, P.tanh, P.sin, P.cos, P.logistic, P.add, P.sub,
                   P.mul, P.maximum, P.minimum, P.where, P.cast, P.stop_gradient, P.lt,
                   P.le, P.gt, P.ge, P.eq, P.ne])


def _safe(e: Eqn, ins: list[tuple]) -> bool:
    """Whether `e` may read junk unfilled: a safe operation, a division by no junk, an
    integer power; anything else (exp may overflow, log and sqrt leave their domain)."""
    if e.prim in _SAFE:
        return True
    if e.prim is P.div:
        return not (ins[1][0] == "rows" and ins[1][3])
    p = e.params.get("p") if e.prim is P.powc else None
    return p is not None and float(p).is_integer() and p >= 0


def _result(v: Var, ins: list[tuple]) -> tuple:
    """v's entry: junk where it reads junk, or first pairs members with shared rows."""
    mem = any(a[2] for a in ins)
    junk = mem and any(a[0] == "rows" and (a[3] or not a[2]) for a in ins)
    return v, mem, junk


def _aligned(pl: _Plan, s: Atom, own: int, nd: int, p: int, src: Any) -> Var:
    """The members' stacked operands (members, each of `own` axes) right-aligned to a
    member's `nd` axes (with rows at p), after the member and span axes."""
    shape = s.aval.shape[1:]
    at = p - (nd - own)
    if at >= 0:  # a row axis of length 1 (`x - x.mean(keepdims=True)`): dropped
        shape = shape[:at] + shape[at + 1:]
    shape = (pl.m,) + (1,) * (nd - len(shape)) + shape
    return pl.emit(P.reshape, (s,), {"shape": shape}, src)


def _einsum(pl: _Plan, e: Eqn, ins: list[tuple], chs: list, k: int, pos: tuple) -> tuple:
    specs, res = parse_spec(e.params["spec"])
    used = set(e.params["spec"])
    M = next(c for c in string.ascii_letters if c not in used)
    L = next(s[q] for s, q in zip(specs, pos) if q is not None)
    specs = [L + s.replace(L, "") if q is not None else s for s, q in zip(specs, pos)]
    res = L + res.replace(L, "") if L in res else res  # (the span's layout: rows first)
    args = [a[1] for a in ins]
    end = L not in res
    if end:  # the rows summed: over each member's own rows only (junk times 0 is 0)
        j = next((j for j, a in enumerate(ins) if a[0] == "rows" and a[2]), None)
        if j is None:
            j = next(j for j, a in enumerate(ins) if a[0] == "rows")
        args[j] = pl.masked(args[j], ins[j][2], Const(np.zeros((), args[j].aval.dtype)), e.src)
        ins = ins[:j] + [("rows", args[j], True, False)] + ins[j + 1:]
    mem = any(a[2] for a in ins)
    spec = make_spec([M + s if a[2] else s for s, a in zip(specs, ins)],
                     (M if mem else "") + res)
    v = pl.emit(P.einsum, tuple(args), {**e.params, "spec": spec}, e.src)
    if end:
        return _ends(pl, v, chs, k)
    return _result(v, ins)


def _ends(pl: _Plan, v: Var, chs: list, k: int) -> tuple:
    """Each member's result of equation k (an end): its row of v."""
    for m, c in enumerate(chs):
        ix = (m,) + tuple(P.Sl(0, d, 1) for d in v.aval.shape[1:])
        pl.emit(P.getitem, (v,), {"idx": P.BasicIndex(ix)}, c.eqns[k][1].src,
                var=c.eqns[k][1].out)
    return v, True, False


__all__ = ["DENSE_BIAS", "DENSE_SHARE", "REDUCTIONS", "canon", "dense_rows", "dense_span", "emit",
           "unrowed", "work"]
