"""The NumPy backend's contraction planner: which kernel runs an einsum of given shapes (a BLAS
matmul after moving batch axes first, NumPy's einsum loop, its BLAS path, ...), chosen once
per shape when compiling by `kernels.choose` (the cost model of `costs`, or a measurement
stored on disk), and the lowerings of einsum, norm and muladd that run the chosen plans."""
from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ... import kernels
from ...ir import Aval
from ...primitives.linalg import _add_to_product, _muladd_shape, make_spec, parse_spec
from . import costs
from .blocked import matmul_blocked
from .lowering import Lowering
from .reductions import column_sum, row_sum, sum_kernel
from .timing import timings
from .transpose import contiguous
from .viewplans import BatchForms, few_uses, loop_unless_views, unless_overlapping


def einsum_work(spec: str, shapes: list[tuple[int, ...]]) -> float:
    """Multiply-adds of a contraction done as one loop nest: the product of all axis sizes."""
    dims = {c: d for t, sh in zip(parse_spec(spec)[0], shapes) for c, d in zip(t, sh)}
    return float(np.prod(list(dims.values()), dtype=np.float64))


MAX_TIMED_WORK = 2e6  # multiply-adds; bigger contractions are planned by layout rules


def plan_einsum(spec: str, shapes: list[tuple[int, ...]],
                dtypes: list[np.dtype] | None = None) -> Callable[..., np.ndarray]:
    """A fast callable for this contraction at these shapes. For two operands the candidates
    are a BLAS matmul (after moving batch axes first, which can cost a copy), NumPy's einsum
    loop (no copy, SIMD over contiguous axes) and NumPy's einsum with a BLAS path; which is
    fastest depends on the layout and the machine, so mid-sized contractions are decided by
    `kernels.choose` (a cost model, or a measurement stored on disk: see vecgrad.kernels)."""
    ins, out = parse_spec(spec)
    if len(ins) == 2 and "" in ins and ins[1 - ins.index("")] == out:
        return np.multiply  # a scaling ('aj,->aj'): np.einsum's loop is 3x slower
    if len(ins) == 2 and all(len(set(s)) == len(s) for s in ins + [out]):
        dts = [np.dtype(d) for d in dtypes] if dtypes else [np.dtype(np.float64)] * 2
        outer = _plan_outer(ins[0], ins[1], out, shapes) or \
            _plan_unit_letters(ins[0], ins[1], out, shapes, dts)
        if outer is not None:
            return outer
        cands = _candidates(spec, [tuple(s) for s in shapes])
        work = einsum_work(spec, shapes)
        if work > MAX_TIMED_WORK:  # too big to time while compiling: decide by layout
            a, b = ins
            if _matvec_needing_copy(a, b, out, shapes):
                return cands["loop"]
            return unless_overlapping(
                cands["lead"] if "lead" in cands and _mm_moves_big(a, b, out, shapes)
                else cands["mm"], cands["loop"], few_uses(work, shapes))
        if work < 4096:  # (np.einsum parses its spec on every call: 1-3 us, np.dot 0.5)
            return _plan_dot(ins[0], ins[1], out, dts) or cands["loop"]
        name = choose_einsum(spec, [tuple(s) for s in shapes], dts, cands)
        if name == "loop" and hasattr(cands["mm"], "in_place"):
            return loop_unless_views(spec, cands["mm"], cands["loop"])
        return cands[name] if name in ("loop", "blas") else \
            unless_overlapping(cands[name], cands["loop"], few_uses(work, shapes))
    if len(ins) == 1:  # may be a view of x (e.g. 'ij->ji'): results must own their memory
        fast = _plain_sum(ins[0], out, shapes[0], dtypes[0]) if dtypes else None
        return fast or (lambda x: _owned(np.einsum(spec, x), x))
    path = np.einsum_path(spec, *[np.empty(s) for s in shapes], optimize="optimal")[0]
    steps = None if len(ins) < 3 else _pairwise(
        path[1:], ins, out, [tuple(s) for s in shapes],
        [np.dtype(d) for d in dtypes] if dtypes else None)
    if steps is not None:
        return functools.partial(_run_pairwise, steps)
    return lambda *xs: np.einsum(spec, *xs, optimize=path)


