"""Before batching: reads of a buffer between the links of a read-modify-write chain.

A per-bucket statistic read before each update (`avg = s[k[i]] / n[k[i]]; use(avg);
s[k[i]] += x[i]; n[k[i]] += 1`, or a prediction `ema[k]` compared with x before
`ema[k] = a ema[k] + b`) reads, at step t, the buffer as the links before t left it: each read
waits for the previous link, a recurrence through the whole buffer (batching kept one version
of it per step: 820 ms at 2,000 steps). rmwchains joins the links (each x[p_t] <- a x[p_t] + b_t,
one rate a, or constant rates, b_t not read from the buffer); the reads then follow from the
positions alone. Sort the links by position (a stable argsort keeps each position's links in
the loop's order). Within the run of one position p the state is a first-order recurrence,

    c = x[p] before the run;   link t: c <- a_t c + b_t;   the read before link t sees c,

a segmented scan of the affine maps (a_t, b_t), with x[p] folded into the first link's b: one
`segment_affine` over the L sorted links, restarted where a run starts (`segment_cumsum` where
every rate is 1; primitives/segscans.py: the loop's own additions on a runs x rank layout, no
multiply by 0 across runs, so an inf or a NaN stays in its bucket as in the loop, and no
cancellation against other buckets as a global cumsum minus offsets would have; its VJP is
the reverse scan). The read before link t is the previous link's state in its run, x[p] at
the run's start, scattered back to the loop's order. A count (rate 1, every b_t one
constant c: `n[k] += 1`) needs no scan: B[i] = x[p] + c (rank[i] + 1). The rest is argsort,
gathers, where and a scatter, so the gradient is theirs and the scans'.

The values that use the reads, and everything after them, move past the chain's end (they are
computed from the joined reads there); the links' own values, positions and the buffer must
not depend on any of them (else the chain is a true recurrence and stays as written).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import primitives as P
from ..index import Sl
from ..ir import Const, Eqn, Graph, Params, Var
from .extremes import _concat, _emit


def may_open(ln: Any, defs: dict, n_uses: dict, read: Var | None = None) -> bool:
    """Whether a link whose read (or `read`, a read of its result at its position) is used
    outside it can be joined with that read computed from the chain's events (module doc):
    along axis 0, the read one cell of the buffer (a row at a Python int) in the buffer's
    floating dtype."""
    x = ln.base.aval
    r = (ln.read if read is None else read).aval
    cell = x.shape[1:] if ln.static is not None else (1,) + x.shape[1:]
    return ln.axis == 0 and x.dtype.kind == "f" and r.shape == cell and r.dtype == x.dtype


def _needs(ln: Any, defs: dict) -> set:
    """The values a link's b_t and position are computed from (not from its read)."""
    if ln.parts is not None:  # (links composed: rmwchains._fused)
        return _needs(ln.parts[0], defs) | _needs(ln.parts[1], defs)
    out = {ln.pos if ln.pos is not None else ln.raw} if ln.static is None else set()
    if ln.a[2] is not None:
        out.add(ln.a[2])
    vals = ln.vals
    if vals not in ln.own and vals is not ln.read:
        out.add(vals)
    for v in ln.own:
        out.update(a for a in defs[v].inputs
                   if a.__class__ is Var and a not in ln.own and a is not ln.read)
    return out


def _removed(chain: list, defs: dict) -> set[int]:
    """The equations the join replaces: the links, their scatters and selections, and for a
    link whose read is not used outside it, its read and what it computes from it."""
    out = set()
    for ln in chain:
        out.add(id(ln.e))
        gone = ln.dep - ln.own - {ln.read} if ln.open else ln.dep - ln.kept
        out.update(id(defs[v]) for v in gone if v in defs and v is not ln.e.out)
        if ln.open:
            out.add(id(defs[ln.read]))
        if ln.after is not None:
            out.add(id(defs[ln.after]))
        out.update(id(defs[r]) for r, _ in ln.mids)
    return out


def _outside(ln: Any) -> list:
    """The link's reads that the join defines anew: its read (used outside it) and the read
    of its result at its position."""
    return ([ln.read] if ln.open else []) + ([ln.after] if ln.after is not None else []) + \
        [r for r, _ in ln.mids]


