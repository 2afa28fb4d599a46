"""Before batching: chains of affine read-modify-writes at one position each are one scatter.

A per-bucket running average (`ema[k[i]] = 0.9 * ema[k[i]] + 0.1 * x[i]`, or
`ema[k[i]] += 0.1 * (x[i] - ema[k[i]])`) at a traced integer k[i] reads the buffer at the
position it then writes: each link reads the previous one's result, a recurrence (a rolled
loop: 270 ms at 2,000 steps). Each link leaves every position but p_t as it was and sets
x[p_t] to a x[p_t] + b_t, with the same a in every link and b_t not read from the
buffer (a a constant, or c0 + c1 s with s one 0-d value in every link, a decay rate passed in:
differentiated through the powers below), so the chain's result is, per position,

    x'[p] = a^(c_p) x[p] + sum over the links t at p of  a^(l_t) b_t

where c_p counts the links at p and l_t the links at p_t after t: one scatter-add of the
weighted values, whose weights come from the positions alone (a stable argsort of them, and
`searchsorted` of the sorted positions for the links after each). b_t is the link's own value
with the read taken as 0 (exact for an affine value: a 0 + b is b), so the per-link work
batches as the loop wrote it. The same sums in another order: equal to rounding (an ulp per
term), as decays.py's. Both traced forms are links: a write of the whole region selected at
the position (numpy/_indexing.write_at_traced, setchains' links) and an add of a scatter
(`x[k] += v`, numpy/_accumulate) whose value reads x[k]. At Python-int positions (a setitem,
or a setitem_add for `+=`) the powers' exponents are constants and the scatter a segment sum
of static ids.
"""
from __future__ import annotations

import itertools
import operator
from typing import Any

import numpy as np

from .. import primitives as P
from ..index import Sl
from ..ir import Const, Eqn, Graph, Params, Var, uses
from ..primitives.structural import Adv
from .census import census
from .extremes import _concat, _emit
from .rmwcoefs import ZERO, joins, mixed, nonzero, plus_one, product, read_coef
from .rmwreads import join_open_reads, may_open, stable_order
from .setchains import _def, _link


def affine_rmw_writes(g: Graph) -> bool:
    """Whether g may hold read-modify-writes at one position (a quick look)."""
    prims = census(g)
    return P.setitem in prims or P.setitem_add in prims or P.scatter_add_along in prims


class _Rmw:
    """One link: its equation, base x, the read of x at the position, the value written there
    (shape of x with 1 at `axis`; a static position's: without the axis), the position (a
    traced i64[1] in [0, n) `pos`, a scatter's raw traced index `raw`, or a Python int
    `static`), the coefficient a, and the variables that depend on the read (their equations
    are dropped when the chain is joined), `own` those of them computed from the read (the
    others are the write's own: a scatter, a selection). `open`: the read, or a value computed
    from it, is used outside the link (rmwreads); `zero`: the value does not read x[p];
    `after`: a read of the link's result at its own position, before the next link (the
    state the link left there, rmwreads), or None."""

    __slots__ = ("a", "after", "axis", "base", "dep", "e", "kept", "mids", "open", "own",
                 "parts", "pos", "raw", "read", "static", "vals", "zero")

    def __init__(self, e, base, read, vals, pos, raw, axis, a, dep, static=None, own=()):
        self.e, self.base, self.read, self.vals, self.pos, self.raw = e, base, read, vals, pos, raw
        self.axis, self.a, self.dep, self.static = axis, a, dep, static
        self.own, self.open, self.zero, self.after = set(own), False, False, None
        self.parts = None  # (two links at one position composed: see _fused)
        self.mids: list = []  # (reads between composed parts: (read, the parts before it))
        self.kept: set = set()  # (values of a part's read used outside: kept, see _fused)


def _root(a: Any, defs: dict) -> Any:
    """a through its reshapes (one traced position reshaped for a read and for a write)."""
    while True:
        d = _def(a, defs, P.reshape)
        if d is None:
            return a
        a = d.inputs[0]


def _read_key(e: Eqn, defs: dict) -> tuple | None:
    """The key of a read at one position: (array, root of a traced position, axis) for
    `take_along`, (array, index) for a `getitem` (a Python-int position: see `_row`)."""
    if e.prim is P.take_along:
        if e.inputs[1].aval.size == 1:
            return id(e.inputs[0]), _root(e.inputs[1], defs), e.params["axis"]
    elif e.prim is P.getitem:
        return id(e.inputs[0]), e.params["idx"]
    return None


