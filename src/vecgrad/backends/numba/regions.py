"""Which equations of a final graph run inside a fused numba kernel, and in which order.

An equation is *fusible* when the kernel generator (kernel.py) has a loop nest for its
primitive at its dtypes: float elementwise ops and casts, reductions, softmax and its VJP,
logsumexp, views (reshape, transpose, broadcast, basic slicing) and contractions that are
not worth handing to BLAS. Everything else runs as NumPy code between kernels.

The schedule is a topological order built greedily: while a region is open, every ready
fusible equation joins it; when none is ready, the region closes and the ready NumPy
equations run. A region is a contiguous stretch of a topological order, so it is convex: no
path leaves it and comes back, and it can run as one call. Linear in the graph size.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from ...ir import Const, Eqn, Graph, Var

# Elementwise primitives the kernel generator knows (kernel.SCALAR); reductions and the rest.
REDUCTIONS = frozenset({"reduce_sum", "reduce_max", "reduce_min"})
SLICES = frozenset({"softmax", "softmax_vjp", "logsumexp"})
VIEWS = frozenset({"reshape", "transpose", "relayout", "broadcast_to", "getitem"})
CONTRACTIONS = frozenset({"einsum", "muladd", "norm"})
# Writes at a basic index (a copy of the base, then the region): fused where the caller names
# them (a loop's step kernel, loop.py), since NumPy writes a dead base in place.
WRITES = frozenset({"setitem", "setitem_add"})
BLOCKS = frozenset({"concatenate", "stack"})
# A stack or concatenation of more operands stays one NumPy call: the kernel writes a loop
# nest per operand (seeds/001 stacks 256 arrays: a 785-line kernel, 31 s of numba compile).
MAX_BLOCK_OPERANDS = 8
# take and segment_sum at static positions: fused when there are at most this many (the
# kernel holds them as a tuple literal).
STATIC_GATHERS, STATIC_IDS = frozenset({"take", "segment_sum"}), 64

# A contraction shaped like a matrix product (a letter only in x, one only in y, and a
# summed one) with at least this many multiply-adds goes to BLAS through NumPy's planner;
# smaller ones and batched dot products (memory-bound) are loops in the kernel.
BLAS_MACS = 1 << 19
# Regions are cut at this many equations: numba's compile time grows with function size.
MAX_REGION = 96
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


@dataclass
class Region:
    """Equations fused into one kernel, in a topological order."""

    eqns: list[Eqn] = field(default_factory=list)


def letters(spec: str) -> tuple[list[str], str] | None:
    """An einsum spec's operand letter strings and output letters (None with an ellipsis)."""
    if "." in spec or "->" not in spec:
        return None
    ins, out = spec.split("->")
    return ins.split(","), out


def _macs(e: Eqn) -> tuple[int, bool]:
    """The contraction's multiply-add count and whether it is shaped like a matrix product."""
    ls = letters(e.params["spec"])
    if ls is None:
        return 0, False
    ins, out = ls
    size: dict[str, int] = {}
    for s, a in zip(ins, e.inputs):
        size.update(zip(s, a.aval.shape))
    macs = math.prod(size.values())
    if len(ins) != 2:
        return macs, False
    x, y = set(ins[0]), set(ins[1])
    gemm = bool(x - y) and bool(y - x) and bool((x & y) - set(out))
    return macs, gemm


