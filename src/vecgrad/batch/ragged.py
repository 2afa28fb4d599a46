"""Before batching: sums over growing prefixes and shrinking suffixes read one cumulative sum.

A loop over `x[:i+1].sum(0)` (a running mean), `x[i:] @ w[i:]` (a weighted tail) or any sum
over `x[:h]` or `x[l:]` for many h (or l) has members of as many shapes: they cannot batch as
they are, and run one by one. Each is an entry of one cumulative sum along that axis:

    sum(x[:h], a) = cumsum(x, a)[h-1]          sum(x[l:], a) = cumsum(x, a, reverse)[l]
    einsum(x[:h], w[:h]) with the axis contracted = cumsum(einsum(x, w) keeping it)[h-1]

so the members become reads of one array at positions that move with the loop, which batch
as one view (`gather`). The cumulative sum adds the terms in the order a loop over the prefix
would, so no cancellation enters (as a difference of two prefix sums would for `x[l:h]`).

Only groups pay: one array's prefixes (or suffixes) along one axis, summed the same way, at
least two lengths, touching in all at least twice the axis (a lone `x[:5].sum()` stays).

Dot products of two 1-D arrays over their whole overlap at many shifts (an autocorrelation,
`x[:n-L] @ x[L:]` for every lag L; a causal filter over growing prefixes, `x[:t+1] @
h[n-1-t:]`) are entries of their one full correlation (`correlate`), when the dots add up to
an eighth of its work or more.
"""
from __future__ import annotations

from typing import Any

from .. import primitives as P
from ..ir import Atom, Const, Eqn, Graph, Params, Var
from ..primitives.linalg import make_spec, parse_spec

_MIN_TOUCHED = 2  # the members must touch this many times the axis's length in all
_MIN_LAGS = 8  # dot products at this many shifts make one full correlation


def _ragged_axis(r: Eqn) -> list[tuple[int, int, str]]:
    """(input axis, output axis, "prefix" | "suffix" | "whole") of each axis a basic read `r`
    takes a prefix or a suffix of (unit step, not empty), the axes read whole last."""
    idx = r.params["idx"]
    shape = r.inputs[0].aval.shape
    if not P.is_basic(idx) or len(idx) != len(shape) or \
            not all(isinstance(k, (int, P.Sl)) for k in idx):
        return []
    out, whole, o = [], [], 0
    for ax, (k, d) in enumerate(zip(idx, shape)):
        if isinstance(k, int):
            continue
        if k.step == 1 and 0 < len(k) < d:
            if k.start == 0:
                out.append((ax, o, "prefix"))
            elif k.stop == d:
                out.append((ax, o, "suffix"))
        elif k.step == 1 and len(k) == d > 1:
            whole.append((ax, o, "whole"))  # the longest prefix, or suffix, of a group
        o += 1
    return out + whole


def _whole(r: Eqn, ax: int) -> P.BasicIndex:
    """r's index with axis ax read whole."""
    idx = list(r.params["idx"])
    idx[ax] = P.Sl(0, r.inputs[0].aval.shape[ax], 1)
    return P.BasicIndex(idx)


def _candidate(e: Eqn, defs: dict[Var, Eqn]) -> tuple[tuple, int, int] | None:
    """(group key, position read in the cumulative sum, elements summed along the axis)."""
    if e.prim is P.reduce_sum:
        t = _term(e.inputs[0], defs, e.params["axes"])
        if t is None:
            return None
        key, k, kind, o = t
        return ("sum", kind, key, o, e.params["axes"]), _pos(k, kind), len(k)
    if e.prim is not P.einsum or not e.inputs:
        return None
    ins, out = parse_spec(e.params["spec"])
    reads = [defs.get(a) for a in e.inputs]
    if any(r is None or r.prim is not P.getitem for r in reads):
        return None
    for ax, o, kind in _ragged_axis(reads[0]):
        L = ins[0][o]
        if L in out or ins[0].count(L) > 1:
            continue
        k = reads[0].params["idx"][ax]
        parts = []
        for r, t in zip(reads, ins):
            axes = [a for a in _ragged_axis(r) if t.count(L) == 1 and t.index(L) == a[1]]
            if not axes or axes[0][2] != kind or r.params["idx"][axes[0][0]] != k or \
                    r.inputs[0].aval.shape[axes[0][0]] != reads[0].inputs[0].aval.shape[ax]:
                break
            parts.append((r.inputs[0], axes[0][0], _whole(r, axes[0][0])))
        else:
            key = ("einsum", kind, tuple(parts), e.params["spec"], L)
            return key, _pos(k, kind), len(k)
    return None


class _Scalar:
    """A scalar operand in a group's key: constants alike by contents (each iteration's `1.0`
    is its own Const), variables by identity."""

    __slots__ = ("atom", "key")

    def __init__(self, a: Atom):
        self.atom = a
        self.key = ("c", a.key()) if isinstance(a, Const) else ("v", a)

    def __eq__(self, o: object) -> bool:
        return isinstance(o, _Scalar) and o.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)