def _row(idx: tuple, shape: tuple) -> tuple | None:
    """(axis, position in [0, n)) of an index that is one int and full slices elsewhere."""
    if len(idx) != len(shape):
        return None
    ints = [(q, k) for q, k in enumerate(idx) if isinstance(k, int)]
    if len(ints) != 1 or any(k != Sl(0, n, 1) for k, n in zip(idx, shape)
                             if not isinstance(k, int)):
        return None
    q, k = ints[0]
    return (q, k % shape[q]) if -shape[q] <= k < shape[q] else None


def _static_link(e: Eqn, defs: dict, n_uses: dict, reads: dict, order: dict) -> _Rmw | None:
    """`x[p] = a x[p] + b` (a setitem) or `x[p] += c x[p] + b` (a setitem_add) at a Python
    int p: x[p] becomes a x[p] + b (a = 1 + c for the add)."""
    x, v = e.inputs
    idx = e.params["idx"]
    row = _row(idx, x.aval.shape)
    if row is None or x.aval.dtype.kind != "f" or v.aval.dtype != x.aval.dtype or \
            v.aval.shape != x.aval.shape[:row[0]] + x.aval.shape[row[0] + 1:]:
        return None
    add = e.prim is P.setitem_add
    read = reads.get((id(x), idx))
    if read is None and add:  # (`x[p] += v`, x[p] read nowhere: a link of rate 1)
        ln = _Rmw(e, x, None, v, None, None, row[0], (1.0, 0.0, None), set(), row[1])
        ln.zero = True
        return ln
    aff = None if read is None else read_coef(v, read, defs, order, zero=add)
    if aff is None:
        return None
    ln = _Rmw(e, x, read, v, None, None, row[0], plus_one(aff[0]) if add else aff[0],
              set(aff[1]) | {read}, row[1], own=aff[1])
    ln.zero = not nonzero(aff[0])
    return ln


def _set_link(e: Eqn, defs: dict, n_uses: dict, reads: dict, order: dict) -> _Rmw | None:
    """`x[...] = where(arange(n) == p, a x[p] + b, x[...])` over the whole of x, or a write at
    a Python int."""
    if _row(e.params["idx"], e.inputs[0].aval.shape) is not None:
        return _static_link(e, defs, n_uses, reads, order)
    ln = _link(e, defs, n_uses)
    if ln is None or ln.read.aval.shape != ln.base.aval.shape or ln.base.aval.dtype.kind != "f":
        return None
    raw = defs[ln.pos].inputs[1]  # (pos = arange(n)[raw]: the position in [0, n))
    read = reads.get((id(ln.base), _root(raw, defs), ln.axis))
    aff = None if read is None else read_coef(ln.vals, read, defs, order)
    if aff is None:
        return None
    dep = set(aff[1]) | {read, ln.read, e.inputs[1]}
    return _Rmw(e, ln.base, read, ln.vals, ln.pos, None, ln.axis, aff[0], dep, own=aff[1])


def _add_link(e: Eqn, defs: dict, n_uses: dict, reads: dict, order: dict) -> _Rmw | None:
    """`x + scatter_add_along(u, p)` with u = c x[p] + b: x[p] becomes (1 + c) x[p] + b."""
    if e.prim is not P.add or e.out.aval.dtype.kind != "f":
        return None
    for x, s in (e.inputs, e.inputs[::-1]):
        d = _def(s, defs, P.scatter_add_along)
        if d is None or x.aval != e.out.aval or s.aval != e.out.aval or \
                n_uses.get(s) != 1 or d.params.get("unique") or d.inputs[1].aval.size != 1:
            continue
        u, idx = d.inputs[:2]
        q = d.params["axis"]
        read = reads.get((id(x), _root(idx, defs), q))
        aff = (ZERO, set()) if read is None else read_coef(u, read, defs, order, zero=True)
        if aff is None or u.aval.shape != x.aval.shape[:q] + (1,) + x.aval.shape[q + 1:]:
            continue
        ln = _Rmw(e, x, read, u, None, idx, q, plus_one(aff[0]),
                  set(aff[1]) | {read, s} - {None}, own=aff[1])
        ln.zero = not nonzero(aff[0])
        return ln
    return None