def _pairwise(path: list, ins: list[str], out: str, shapes: list[tuple[int, ...]],
              dtypes: list[np.dtype] | None) -> list[tuple[int, int, Callable]] | None:
    """The steps of NumPy's contraction path, each a two-operand contraction planned as above
    (its letters: those a later operand or the result still reads): np.einsum with a path
    re-dispatches every step on every call (a bilinear form 'ai,ij,aj->' over (1,000, 16):
    42 us, against 22 us planned, in a gradient's profile at load 8). None where a step is
    not a pair."""
    terms, dts = list(ins), dtypes or [np.dtype(np.float64)] * len(ins)
    shapes, dts, steps = list(shapes), list(dts), []
    sizes = {c: d for t, sh in zip(ins, shapes) for c, d in zip(t, sh)}
    for k, pair in enumerate(path):
        if len(pair) != 2:
            return None
        i, j = sorted(pair)
        a, b = terms[i], terms[j]
        later = set(out).union(*(t for m, t in enumerate(terms) if m not in (i, j)))
        keep = out if k == len(path) - 1 else \
            "".join(dict.fromkeys(c for c in a + b if c in later))
        steps.append((i, j, plan_einsum(f"{a},{b}->{keep}", [shapes[i], shapes[j]],
                                        [dts[i], dts[j]])))
        dt = np.result_type(dts[i], dts[j])
        for lst in (terms, shapes, dts):  # (NumPy's convention: the result goes last)
            del lst[j], lst[i]
        terms.append(keep)
        shapes.append(tuple(sizes[c] for c in keep))
        dts.append(dt)
    return steps


def _run_pairwise(steps: list[tuple[int, int, Callable]], *xs: np.ndarray) -> np.ndarray:
    ops = list(xs)
    for i, j, fn in steps:
        y = fn(ops[i], ops[j])
        del ops[j], ops[i]
        ops.append(y)
    return ops[0]


# Rows from which an outer product is one BLAS product of a column and a row: NumPy's
# broadcasting multiply and its einsum loop, whose inner loops read one operand at stride 0,
# ran 1.0-3.7x slower than np.dot at every shape measured from 8 rows on (float64 and
# float32, 64 x 64 to 100,000 x 8; at 2 rows, 2x faster).
OUTER_ROWS = 8


def _plan_outer(a: str, b: str, out: str, shapes: list) -> Callable | None:
    """An outer product ('a,i->ai', 'ab,c->abc': no letter shared or summed, one operand's
    letters then the other's, in order) of OUTER_ROWS rows or more as np.dot(column, row):
    each entry is one product either way, so the result is the same. Operands of another
    dtype than float/complex, of two dtypes, or not contiguous at run time take NumPy's
    broadcasting multiply."""
    if not a or not b or set(a) & set(b) or out not in (a + b, b + a):
        return None  # (a scalar factor: a plain multiply)
    first, second = (0, 1) if out == a + b else (1, 0)
    if int(np.prod(shapes[first], dtype=np.int64)) < OUTER_ROWS:
        return None

    def run(*xy: np.ndarray) -> np.ndarray:
        x, y = xy[first], xy[second]
        if x.dtype != y.dtype or x.dtype.kind not in "fc" or not x.flags.c_contiguous or \
                not y.flags.c_contiguous:
            return np.multiply.outer(x, y)
        return np.dot(x.reshape(-1, 1), y.reshape(1, -1)).reshape(x.shape + y.shape)
    return run


