"""A product added into overlapping windows, one offset at a time.

The cotangent of a contraction or a product that reads overlapping windows (`K[t-r:t+r+1]
@ Q[t]` for every t, a shifted patch times a fixed one, a convolution whose windows were
copied once) is `strided_add(zeros, einsum(g, w))`: the product is written at the windows'
full size (k times the array) and then added back one window offset at a time, k slices
(`added_loops`). Written by hand, each offset's product goes straight into its slice:

    dK[i : i + n] += g[:, i, None] * Q          for each offset i

so the (k, n, ...) product never exists: each offset's term is one pass the size of a slice,
which stays in cache while it is added, where the full product (a megabyte and more) is
written to memory and read back (banded attention's key cotangent: 255 us -> 111 us for
9 offsets of (992, 16)). A term costs two NumPy calls, so the split is taken only where each
term is large enough that the calls do not count (`_split_pays`): a 3x3x3 filter bank's 27
offsets of 32x32 stay one product and one add per offset.
"""
from __future__ import annotations

import math

import numpy as np

from .. import primitives as P
from ..ir import Eqn
from ..primitives.gathers import added_loops
from ..primitives.linalg import make_spec, parse_spec
from ..rewrite.engine import Ctx
from .gather import view_steps
from .windows import MAX_OFFSETS, _flat_steps

# Element passes that one NumPy call costs (about a microsecond: see batch/col2im.py).
CALL = 1500


# A term's slice of the base must be runs of this many contiguous elements (see _split_pays).
RUN = 512


def _split_pays(terms: int, size: int, work: int, run: int) -> bool:
    """Whether `terms` products, `size` elements in all (and `work` multiply-adds), beat
    one product of all of them: each term adds two calls (its product and its add), which
    must cost less than half a pass over the term (the pass the full product's write and
    read-back through memory costs more than a term's in cache); a contraction's per-term
    products must each do enough work to run at BLAS speed; and each term's slice of the
    base must be long runs (`run`), where NumPy's inner loops are long: 25 shifted
    120 x 120 patches of a 124 x 124 image added as 25 products of 120-element rows
    measured 10% slower than the one product and the adds of its slices; 9 offsets of
    38 x 38 pixels of 16 channels (rows of 608) 10% faster."""
    per = size // terms
    return 2 * CALL < per / 2 and work // terms >= 4 * CALL and run >= RUN


def _run(shape: tuple[int, ...], dims: tuple) -> int:
    """The contiguous run of a basic view's innermost axes in a C-ordered base."""
    run = 1
    for st, n in sorted((abs(st), n) for st, (n, _) in zip(_flat_steps(shape, dims), dims)
                        if n > 1):
        if st != run:
            break
        run *= n
    return run


def added_einsum(e: Eqn, c: Ctx, kinds: str = "fciub") -> Eqn | None:
    """The einsum of two operands that strided_add e adds (its only use, at the region's
    shape and e's dtype, of a kind in `kinds`), else None."""
    v, dims = e.inputs[1], e.params["dims"]
    s = c.def_of(v, P.einsum)
    if s is None or len(s.inputs) != 2 or c.n_uses(v) != 1 or \
            v.aval.shape != tuple(n for n, _ in dims) or v.aval.dtype != e.out.aval.dtype or \
            v.aval.dtype.kind not in kinds:
        return None
    return s


def windows_added_einsum(e: Eqn, c: Ctx) -> object:
    """strided_add(base, einsum(g, w)) over overlapping windows = for each window offset i
    (the axes the add loops over), strided_add(base at offset i, einsum(g, w) at i): the
    operands' letters of those axes fixed at i, so no term has the offset axes."""
    base, v = e.inputs
    s = added_einsum(e, c)
    start, dims = e.params["start"], e.params["dims"]
    shape = base.aval.shape
    if s is None:
        return None
    ins, out = parse_spec(s.params["spec"])
    if any(len(set(t)) != len(t) for t in ins + [out]):
        return None
    loops = added_loops(shape, dims)
    if not loops or any(d.aval.shape[t.index(out[k])] != dims[k][0]
                        for k in loops for d, t in zip(s.inputs, ins) if out[k] in t):
        return None
    terms = math.prod(dims[k][0] for k in loops)
    rest = tuple(d for k, d in enumerate(dims) if k not in loops)
    sizes = {ch: n for t, a in zip(ins, s.inputs) for ch, n in zip(t, a.aval.shape)}
    work = math.prod(sizes.values())
    if terms > MAX_OFFSETS or view_steps(shape, list(start), list(rest)) is None or \
            not _split_pays(terms, v.aval.size, work, _run(shape, rest)):
        return None
    fixed = "".join(out[k] for k in loops)
    spec = make_spec([t.translate({ord(ch): None for ch in fixed}) for t in ins],
                     "".join(ch for ch in out if ch not in fixed))
    for a in s.inputs:
        c.added_uses(a, terms - 1)
    for combo in np.ndindex(*[dims[k][0] for k in loops]):
        at = dict(zip(fixed, combo))
        ops = tuple(_at(c, a, t, at, e.src) for a, t in zip(s.inputs, ins))
        term = c.emit(P.einsum, ops, {"spec": spec}, e.src)
        st = list(start)
        for k, i in zip(loops, combo):
            st = [s0 + i * d for s0, d in zip(st, dims[k][1])]
        base = c.emit(P.strided_add, (base, term), {"start": tuple(st), "dims": rest}, e.src)
    return base


def _at(c: Ctx, a: object, letters: str, at: dict, src: object) -> object:
    """Operand `a` (axes `letters`) with the axes of the letters in `at` fixed there."""
    if not any(ch in at for ch in letters):
        return a
    idx = tuple(at[ch] if ch in at else P.Sl(0, n, 1) for ch, n in zip(letters, a.aval.shape))
    return c.emit(P.getitem, (a,), {"idx": P.BasicIndex(idx)}, src)


__all__ = ["added_einsum", "windows_added_einsum"]