def _term(a: Atom, defs: dict[Var, Eqn], axes: tuple) -> tuple | None:
    """(key, slice, kind, axis) of a summed operand that is a prefix or suffix read along one of
    `axes`, or elementwise functions of such reads (of one range) and scalars: `x[:h]`,
    `x[:h] * w[:h]`, `(x[:h] - 1.0) ** 2`."""
    r = defs.get(a)
    if r is None:
        return None
    if r.prim is P.getitem:
        for ax, o, kind in _ragged_axis(r):
            if o in axes:
                return (r.inputs[0], ax, _whole(r, ax)), r.params["idx"][ax], kind, o
        return None
    if not r.prim.elementwise or not r.out.aval.ndim:
        return None
    parts, found = [], None
    for b in r.inputs:
        if not b.aval.ndim:
            parts.append(_Scalar(b))  # a scalar: the same at every position
            continue
        t = _term(b, defs, axes) if b.aval.shape == r.out.aval.shape else None
        if t is None or (found and t[1:] != found):
            return None  # (reads of one range only)
        found = t[1:]
        parts.append(t[0])
    if found is None:
        return None
    return (r.prim, r.params, tuple(parts)), *found


def _whole_term(t: Any, o: _Out, src: Any) -> Atom:
    """The term over the whole axis (see `_term`)."""
    if isinstance(t, _Scalar):
        return t.atom
    if isinstance(t[0], P.Primitive):
        return o.emit(t[0], tuple(_whole_term(b, o, src) for b in t[2]), t[1], src)
    return o.emit(P.getitem, (t[0],), {"idx": t[2]}, src)


def _pos(k: P.Sl, kind: str) -> int:
    """The entry of the cumulative sum that holds the sum over k."""
    return k.start if kind == "suffix" else k.stop - 1


class _Out:
    """New equations, hash-consed (the group's whole reads and cumulative sum are one)."""

    def __init__(self) -> None:
        self.eqns: list[Eqn] = []
        self.seen: dict[tuple, Var] = {}

    def emit(self, prim: P.Primitive, ins: tuple, params: dict, src: Any) -> Var:
        ps = Params(params)
        key = (prim, ins, ps)
        v = self.seen.get(key)
        if v is None:
            v = Var(prim.shape_rule(*[a.aval for a in ins], **ps))
            self.eqns.append(Eqn(prim, ins, ps, v, src))
            self.seen[key] = v
        return v


def _replace(e: Eqn, key: tuple, pos: int, o: _Out) -> Atom:
    src = e.src
    if key[0] == "lag":
        c = o.emit(P.correlate, (key[1], key[2]), {"mode": "full"}, src)
        return o.emit(P.getitem, (c,), {"idx": P.BasicIndex((pos,))}, src)
    if key[0] == "sum":
        _, kind, term, a, axes = key
        y = _whole_term(term, o, src)
        c = o.emit(P.cumsum, (y,), {"axis": a, "reverse": kind == "suffix"}, src)
        idx = tuple(pos if j == a else P.Sl(0, d, 1) for j, d in enumerate(c.aval.shape))
        v = o.emit(P.getitem, (c,), {"idx": P.BasicIndex(idx)}, src)
        rest = tuple(j - (j > a) for j in axes if j != a)
        return o.emit(P.reduce_sum, (v,), {"axes": rest}, src) if rest else v
    _, kind, parts, spec, L = key
    ins, out = parse_spec(spec)
    ys = tuple(o.emit(P.getitem, (b,), {"idx": w}, src) for b, _, w in parts)
    t = o.emit(P.einsum, ys, {"spec": make_spec(ins, L + out)}, src)
    c = o.emit(P.cumsum, (t,), {"axis": 0, "reverse": kind == "suffix"}, src)
    idx = (pos,) + tuple(P.Sl(0, d, 1) for d in c.aval.shape[1:])
    return o.emit(P.getitem, (c,), {"idx": P.BasicIndex(idx)}, src)


def partial_slices(g: Graph) -> bool:
    """Whether some array is read along one axis by unit-step slices of at least two
    different lengths, strict parts of that axis: the only groups the ragged passes (here and
    `packed`) act on. A quick test (a look-up per read) that spares graphs with none any
    further look, windows of one length included (the passes cost about 9 us per traced
    operation when they run: seeds/001 at ten times its size reads fixed-length slices)."""
    getitem, Sl = P.getitem, P.Sl
    parts: dict[tuple, tuple] = {}  # (index, shape) -> its partial axes, (axis, length)
    first: dict[tuple, int] = {}  # (base, axis) -> the first partial length seen
    for e in g.eqns:
        if e.prim is not getitem:
            continue
        idx = e.params["idx"]
        if idx and idx[-1].__class__ is int and \
                (len(idx) == 1 or len(idx) == 2 and idx[0].__class__ is int):
            continue  # (an element of a vector or a matrix, a scalar loop's read: no slice)
        key = (idx, e.inputs[0].aval.shape)
        hit = parts.get(key)
        if hit is None:
            hit = parts[key] = tuple((ax, len(k)) for ax, (k, d) in enumerate(zip(*key))
                                     if type(k) is Sl and k.step == 1 and 0 < len(k) < d)
        for ax, n in hit:
            if first.setdefault((e.inputs[0], ax), n) != n:
                return True
    return False


