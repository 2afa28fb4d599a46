"""The cotangent of windows read one tap at a time, as one product (col2im by coefficients).

Windows split over their taps (batch/windows.py: `sum_a einsum(x[a*d : .. : s], w[a])`) get,
from AD, one outer product and one strided add per tap:

    dx = zeros; dx[S_a] += g (x) w[a]   for a = 0..m-1      (S_a: the tap's slice of x)

m products of the window count times the channels, and m strided read-modify-writes of
that size (a stride-3, dilation-2 convolution of 12 channels: 10x its forward). When g has
few entries per tap (one output per window), the same sum is one small scatter and one
product: put g into column a of a coefficient matrix Z at the tap's positions, then

    dx = Z @ stack(w[a])                    Z[S_a restricted to g's axes, a] = g

Z has one row per position of x (on g's axes) and one column per tap; its writes do not
overlap, and the product writes dx once. A cost model in elements (`_cheaper`) keeps the
per-tap adds where Z would be mostly zeros (2-D patches at a stride: s*s rows per window).
"""
from __future__ import annotations

import numpy as np

from .. import primitives as P
from ..ir import Const, Eqn, Var
from ..primitives.linalg import make_spec, parse_spec
from ..rewrite.engine import Ctx

# chains longer than this stay per tap (the rule walks the chain back at its last link)
MAX_TAPS = 64


def _link(e: Eqn | None, c: Ctx) -> tuple | None:
    """(base, idx, einsum terms, out letters, operands) of `base[idx] += einsum(u, v)`, a
    product of two operands (letters contracted or not, none summed in one operand alone)
    added at a region of slices, one per base axis."""
    if e is None or e.prim is not P.setitem_add:
        return None
    base, val = e.inputs
    idx = e.params["idx"]
    if len(idx) != base.aval.ndim or not all(k.__class__ is P.Sl for k in idx):
        return None
    s = c.def_of(val, P.einsum)
    if s is None or len(s.inputs) != 2 or val.aval.shape != tuple(len(k) for k in idx):
        return None
    ins, out = parse_spec(s.params["spec"])
    both = set(ins[0]) & set(ins[1])
    if both & set(out) or set(ins[0] + ins[1]) - both != set(out) or \
            any(len(set(t)) != len(t) for t in ins) or val.aval.dtype.kind != "f":
        return None
    return base, idx, ins, out, s.inputs


def _chain(e: Eqn, c: Ctx) -> tuple[list[tuple], int] | None:
    """The links ending at e that add outer products of one shared operand g with a
    per-tap one, into slices of g's shape, and g's side (0 or 1) in each product."""
    links = []
    cur: Eqn | None = e
    while cur is not None and len(links) < MAX_TAPS:
        lk = _link(cur, c)
        if lk is None or (links and c.n_uses(cur.out) != 1):
            break
        links.append(lk)
        cur = c.def_of(lk[0])
    if len(links) < 2:
        return None
    a, b = links[0][4], links[1][4]
    side = 0 if a[0] is b[0] else 1 if a[1] is b[1] else None
    if side is None:
        return None
    g, ins, out = a[side], links[0][2], links[0][3]
    n = 0
    for lk in links:
        if lk[4][side] is not g or lk[2] != ins or lk[3] != out or \
                lk[4][1 - side].aval != links[0][4][1 - side].aval:
            break
        n += 1
    if n < 2:
        return None
    links = links[:n]
    P_axes = [i for i, ch in enumerate(out) if ch in ins[side]]
    C_axes = [i for i, ch in enumerate(out) if ch not in ins[side]]
    first = links[0][1]
    for lk in links[1:]:
        idx = lk[1]
        if any(idx[i] != first[i] for i in C_axes) or \
                any(idx[i].step != first[i].step for i in P_axes):
            return None
    return links[::-1], side


