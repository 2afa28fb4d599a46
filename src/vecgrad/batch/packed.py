"""Before batching: loops over slices that shrink or grow (`x[i+1:] - x[i]` for every i, a
triangle of pairs) run as one packed computation over all their rows.

Iteration i reads `x[lo_i:hi_i]` (rows along axis 0), computes elementwise on those rows (with
values of its own that have no row axis, like `x[i]`, or shared ones, like a scale), may reduce
other axes, and ends in sums over the rows. The members have as many shapes as lengths, so
they cannot batch as they are. Packed, the rows of all members are one array, gathered once
(`take` at the concatenated ranges: the pairs of a triangle), each member's own values are
repeated to its rows (`take` at the segment ids), the elementwise work runs once over all
rows, and each sum over the rows is one `segment_sum` (by measured kernel) with one row per
member; the members' results are the rows of that, which batch downstream as one group.

Only chains of elementwise operations and sums qualify; anything else that reads a member's
rows leaves that member as it was. The packed work is placed after the last member's chain,
so a member whose result is used before then (a dependence between the iterations) leaves its
group alone.
"""
from __future__ import annotations

import heapq
import itertools
from operator import itemgetter
from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Atom, Const, Eqn, Graph, Params, Var
from ..primitives.linalg import make_spec, parse_spec
from . import dense as _dense
from .dense import REDUCTIONS as _REDUCTIONS
from .dense import canon, dense_rows, dense_span, unrowed, work
from .dense import emit as _emit
from .fields import fields

_MIN_MEMBERS = 3


def _ragged_read(e: Eqn) -> tuple | None:
    """(pattern, row range) of a basic read whose first output axis is a unit-step slice of
    axis `ax` of its base (the other index entries, the pattern, must match in a group)."""
    idx = e.params["idx"]
    if not P.is_basic(idx) or len(idx) != e.inputs[0].aval.ndim or not idx \
            or not all(isinstance(k, (int, P.Sl)) for k in idx):
        return None
    ax = next((a for a, k in enumerate(idx) if isinstance(k, P.Sl)), None)
    if ax is None or idx[ax].step != 1:
        return None
    k = idx[ax]
    pat = tuple(None if a == ax else v for a, v in enumerate(idx))
    return (e.inputs[0], pat, ax), (k.start, k.stop)


class _Chain:
    """One member: its read, the equations that carry its rows (in order), its sums."""

    def __init__(self, read: Eqn, rng: tuple[int, int]):
        self.read, self.rng = read, rng
        self.eqns: list[tuple[int, Eqn]] = []
        self.sig: list[tuple] = []
        self.ends: list[int] = []  # positions in eqns of the sums over the rows
        self.regular: list[list[Atom]] = []  # per equation, its operands without rows


def _follow(read: Eqn, rng: tuple, users: dict[Var, list[tuple[int, Eqn]]],
            ragged: dict[Var, tuple]) -> _Chain | None:
    """The member's chain, or None when something else reads its rows. An operand that is
    another ragged read of the same rows (`V[:t+1]` beside `K[:t+1]`) carries rows too; one
    that is a sum of this chain (a softmax's max, its normaliser) is the member's own value."""
    ch = _Chain(read, rng)
    slot = {read.out: (-1, 0)}  # a row-carrying value -> (its place in the chain, rows axis)
    ends: dict[Var, int] = {}  # a sum over the rows -> its place in the chain
    axis = ragged[read.out][0][2]  # (a sibling's rows are along the same axis of its base)
    at: dict[int, Eqn] = dict(users.get(read.out, []))  # readers not yet taken, by position
    todo = list(at)  # (a heap: the chain is taken in the order of the trace)
    heapq.heapify(todo)
    seen: set[int] = set()
    while todo:
        i = heapq.heappop(todo)
        if i in seen:
            continue
        seen.add(i)
        e = at[i]
        ops, regs, pos = [], [], []
        for a in e.inputs:
            if isinstance(a, Var) and a in slot:
                ops.append(("r", slot[a][0]))
                pos.append(slot[a][1])
            elif isinstance(a, Var) and a in ragged and ragged[a][1] == rng \
                    and ragged[a][0][2] == axis:  # (the same rows of any array: Y[:t])
                ops.append(("q", ragged[a][0]))
                pos.append(0)
            else:
                ops.append(("e", ends[a]) if isinstance(a, Var) and a in ends else
                           ("g", a.aval.shape, a.aval.dtype))
                pos.append(None)
                if ops[-1][0] == "g":
                    regs.append(a)
        c = _carries(e, pos)
        if c is None:
            return None
        k = len(ch.eqns)
        ch.eqns.append((i, e))
        ch.regular.append(regs)
        ch.sig.append((e.prim.name, c[0], tuple(ops), tuple(pos), c[1]))
        if c[1] is None:
            ch.ends.append(k)  # a sum over the rows: its result has none
            ends[e.out] = k
            continue
        slot[e.out] = (k, c[1])
        for j, u in users.get(e.out, []):
            at[j] = u
            heapq.heappush(todo, j)
    if not ch.ends:
        return None
    carried = {e.out for k, (_, e) in enumerate(ch.eqns) if k not in ch.ends}
    for v in carried:  # every reader of a row-carrying value is in the chain
        if any(j not in seen for j, _ in users.get(v, [])):
            return None
    return ch