_FINDERS = {P.setitem: _set_link, P.add: _add_link, P.setitem_add: _static_link}


def _closed(ln: _Rmw, defs: dict, n_uses: dict, vs: Any) -> bool:
    """The values `vs` are read only by the link's own equations (its write and those of its
    dependent values): all their uses are counted there."""
    own = [defs[v] for v in ln.dep] + [ln.e]
    for v in vs:
        if v.__class__ is Var and n_uses.get(v, 0) != sum(a is v for d in own for a in d.inputs):
            return False
    return True


def _writes_after_reads(g: Graph) -> list[tuple[int, Eqn]]:
    """The writes (and adds) into an array that was read before by a gather or a getitem, or
    written by such a write, with their places in g: the only possible links (a quick pass,
    before any table is built; an add is a link only beside a scatter)."""
    prims = census(g)
    writes = {p for p in _FINDERS if p in prims}
    if P.scatter_add_along not in prims:
        writes.discard(P.add)
    if not writes or not _READS & prims:
        return []
    read_from: set[int] = set()
    out = []
    for i, e in enumerate(g.eqns):
        if e.prim in _READS:
            read_from.add(id(e.inputs[0]))
        elif e.prim in writes and (e.prim is P.setitem_add or
                                   any(id(a) in read_from for a in e.inputs)):
            out.append((i, e))  # (`x[p] += v` needs no read: a chain's first link)
            read_from.add(id(e.out))
    return out


_READS = frozenset([P.take_along, P.getitem])
_PRIM, _OUT = operator.itemgetter(0), operator.itemgetter(3)


class _Uses:
    """`uses(g)`, counted on the first look (a graph whose candidate links all fail before
    one asks, seeds/000's softmax written back into its buffer, never counts)."""

    __slots__ = ("g", "n")

    def __init__(self, g: Graph):
        self.g, self.n = g, None

    def get(self, v: Any, default: Any = None) -> Any:
        if self.n is None:
            self.n = uses(self.g)
        return self.n.get(v, default)


def _tables(g: Graph) -> tuple[dict, dict, dict]:
    """defs (var -> its equation) and order (var -> its place), built in C, and the reads at
    one position by key (the first of each), from the reads alone."""
    eqns = g.eqns
    outs = list(map(_OUT, eqns))
    defs = dict(zip(outs, eqns))
    order = dict(zip(outs, range(len(eqns))))
    reads: dict[tuple, Var] = {}
    for e in itertools.compress(eqns, map(_READS.__contains__, map(_PRIM, eqns))):
        key = _read_key(e, defs)  # (defs of later equations: not read by e, as g is in order)
        if key is not None:
            reads.setdefault(key, e.out)
    return defs, order, reads


def join_affine_rmw(g: Graph) -> Graph:
    """Chains of affine read-modify-writes at one position each into one buffer (traced or
    Python int positions), each link's result read only by the next link, become one
    weighted scatter-add (module doc)."""
    todo = _writes_after_reads(g)
    if len(todo) < 2:
        return g
    defs, order, reads = _tables(g)
    n_uses = _Uses(g)
    outs = {a for a in g.outputs if a.__class__ is Var}
    chains: dict[Var, list[_Rmw]] = {}
    for _, e in todo:
        ln = _FINDERS[e.prim](e, defs, n_uses, reads, order)
        if ln is None:
            continue
        if not _closed(ln, defs, n_uses, ln.dep - {ln.e.out}):
            if not may_open(ln, defs, n_uses):
                continue
            ln.open = True  # (its read is used outside: see rmwreads)
        prev = chains.get(ln.base)
        if prev is not None and prev[-1].axis == ln.axis and \
                (prev[-1].static is None) == (ln.static is None) and ln.base not in outs and \
                (_closed(ln, defs, n_uses, (ln.base,)) or _read_after(prev[-1], ln, defs,
                                                                      n_uses, reads)):
            prev.append(ln)  # (in place: a chain of L links is built in L steps)
            chains[e.out] = chains.pop(ln.base)
        else:
            chains[e.out] = [ln]
    joined, scanned = [], []
    for c in [c for c0 in chains.values() for c in _split(_composed(c0, defs))]:
        if c[0].open and not any(ln.open for ln in c[1:]):
            c = c[1:]  # (x[p] read before the chain only: its first link stays as written)
        if len(c) < 2 or not _pays(c) or \
                all(ln.zero and not ln.open and ln.after is None and not ln.mids for ln in c):
            continue  # (plain scatter-adds: batching joins those as they are)
        if mixed(c) or any(ln.open for ln in c[1:]) or any(ln.mids for ln in c) or \
                any(ln.after is not None for ln in c[:-1]):
            if c[0].axis == 0:  # (rmwreads scans along axis 0; a chain read between its
                scanned.append(c)  # links is never the closed form: it drops them)
        else:
            joined.append(c)
    g1 = _rewrite(g, joined, defs) if joined else g
    if not scanned:
        return g1
    return join_open_reads(g1, scanned, defs, _cells, _joined, _joined_static, mixed, _mid)