def _cheaper(rows: int, m: int, g: int, ch: int) -> bool:
    """Whether Z beats the per-tap adds, counting element passes: Z is zeroed and read by
    the product (rows x m each), its m column writes step by m (twice a contiguous write),
    and the product writes rows x ch; each tap writes its outer product (g x ch) and adds it
    into a strided slice (a read and a write). So one channel per tap (a scalar times g,
    `w[a] * X[b + a]`) stays per tap: its adds are scaled slices with no product to save."""
    return 2 * rows * m + 2 * m * g + rows * ch < 3 * m * g * ch


def taps_as_coefficients(e: Eqn, c: Ctx) -> object:
    """dx[S_a] += g (x) w_a over taps a (a chain ending at e) = dx += Z @ stack(w_a), with
    Z[S_a, a] = g: one scatter of g and one product instead of m outer products and m
    strided adds. Fires at the chain's last link."""
    nxt = c.reader(e.out)
    if nxt is not None and nxt.prim is P.setitem_add and nxt.inputs[0] is e.out and \
            c.n_uses(e.out) == 1 and _link(Eqn(nxt.prim, (e.out, nxt.inputs[1]), nxt.params,
                                               nxt.out, nxt.src), c) is not None:
        return None  # (not the last link: the chain goes on)
    found = _chain(e, c)
    if found is None:
        return None
    links, side = found
    base0 = links[0][0]
    ins, out = links[0][2], links[0][3]
    g = links[0][4][side]
    shape = base0.aval.shape
    P_axes = [i for i, ch in enumerate(out) if ch in ins[side]]
    C_axes = [i for i, ch in enumerate(out) if ch not in ins[side]]
    m = len(links)
    rows = 1
    for i in P_axes:
        rows *= shape[i]
    chs = 1
    for i in C_axes:
        chs *= len(links[0][1][i])
    kl = "".join(ch for ch in ins[side] if ch not in out)  # contracted with the taps
    gp = [g.aval.shape[ins[side].index(out[i])] for i in P_axes]
    F = g.aval.size // max(1, int(np.prod(gp)))
    res = _residues(links, P_axes, gp, bool(kl))
    if res is not None and _residues_cheaper(res, rows, m, gp, F, chs):
        return _by_residues(e, c, links, side, res, P_axes, kl)
    if kl or not _cheaper(rows, m, g.aval.size, chs):
        return None
    src = e.src
    zshape = tuple(shape[i] for i in P_axes) + (m,)
    z = c.emit(P.full, (), {"shape": zshape, "dtype": e.out.aval.dtype, "value": 0.0}, src)
    gl = "".join(out[i] for i in P_axes)  # g's letters in the base's axis order
    if ins[side] != gl:
        g = c.emit(P.transpose, (g,), {"perm": tuple(ins[side].index(ch) for ch in gl)}, src)
    for a, lk in enumerate(links):
        idx = P.BasicIndex(tuple(lk[1][i] for i in P_axes) + (a,))
        z = c.emit(P.setitem, (z, g), {"idx": idx}, src)
    ws = [c.emit(P.reshape, (lk[4][1 - side],), {"shape": (1,) + lk[4][1 - side].aval.shape},
                 src) for lk in links]
    w = c.emit(P.concatenate, tuple(ws), {"axis": 0}, src)
    tap = next(ch for ch in "abcdefghijklmnopqrstuvwxyz" if ch not in out)
    spec = make_spec([gl + tap, tap + ins[1 - side]], out)
    d = c.emit(P.einsum, (z, w), {"spec": spec}, src)
    region = tuple(P.Sl(0, shape[i], 1) if i in P_axes else links[0][1][i]
                   for i in range(len(shape)))
    if _zeros(base0, c) and d.aval.shape == shape:
        return d
    return P.setitem_add, (base0, d), {"idx": P.BasicIndex(region)}


# element passes that one NumPy call costs (about a microsecond), in the residue comparison
CALL = 1500