def _after(eqns: tuple, roots: set, removed: set[int]) -> set:
    """The values computed from `roots` (forward closure over the kept equations)."""
    dset = set(roots)
    for e in eqns:
        if id(e) not in removed and any(a in dset for a in e.inputs if a.__class__ is Var):
            dset.add(e.out)
    return dset


def join_open_reads(g: Graph, chains: list, defs: dict, cells: Callable, joined: Callable,
                    joined_static: Callable, mixed: Callable, mid: Callable) -> Graph:
    """Chains of read-modify-writes with reads used outside their links, or of mixed constant
    rates (module doc), each one segmented scan for the reads (and for the buffer's result
    when the rates are mixed, else one scatter); the values computed from the reads move past
    the chains. `cells`: the links' b_t and positions, `joined`/`joined_static`: the chain's
    result at one rate, `mixed`: whether a chain's rates are mixed (rmwchains)."""
    for _ in range(4):  # (drop the chains whose links need a value after the reads)
        removed = set().union(*(_removed(c, defs) for c in chains))
        dset = _after(g.eqns, {r for c in chains for ln in c for r in _outside(ln)}, removed)
        ok = [c for c in chains if c[0].base not in dset and
              not any(_needs(ln, defs) & dset for ln in c)]
        if len(ok) == len(chains):
            break
        chains = ok
    else:
        return g
    if not chains:
        return g
    ends = {id(c[-1].e): c for c in chains}
    plans: dict[tuple, tuple] = {}
    main: list[Eqn] = []
    later: list[Eqn] = []
    for e in g.eqns:
        c = ends.get(id(e))
        if c is not None:
            vals, pos = cells(main, c, defs)
            key = tuple(ln.static if ln.static is not None else
                        id(ln.pos if ln.pos is not None else ln.raw) for ln in c)
            if key not in plans:
                plans[key] = _plan(main, c, pos, e.src)
            B = _scan(main, c, vals, plans[key], e.src)
            if mixed(c):
                main.append(_final(main, c, e, B, plans[key]))
            elif c[0].static is None:
                main.append(joined(main, c, e, defs, vals, pos))
            else:
                main.append(joined_static(main, c, e, defs, vals))
            _reads(main, c, B, plans[key], e.src, lambda *a: mid(*a, defs))
        elif id(e) not in removed:
            (later if e.out in dset else main).append(e)
    return g.replace(eqns=tuple(main + later))


def _get(eqns: list, x: Any, lo: int, hi: int, src: Any, out: Var | None = None) -> Any:
    """x[lo:hi] along axis 0 (into `out` when given)."""
    idx = P.BasicIndex((Sl(lo, hi, 1),) + tuple(Sl(0, d, 1) for d in x.aval.shape[1:]))
    if out is None:
        return _emit(eqns, P.getitem, (x,), {"idx": idx}, src)
    eqns.append(Eqn(P.getitem, (x,), Params({"idx": idx}), out, src))
    return out


def _col(eqns: list, x: Any, nd: int, src: Any) -> Any:
    """A 1-d x shaped to broadcast along axis 0 of an nd-dimensional array."""
    if nd == 1:
        return x
    return _emit(eqns, P.reshape, (x,), {"shape": x.aval.shape + (1,) * (nd - 1)}, src)


def stable_order(eqns: list, pos: Any, n: int, src: Any) -> Any:
    """The stable argsort of positions in [0, n), sorted as int16 where n allows: NumPy sorts
    those by radix, in one pass (2,000 positions: 5 against 160 us as int64, at load 13)."""
    if n <= np.iinfo(np.int16).max:
        pos = _emit(eqns, P.cast, (pos,), {"dtype": np.dtype(np.int16)}, src)
    return _emit(eqns, P.argsort, (pos,), {"axis": 0, "kind": "stable"}, src)