def _read_after(p: _Rmw, ln: _Rmw, defs: dict, n_uses: Any, reads: dict) -> bool:
    """Whether link p's result, besides link ln (the next one), is read only once, at p's own
    position (`s[k] += x; use(s[k])`): the state p left there, which rmwreads defines from
    the chain's scan. Marks p.after when so."""
    x = p.e.out
    if p.static is not None:
        key = (id(x), p.e.params["idx"])
    else:
        raw = p.raw if p.raw is not None else defs[p.pos].inputs[1]
        key = (id(x), _root(raw, defs), p.axis)
    r = reads.get(key)
    if r is None or r is ln.read or not may_open(p, defs, n_uses, r):
        return False
    own = [defs[v] for v in ln.dep] + [ln.e, defs[r]]
    if n_uses.get(x, 0) != sum(a is x for d in own for a in d.inputs):
        return False
    p.after = r
    return True


def _split(chain: list[_Rmw]) -> list[list[_Rmw]]:
    """The chain (built whatever its rates) cut where two links' rates do not join after
    composing: a rate passed in beside a constant one (`p[k] *= a; p[k] += x` composes to
    one rate a per step; `e[k] = a e[k] + x` then `e[k] += 1` are two chains)."""
    out = [[chain[0]]]
    for ln in chain[1:]:
        if joins(out[-1][-1].a, ln.a):
            out[-1].append(ln)
        else:
            out.append([ln])
    return out


def _composed(chain: list[_Rmw], defs: dict) -> list[_Rmw]:
    """The chain with each run of consecutive links at one position, nothing reading the
    buffer between them, composed into one link (`p[k] *= 0.95; p[k] += x`: one link of rate
    0.95 per step, where two of rates 0.95 and 1 would need a scan). A run holds one link per
    source line: a step's links, so that a key repeated by consecutive steps leaves one
    composed rate per step (the steps' rates alike, which the closed form needs)."""
    if len(chain) < 2:
        return chain
    out = [chain[0]]
    for ln in chain[1:]:
        f = _fused(out[-1], ln, defs)
        if f is None:
            out.append(ln)
        else:
            out[-1] = f
    return out


def _at(ln: _Rmw, defs: dict) -> Any:
    """The root of a traced link's index."""
    return _root(ln.raw if ln.raw is not None else defs[ln.pos].inputs[1], defs)


def _fused(p: _Rmw, q: _Rmw, defs: dict) -> _Rmw | None:
    """Links p then q at one position, p's result read by q alone, as one link: x <- a_q (a_p
    x + b_p) + b_q = a_p a_q x + (a_q b_p + b_q) (its b from its parts, see _values), or None
    (a rate of two symbols, a composed rate of 1: plain adds, which batch as they are)."""
    if p.open or not _composable(p, q, defs):
        return None
    a = product(p.a, q.a)
    if a == (1.0, 0.0, None):
        return None
    f = _Rmw(q.e, p.base, p.read, q.vals, p.pos, p.raw, p.axis, a, p.dep | q.dep | {p.e.out},
             p.static, p.own | q.own)
    f.zero, f.after, f.parts = p.zero and q.zero, q.after, (p, q)
    # (reads of p's result before q, `e[k] *= 0.9; use(e[k]); e[k] += x`: p's own map of
    # the state before f, which rmwreads defines from the scan of the composed links; q's
    # read used outside it too, and the values computed from it kept for their uses)
    f.mids = p.mids + q.mids + [(r, p) for r in (p.after, q.read if q.open else None)
                                if r is not None]
    f.kept = p.kept | q.kept | (q.own if q.open else set())
    return f


