"""Emitting add chains (sums of signed terms, see `chains.sums`), partitioned by source
(issue 14, item 4: mixed sources).

The terms of a group of sums may come from several places: rows of batched groups, reads of
one array, loop invariants and other single values, constants. Each (source, sign) gets one
operation for the whole group, whatever the sums' lengths:
- rows of one source: one stacked operand, summed per member by a reshape and a reduction
  when every member has as many, by a `segment_sum` when lengths differ (ragged sums), or by
  a product with the multiplicities when one sum reuses rows (`sum(g[r] for r in rs)`);
- one single value used by every member the same number of times: a multiple of it;
- constants: folded into one constant while compiling.
Then the few partial sums are added.
"""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Const, Var
from ..primitives import Adv
from . import gather

# Elements of one member's result past which an elementwise group whose operands would be
# copied to merge runs one member at a time (batching._Emitter._copies_big), and a sum's
# terms made one by one are added as written, not stacked (`_added`).
BIG = 1 << 14


def partition(srcs: list[tuple]) -> dict[tuple, list[int]]:
    """Members (indices) by source; values that only one member uses are one part ("loose":
    stacked together), so a list of distinct inputs is one stack, not one part each."""
    parts: dict[tuple, list[int]] = {}
    for m, s in enumerate(srcs):
        parts.setdefault(s, []).append(m)
    loose = [k for k in parts if k[0] == "a" and len(parts[k]) == 1]
    if len(loose) > 1:
        ms = sorted(m for k in loose for m in parts.pop(k))
        parts[("loose",)] = ms
    return parts


def emit_sums(em: Any, members: list[int]) -> Any:
    """The values of the sum nodes `members` (one group): (M, *shape), or *shape if M == 1."""
    p = em.p
    M = len(members)
    aval = p.out[members[0]].aval
    if M == 1 and _as_written(em, members[0]):
        return em.ref(p.out[members[0]])
    if M > 1:
        st = _stencil(em, members, aval)
        if st is not None:
            return st
    acc = _one_part(em, members[0], aval) if M == 1 else None
    if acc is None:
        acc = _partitioned(em, members, aval)
    out_shape = ((M,) if M > 1 else ()) + aval.shape
    if acc is None:
        acc = em.ref(Const(np.zeros(out_shape, aval.dtype)))
    if acc.shape != out_shape:
        acc = P.broadcast_to(acc, shape=out_shape)
    return acc if acc.dtype == aval.dtype else P.cast(acc, dtype=aval.dtype)


def _one_part(em: Any, i: int, aval: Any) -> Any:
    """A sum whose terms all have one sign and one source (a long accumulation, `s = s +
    x[i]` over a loop): its one partial sum, as `_partitioned` would make it, found with
    checks that run in C instead of a source and a key per term. None otherwise."""
    terms, signs = em.p.ops[i], em.p.info[i][0]
    types = set(map(type, terms))
    if not signs or Var not in types or not types <= {Var, Const}:
        return None
    if Const in types:  # (`s = 0.0` before the loop: constants adding up to zero, which
        is_var = [a.__class__ is Var for a in terms]  # `_partitioned` would leave out)
        const = np.zeros((1,) + aval.shape, aval.dtype)
        for a, s in zip(terms, signs):
            if a.__class__ is Const:
                const[0] += s * a.value
        if const.any():
            return None
        terms = tuple(itertools.compress(terms, is_var))
        signs = list(itertools.compress(signs, is_var))
    if signs.count(signs[0]) != len(signs) or not em._one_source(list(terms)):
        return None
    pairs = list(zip([0] * len(terms), terms))
    return _combine(None, _partial(em, em._source(terms[0]), pairs, 1, aval), signs[0])


