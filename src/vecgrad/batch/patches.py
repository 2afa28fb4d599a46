"""A contraction of 2-D patches whose offsets it keeps: on one copy of the patches, or one
offset at a time.

A loop over the pixels of an image scoring each pixel's query against its neighbours
(`F[i:i+w, j:j+w].reshape(-1, C) @ Q[i, j]`) batches to one contraction of a strided view,
`einsum('ijabc,ijc->ijab', patches(F), Q)`: the offsets (a, b) are kept in the result, only
the channels are contracted. NumPy's einsum walks such a view, whose axes overlap along
both image axes, at a few nanoseconds per multiply-add (a (38, 38, 3, 3, 16) view of a
(40, 40, 16) image: 740-980 us); at one offset the patches are a plain slice of the image,
and the w * w products of slices (each `einsum('ijc,ijc->ij', F[a:a+H, b:b+W], Q)`, as a
hand-vectorized version writes it) take 110-120 us in all, stacked into the result. Windows
of one axis (`K[t-r:t+r+1] @ Q[t]`) stay one contraction: np.einsum reads that view in long
runs (66 us for 9 offsets of (992, 16), against 84-88 us split). From COPY_TERMS offsets the
patches are copied once instead (im2col) and the contraction reads the copy: its
backward then needs one batched matmul for the query's cotangent, not a product and an add
per offset.
"""
from __future__ import annotations

import math

import numpy as np

from .. import primitives as P
from ..ir import Eqn
from ..primitives.linalg import make_spec, parse_spec
from ..rewrite.engine import Ctx
from .gather import view_steps
from .windows import MAX_OFFSETS, _overlaps

# Multiply-adds each offset's product must do for its NumPy call (about a microsecond) not to
# count (see batch/winadds.py's CALL).
WORK = 6000
# Offsets from which the patches are copied once, contiguous (im2col), rather than split:
# split, the other operand's cotangent is a chain of one product and one add per offset
# ((38, 38, 16) features, 3 x 3 patches: 9 x 25 us); copied, one batched matmul (65-70 us)
# after a copy (45-60 us) that the forward's matmul reads too, and so does any other
# contraction of the same patches (einsum_of_windows: a softmax's pooling). Measured (min
# gradient, one process per side, load 12-16): 3 x 3 patches 758 -> 611 us, 2 x 3
# 567 -> 507, 3 x 3 dilated 696 -> 604, 2 x 2 x 2 1.33 -> 1.26 ms, softmax-pooled 3 x 3
# 972 -> 956 and 922 -> 908; 2 x 2 patches copied went 384 -> 418 us (four products of
# slices are cheaper than a matmul per pixel) and stay split.
COPY_TERMS = 6


def _kept_offsets(s: Eqn, letters: str, out: str, others: list[str]) -> list[int] | None:
    """The view's axes to fix so that what remains is a plain slice: kept in the result,
    read by no other operand, fewest offsets first; None where no such set exists."""
    shape, start, dims = s.inputs[0].aval.shape, list(s.params["start"]), s.params["dims"]
    cands = sorted((k for k, ch in enumerate(letters) if ch in out and dims[k][0] > 1 and
                    letters.count(ch) == 1 and not any(ch in t for t in others)),
                   key=lambda k: dims[k][0])
    fixed: list[int] = []
    for k in cands:
        fixed.append(k)
        rest = [d for i, d in enumerate(dims) if i not in fixed]
        if view_steps(shape, start, rest) is not None:
            return fixed
    return None


def _contracts_offsets(s: Eqn, letters: str, out: str, fixed: list[int]) -> bool:
    """Whether a letter the product sums moves along an image axis that the kept offsets
    move too (a cost volume, `a[r:r+H, r:r+W] * b[dy:dy+H, dx:dx+W]` summed along the
    shifted rows: np.einsum over the sliding windows is the reference's own plan, and per
    offset 25 products and 25 strided adds of the cotangent measured 5% slower). Then the
    view stays one contraction; summed channels (an axis of their own) split."""
    dims = s.params["dims"]
    moves = lambda k: {a for a, st in enumerate(dims[k][1]) if st}
    shifted = set().union(*(moves(k) for k in fixed))
    return any(moves(k) & shifted for k, ch in enumerate(letters) if ch not in out)


