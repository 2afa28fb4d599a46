"""The cotangent of 2-D (and 3-D) patches' products, gathered per pixel instead of added per
offset (a transposed convolution computed as a convolution).

Patches contracted with their offsets kept (batch/patches.py: each pixel's query scored
against its 3 x 3 neighbours, `einsum('ijabc,ijc->ijab', patches(F), Q)`) get from AD the
image's cotangent as an outer product added into the overlapping patches:

    dF[i + d*a, j + d*b, c] += G[i, j, a, b] * Q[i, j, c]      for every (i, j, a, b)

which batch/winadds.py splits into one product and one strided add per offset (9 of each
for 3 x 3 patches, each a pass over the whole image). Every pixel of dF gathers the same
terms from the pixels whose patches cover it:

    dF[y, x, c] = sum_ab G[y - d*a, x - d*b, a, b] * Q[y - d*a, x - d*b, c]

that is, a contraction over (a, b) of G's entries read along anti-diagonals and Q's
patches, both zero-padded by the patch's reach: on a copy of Q's patches (im2col, as the
forward copies F's), one batched matmul of (1, 9) by (9, C) per pixel. Measured (process
time, load 10; the split against the gathered form, cotangent only): 3 x 3 patches of
(38, 38, 16) 280 -> 183 us, dilated by 2 251 -> 210, 2 x 2 of (39, 39, 24) 187 -> 146,
3 x 3 of (30, 30, 32) 328 -> 163, 3 x 3 of (60, 60, 8) 402 -> 318.
"""
from __future__ import annotations

import math

from .. import primitives as P
from ..ir import Eqn
from ..primitives.gathers import added_loops
from ..primitives.linalg import make_spec, parse_spec
from ..rewrite.engine import Ctx
from .col2im import _zeros
from .winadds import added_einsum

# The gathered operand's own letters (channels) must hold this many values per pixel: each
# pixel's matmul costs a BLAS call (about 40 ns), which few channels do not repay.
MIN_CHANNELS = 8
MAX_OFFSETS = 64  # (offsets per pixel; the copy of the padded patches is this many images)


def _pairs(dims: tuple, loops: list[int]) -> list[tuple[int, int, int, int]] | None:
    """(offset axis, position axis, base axis, dilation) for each axis the add loops over:
    the offset steps d along one base axis, and exactly one other axis steps 1 along it."""
    pairs = []
    for k in loops:
        st = dims[k][1]
        axes = [a for a, s in enumerate(st) if s]
        if len(axes) != 1 or st[axes[0]] <= 0:
            return None
        a = axes[0]
        pos = [p for p, (n, s) in enumerate(dims) if p not in loops and n > 1 and any(s)
               and s[a]]
        if len(pos) != 1 or any(s != (i == a) for i, s in enumerate(dims[pos[0]][1])):
            return None
        pairs.append((k, pos[0], a, st[a]))
    if len({p[1] for p in pairs}) != len(pairs):
        return None
    return pairs


def patches_added_gathered(e: Eqn, c: Ctx) -> object:
    """strided_add(base, einsum(g, q)) over patches overlapping along two or more axes, the
    einsum a product (nothing contracted) of g (positions and offsets) and q (positions and
    channels) = strided_add(base at the covered region, einsum(G', copy(Q'))), summed over
    the offsets: G' reads g along anti-diagonals of its zero-padded copy, Q' is the patches
    of q zero-padded by the patches' reach, read with the offsets reversed."""
    s = added_einsum(e, c, "fc")
    dims = e.params["dims"]
    shape = e.inputs[0].aval.shape
    if s is None:
        return None
    ins, out = parse_spec(s.params["spec"])
    if any(len(set(t)) != len(t) for t in ins) or set(ins[0] + ins[1]) != set(out):
        return None
    loops = added_loops(shape, dims)
    pairs = _pairs(dims, loops) if len(loops) >= 2 else None
    if pairs is None or math.prod(dims[k][0] for k in loops) > MAX_OFFSETS:
        return None
    offs = {out[k] for k, *_ in pairs}
    pos = {out[p] for _, p, *_ in pairs}
    for j in (0, 1):
        g, q = ins[j], ins[1 - j]
        own = [ch for ch in q if ch not in pos]
        if set(g) == offs | pos and not offs & set(q) and pos <= set(q) and own and \
                math.prod(dims[out.index(ch)][0] for ch in own) >= MIN_CHANNELS:
            return _gathered(e, c, s.inputs[j], s.inputs[1 - j], g, q, out, pairs)
    return None


