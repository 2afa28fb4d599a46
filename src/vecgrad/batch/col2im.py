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
    """(base, idx, einsum terms, out letters, operands) of `base[idx] += einsum(u, v)`, an
    outer product (no letter contracted) added at a region of slices, one per base axis."""
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
    if set(ins[0]) & set(ins[1]) or sorted(ins[0] + ins[1]) != sorted(out) or \
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
    if not _cheaper(rows, m, g.aval.size, chs):
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


def _zeros(a: object, c: Ctx) -> bool:
    if isinstance(a, Const):
        return not np.any(a.value)
    f = c.def_of(a, P.full) if isinstance(a, Var) else None
    return f is not None and f.params["value"] == 0


__all__ = ["taps_as_coefficients"]