def _residues(links: list[tuple], P_axes: list[int], gshape: list[int], contracts: bool
              ) -> tuple | None:
    """Per axis of g, the taps' start positions at the common step s split as s*q + r: (s,
    q per tap (from 0), the tap's residue r, Q = the q's span, q's least value); None when
    a step is negative, or every step is 1 and the taps contract nothing (then Z)."""
    out = []
    for i in P_axes:
        st = links[0][1][i].step
        if st < 1:
            return None
        qs = [lk[1][i].start // st for lk in links]
        lo = min(qs)
        out.append((st, [q - lo for q in qs], [lk[1][i].start % st for lk in links],
                    max(qs) - lo + 1, lo))
    return tuple(out) if contracts or any(ax[0] > 1 for ax in out) else None


def _residues_cheaper(res: tuple, rows: int, m: int, gshape: list[int], F: int,
                      ch: int) -> bool:
    """Whether the residue-class product beats both the per-tap adds and Z, counting element
    passes, BLAS multiply-adds (a quarter of a pass each) and calls (`CALL`): g padded (a
    zeroed buffer and a copy), its windows copied, the product written and moved into (m, r)
    order, then added into x; each tap's product is written and added into a strided slice.
    (F: the entries of g per position, contracted with the taps.)"""
    g = int(np.prod(gshape)) * F
    ours = residue_cost(res, rows, gshape, F, ch)
    per_tap = m * (g * ch / (2 if F > 1 else 4) + 3 * g // F * ch) + 2 * m * CALL
    if F > 1:
        return ours < per_tap
    return ours < min(per_tap, 2 * rows * m + 2 * m * g + rows * ch + (m + 5) * CALL)


def residue_cost(res: tuple, rows: int, gshape: list[int], F: int, ch: int,
                 mac: float = 1 / 4, moved_passes: int = 3) -> float:
    """The residue-class product's cost in element passes (see _residues_cheaper), a BLAS
    multiply-add counted as `mac` passes and the (m, r) interleave of two strided axes as
    `moved_passes` passes of the output."""
    padded = M = Q = S = 1
    for (st, _, _, q, _), n in zip(res, gshape):
        padded *= n + 2 * (q - 1)
        M *= n + q - 1
        Q *= q
        S *= st
    moved = sum(ax[0] > 1 for ax in res) > 1  # (m, r) pairs of two axes interleave: a copy
    return 2 * padded * F + 2 * M * Q * F + M * Q * F * S * ch * mac + \
        (moved_passes if moved else 1) * M * S * ch + 2 * rows * ch + 10 * CALL


def _by_residues(e: Eqn, c: Ctx, links: list[tuple], side: int, res: tuple,
                 P_axes: list[int], kl: str) -> object:
    """dx[S_a] += g (x) w_a with the taps' slices at step s (per axis of g): position
    y = s*m + r of x gets sum over taps of residue r of g[m - q_a] w_a, so with g's windows
    G[m, q'] = g[m + q' - (Q - 1)] (zero outside g: a view of g padded by Q - 1) and the taps
    placed by residue and shift, Wq[Q - 1 - q_a, r_a] = w_a, x's (m, r) blocks are one
    product G @ Wq (sub-pixel col2im): Q columns per window instead of every tap's rows.
    Letters `kl` of g that the taps contract (a filter bank's outputs) ride along in both."""
    ws = [c.emit(P.reshape, (lk[4][1 - side],), {"shape": (1,) + lk[4][1 - side].aval.shape},
                 e.src) for lk in links]
    w = c.emit(P.concatenate, tuple(ws), {"axis": 0}, e.src)
    ins = links[0][2]
    return sub_pixel(e, c, links[0][0], (links[0][4][side], ins[side]), (w, ins[1 - side]),
                     links[0][3], res, P_axes, kl, links[0][1])


def sub_pixel(e: Eqn, c: Ctx, base0: object, g_in: tuple, w_in: tuple, out: str, res: tuple,
              P_axes: list[int], kl: str, region0: tuple, copy: bool = False) -> object:
    """base0[region] += the taps' outer products of g (letters g_in[1]) with the taps' own
    operands stacked taps first (w_in: the stack and one tap's letters), by residue classes
    (see _by_residues; region0: the first tap's slices, whose C axes every tap shares; copy:
    g's windows copied once, where the per-offset split of their product is slower)."""
    src = e.src
    shape = base0.aval.shape
    (g, g_letters), (w, other) = g_in, w_in
    m = w.aval.shape[0]
    gl = "".join(out[i] for i in P_axes) + kl
    if g_letters != gl:
        g = c.emit(P.transpose, (g,), {"perm": tuple(g_letters.index(ch) for ch in gl)}, src)
    k = len(P_axes)
    ns, ks = g.aval.shape[:k], g.aval.shape[k:]
    Qs = [ax[3] for ax in res]
    if any(q > 1 for q in Qs):
        gp = c.emit(P.full, (), {"shape": tuple(n + 2 * (q - 1) for n, q in zip(ns, Qs)) + ks,
                                 "dtype": g.aval.dtype, "value": 0.0}, src)
        g = c.emit(P.setitem, (gp, g), {"idx": P.BasicIndex(
            tuple(P.Sl(q - 1, q - 1 + n, 1) for n, q in zip(ns, Qs)) +
            tuple(P.Sl(0, n, 1) for n in ks))}, src)
    nd = g.aval.ndim
    unit = lambda i: tuple(int(j == i) for j in range(nd))
    pos = tuple((n + q - 1, unit(i)) for i, (n, q) in enumerate(zip(ns, Qs)))
    own = tuple((n, unit(k + i)) for i, n in enumerate(ks))
    taps = tuple((q, unit(i)) for i, q in enumerate(Qs))
    # (a copy reads g's rows whole with the taps outside g's own axes)
    dims = pos + taps + own if copy else pos + own + taps
    win = c.emit(P.strided, (g,), {"start": (0,) * nd, "dims": dims}, src)
    if copy:
        win = c.emit(P.relayout, (win,), {"perm": tuple(range(len(dims)))}, src)
    place = np.zeros(tuple(Qs) + tuple(ax[0] for ax in res) + (m,), w.aval.dtype)
    for a in range(m):
        place[tuple(ax[3] - 1 - ax[1][a] for ax in res) + tuple(ax[2][a] for ax in res)
              + (a,)] = 1
    free = iter(ch for ch in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                if ch not in out and ch not in kl)
    ml, ql, rl = [[next(free) for _ in P_axes] for _ in range(3)]
    tap = next(free)
    wq = c.emit(P.einsum, (Const(place), w), {"spec": make_spec(
        ["".join(ql + rl) + tap, tap + other], "".join(ql + rl) + other)}, src)
    res_out = "".join(ml[P_axes.index(i)] + rl[P_axes.index(i)] if i in P_axes else out[i]
                      for i in range(len(shape)))
    d = c.emit(P.einsum, (win, wq), {"spec": make_spec(
        ["".join(ml + ql) + kl if copy else "".join(ml) + kl + "".join(ql),
         "".join(ql + rl) + other], res_out)}, src)
    merged = tuple((ns[P_axes.index(i)] + Qs[P_axes.index(i)] - 1) * res[P_axes.index(i)][0]
                   if i in P_axes else len(region0[i]) for i in range(len(shape)))
    d = c.emit(P.reshape, (d,), {"shape": merged}, src)
    region, crop = [], []
    for i in range(len(shape)):
        if i in P_axes:
            st, _, _, _, lo = res[P_axes.index(i)]
            L = min(merged[i], shape[i] - st * lo)
            region.append(P.Sl(st * lo, st * lo + L, 1))
            crop.append(P.Sl(0, L, 1))
        else:
            region.append(region0[i])
            crop.append(P.Sl(0, merged[i], 1))
    if any(sl.stop != n for sl, n in zip(crop, merged)):
        d = c.emit(P.getitem, (d,), {"idx": P.BasicIndex(tuple(crop))}, src)
    if _zeros(base0, c) and d.aval.shape == shape:
        return d
    return P.setitem_add, (base0, d), {"idx": P.BasicIndex(tuple(region))}


def _zeros(a: object, c: Ctx) -> bool:
    if isinstance(a, Const):
        return not np.any(a.value)
    f = c.def_of(a, P.full) if isinstance(a, Var) else None
    return f is not None and f.params["value"] == 0


__all__ = ["taps_as_coefficients"]