def _params_key(e: Eqn) -> tuple:
    return tuple(sorted((k, v) for k, v in e.params.items()))


def _carries(e: Eqn, pos: list[int | None]) -> tuple | None:
    """(what must match between the members for `e` to run once on the packed rows, the
    row count left out; the rows' axis in e's result, None where e sums over them), for e
    reading a member's rows at axis `pos[j]` of operand j (None: an operand without rows);
    None when it cannot run so."""
    ins, out = e.inputs, e.out.aval
    p = next(q for q in pos if q is not None)
    if e.prim.elementwise:
        for a, q in zip(ins, pos):
            if q is not None and (q != p or a.aval.ndim != out.ndim):
                return None  # (rows broadcast onto another axis)
            at = p - (out.ndim - a.aval.ndim)  # (an operand's axis at the rows' place)
            if q is None and at >= 0 and a.aval.shape[at] != 1:
                return None  # (an operand with a row axis of its own, not broadcast)
        return ((_params_key(e), p), p) if out.ndim else None
    if e.prim in _REDUCTIONS and len(ins) == 1 and (
            e.prim is P.reduce_sum or ins[0].aval.dtype.kind in "fiu"):
        axes = e.params["axes"]
        return (_params_key(e), p), (None if p in axes else p - sum(a < p for a in axes))
    if e.prim is P.getitem and pos == [0]:
        idx, n = e.params["idx"], ins[0].aval.shape[0]
        if P.is_basic(idx) and idx and idx[0] == P.Sl(0, n, 1) and all(
                k is None or isinstance(k, (int, P.Sl)) for k in idx[1:]):
            return ("idx", tuple(idx[1:])), 0  # (every row, then anything on the other axes)
        return None
    if e.prim is P.reshape and pos == [0]:
        shape = e.params["shape"]
        return (("shape", tuple(shape[1:])), 0) \
            if shape and shape[0] == ins[0].aval.shape[0] else None
    if e.prim is P.einsum:
        specs, res = parse_spec(e.params["spec"])
        lead = {s[q] for s, q in zip(specs, pos) if q is not None}
        if len(lead) != 1:
            return None
        L = lead.pop()  # the rows' letter: kept in the result, or summed over (an end)
        if all(s.count(L) == (q is not None) for s, q in zip(specs, pos)):
            return (_params_key(e), tuple(pos)), (res.index(L) if L in res else None)
    return None


def packed_rows(g: Graph) -> Graph:
    """Pack groups of shrinking or growing slices (see the module doc)."""
    eqns = g.eqns
    by_pat: dict[tuple, list] = {}
    for i in itertools.compress(range(len(eqns)), map(_GETITEM.__contains__, map(_PRIM, eqns))):
        e = eqns[i]
        r = _ragged_read(e)
        if r is not None:
            by_pat.setdefault(r[0], []).append((i, e, r[1]))
    cands = [(pat, ms) for pat, ms in by_pat.items()
             if len(ms) >= _MIN_MEMBERS and len({r[1] - r[0] for _, _, r in ms}) >= 2]
    drop = fields({pat: tuple(r for _, _, r in ms) for pat, ms in cands})
    if drop:  # (each iteration's own vector split into fields: batching merges them)
        cands = [c for c in cands if c[0] not in drop]
    if not cands:
        return g
    folded = _transposed_rows(g, by_pat)
    if folded is not None:
        return packed_rows(folded)
    users = _users(eqns)
    ragged = {e.out: (pat, rng) for pat, ms in by_pat.items() for _, e, rng in ms}
    groups = []
    for pat, ms in cands:
        chains: dict[tuple, list[_Chain]] = {}
        for i, e, rng in ms:
            ch = _follow(e, rng, users, ragged)
            if ch is not None:
                chains.setdefault(tuple(ch.sig), []).append(ch)
        for chs in map(_edges, chains.values()):
            if len(chs) >= _MIN_MEMBERS and _ragged([c.rng[1] - c.rng[0] for c in chs]) \
                    and not _window_classes([c.rng for c in chs]):
                groups.append((pat, chs))
    if not groups:
        return g
    eqns = _toposort(_rebuild(g, groups), g.inputs)
    return g if eqns is None else g.replace(eqns=tuple(eqns))