def cumulative_sums(g: Graph) -> Graph:
    """Sums over many prefixes (or suffixes) of one array become reads of its cumulative sum
    (see the module doc). Values are unchanged up to the order of the additions."""
    defs: dict[Var, Eqn] = {}
    found: dict[Var, tuple] = {}
    groups: dict[tuple, list[tuple[int, int]]] = {}
    for e in g.eqns:
        if e.prim is P.getitem or e.prim.elementwise:
            defs[e.out] = e
        elif e.prim is P.reduce_sum or e.prim is P.einsum:
            c = _lag_dot(e, defs) or _candidate(e, defs)
            if c is not None:
                found[e.out] = c
                groups.setdefault(c[0], []).append(c[1:])
    if not found:
        return g
    for v, (key, _, n) in list(found.items()):  # a whole axis: the group's longest member
        if key[1] == "whole":
            del found[v]
            for kind in ("prefix", "suffix"):
                k2 = key[:1] + (kind,) + key[2:]
                if k2 in groups:
                    found[v] = (k2, 0 if kind == "suffix" else n - 1, n)
                    groups[k2].append(found[v][1:])
                    break
    keep = {k for k, ms in groups.items() if len({n for _, n in ms}) > 1
            and (sum(n for _, n in ms) >= _MIN_TOUCHED * _extent(k) if k[0] != "lag" else
                 len(ms) >= _MIN_LAGS and 8 * sum(n for _, n in ms) >= _extent(k))}
    if not keep:
        return g
    o, env = _Out(), {}
    for e in g.eqns:
        if env:
            e = Eqn(e.prim, tuple(env.get(a, a) if isinstance(a, Var) else a for a in e.inputs),
                    e.params, e.out, e.src)
        c = found.get(e.out)
        if c is not None and c[0] in keep and not any(a in env for a in _bases(c[0])):
            env[e.out] = _replace(e, c[0], c[1], o)
            continue
        o.eqns.append(e)
    outs = tuple(env.get(a, a) if isinstance(a, Var) else a for a in g.outputs)
    return g.replace(eqns=tuple(o.eqns), outputs=outs)


def _lag_dot(e: Eqn, defs: dict[Var, Eqn]) -> tuple | None:
    """(("lag", x, y), entry, length) for `x[a:a+m] @ y[b:b+m]` of real 1-D arrays over the whole
    overlap of x and y at the shift a - b (one of a, b is 0, one slice reaches its array's
    end): entry a - b + len(y) - 1 of the full correlation of x and y."""
    if e.prim is not P.einsum or len(e.inputs) != 2:
        return None
    ins, out = parse_spec(e.params["spec"])
    if out or len(ins[0]) != 1 or ins[0] != ins[1]:
        return None
    rs = [defs.get(a) for a in e.inputs]
    if any(r is None or r.prim is not P.getitem or r.inputs[0].aval.ndim != 1 or
           r.inputs[0].aval.dtype.kind != "f" or len(r.params["idx"]) != 1 or
           not isinstance(r.params["idx"][0], P.Sl) or r.params["idx"][0].step != 1
           for r in rs):
        return None
    (kx,), (ky,) = (r.params["idx"] for r in rs)
    nx, ny = (r.inputs[0].aval.shape[0] for r in rs)
    m = len(kx)
    if m != len(ky) or m == 0 or min(kx.start, ky.start) or \
            min(nx - kx.start - m, ny - ky.start - m):
        return None
    return ("lag", rs[0].inputs[0], rs[1].inputs[0]), kx.start - ky.start + ny - 1, m


def _reads(key: tuple) -> list[tuple]:
    """The (base, axis, whole index) of every read in a group's key."""
    if key[0] == "lag":
        return [(key[1], 0, None), (key[2], 0, None)]
    if key[0] == "einsum":
        return list(key[2])
    out, todo = [], [key[2]]
    while todo:
        t = todo.pop()
        if isinstance(t[0], P.Primitive):
            todo += [b for b in t[2] if not isinstance(b, _Scalar)]
        else:
            out.append(t)
    return out


def _bases(key: tuple) -> list[Atom]:
    return [b for b, _, _ in _reads(key)]


def _extent(key: tuple) -> int:
    if key[0] == "lag":  # (the full correlation's multiply-adds)
        return key[1].aval.shape[0] * key[2].aval.shape[0]
    base, ax, _ = _reads(key)[0]
    return base.aval.shape[ax]


__all__ = ["cumulative_sums", "partial_slices"]