def _composable(p: _Rmw, q: _Rmw, defs: dict) -> bool:
    """Links p then q (p's result q's buffer) may compose (see _fused, which also asks that
    nothing reads between them): at one position, from another source line than p's parts,
    their rates' product of one symbol at most."""
    return p.axis == q.axis and q.e.src is not None and q.e.src not in _lines(p) and \
        (p.static is None) == (q.static is None) and product(p.a, q.a) is not None and \
        (p.static == q.static if p.static is not None else _at(p, defs) is _at(q, defs))


def _lines(ln: _Rmw) -> list:
    """The source lines of a link's parts."""
    return [ln.e.src] if ln.parts is None else _lines(ln.parts[0]) + _lines(ln.parts[1])


def _cells(eqns: list[Eqn], chain: list[_Rmw], defs: dict) -> tuple[Any, Any]:
    """The links' values b_t as x's cells (1 at axis 0) concatenated, and their positions
    (traced i64, or a constant at Python ints)."""
    src, base = chain[-1].e.src, chain[0].base
    if chain[0].static is None:
        n = base.aval.shape[0]
        vals = _concat(eqns, [_values(eqns, ln, defs) for ln in chain], 0, src)
        return vals, _concat(eqns, [_position(eqns, ln, n) for ln in chain], 0, src)
    cell = (1,) + base.aval.shape[1:]
    vals = _concat(eqns, [_cell(eqns, _values(eqns, ln, defs), cell, 0, src) for ln in chain],
                   0, src)
    return vals, Const(np.array([ln.static for ln in chain], np.int64))


def _pays(chain: list[_Rmw]) -> bool:
    """Traced positions (which may repeat: the loop would stay a recurrence), or Python ints
    of which some repeat (at distinct ones the links are independent, and batch as they are:
    `buf[i] *= s` over every row is one multiply, not powers of s)."""
    if chain[0].static is None:
        return True
    pos = [ln.static for ln in chain]
    return len(set(pos)) < len(pos)


def _rewrite(g: Graph, chains: list, defs: dict) -> Graph:
    """g with each chain's links and the equations that read its buffer dropped, and the
    last link's result computed by `_joined` in its place."""
    ends = {id(c[-1].e): c for c in chains}
    gone = {id(defs[v]) for c in chains for ln in c for v in ln.dep if v in defs}
    gone |= {id(ln.e) for c in chains for ln in c}
    eqns: list[Eqn] = []
    for e in g.eqns:
        chain = ends.get(id(e))
        if chain is not None:
            join = _joined if chain[0].static is None else _joined_static
            eqns.append(join(eqns, chain, e, defs))
        elif id(e) not in gone:
            eqns.append(e)
    return g.replace(eqns=tuple(eqns))


def _values(eqns: list[Eqn], ln: _Rmw, defs: dict) -> Any:
    """b_t: the link's value with its read taken as 0, its dependent equations emitted again
    (of composed links: a_q b_p + b_q)."""
    if ln.parts is not None:
        p, q = ln.parts
        bp, bq, src = _values(eqns, p, defs), _values(eqns, q, defs), q.e.src
        if _zero(bp):
            return bq
        if q.a != (1.0, 0.0, None):
            bp = _emit(eqns, P.mul, (bp, _rate(eqns, q.a, ln.base.aval.dtype, src)), {}, src)
        return bp if _zero(bq) else _emit(eqns, P.add, (bp, bq), {}, src)
    if ln.read is None:
        return ln.vals
    zero = Const(np.zeros(ln.read.aval.shape, ln.read.aval.dtype))
    sub: dict[Var, Any] = {ln.read: zero}

    def val(a: Any) -> Any:
        if a.__class__ is not Var or a not in ln.dep or a is ln.read:
            return sub.get(a, a)
        if a not in sub:
            d = defs[a]
            sub[a] = _folded(eqns, d, tuple(val(x) for x in d.inputs))
        return sub[a]
    return val(ln.vals)