def _partitioned(em: Any, members: list[int], aval: Any) -> Any:
    """The sums of `members`: one partial sum per (source, sign), added (None: no terms)."""
    p = em.p
    M = len(members)
    pairs_all: list[tuple[int, Any, int]] = []
    const = np.zeros((M,) + aval.shape, aval.dtype)
    has_const = False
    for r, m in enumerate(members):
        for a, s in zip(p.ops[m], p.info[m][0]):
            if isinstance(a, Const):
                const[r] += s * a.value
                has_const = True
            else:
                pairs_all.append((r, a, s))
    srcs = [(em._source(a), s) for _, a, s in pairs_all]
    acc = None
    for key, ks in partition([(s + (sign,)) if s[0] != "a" else ("a", (s[1], sign))
                              for s, sign in srcs]).items():
        sign = srcs[ks[0]][1]
        src = srcs[ks[0]][0] if key[0] != "loose" else ("loose",)
        pairs = [(pairs_all[k][0], pairs_all[k][1]) for k in ks]
        if key[0] == "loose":  # (partitioned by sign too: split the loose part by sign)
            for sg in (1, -1):
                sub = [pr for k, pr in zip(ks, pairs) if srcs[k][1] == sg]
                if sub:
                    acc = _combine(acc, _partial(em, src, sub, M, aval), sg)
            continue
        acc = _combine(acc, _partial(em, src, pairs, M, aval), sign)
    if has_const and const.any():
        c = em.ref(Const(const if M > 1 else const[0]))
        acc = c if acc is None else P.add(acc, c)
    return acc


def _as_written(em: Any, i: int) -> bool:
    """One sum whose terms all come from different places gains nothing from partitioning:
    it runs as the adds it was written as (a recurrence's step keeps its shape)."""
    p = em.p
    srcs = set()
    for a in p.ops[i]:
        if isinstance(a, Const):
            return False
        s = em._source(a)
        if s in srcs:
            return False
        srcs.add(s)
    for e in p.info[i][1]:
        ins = tuple(em.ref(p.resolve(a)).atom for a in e.inputs)
        em.b.eqns.append(type(e)(e.prim, ins, e.params, e.out, e.src))
        em.env[e.out] = e.out
    return True


def _stencil(em: Any, members: list[int], aval: Any) -> Any:
    """Sums whose k-th terms read one array at positions affine in the member, where a zero
    may stand for a position off the array (`(u[i-1] if i > 0 else 0.0) + u[i+1] + ...`):
    one view per term (of the array padded with zeros where positions run off it), added.
    None when the terms do not line up so."""
    p = em.p
    k = len(p.ops[members[0]])
    signs = p.info[members[0]][0]
    if any(len(p.ops[m]) != k or p.info[m][0] != signs for m in members):
        return None
    M = len(members)
    cols = [[p.ops[m][j] for m in members] for j in range(k)]
    zeros = [[isinstance(a, Const) and not a.value.any() for a in col] for col in cols]
    fulls: dict[int, np.ndarray] = {}  # padded terms: their positions, for every member
    src, pat, axes = None, (), ()
    for j, (col, zero) in enumerate(zip(cols, zeros)):
        if not any(zero):
            continue  # a term every member has: an operand like any other
        rds = [em.reads.get(a) if a.__class__ is Var else None for a in col]
        live = [r for r, z in zip(rds, zero) if not z]
        if not live or any(r is None for r in live):
            return None
        key = {(r[0].atom, r[1], r[2]) for r in live}
        if len(key) > 1 or src is not None and key != {(src.atom, pat, axes)}:
            return None
        src, pat, axes = live[0][0], live[0][1], live[0][2]
        have = [m for m in range(M) if not zero[m]]
        pos = np.array([rds[m][3] for m in have], np.int64).reshape(len(have), -1)
        full = gather.extrapolate(M, have, pos)
        if full is None or not gather.off_array(src.shape, pat, axes,
                                                full[[m for m in range(M) if zero[m]]]):
            return None
        fulls[j] = full
    views: dict[int, tuple] = {}
    if not fulls:  # every term present: the per-source reductions serve it, unless they
        views = _affine_columns(em, cols)  # would gather reads that are views term by term
        if not views:
            return None
    else:
        base, shift = gather.padded(src, pat, axes, list(fulls.values()))  # one padding
        views = {j: (base, pat, axes, full + shift) for j, full in fulls.items()}
    acc = None
    for j, sign in enumerate(signs):
        t = gather.read(*views[j]) if j in views else _operand_rows(em, cols[j], M)
        acc = _combine(acc, t, sign)
    if acc.dtype != aval.dtype:
        acc = P.cast(acc, dtype=aval.dtype)
    return acc if acc.shape == (M,) + aval.shape else P.broadcast_to(acc, shape=(M,) + aval.shape)