def _transposed_rows(g: Graph, by_pat: dict) -> Graph | None:
    """g with transposes of row slices that only products read (`Q[t] @ K[:t+1].T`)
    folded into the products: einsum(transpose(x)) is einsum(x) with its letters in x's
    order, so the rows' chain starts at the read, rows first. None where there are none."""
    outs = {e.out for ms in by_pat.values() for _, e, _ in ms}
    fold = {e.out: e for e in g.eqns if e.prim is P.transpose and e.inputs[0] in outs}
    if not fold:
        return None
    users = _users(g.eqns)
    fold = {v: t for v, t in fold.items() if all(u.prim is P.einsum for _, u in users[v])}
    if not fold:
        return None
    out = []
    for e in g.eqns:
        if e.out in fold:
            continue
        if e.prim is P.einsum and any(isinstance(a, Var) and a in fold for a in e.inputs):
            specs, res = parse_spec(e.params["spec"])
            specs, ins = list(specs), list(e.inputs)  # (parse_spec's lists are shared)
            for j, a in enumerate(e.inputs):
                if isinstance(a, Var) and a in fold:
                    perm = fold[a].params["perm"]  # (axis i of the transpose: perm[i] of x)
                    specs[j] = "".join(specs[j][perm.index(ax)] for ax in range(len(perm)))
                    ins[j] = fold[a].inputs[0]
            e = Eqn(e.prim, tuple(ins), Params({**e.params, "spec": make_spec(specs, res)}),
                    e.out, e.src)
        out.append(e)
    return g.replace(eqns=tuple(out))


_GETITEM = frozenset([P.getitem])
_PRIM = itemgetter(0)  # an equation's primitive


def _users(eqns: tuple) -> dict[Var, list[tuple[int, Eqn]]]:
    """var -> its readers (place, equation), in order (only once some group may pack)."""
    users: dict[Var, list[tuple[int, Eqn]]] = {}
    get = users.get
    for t in enumerate(eqns):
        for a in t[1].inputs:
            if a.__class__ is Var:
                u = get(a)
                if u is None:
                    users[a] = [t]
                else:
                    u.append(t)
    return users


def _ragged(lens: list[int]) -> bool:
    """Lengths that vary for real: no one length is shared by half the members (windows of
    one width with a few partial ones at an edge batch as windows, which is cheaper)."""
    counts: dict[int, int] = {}
    for n in lens:
        counts[n] = counts.get(n, 0) + 1
    return len(counts) > 1 and 2 * max(counts.values()) <= len(lens)


def _edges(chs: list[_Chain]) -> list[_Chain]:
    """The members to pack: all, or where one length is shared by half of them or more
    (windows of one width, which batch as windows), the others (the partial windows at an
    edge, `K[max(0, t-w+1):t+1]`: each would run alone, a dozen small operations apiece)."""
    lens = [c.rng[1] - c.rng[0] for c in chs]
    top = max(set(lens), key=lens.count)
    if 2 * lens.count(top) < len(lens):
        return chs
    return [c for c, n in zip(chs, lens) if n != top]


# windows of at most this many widths, each width read at MIN_WINDOWS or more positions
# evenly spaced, batch as windows (one group per width), not packed
MAX_WIDTHS, MIN_WINDOWS = 8, 8


def _window_classes(rngs: list[tuple[int, int]]) -> bool:
    """Whether the row ranges are windows of a few widths (`x[t:t+k]` for k in a list of
    widths), each width's starts evenly spaced: each width then batches as sliding windows
    (views, and sums over their offsets), cheaper than gathering every window's rows."""
    starts: dict[int, list[int]] = {}
    for lo, hi in rngs:
        starts.setdefault(hi - lo, []).append(lo)
        if len(starts) > MAX_WIDTHS:
            return False
    for st in starts.values():
        if len(st) < MIN_WINDOWS or len({b - a for a, b in itertools.pairwise(st)}) != 1:
            return False
    return True