def _mid(eqns: list[Eqn], pre: _Rmw, before: Any, r: Var, defs: dict) -> None:
    """Define r, the state the links `pre` (composed parts) leave from the state `before`
    (r's shape): a_pre before + b_pre."""
    src, dt = pre.e.src, r.aval.dtype
    b = _values(eqns, pre, defs)
    if b.aval.shape != r.aval.shape:
        b = Const(np.broadcast_to(b.value, r.aval.shape)) if b.__class__ is Const else \
            _emit(eqns, P.broadcast_to, (b,), {"shape": r.aval.shape}, src)
    if pre.a != (1.0, 0.0, None):
        before = _emit(eqns, P.mul, (before, _rate(eqns, pre.a, dt, src)), {}, src)
    eqns.append(Eqn(P.add, (before, b), Params({}), r, src))


def _zero(a: Any) -> bool:
    return a.__class__ is Const and not a.value.any()


def _folded(eqns: list[Eqn], d: Eqn, ins: tuple) -> Any:
    """d on `ins`, where the read's 0 is folded away: constants computed now, a product with
    it 0, and an added or subtracted 0 (a term of a x[p], which b leaves out) dropped."""
    if all(a.__class__ is Const for a in ins):
        return Const(np.asarray(d.prim.impl(*[a.value for a in ins], **d.params)))
    if d.prim is P.mul and (_zero(ins[0]) or _zero(ins[1])) or d.prim is P.div and _zero(ins[0]):
        return Const(np.zeros(d.out.aval.shape, d.out.aval.dtype))  # (c x[p] at x[p] = 0)
    if d.prim in (P.add, P.sub) and _zero(ins[1]) and ins[0].aval == d.out.aval:
        return ins[0]
    if d.prim is P.add and _zero(ins[0]) and ins[1].aval == d.out.aval:
        return ins[1]
    if d.prim is P.sub and _zero(ins[0]) and ins[1].aval == d.out.aval:
        return _emit(eqns, P.neg, (ins[1],), {}, d.src)
    return _emit(eqns, d.prim, ins, dict(d.params), d.src)


def _position(eqns: list[Eqn], ln: _Rmw, n: int) -> Any:
    """The link's position as i64[1] in [0, n)."""
    if ln.pos is not None:
        return ln.pos
    raw = _emit(eqns, P.reshape, (ln.raw,), {"shape": (1,)}, ln.e.src)
    return _emit(eqns, P.take_along, (Const(np.arange(n, dtype=np.int64)), raw), {"axis": 0},
                 ln.e.src)


def _later(pos: np.ndarray) -> np.ndarray:
    """For each entry, how many entries after it are equal (a stable sort keeps the order of
    equal entries: the count is the distance to the end of its run)."""
    order = np.argsort(pos, kind="stable")
    srt = pos[order]
    out = np.empty(len(pos), np.int64)
    out[order] = np.searchsorted(srt, srt, side="right") - 1 - np.arange(len(pos))
    return out


def _rate(eqns: list[Eqn], a: tuple, dt: np.dtype, src: Any) -> Any:
    """The coefficient c0 + c1 s as an atom of dtype dt."""
    c0, c1, sym = a
    if sym is None:
        return Const(np.array(c0, dt))
    r = sym if c1 == 1.0 else _emit(eqns, P.mul, (sym, Const(np.array(c1, dt))), {}, src)
    return r if c0 == 0.0 else _emit(eqns, P.add, (Const(np.array(c0, dt)), r), {}, src)


def _pow(eqns: list[Eqn], r: Any, k: Any, src: Any) -> Any:
    """r ** k (k a whole number of writes), computed now when both are constants."""
    if r.__class__ is Const and k.__class__ is Const:
        return Const(np.power(r.value, k.value))
    return _emit(eqns, P.pow_, (r, k), {}, src)