def _affine_columns(em: Any, cols: list[list]) -> dict[int, tuple]:
    """The terms that read one array at positions affine in the member, where the reads of
    that array across all terms are not (a 5-point stencil row by row, `u[i-1, 1:-1] + u[i+1,
    1:-1] + u[i, :-2] + ...`, whose reads CSE shares between rows): each such term is one
    view, read as (array, pattern, axes, positions); empty when stacking them all would be
    affine too, or no array is read so by two terms."""
    out: dict[int, tuple] = {}
    by_src: dict[tuple, list[int]] = {}
    for j, col in enumerate(cols):
        rds = [em.reads.get(a) if a.__class__ is Var else None for a in col]
        if any(r is None for r in rds) or len({(r[0].atom, r[1], r[2]) for r in rds}) > 1:
            continue
        pos = np.array([r[3] for r in rds], np.int64).reshape(len(rds), -1)
        if gather.digits(pos) is not None:
            out[j] = (rds[0][0], rds[0][1], rds[0][2], pos)
            by_src.setdefault((rds[0][0].atom, rds[0][1], rds[0][2]), []).append(j)
    keep = [js for js in by_src.values() if len(js) > 1 and gather.digits(
        np.stack([out[j][3] for j in js], axis=1).reshape(-1, out[js[0]][3].shape[1])) is None]
    return {j: out[j] for js in keep for j in js}


def _operand_rows(em: Any, atoms: list, M: int) -> Any:
    x, batched = em.operand(atoms)
    return x if batched else P.broadcast_to(P.reshape(x, shape=(1,) + x.shape),
                                            shape=(M,) + x.shape)


def _combine(acc: Any, t: Any, sign: int) -> Any:
    if acc is None:
        return t if sign > 0 else P.neg(t)
    return P.add(acc, t) if sign > 0 else P.sub(acc, t)


def _partial(em: Any, src: Any, pairs: list[tuple[int, Any]], M: int, aval: Any) -> Any:
    """Sum, per member, of the terms `pairs` (member row, atom) from one source."""
    rows = np.array([r for r, _ in pairs], np.int64)
    counts = np.bincount(rows, minlength=M)
    a0 = pairs[0][1]
    if src[0] == "a" or all(a is a0 for _, a in pairs):  # one value: a multiple of it
        x = em.ref(a0)
        if np.all(counts == counts[0]):
            c = int(counts[0])
            return x if c == 1 else P.mul(x, em.ref(Const(np.asarray(c, x.dtype))))
        w = em.ref(Const(counts.astype(x.dtype).reshape((M,) + (1,) * x.ndim)))
        return P.mul(w, x)
    if M == 1 and src[0] == "g":
        g, q = em._group_rows([a for _, a in pairs])
        if len(np.unique(q)) < len(q):  # rows reused: weigh each row by its multiplicity
            w = np.bincount(q, minlength=g.shape[0]).astype(g.dtype)
            spec = "a," + "a" + _letters(g.ndim - 1) + "->" + _letters(g.ndim - 1)
            return P.einsum(em.ref(Const(w)), g, spec=spec)
    if src[0] == "loose" and len(pairs) > M and aval.size >= BIG:
        return _added(em, pairs, M, aval)  # (big values made one by one: no stack of all)
    x, _ = em.operand([a for _, a in pairs])  # (len(pairs), *shape)
    if M == 1:
        return P.reduce_sum(x, axes=(0,))
    if np.all(counts == counts[0]) and np.all(np.diff(rows) >= 0):
        c = int(counts[0])
        x = P.reshape(x, shape=(M, c) + x.shape[1:])
        return P.reduce_sum(x, axes=(1,)) if c > 1 else P.reshape(x, shape=(M,) + x.shape[2:])
    return P.segment_sum(x, ids=Adv(rows), axis=0, num=M)


def _added(em: Any, pairs: list[tuple[int, Any]], M: int, aval: Any) -> Any:
    """Each member's terms added as written, the M sums stacked: where the terms are big
    arrays made one by one, stacking them all would copy each once more (and the gradient
    would take its rows apart again), for as many adds as the reduction saves."""
    sums: list[Any] = [None] * M
    for r, a in pairs:
        sums[r] = em.ref(a) if sums[r] is None else P.add(sums[r], em.ref(a))
    z = None
    for r in range(M):
        if sums[r] is None:
            z = z or em.ref(Const(np.zeros(aval.shape, aval.dtype)))
            sums[r] = z
    return sums[0] if M == 1 else P.stack(*sums, axis=0)


def _letters(n: int) -> str:
    return "bcdefghijklmnopqrstuvwxyz"[:n]