def _padded(c: Ctx, x: object, letters: str, out: str, pairs: list, src: object) -> object:
    """x with each of its position axes zero-padded by the patches' reach on both sides."""
    reach = {out[p]: (dims_k - 1) * d for k, p, _, d, dims_k in pairs}
    shape = tuple(n + 2 * reach.get(ch, 0) for ch, n in zip(letters, x.aval.shape))
    z = c.emit(P.full, (), {"shape": shape, "dtype": x.aval.dtype, "value": 0.0}, src)
    idx = P.BasicIndex(tuple(P.Sl(reach.get(ch, 0), reach.get(ch, 0) + n, 1)
                             for ch, n in zip(letters, x.aval.shape)))
    return c.emit(P.setitem, (z, x), {"idx": idx}, src)


def _unit(nd: int, a: int, step: int = 1) -> tuple[int, ...]:
    return tuple(step if i == a else 0 for i in range(nd))


def _gathered(e: Eqn, c: Ctx, g: object, q: object, gl: str, ql: str, out: str,
              pairs: list) -> object:
    src, dims, start = e.src, e.params["dims"], e.params["start"]
    pairs = [(k, p, a, d, dims[k][0]) for k, p, a, d in pairs]
    n_of = {out[p]: dims[p][0] + (K - 1) * d for k, p, a, d, K in pairs}  # covered extents
    gp, qp = _padded(c, g, gl, out, pairs, src), _padded(c, q, ql, out, pairs, src)
    # Q'[.., y, .., o', ..] = qpad[.., y + d*o', ..]: q's patches, offsets reversed (o' =
    # K-1-o), laid out positions, offsets, then q's own axes (the copy reads runs of those)
    off = "".join(out[k] for k, *_ in pairs)
    qo = "".join(ch for ch in ql if ch in n_of) + off + "".join(ch for ch in ql if ch not in n_of)
    step = {out[k]: (K, _unit(len(ql), ql.index(out[p]), d)) for k, p, a, d, K in pairs}
    q_dims = tuple(step[ch] if ch in step else
                   (n_of.get(ch, q.aval.shape[ql.index(ch)]), _unit(len(ql), ql.index(ch)))
                   for ch in qo)
    qv = c.emit(P.strided, (qp,), {"start": (0,) * len(ql), "dims": q_dims}, src)
    qw = c.emit(P.relayout, (qv,), {"perm": tuple(range(len(q_dims)))}, src)
    # G'[.., y, .., o', ..] = gpad[.., y + d*o', .., K-1-o', ..]: anti-diagonals
    g_start = [0] * len(gl)
    g_dims = []
    for i, (ch, n) in enumerate(zip(gl, g.aval.shape)):
        if ch in n_of:
            g_dims.append((n_of[ch], _unit(len(gl), i)))
        else:
            _, p, _, d, K = next(t for t in pairs if out[t[0]] == ch)
            g_start[i] = K - 1
            st = list(_unit(len(gl), gl.index(out[p]), d))
            st[i] = -1
            g_dims.append((K, tuple(st)))
    gv = c.emit(P.strided, (gp,), {"start": tuple(g_start), "dims": tuple(g_dims)}, src)
    gw = c.emit(P.relayout, (gv,), {"perm": tuple(range(len(g_dims)))}, src)
    res = "".join(ch for ch in out if ch not in off)
    r = c.emit(P.einsum, (gw, qw), {"spec": make_spec([gl, qo], res)}, src)
    r_dims = tuple((n_of[ch], dims[out.index(ch)][1]) if ch in n_of else dims[out.index(ch)]
                   for ch in res)
    base = e.inputs[0]
    if _zeros(base, c) and not any(start) and r.aval.shape == base.aval.shape and all(
            st == _unit(len(start), i) for i, (_, st) in enumerate(r_dims)):
        return r  # (the region is the whole of a zero base: the sum is all there is)
    return P.strided_add, (base, r), {"start": start, "dims": r_dims}


__all__ = ["patches_added_gathered"]