def _plan(eqns: list, chain: list, pos: Any, src: Any) -> tuple:
    """The links' order by position: (order, its column for gathers along axis 0, the sorted
    positions as a column, whether each sorted link starts its run, 1-d and as a column, each
    sorted link's rank in its run). Constants at Python-int positions; chains with the same
    positions share one plan."""
    L, nd = len(chain), chain[0].base.aval.ndim
    col = (L,) + (1,) * (nd - 1)
    if pos.__class__ is Const:
        order = np.argsort(pos.value, kind="stable")
        spos = pos.value[order]
        first = np.r_[True, spos[1:] != spos[:-1]]
        rank = np.arange(L) - np.maximum.accumulate(np.where(first, np.arange(L), 0))
        return (Const(order), Const(order.reshape(col)), Const(spos.reshape(col)),
                Const(first), Const(first.reshape(col)), Const(rank))
    order = stable_order(eqns, pos, chain[0].base.aval.shape[0], src)
    spos = _emit(eqns, P.take_along, (pos, order), {"axis": 0}, src)
    first = _emit(eqns, P.ne, (_get(eqns, spos, 1, L, src), _get(eqns, spos, 0, L - 1, src)),
                  {}, src)
    first = _concat(eqns, [Const(np.ones(1, bool)), first], 0, src)
    ramp = Const(np.arange(L, dtype=np.int64))
    start = _emit(eqns, P.where, (first, ramp, Const(np.int64(0))), {}, src)
    start = _emit(eqns, P.cummax, (start,), {"axis": 0}, src)
    rank = _emit(eqns, P.sub, (ramp, start), {}, src)
    return (order, _col(eqns, order, nd, src), _col(eqns, spos, nd, src), first,
            _col(eqns, first, nd, src), rank)


def _count(chain: list) -> Any:
    """The one constant value of a chain of rate-1 links that all add it (`n[k] += 1`)."""
    v = chain[0].vals
    if v.__class__ is not Const or any(ln.a != (1.0, 0.0, None) or ln.vals.__class__ is not
                                       Const or not np.array_equal(ln.vals.value, v.value)
                                       for ln in chain):
        return None
    return v


def _scan(eqns: list, chain: list, vals: Any, plan: tuple, src: Any) -> Any:
    """The state after each sorted link (module doc): (L, *cell)."""
    base = chain[0].base
    shape, dt = base.aval.shape, base.aval.dtype
    nd = len(shape)
    order, at, scol, _, fcol, rank = plan
    c = _count(chain)
    if c is not None:  # (x[p] + c (rank + 1): exact, as integers in floats are)
        r = _emit(eqns, P.cast, (rank,), {"dtype": dt}, src) if rank.__class__ is not Const \
            else Const(rank.value.astype(dt))
        r = _emit(eqns, P.add, (_col(eqns, r, nd, src), Const(np.ones((), dt))), {}, src)
        B = _emit(eqns, P.mul, (r, Const(np.asarray(c.value, dt).reshape((1,) + shape[1:]))),
                  {}, src)
        return B if _zeros(base) else \
            _emit(eqns, P.add, (B, _emit(eqns, P.take_along, (base, scol), {"axis": 0}, src)),
                  {}, src)
    B = _emit(eqns, P.take_along, (vals, at), {"axis": 0}, src)
    A = _rates(eqns, chain, order, nd, dt, src)
    if not _zeros(base):
        B = _with_base(eqns, A, B, base, scol, fcol, src)
    first = plan[3]
    if A is None:
        return _emit(eqns, P.segment_cumsum, (B, first), {"reverse": False}, src)
    return _emit(eqns, P.segment_affine, (A, B, first), {"reverse": False}, src)


def _zeros(x: Any) -> bool:
    return x.__class__ is Const and not x.value.any()


def _reads(eqns: list, chain: list, B: Any, plan: tuple, src: Any, mid: Callable) -> None:
    """Define each open link's read, the state before it (the previous link's in its run, the
    buffer's at the run's start), each read between a composed link's parts (from that
    state), and each read after a link, the state it left (B), back in the loop's order."""
    opens = [t for t, ln in enumerate(chain) if ln.open]
    mids = [t for t, ln in enumerate(chain) if ln.mids]
    afters = [t for t, ln in enumerate(chain) if ln.after is not None]
    base = chain[0].base
    L, dt = len(chain), base.aval.dtype
    _, at, scol, _, fcol, _ = plan
    if opens or mids:
        before = _emit(eqns, P.concatenate, (Const(np.zeros((1,) + B.aval.shape[1:], dt)),
                                             _get(eqns, B, 0, L - 1, src)), {"axis": 0}, src)
        start = Const(np.zeros((), dt)) if _zeros(base) else \
            _emit(eqns, P.take_along, (base, scol), {"axis": 0}, src)
        before = _emit(eqns, P.where, (fcol, start, before), {}, src)
        outs = [(t, chain[t].read) for t in opens]
        for t in mids:  # (the state before link t, under a name of its own)
            outs.append((t, Var(chain[t].mids[0][0].aval)))
        got = _back(eqns, chain, before, at, outs, src)
        for t, v in zip(mids, got[len(opens):]):
            for r, pre in chain[t].mids:
                mid(eqns, pre, v, r)
    if afters:
        _back(eqns, chain, B, at, [(t, chain[t].after) for t in afters], src)