def _plan_unit_letters(a: str, b: str, out: str, shapes: list, dtypes: list[np.dtype]
                       ) -> Callable | None:
    """A product whose letters of size 1 are all that keeps it from being an outer product
    or a scaling ('bdf,fgh->bdgh' with f = h = 1: the taps' residue products of
    batch/col2im.py, split per offset) as that product of the operands without those
    letters: the same entries, each one multiplication. np.einsum loops over the unit axes
    (32,000 x 2 entries: 147 us, against 37 us as np.dot of a column and a row)."""
    sizes = {ch: n for t, sh in zip((a, b), shapes) for ch, n in zip(t, sh)}
    drop = lambda t: "".join(ch for ch in t if sizes[ch] != 1)
    a2, b2, o2 = drop(a), drop(b), drop(out)
    if (a2, b2, o2) == (a, b, out) or set(a2) & set(b2) or set(a2 + b2) != set(o2) or \
            not (o2 in (a2 + b2, b2 + a2) or o2 in (a2, b2) and not (a2 and b2)):
        return None
    shape = lambda t: tuple(sizes[ch] for ch in t)
    sa, sb, so = shape(a2), shape(b2), shape(out)
    inner = plan_einsum(f"{a2},{b2}->{o2}", [sa, sb], dtypes)
    return lambda x, y: np.reshape(inner(np.reshape(x, sa), np.reshape(y, sb)), so)


def _plan_dot(a: str, b: str, out: str, dtypes: list[np.dtype]) -> Callable | None:
    """A matrix or vector product of operands of at most two axes, one letter contracted,
    none summed alone, the result in order ('ab,b->a', 'a,ab->b', 'ba,bc->ac', 'a,a->'):
    `np.dot` of the operands or their transposed views, the same BLAS call without
    np.einsum's parsing of its spec on every call (the small contractions of a small
    program's gradient, where that parsing is most of the time)."""
    contr = set(a) & set(b)
    if len(contr) != 1 or len(a) > 2 or len(b) > 2 or any(d.kind not in "fc" for d in dtypes):
        return None
    c = contr.pop()
    fa, fb = a.replace(c, ""), b.replace(c, "")
    if c in out or out != fa + fb:
        return None
    ta = len(a) == 2 and a[0] == c  # x's contracted axis first: its transposed view
    tb = len(b) == 2 and b[1] == c
    if ta and tb:
        return lambda x, y: np.dot(x.T, y.T)
    if ta:
        return lambda x, y: np.dot(x.T, y)
    if tb:
        return lambda x, y: np.dot(x, y.T)
    return np.dot


def _plain_sum(a: str, out: str, shape: tuple[int, ...], dtype: np.dtype
               ) -> Callable[..., np.ndarray] | None:
    """'abc->bc' or 'abc->ab' (distinct letters, the rest in order): the sum over the leading
    axes or the last one by a BLAS product with ones (reductions.py), where that pays."""
    if len(set(a)) != len(a) or not out or out not in (a[len(a) - len(out):], a[:-1]):
        return None
    aval = Aval(tuple(shape), np.dtype(dtype))
    if out == a[:-1]:
        return row_sum(aval)
    return column_sum(aval, tuple(range(len(a) - len(out))))


def _candidates(spec: str, shapes: list[tuple[int, ...]]) -> dict[str, Callable]:
    """The two-operand plans, by name, in the order ties are broken."""
    (a, b), out = parse_spec(spec)
    mm = _plan_matmul(a, b, out, shapes)
    path = ["einsum_path", (0, 1)]  # NumPy's own BLAS route (tensordot), kept as a view
    mm_c = lambda x, y: contiguous(mm(x, y))
    if hasattr(mm, "in_place"):
        mm_c.in_place = mm.in_place  # type: ignore
    cands = {"mm": mm, "loop": lambda x, y: np.einsum(spec, x, y),
             "blas": lambda x, y: np.einsum(spec, x, y, optimize=path),
             "lead": _plan_lead_batch(a, b, out, shapes),
             "aligned": _plan_loop_aligned(a, b, out, shapes),
             "bcast": _plan_broadcast_lead(a, b, out, shapes),
             "bmm": _plan_batched_broadcast(a, b, out, shapes),
             # the matmul's result in the output's order, copied with a cache-friendly
             # transpose (its consumers then read contiguous memory)
             "mm_c": mm_c}
    return {k: c for k, c in cands.items() if c is not None}