def _toposort(eqns: list[Eqn], inputs: tuple) -> list[Eqn] | None:
    """The equations in their order where it is a valid one, each moved after what it reads
    otherwise (a member's sum read by a running total before the packed work); None when they
    depend on each other in a cycle (an iteration reads an earlier one's sum)."""
    at = {e.out: k for k, e in enumerate(eqns)}
    state = [0] * len(eqns)  # 0 new, 1 on the stack, 2 placed
    out: list[Eqn] = []
    for k0 in range(len(eqns)):
        if state[k0]:
            continue
        stack = [(k0, 0)]
        state[k0] = 1
        while stack:
            k, j = stack[-1]
            ins = eqns[k].inputs
            while j < len(ins) and not (isinstance(ins[j], Var) and ins[j] in at
                                        and state[at[ins[j]]] != 2):
                j += 1
            if j == len(ins):
                stack.pop()
                state[k] = 2
                out.append(eqns[k])
                continue
            stack[-1] = (k, j + 1)
            d = at[ins[j]]
            if state[d] == 1:
                return None
            state[d] = 1
            stack.append((d, 0))
    return out


def _rebuild(g: Graph, groups: list) -> list[Eqn]:
    skip: set[int] = set()
    at: dict[int, list] = {}
    for pat, chs in groups:
        skip |= {i for c in chs for i, _ in c.eqns}
        at.setdefault(max(i for c in chs for i, _ in c.eqns), []).append((pat, chs))
    out: list[Eqn] = []
    for i, e in enumerate(g.eqns):
        if i not in skip:
            out.append(e)
        for pat, chs in at.get(i, []):
            out += _pack(pat, chs)
    return out


def _pack(pat: tuple, chs: list[_Chain]) -> list[Eqn]:
    """The members' chains packed, or dense and masked where their rows fill most of their
    rectangle and the estimated work is less that way (see `dense`)."""
    packed = _packed(pat, chs)
    span = dense_span([c.rng for c in chs])
    if span is not None:
        dense = dense_rows(pat, chs, span)
        if work(dense) < _dense.DENSE_BIAS * work(packed):
            return dense
    return packed


def _packed(pat: tuple, chs: list[_Chain]) -> list[Eqn]:
    out: list[Eqn] = []
    base, idx, ax = pat
    src = chs[0].read.src
    lens = [c.rng[1] - c.rng[0] for c in chs]
    rows = np.concatenate([np.arange(*c.rng) for c in chs]).astype(np.int64)
    seg = np.repeat(np.arange(len(chs)), lens)
    reads = {(base, idx, ax): _rows_of(out, base, idx, ax, rows, src)}
    x = reads[(base, idx, ax)]
    vals: list[Atom] = []
    for k, (_, e) in enumerate(chs[0].eqns):
        ins, r, spread = [], 0, []
        ops, pos = chs[0].sig[k][2:4]
        p = next(q for q in pos if q is not None)  # (the rows' axis in the member's layout)
        flat = e.prim is P.einsum  # (its own operands get a row axis first, not aligned)
        ndim = None if flat else e.out.aval.ndim
        for j, o in enumerate(ops):
            if o[0] == "r":
                ins.append(x if o[1] == -1 else vals[o[1]])
            elif o[0] == "q":  # (the same rows of another array)
                if o[1] not in reads:
                    reads[o[1]] = _rows_of(out, *o[1], rows, e.src)
                ins.append(reads[o[1]])
            else:  # the members' own values, repeated to their rows
                if o[0] == "e":
                    v = _spread(vals[o[1]], e.inputs[j].aval.ndim, seg, ndim, p, out, e.src)
                else:
                    v = _per_row([c.regular[k][r] for c in chs], seg, ndim, p, out, e.src)
                    r += 1
                ins.append(v)
                if flat and v is not e.inputs[j]:
                    spread.append(j)
        params = _packed_params(e, len(rows), pos, spread)
        if k not in chs[0].ends:
            vals.append(_emit(out, e.prim, tuple(ins), params, e.src))
            continue
        red = _REDUCTIONS.get(e.prim, P.segment_sum)
        if e.prim is P.einsum:  # the rows kept by the product, then summed per member
            v = _emit(out, P.einsum, tuple(ins), params, e.src)
            rest: tuple = ()
        else:
            v, rest = ins[0], tuple(canon(a, p) for a in e.params["axes"] if a != p)
        v = _emit(out, red, (v,), {"ids": P.Adv(seg), "axis": 0, "num": len(chs)}, e.src)
        if rest:
            v = _emit(out, e.prim, (v,), {"axes": rest}, e.src)
        for m, c in enumerate(chs):  # each member's sum: its row
            ix = (m,) + tuple(P.Sl(0, d, 1) for d in v.aval.shape[1:])
            _emit(out, P.getitem, (v,), {"idx": P.BasicIndex(ix)}, e.src, var=c.eqns[k][1].out)
        vals.append(v)
    return out