def _back(eqns: list, chain: list, S: Any, at: Any, outs: list, src: Any) -> list:
    """The sorted states S in the loop's order (scattered: a permutation), link t's row
    defining each (t, var) of `outs`."""
    L = len(chain)
    back = _emit(eqns, P.scatter_add_along, (S, at), {"axis": 0, "size": L, "unique": True},
                 src)
    full = tuple(Sl(0, d, 1) for d in S.aval.shape[1:])
    for t, v in outs:
        at_t = t if chain[t].static is not None else Sl(t, t + 1, 1)
        eqns.append(Eqn(P.getitem, (back,), Params({"idx": P.BasicIndex((at_t,) + full)}), v,
                        src))
    return [v for _, v in outs]


def _final(eqns: list, chain: list, e: Eqn, B: Any, plan: tuple) -> Eqn:
    """The buffer after a chain of mixed rates: each position's state after its run's last
    link (scattered: one per position, added to zeros), the buffer where no link wrote."""
    base, src = chain[0].base, e.src
    n, dt, nd = base.aval.shape[0], base.aval.dtype, base.aval.ndim
    _, _, scol, first, _, _ = plan
    L = B.aval.shape[0]
    last = _concat(eqns, [_get(eqns, first, 1, L, src), Const(np.ones(1, bool))], 0, src)
    last = _col(eqns, last, nd, src)
    ends = _emit(eqns, P.where, (last, B, Const(np.zeros((), dt))), {}, src)
    got = _emit(eqns, P.scatter_add_along, (ends, scol), {"axis": 0, "size": n}, src)
    if scol.__class__ is Const:
        hit = Const(np.isin(np.arange(n), scol.value).reshape((n,) + (1,) * (nd - 1)))
    else:
        cnt = _emit(eqns, P.scatter_add_along, (Const(np.ones((L,) + (1,) * (nd - 1), dt)),
                                                scol), {"axis": 0, "size": n}, src)
        hit = _emit(eqns, P.gt, (cnt, Const(np.zeros((), dt))), {}, src)
    return Eqn(P.where, (hit, got, base), Params({}), e.out, src)


def _rates(eqns: list, chain: list, order: Any, nd: int, dt: np.dtype, src: Any) -> Any:
    """Each sorted link's rate, or None when every a is 1."""
    L = len(chain)
    if all(ln.a == (1.0, 0.0, None) for ln in chain):
        return None
    c0, c1, sym = chain[0].a
    if sym is None:
        ev = Const(np.array([ln.a[0] for ln in chain], dt))
    else:
        r = sym if c1 == 1.0 else _emit(eqns, P.mul, (sym, Const(np.array(c1, dt))), {}, src)
        r = r if c0 == 0.0 else _emit(eqns, P.add, (Const(np.array(c0, dt)), r), {}, src)
        ev = _emit(eqns, P.broadcast_to, (r,), {"shape": (L,)}, src)
    if ev.__class__ is Const and order.__class__ is Const:
        return Const(ev.value[order.value].reshape((L,) + (1,) * (nd - 1)))
    return _col(eqns, _emit(eqns, P.take_along, (ev, order), {"axis": 0}, src), nd, src)


def _with_base(eqns: list, A: Any, B: Any, base: Any, scol: Any, first: Any, src: Any) -> Any:
    """B with the buffer's value at each run's start folded into its first event's map:
    c = a x[p] + b there."""
    x = _emit(eqns, P.take_along, (base, scol), {"axis": 0}, src)
    if A is not None:
        x = _emit(eqns, P.mul, (A, x), {}, src)
    x = _emit(eqns, P.where, (first, x, Const(np.zeros((), base.aval.dtype))), {}, src)
    return _emit(eqns, P.add, (B, x), {}, src)


__all__ = ["join_open_reads", "may_open", "stable_order"]