def choose_einsum(spec: str, shapes: list[tuple[int, ...]], dtypes: list[np.dtype],
                  cands: dict[str, Callable] | None = None) -> str:
    """The name of the plan `plan_einsum` runs for a mid-sized two-operand contraction."""
    cands = cands if cands is not None else _candidates(spec, shapes)
    key = (spec, tuple(shapes), tuple(kernels.c_strides(s, d.itemsize)
                                      for s, d in zip(shapes, dtypes)),
           tuple(d.str for d in dtypes))

    def measure() -> dict[str, float]:
        xs = [np.ones(s, d) for s, d in zip(shapes, dtypes)]
        return dict(zip(cands, timings(list(cands.values()), xs)))
    return kernels.choose("einsum", key, lambda m: {n: costs.einsum_plan(n, spec, shapes,
                                                                          dtypes, m)
                                                     for n in cands}, measure)


def einsum_cost(spec: str, shapes: list[tuple[int, ...]], dtypes: list[np.dtype],
                m: kernels.Machine) -> float:
    """The modelled seconds of the contraction as `plan_einsum` would run it by the model
    (for passes that weigh a rewrite by the contractions it changes)."""
    dts = [np.dtype(d) for d in dtypes]
    if einsum_work(spec, shapes) < 4096:
        return costs.einsum_plan("loop", spec, shapes, dts, m)
    return min(costs.einsum_plan(n, spec, shapes, dts, m) for n in _candidates(spec, shapes))


def _mm_moves_big(a: str, b: str, out: str, shapes: list) -> bool:
    """Whether the matmul form must first copy the larger operand into another axis order."""
    batch = "".join(c for c in out if c in a and c in b)
    contr = "".join(c for c in a if c in b and c not in out)
    big_is_a = np.prod(shapes[0]) >= np.prod(shapes[1])
    s = a if big_is_a else b
    own = "".join(c for c in s if c in out or c in contr)
    free = "".join(c for c in s if c in out and c not in batch)
    want = batch + (free + contr if big_is_a else contr + free)
    return own != want


def _matvec_needing_copy(a: str, b: str, out: str, shapes: list) -> bool:
    """A batched matrix-vector product whose matmul form would first copy the big operand
    into batch-major order: NumPy's einsum loop reads it in place and wins."""
    batch = [c for c in out if c in a and c in b]
    fa = [c for c in a if c in out and c not in b]
    fb = [c for c in b if c in out and c not in a]
    big, small = (a, b) if np.prod(shapes[0]) >= np.prod(shapes[1]) else (b, a)
    if any(c not in out and c not in small for c in big):
        return False  # the matmul plan first sums the big operand's own axes, in place
    return bool(batch) and not (fa and fb) and big[:len(batch)] != "".join(batch)


def _owned(r: np.ndarray, x: np.ndarray) -> np.ndarray:
    return r.copy() if isinstance(r, np.ndarray) and np.may_share_memory(r, x) else r


def _plan_lead_batch(a: str, b: str, out: str, shapes: list) -> Callable | None:
    """Contracted letters that lead both operands ('aik,ajk->ij'): a batched matmul over them
    reads both operands in place (no transposing copy), and a sum over the batch follows."""
    lead = ""
    for x, y in zip(a, b):
        if x != y or x in out:
            break
        lead += x
    if not lead or len(lead) == len(a) or len(lead) == len(b) or \
            not (set(a[len(lead):]) & set(b[len(lead):])) - set(out):
        return None  # (no contraction left per batch: an outer product per row, then a sum
        # over a big intermediate: 'ab,ac->bc' is one matmul, 25x faster, measured)
    mid = lead + "".join(c for c in out if c in a or c in b)
    if len(set(mid)) != len(mid) or set(mid) != set(out) | set(lead):
        return None
    inner = _plan_matmul(a, b, mid, shapes)
    axes = tuple(range(len(lead)))
    return lambda x, y: inner(x, y).sum(axes)