def _joined_static(eqns: list[Eqn], chain: list[_Rmw], e: Eqn, defs: dict,
                  vals: Any = None) -> Eqn:
    """The same at Python-int positions: the weights are constants, the scatter a segment sum
    of static ids."""
    q, src, base, a = chain[0].axis, e.src, chain[0].base, chain[0].a
    shape, dt = base.aval.shape, base.aval.dtype
    n, size = shape[q], len(chain)
    one = (1,) * q, (1,) * (len(shape) - q - 1)
    cell = shape[:q] + (1,) + shape[q + 1:]
    if vals is None:
        vals = _concat(eqns, [_cell(eqns, _values(eqns, ln, defs), cell, q, src)
                              for ln in chain], q, src)
    pos = np.array([ln.static for ln in chain], np.int64)
    if a != (1.0, 0.0, None):
        r = _rate(eqns, a, dt, src)
        w = _pow(eqns, r, Const(_later(pos).astype(dt).reshape(one[0] + (size,) + one[1])), src)
        vals = _emit(eqns, P.mul, (vals, w), {}, src)
        cnt = np.bincount(pos, minlength=n).astype(dt).reshape(one[0] + (n,) + one[1])
        decay = _pow(eqns, r, Const(cnt), src)
        base = Const(np.asarray(base.value * decay.value, dt)) if base.__class__ is Const \
            and decay.__class__ is Const else _emit(eqns, P.mul, (base, decay), {}, src)
    s = _emit(eqns, P.segment_sum, (vals,), {"ids": Adv(pos), "axis": q, "num": n}, src)
    return Eqn(P.add, (base, s), Params({}), e.out, src)


def _cell(eqns: list[Eqn], v: Any, cell: tuple, q: int, src: Any) -> Any:
    """A static link's value (a row of x, or what broadcasts to one) as x's shape with 1 at
    the axis."""
    region = cell[:q] + cell[q + 1:]
    if v.__class__ is Const:
        return Const(np.broadcast_to(v.value, region).reshape(cell))
    if v.aval.shape != region:
        v = _emit(eqns, P.broadcast_to, (v,), {"shape": region}, src)
    return _emit(eqns, P.reshape, (v,), {"shape": cell}, src)


def _joined(eqns: list[Eqn], chain: list[_Rmw], e: Eqn, defs: dict, vals: Any = None,
            pos: Any = None) -> Eqn:
    """x a^(counts) + scatter_add(b_t a^(later links at p_t), p_t): the chain's result (the
    links' values b_t and positions p_t concatenated, when the caller has them)."""
    q, src, base, a = chain[0].axis, e.src, chain[0].base, chain[0].a
    shape = base.aval.shape
    n, size = shape[q], len(chain)
    one = (1,) * q, (1,) * (len(shape) - q - 1)
    if vals is None:
        vals = _concat(eqns, [_values(eqns, ln, defs) for ln in chain], q, src)
        pos = _concat(eqns, [_position(eqns, ln, n) for ln in chain], 0, src)
    at = _emit(eqns, P.reshape, (pos,), {"shape": one[0] + (size,) + one[1]}, src)
    if a != (1.0, 0.0, None):
        dt = base.aval.dtype
        r = _rate(eqns, a, dt, src)
        order = stable_order(eqns, pos, n, src)
        srt = _emit(eqns, P.take_along, (pos, order), {"axis": 0}, src)
        cnt = _emit(eqns, P.scatter_add_along, (Const(np.ones(size, dt)), pos),
                    {"axis": 0, "size": n}, src)
        # (the i-th sorted link has cumsum(cnt)[p] - 1 - i links after it at its p: the end
        # of its run, counted exactly in floats; a gather of n sums, not a binary search)
        right = _emit(eqns, P.take_along, (_emit(eqns, P.cumsum, (cnt,), {"axis": 0}, src),
                                           srt), {"axis": 0}, src)
        later = _emit(eqns, P.sub, (right, Const(np.arange(1, size + 1, dtype=dt))), {}, src)
        w = _emit(eqns, P.scatter_add_along, (_pow(eqns, r, later, src), order),
                  {"axis": 0, "size": size, "unique": True}, src)
        w = _emit(eqns, P.reshape, (w,), {"shape": one[0] + (size,) + one[1]}, src)
        vals = _emit(eqns, P.mul, (vals, w), {}, src)
        decay = _emit(eqns, P.reshape, (_pow(eqns, r, cnt, src),),
                      {"shape": one[0] + (n,) + one[1]}, src)
        base = _emit(eqns, P.mul, (base, decay), {}, src)
    s = _emit(eqns, P.scatter_add_along, (vals, at), {"axis": q, "size": n}, src)
    return Eqn(P.add, (base, s), Params({}), e.out, src)


__all__ = ["affine_rmw_writes", "join_affine_rmw"]