def _packed_params(e: Eqn, n: int, pos: tuple, spread: list[int]) -> dict:
    """e's parameters on the packed rows (n of them, first): an einsum's operands with rows
    or in `spread` (given the row axis by `_per_row`) and its result get the rows' letter
    first, a reduction's axes their places in the packed layout (`canon`)."""
    p = dict(e.params)
    if e.prim is P.getitem:
        p["idx"] = P.BasicIndex((P.Sl(0, n, 1),) + tuple(p["idx"][1:]))
    elif e.prim is P.reshape:
        p["shape"] = (n,) + tuple(p["shape"][1:])
    elif e.prim is P.einsum:
        specs, res = parse_spec(p["spec"])
        L = next(s[q] for s, q in zip(specs, pos) if q is not None)
        p["spec"] = make_spec([L + s.replace(L, "") if q is not None or j in spread else s
                               for j, (s, q) in enumerate(zip(specs, pos))],
                              L + res.replace(L, ""))
    elif e.prim in _REDUCTIONS:
        q = next(q for q in pos if q is not None)
        p["axes"] = tuple(canon(a, q) for a in p["axes"])
    return p


def _rows_of(out: list[Eqn], base: Atom, idx: tuple, ax: int, rows: np.ndarray, src: Any
             ) -> Var:
    """The packed rows of `base` (at pattern `idx`, rows along `ax`): one slice where the
    members' ranges tile a range, else a gather."""
    lo = int(rows[0])
    if np.array_equal(rows, np.arange(lo, lo + len(rows))):  # (segments that tile a range)
        return _emit(out, P.getitem, (base,), {"idx": P.BasicIndex(
            tuple(P.Sl(lo, lo + len(rows), 1) if k is None else k for k in idx))}, src)
    whole = tuple(P.Sl(0, base.aval.shape[ax], 1) if k is None else k for k in idx)
    w = _emit(out, P.getitem, (base,), {"idx": P.BasicIndex(whole)}, src)
    return _emit(out, P.take, (w,), {"ids": P.Adv(rows), "axis": 0}, src)


def _per_row(atoms: list[Atom], seg: np.ndarray, ndim: int | None, p: int,
             out: list[Eqn], src: Any) -> Atom:
    """The members' own operands, one per row of the packed array (a shared one as is, its
    unit axis at the rows' place `p` dropped unless first), right-aligned to `ndim` axes,
    or with the row axis put first when `ndim` is None."""
    a0 = atoms[0]
    if all(a is a0 for a in atoms) or (isinstance(a0, Const) and all(
            isinstance(a, Const) and a.key() == a0.key() for a in atoms)):
        return a0 if ndim is None or not p else unrowed(out, a0, 0, p, ndim, src)
    s = _emit(out, P.stack, tuple(atoms), {"axis": 0}, src)
    return _spread(s, a0.aval.ndim, seg, ndim, p, out, src)


def _spread(s: Var, own: int, seg: np.ndarray, ndim: int | None, p: int, out: list[Eqn],
            src: Any) -> Var:
    """`s`, the members' values stacked (each of `own` axes), repeated to their rows as
    `_per_row` aligns them."""
    if ndim is None:
        return _emit(out, P.take, (s,), {"ids": P.Adv(seg), "axis": 0}, src)
    s = unrowed(out, s, 1, p, ndim, src)  # (`x - x.mean(keepdims=True)`: a unit row axis)
    t = _emit(out, P.take, (s,), {"ids": P.Adv(seg), "axis": 0}, src)
    pad = ndim - t.aval.ndim
    if pad > 0:  # the rows first, then the operand's own axes right-aligned
        t = _emit(out, P.reshape, (t,), {"shape": t.aval.shape[:1] + (1,) * pad +
                                         t.aval.shape[1:]}, src)
    return t


__all__ = ["packed_rows"]