def _plan_broadcast_lead(a: str, b: str, out: str, shapes: list) -> Callable | None:
    """`broadcast_lead`'s matmul: the result in its own order, returned as a transposed view."""
    form = costs.broadcast_lead(a, b, out)
    if form is None:
        return None
    k, lead, (g1, g2), y, fy, contr, res = form
    dims = {c: d for s, sh in zip((a, b), shapes) for c, d in zip(s, sh)}
    size = lambda s: int(np.prod([dims[c] for c in s], dtype=np.int64))
    shp_x = tuple(dims[c] for c in lead) + (size(g1), size(g2))
    shp_y = (size(y[:len(contr)]), size(y[len(contr):])) if y.startswith(contr) \
        else (size(fy), size(contr))
    left = g1 == contr  # the result is y @ x (fy rows), else x @ y
    ty = y.startswith(contr) if left else not y.startswith(contr)
    shp_r = tuple(dims[c] for c in res)
    po = tuple(res.index(c) for c in out)

    def run(p: np.ndarray, q: np.ndarray) -> np.ndarray:
        x, w = (p, q) if k == 0 else (q, p)
        x, w = x.reshape(shp_x), w.reshape(shp_y)
        w = w.T if ty else w
        return (np.matmul(w, x) if left else np.matmul(x, w)).reshape(shp_r).transpose(po)
    return run


def _plan_batched_broadcast(a: str, b: str, out: str, shapes: list) -> Callable | None:
    """`batched_broadcast`'s matmul: each operand's leading letters spread to the lead's
    axes (size 1 where it lacks one: broadcast), its two groups as one matrix each (a view
    when its letters are in memory order), the result transposed into the output's order
    as a view."""
    form = costs.batched_broadcast(a, b, out)
    if form is None:
        return None
    k, lead, gx, gy, mx, ny, res = form
    dims = {c: d for s, sh in zip((a, b), shapes) for c, d in zip(s, sh)}
    size = lambda s: int(np.prod([dims[c] for c in s], dtype=np.int64))

    def shape_of(t: str, g: tuple) -> tuple:
        own = t[:len(t) - len(g[0]) - len(g[1])]
        return tuple(dims[c] if c in own else 1 for c in lead) + (size(g[0]), size(g[1]))
    sx, sy = shape_of((a, b)[k], gx), shape_of((a, b)[1 - k], gy)
    tx, ty = gx[0] != mx, gy[0] == ny  # (held as (K, M) / (N, K): transposed views)
    po = tuple(res.index(c) for c in out)
    same = po == tuple(range(len(out)))

    def run(p: np.ndarray, q: np.ndarray) -> np.ndarray:
        x, y = (p, q) if k == 0 else (q, p)
        x, y = x.reshape(sx), y.reshape(sy)
        r = np.matmul(x.swapaxes(-1, -2) if tx else x, y.swapaxes(-1, -2) if ty else y)
        return r if same else r.transpose(po)
    return run