def fusible(e: Eqn, scalar: frozenset[str], blas: bool = False) -> bool:
    """Whether the kernel generator handles e (its primitive, dtypes, shapes and params);
    `scalar`: the elementwise primitives (and WRITES) the caller fuses; `blas`: the kernel may
    call np.dot (a step kernel's large matrix products: blocks.Blocks.dot)."""
    name = e.prim.name
    avals = [a.aval for a in e.inputs] + [e.out.aval]
    if any(a.size == 0 for a in avals):
        return False
    if name in scalar and name not in WRITES:
        return all(a.dtype in FLOATS or a.dtype == np.bool_ or
                   (isinstance(x, Const) and a.size == 1 and a.dtype.kind in "iu")
                   for a, x in zip(avals, list(e.inputs) + [e.out]))
    if not all(a.dtype in FLOATS for a in avals):
        return False
    if name in BLOCKS:
        return len(e.inputs) <= MAX_BLOCK_OPERANDS
    if name in REDUCTIONS or name in SLICES:
        return True
    if name in STATIC_GATHERS:
        return e.params["ids"].arr.size <= STATIC_IDS
    if name in VIEWS or name in WRITES:
        return (name in scalar if name in WRITES else True) and \
            (name not in ("getitem", *WRITES) or _basic(e.params["idx"]))
    if name in CONTRACTIONS:
        if letters(e.params["spec"]) is None:
            return False
        if name == "norm":
            return True
        macs, gemm = _macs(e)
        return not (gemm and macs >= BLAS_MACS) or blas and dot_form(e.params["spec"]) is not None
    return False


def dot_form(spec: str) -> tuple[int, bool, bool] | None:
    """A two-operand contraction that is np.dot(L, R) of 2-d L and 2-d or 1-d R, each read
    as it lies or transposed: (which operand is L, transpose L, transpose R); None if not."""
    ls = letters(spec)
    if ls is None or len(ls[0]) != 2:
        return None
    (a, b), out = ls
    common = set(a) & set(b)
    if any(len(set(s)) != len(s) for s in (a, b, out)) or not 1 <= len(out) <= 2 or \
            len(common) != 1 or common & set(out) or set(a) | set(b) != set(out) | common:
        return None
    s = common.pop()
    left = 0 if out[0] in a else 1
    L, R = (a, b)[left], (a, b)[1 - left]
    if len(L) != 2 or len(R) != len(out):
        return None
    return left, L != out[0] + s, len(R) == 2 and R != s + out[1]


def _basic(idx: tuple) -> bool:
    """A key the kernels index with: ints, slices and None, or slices and one static 1-d
    integer array of at most STATIC_IDS positions (its axis stays in place, as in NumPy)."""
    adv = [k for k in idx if type(k).__name__ == "Adv"]
    if adv:
        return len(adv) == 1 and adv[0].arr.ndim == 1 and 0 < adv[0].arr.size <= STATIC_IDS \
            and all(type(k).__name__ in ("Sl", "Adv") for k in idx)
    return all(k is None or isinstance(k, (int, tuple)) or type(k).__name__ == "Sl"
               for k in idx)


def schedule(g: Graph, scalar: frozenset[str]) -> list[Eqn | Region]:
    """g's equations in a topological order, fusible runs grouped into regions."""
    producer: dict[Var, int] = {e.out: i for i, e in enumerate(g.eqns)}
    users: dict[int, list[int]] = {}
    waiting = [0] * len(g.eqns)
    for i, e in enumerate(g.eqns):
        deps = {producer[a] for a in e.inputs if isinstance(a, Var) and a in producer}
        waiting[i] = len(deps)
        for d in deps:
            users.setdefault(d, []).append(i)
    fuse = [fusible(e, scalar) for e in g.eqns]
    ready: tuple[list[int], list[int]] = ([], [])  # (numpy, fusible) heaps, by position
    for i, n in enumerate(waiting):
        if n == 0:
            heapq.heappush(ready[fuse[i]], i)
    out: list[Eqn | Region] = []

    def done(i: int) -> None:
        for u in users.get(i, ()):
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready[fuse[u]], u)
    while ready[0] or ready[1]:
        if ready[1]:
            region = Region()
            while ready[1] and len(region.eqns) < MAX_REGION:
                i = heapq.heappop(ready[1])
                region.eqns.append(g.eqns[i])
                done(i)
            out.append(region)
        while ready[0]:  # (all ready NumPy work, so the next region can take in more)
            i = heapq.heappop(ready[0])
            out.append(g.eqns[i])
            done(i)
    return out