def einsum_of_kept_patches(e: Eqn, c: Ctx) -> object:
    """einsum(patches(x), y) with the patches' offset axes kept = stack over the offsets o
    of einsum(x at offset o, y), moved to the result's axis order: the view overlaps along
    two or more axes (2-D patches and up), each offset's product does WORK multiply-adds or
    more, and at most MAX_OFFSETS offsets."""
    ins, out = parse_spec(e.params["spec"])
    for j, x in enumerate(e.inputs):
        s = c.def_of(x, P.strided)
        if s is None or not _overlaps(s.inputs[0].aval.shape, s.params["dims"]):
            continue
        others = [t for i, t in enumerate(ins) if i != j]
        fixed = _kept_offsets(s, ins[j], out, others)
        if fixed is None or len(fixed) < 2 or _contracts_offsets(s, ins[j], out, fixed):
            continue
        dims = s.params["dims"]
        sizes = [dims[k][0] for k in fixed]
        terms = math.prod(sizes)
        work = math.prod({ch: n for t, a in zip(ins, e.inputs)
                          for ch, n in zip(t, a.aval.shape)}.values())
        if terms > MAX_OFFSETS or work // terms < WORK:
            continue
        if terms >= COPY_TERMS and c.n_uses(x) == 1:  # (a view read elsewhere as well
            return _copied(e, c, j)                  # stays split: its slices serve both)
        return _split(e, c, s, j, fixed, sizes, ins, out)
    return None


def _copied(e: Eqn, c: Ctx, j: int) -> object:
    """The contraction on a contiguous copy of the patches (im2col): the planner runs it as
    one batched matmul, forward and, for the other operand's cotangent, backward."""
    v = e.inputs[j]
    cols = c.emit(P.relayout, (v,), {"perm": tuple(range(v.aval.ndim))}, e.src)
    return P.einsum, tuple(cols if i == j else y for i, y in enumerate(e.inputs)), e.params


def _split(e: Eqn, c: Ctx, s: Eqn, j: int, fixed: list[int], sizes: list[int], ins: list[str],
           out: str) -> object:
    dims, start = s.params["dims"], s.params["start"]
    L = "".join(ins[j][k] for k in fixed)
    rest = tuple(d for i, d in enumerate(dims) if i not in fixed)
    spec = make_spec([t if i != j else "".join(ch for ch in t if ch not in L)
                      for i, t in enumerate(ins)], "".join(ch for ch in out if ch not in L))
    for y in (s.inputs[0],) + tuple(y for i, y in enumerate(e.inputs) if i != j):
        c.added_uses(y, math.prod(sizes) - 1)
    terms = []
    for combo in np.ndindex(*sizes):
        st = list(start)
        for k, a in zip(fixed, combo):
            st = [v + a * d for v, d in zip(st, dims[k][1])]
        view = c.emit(P.strided, (s.inputs[0],), {"start": tuple(st), "dims": rest}, e.src)
        ops = tuple(view if i == j else y for i, y in enumerate(e.inputs))
        terms.append(c.emit(P.einsum, ops, {"spec": spec}, e.src))
    st = c.emit(P.stack, tuple(terms), {"axis": 0}, e.src)
    kept = "".join(ch for ch in out if ch not in L)
    r = c.emit(P.reshape, (st,), {"shape": tuple(sizes) + terms[0].aval.shape}, e.src)
    order = L + kept
    perm = tuple(order.index(ch) for ch in out)
    if perm == tuple(range(len(perm))):
        return r
    return P.transpose, (r,), {"perm": perm}


__all__ = ["einsum_of_kept_patches"]