def _plan_loop_aligned(a: str, b: str, out: str, shapes: list) -> Callable | None:
    """NumPy's einsum loop after copying the smaller operand into the output's letter order
    (its contracted letters first): both then stream along the output's innermost axis."""
    small = 0 if np.prod(shapes[0]) <= np.prod(shapes[1]) else 1
    s = (a, b)[small]
    order = sorted(s, key=lambda c: (c in out, out.index(c) if c in out else s.index(c)))
    perm = tuple(s.index(c) for c in order)
    if perm == tuple(range(len(s))):
        return None
    spec = make_spec([("".join(order) if i == small else t) for i, t in enumerate((a, b))], out)

    def run(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        if small == 0:
            x = np.ascontiguousarray(x.transpose(perm))
        else:
            y = np.ascontiguousarray(y.transpose(perm))
        return np.einsum(spec, x, y)
    return run


def _plan_matmul(a: str, b: str, out: str, shapes: list) -> Callable[..., np.ndarray]:
    dims = {c: d for s, sh in zip((a, b), shapes) for c, d in zip(s, sh)}
    sum_a = "".join(c for c in a if c not in b and c not in out)  # summed in one operand only
    sum_b = "".join(c for c in b if c not in a and c not in out)
    batch = "".join(c for c in out if c in a and c in b)
    contr = "".join(c for c in a if c in b and c not in out)
    fa = "".join(c for c in a if c in out and c not in b)
    fb = "".join(c for c in b if c in out and c not in a)
    size = lambda s: int(np.prod([dims[c] for c in s], dtype=np.int64))
    if sum_a or sum_b:
        return _presummed(a, b, out, shapes, sum_a, sum_b)
    if not contr:
        return _plan_product(a, b, out)
    if out == batch + fb + fa and out != batch + fa + fb:  # swapped, the result is in order
        swapped = _plan_matmul(b, a, out, shapes[::-1])
        run = lambda x, y: swapped(y, x)
        run.in_place = lambda x, y: swapped.in_place(y, x)  # type: ignore
        return run
    # each operand's two matrix axes in its own memory order, handed to BLAS transposed
    # where that order is the other one: no transposing copy (a slice is then copied in
    # place order, and a contiguous operand is a view either way)
    ta = costs.in_order(a, sum_a + batch, contr, fa)
    tb = costs.in_order(b, sum_b + batch, fb, contr)
    ga = (fa, contr) if not ta else (contr, fa)
    gb = (contr, fb) if not tb else (fb, contr)
    pa = [a.index(c) for c in sum_a + batch + "".join(ga)]
    pb = [b.index(c) for c in sum_b + batch + "".join(gb)]
    res = batch + fa + fb
    po = [res.index(c) for c in out]
    shp_a = (size(batch), size(ga[0]), size(ga[1]))
    shp_b = (size(batch), size(gb[0]), size(gb[1]))
    shp_r = tuple(dims[c] for c in res)
    lead = tuple(dims[c] for c in batch)
    forms = BatchForms((shp_a, shp_b), (lead + shp_a[1:], lead + shp_b[1:]), (ta, tb))

    def run(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x, y = x.transpose(pa), y.transpose(pb)
        sa, sb = forms(x, y)
        x, y = x.reshape(sa), y.reshape(sb)
        x, y = x.swapaxes(-2, -1) if ta else x, y.swapaxes(-2, -1) if tb else y
        r = matmul_blocked(x[0], y[0]) if x.ndim == 3 and x.shape[0] == 1 else None
        return (np.matmul(x, y) if r is None else r).reshape(shp_r).transpose(po)
    run.in_place = lambda x, y: forms.in_place(x.transpose(pa), y.transpose(pb))  # type: ignore
    return run


def _presummed(a: str, b: str, out: str, shapes: list, sum_a: str, sum_b: str) -> Callable:
    """Letters summed in one operand only are summed first, in that operand's own layout, by
    the reduce_sum lowering's kernels (NumPy's reduce runs one inner loop per short row: a
    sum over a last axis of 5, (1000, 5), took 22 us against 3 for a BLAS product with
    ones); the contraction of what is left is planned as usual."""
    def pre(t: str, shape: tuple, summed: str) -> tuple[Callable | None, str, tuple]:
        if not summed:
            return None, t, tuple(shape)
        axes = tuple(t.index(c) for c in summed)
        kept = [i for i in range(len(t)) if i not in axes]
        return (_summer(tuple(shape), axes), "".join(t[i] for i in kept),
                tuple(shape[i] for i in kept))
    fa, a2, sh_a = pre(a, shapes[0], sum_a)
    fb, b2, sh_b = pre(b, shapes[1], sum_b)
    inner = _plan_matmul(a2, b2, out, [sh_a, sh_b])
    if fa is None:
        return lambda x, y: inner(x, fb(y))
    if fb is None:
        return lambda x, y: inner(fa(x), y)
    return lambda x, y: inner(fa(x), fb(y))


def _summer(shape: tuple[int, ...], axes: tuple[int, ...]) -> Callable[[np.ndarray], np.ndarray]:
    """x summed over `axes` by the reduce_sum kernel of x's dtype (bound at its first call)."""
    by_dtype: dict[np.dtype, Callable] = {}

    def run(x: np.ndarray) -> np.ndarray:
        k = by_dtype.get(x.dtype)
        if k is None:
            k = by_dtype[x.dtype] = sum_kernel(Aval(shape, x.dtype), axes)
        return k(x)
    return run


def _plan_product(a: str, b: str, out: str) -> Callable:
    """No contracted letter: a broadcasting multiply (a batched matmul of 1x1 blocks is slow)."""
    pa = [a.index(c) for c in sorted(a, key=out.index)]
    pb = [b.index(c) for c in sorted(b, key=out.index)]
    ea = tuple(i for i, c in enumerate(out) if c not in a)
    eb = tuple(i for i, c in enumerate(out) if c not in b)
    ta = tuple(np.argsort(np.argsort(pa)).tolist())
    tb = tuple(np.argsort(np.argsort(pb)).tolist())

    def run(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x = np.expand_dims(x.transpose(ta), ea)
        y = np.expand_dims(y.transpose(tb), eb)
        # a small transposed factor, made contiguous, streams without strided reads
        if x.size * 4 <= y.size:
            x = np.ascontiguousarray(x)
        elif y.size * 4 <= x.size:
            y = np.ascontiguousarray(y)
        big = y if y.size >= x.size else x
        if big.ndim > 1 and not big.flags.c_contiguous:
            # the big factor is a transposed view (a matmul's result in another letter
            # order): NumPy iterates a broadcast product of mismatched layouts in C order,
            # with short strided inner loops (gmm's 'ab,abc->abc': 28 us against 5 us);
            # computed in the big factor's memory order, the result is that order's view
            key = big.strides
            if key not in orders:
                orders[key] = _memory_order(big.strides, big.shape)
            perm = orders[key]
            if perm is not None:
                return (x.transpose(perm[0]) * y.transpose(perm[0])).transpose(perm[1])
        return x * y
    orders: dict[tuple, tuple | None] = {}  # the big factor's strides -> (order, its inverse)
    return run


def _memory_order(strides: tuple, shape: tuple) -> tuple | None:
    """The axes from the largest stride to the smallest, and that permutation's inverse;
    None if that is the axes' own order."""
    perm = sorted(range(len(shape)), key=lambda i: (-abs(strides[i]) if shape[i] > 1 else 0, i))
    if perm == list(range(len(shape))):
        return None
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(perm), tuple(inv)


def _norm_lower(avals: list[Aval], spec: str) -> Callable[..., np.ndarray]:
    s, t = spec.split("->")
    squares = plan_einsum(f"{s},{s}->{t}", [avals[0].shape] * 2, [avals[0].dtype] * 2)

    def run(x: np.ndarray) -> np.ndarray:
        r = np.asarray(squares(x, x))  # a fresh array: the root is taken in place
        return np.sqrt(r, out=r) if r.ndim else np.sqrt(r)
    return run


def _muladd_lower(avals: list[Aval], spec: str) -> Callable[..., np.ndarray]:
    prod = plan_einsum(spec, [a.shape for a in avals[:2]], [a.dtype for a in avals[:2]])
    out = _muladd_shape(*avals, spec=spec)

    return lambda x, y, c: _add_to_product(prod(x, y), c, out.dtype)


LOWERINGS = {
    "einsum": Lowering(lower=lambda avals, spec: plan_einsum(spec, [a.shape for a in avals],
                                                             [a.dtype for a in avals])),
    "norm": Lowering(lower=_norm_lower),
    "muladd": Lowering(lower=_muladd_lower),
}
