"""Layout rules: move transposes toward the consumers of a value, where they cancel against
each other or vanish into a contraction (einsum indexes any layout). Batching moves loop axes
to the front; these rules let the arithmetic run in the arrays' own memory order instead of on
strided transposed views, and drop the transposes back at the end."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .. import primitives as P
from ..batch.regions import relative
from ..batch.taps import _inner_run
from ..batch.windows import RUN, _flat_steps
from ..ir import Const, Eqn
from ..primitives.linalg import make_spec, parse_spec
from .contract import refine


def _inverse(perm: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argsort(perm))


def _through_views(e: Eqn, ctx: Any, view: Any, key: Any) -> tuple[list, Any] | None:
    """The sources of elementwise e's operands, if every non-scalar one has e's shape and is a
    `view` of a source with one common `key(view eqn)`; scalars pass as they are."""
    k, ins = None, []
    for a in e.inputs:
        if a.aval.ndim == 0:
            ins.append(a)
            continue
        v = ctx.def_of(a, view)
        if v is None or a.aval.shape != e.out.aval.shape or k not in (None, key(v)):
            return None
        k = key(v)
        ins.append(v.inputs[0])
    return (ins, k) if k is not None else None


def elementwise_of_transposes(e: Eqn, ctx: Any) -> Any:
    """f(transpose(x, p), transpose(y, p), scalar) = transpose(f(x, y, scalar), p); also with
    operands that broadcast where reading them in x's order moves only unit axes (a reshape:
    a window mean against windows read tap-major, batch/taps.py)."""
    if not e.prim.elementwise or e.out.aval.ndim < 2:
        return None
    found = _through_views(e, ctx, P.transpose, lambda t: t.params["perm"])
    if found is None:
        return _with_broadcasts(e, ctx)
    ins, perm = found
    inner = ctx.emit(e.prim, tuple(ins), dict(e.params), e.src)
    return P.transpose, (inner,), {"perm": perm}


def _unit_moved(shape: tuple[int, ...], nd: int, perm: tuple[int, ...]) -> tuple | None:
    """transpose(reshape(a, full rank), inverse of perm) as a reshape, if only unit axes move."""
    full = (1,) * (nd - len(shape)) + tuple(shape)
    inv = _inverse(perm)
    moved = tuple(full[a] for a in inv)
    if [d for d in moved if d != 1] != [d for d in full if d != 1] or \
            [a for a in inv if full[a] != 1] != sorted(a for a in inv if full[a] != 1):
        return None
    return moved


def _with_broadcasts(e: Eqn, ctx: Any) -> Any:
    """The broadcast case of elementwise_of_transposes: the full-shape operands transposes by
    one perm, the others scalars or broadcasts read in the sources' order by a reshape."""
    nd, perm, ins = e.out.aval.ndim, None, []
    for a in e.inputs:
        t = ctx.def_of(a, P.transpose) if a.aval.shape == e.out.aval.shape else None
        if t is not None and perm in (None, t.params["perm"]):
            perm = t.params["perm"]
        elif a.aval.shape == e.out.aval.shape:
            return None
    if perm is None:
        return None
    for a in e.inputs:
        if a.aval.ndim == 0:
            ins.append(a)
        elif a.aval.shape == e.out.aval.shape:
            ins.append(ctx.def_of(a, P.transpose).inputs[0])
        else:
            moved = _unit_moved(a.aval.shape, nd, perm)
            if moved is None:
                return None
            ins.append(ctx.emit(P.reshape, (a,), {"shape": moved}, e.src))
    inner = ctx.emit(e.prim, tuple(ins), dict(e.params), e.src)
    return P.transpose, (inner,), {"perm": perm}


def elementwise_of_reshapes(e: Eqn, ctx: Any) -> Any:
    """f(reshape(x, s), reshape(y, s), scalar) = reshape(f(x, y, scalar), s) when x and y
    have one shape: batching flattens and unflattens values around elementwise ops, and
    computing in the source shape lets the reshape pairs cancel. Unary ops keep their reshape,
    where rules such as sum(x**2) = einsum(x, x) look for it."""
    if not e.prim.elementwise or sum(a.aval.ndim > 0 for a in e.inputs) < 2:
        return None
    found = _through_views(e, ctx, P.reshape, lambda r: r.inputs[0].aval.shape)
    if found is None:
        return _reshapes_with_broadcasts(e, ctx)
    if not found[1]:  # not from 0-d sources
        return None
    inner = ctx.emit(e.prim, tuple(found[0]), dict(e.params), e.src)
    return P.reshape, (inner,), {"shape": e.out.aval.shape}


def _reshapes_with_broadcasts(e: Eqn, ctx: Any) -> Any:
    """The broadcast case of elementwise_of_reshapes: the full-shape operands reshapes of one
    shape S, some of them of a strided view (whose reshape is a copy), the others broadcast
    along whole axes of S (`w[j] * X[i + j]` batched over the (i, j) pairs: the taps'
    weights (n*k, 1) against the windows (n*k, C) flattened from an (n, k, C) view), each
    read in S by a reshape with unit axes; the product then has the view's shape, where a
    sum over the taps is one contraction of the view, not a copy."""
    out, S, views = e.out.aval.shape, None, False
    for a in e.inputs:
        if a.aval.shape == out:
            r = ctx.def_of(a, P.reshape)
            if r is None or S not in (None, r.inputs[0].aval.shape):
                return None
            S = r.inputs[0].aval.shape
            views = views or _long_runs(ctx.def_of(r.inputs[0], P.strided))
    ref = refine(S, out) if S and views else None
    if ref is None:
        return None  # (only a view's reshape is a copy; elsewhere f's pattern rules see it)
    R, gS, gO = ref
    owner = {r: o for o, rs in enumerate(gO) for r in rs if R[r] > 1}
    ins = []
    for a in e.inputs:
        if a.aval.ndim == 0 or a.aval.shape == out:
            ins.append(a if a.aval.ndim == 0 else ctx.def_of(a, P.reshape).inputs[0])
            continue
        pad = (1,) * (len(out) - a.aval.ndim) + a.aval.shape
        shape = []
        for s, rs in enumerate(gS):
            kept = {pad[owner[r]] != 1 for r in rs if r in owner}
            if len(kept) > 1:
                return None  # an axis of S partly broadcast: no reshape reads it
            shape.append(S[s] if kept == {True} else 1)
        ins.append(ctx.emit(P.reshape, (a,), {"shape": tuple(shape)}, e.src))
    inner = ctx.emit(e.prim, tuple(ins), dict(e.params), e.src)
    return P.reshape, (inner,), {"shape": out}


def _long_runs(v: Eqn | None) -> bool:
    """Whether v is a strided view read in contiguous runs of RUN elements or more (rows of
    channels; a reversed axis counts, as NumPy reads it forwards): f over a view of short
    runs (3 x 3 x 3 patches of a volume) loops over each run, where its reshape copies the
    view once and f streams the copy (volume patch energies, `p - mean(p)` of 1,000 such
    patches: 272 us computed on the copy, 570 us on the view, load 10)."""
    if v is None:
        return False
    shape, dims = v.inputs[0].aval.shape, v.params["dims"]
    steps = [(n, abs(st)) for (n, _), st in zip(dims, _flat_steps(shape, dims))]
    return _inner_run(steps) >= RUN


def _reduced_perm(perm: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    """After reducing `axes` of transpose(x, perm): the permutation of x's reduced result."""
    kept = [p for i, p in enumerate(perm) if i not in axes]  # x's axes, in output order
    order = sorted(kept)
    return tuple(order.index(p) for p in kept)


def reduction_of_transpose(e: Eqn, ctx: Any) -> Any:
    """reduce(transpose(x, p), axes) = transpose(reduce(x, p[axes]), q)."""
    t = ctx.def_of(e.inputs[0], P.transpose)
    if t is None:
        return None
    perm = t.params["perm"]
    if e.prim in (P.softmax, P.logsumexp):
        a = e.params["axis"]
        inner = ctx.emit(e.prim, (t.inputs[0],), {"axis": perm[a]}, e.src)
        q = perm if e.prim is P.softmax else _reduced_perm(perm, (a,))
    else:
        axes = e.params["axes"]
        inner = ctx.emit(e.prim, (t.inputs[0],), {"axes": tuple(sorted(perm[a] for a in axes))},
                         e.src)
        q = _reduced_perm(perm, axes)
    return (P.transpose, (inner,), {"perm": q}) if q != tuple(range(len(q))) else inner


def sum_of_reshaped_view(e: Eqn, ctx: Any) -> Any:
    """sum(reshape(v, s), axes) = reshape(sum(v, axes'), ..) where v is a strided view (or a
    transposed array: the blocks of a pooling at its own stride) and the summed axes of s
    are whole axes of v: the reshape of such a view is a copy (batching merges a loop's axes
    around a window sum), the sum of the view itself is not, and the window rules see it."""
    r = ctx.def_of(e.inputs[0], P.reshape)
    if r is None or ctx.def_of(r.inputs[0], P.strided) is None and \
            ctx.def_of(r.inputs[0], P.transpose) is None:
        return None  # (a transposed array's reshape is a copy too: non-overlapping blocks)
    ref = refine(r.inputs[0].aval.shape, r.out.aval.shape)
    if ref is None:
        return None
    R, gx, gs = ref
    summed = {q for a in e.params["axes"] for q in gs[a] if R[q] > 1}
    axes = tuple(i for i, qs in enumerate(gx) if summed & set(qs))
    if not axes or any(R[q] > 1 and q not in summed for i in axes for q in gx[i]):
        return None
    inner = ctx.emit(P.reduce_sum, (r.inputs[0],), {"axes": axes}, e.src)
    return P.reshape, (inner,), {"shape": e.out.aval.shape}


def einsum_of_transpose(e: Eqn, ctx: Any) -> Any:
    """einsum(.., transpose(x, p), ..) indexes x directly with permuted subscripts."""
    ins, out = parse_spec(e.params["spec"])
    new_ins, ops, changed = [], [], False
    for s, a in zip(ins, e.inputs):
        t = ctx.def_of(a, P.transpose)
        if t is None:
            new_ins.append(s)
            ops.append(a)
            continue
        inv = _inverse(t.params["perm"])
        new_ins.append("".join(s[inv[j]] for j in range(len(s))))
        ops.append(t.inputs[0])
        changed = True
    if not changed:
        return None
    return P.einsum, tuple(ops), {"spec": make_spec(new_ins, out)}


def _refined(shapes: list[tuple[int, ...]]) -> tuple[int, ...] | None:
    from .contract import refine
    R = shapes[0]
    for s in shapes[1:]:
        r = refine(R, s)
        if r is None:
            return None
        R = tuple(r[0])
    return R


def _operand_in(a: Any, ctx: Any, R: tuple[int, ...]) -> Any:
    """The operand `a` (of the output's shape) as an array of shape R, or with unit axes where
    it is a broadcast (NumPy then broadcasts it for free)."""
    from .contract import _broadcast_source, refine
    src = _broadcast_source(a, ctx)
    if src is None or ctx.def_of(src[0], P.broadcast_to) is not None:
        return a, R
    y, S = src
    ypad = (1,) * (len(S) - y.aval.ndim) + y.aval.shape
    ref = refine(S, R)
    if ref is None or tuple(ref[0]) != R:
        return None, None  # unit axes placed differently: no common layout
    gS = ref[1]
    shape = tuple(d for s, rs in enumerate(gS) for d in
                  ([1] * len(rs) if ypad[s] == 1 and S[s] != 1 else [R[r] for r in rs]))
    return y, shape


def elementwise_of_broadcasts(e: Eqn, ctx: Any) -> Any:
    """f(reshape(broadcast(y)), x) = reshape(f(y', x')) with NumPy's implicit broadcasting:
    y' keeps unit axes instead of copies (y' and x' are reshapes, which are free)."""
    from .contract import _broadcast_source
    out = e.out.aval.shape
    if not e.prim.elementwise or not out:
        return None
    srcs = [None if a.aval.ndim == 0 else _broadcast_source(a, ctx) for a in e.inputs]
    if any(a.aval.ndim and a.aval.shape != out for a in e.inputs) or not any(
            s is not None and ctx.def_of(s[0], P.broadcast_to) is None and
            len(s[1]) >= s[0].aval.ndim and s[0].aval.size < a.aval.size
            for s, a in zip(srcs, e.inputs)):
        return None
    R = _refined([out] + [s[1] for s in srcs if s is not None])
    if R is None or R == out:
        return None
    ops = []
    for a in e.inputs:
        if a.aval.ndim == 0:
            ops.append(a)
            continue
        y, shape = _operand_in(a, ctx, R)
        if y is None:
            return None
        ops.append(y if y.aval.shape == shape else
                   ctx.emit(P.reshape, (y,), {"shape": shape}, e.src))
    r = ctx.emit(e.prim, tuple(ops), dict(e.params), e.src)
    if r.aval.shape != R:
        r = ctx.emit(P.broadcast_to, (r,), {"shape": R}, e.src)
    return P.reshape, (r,), {"shape": out}


def elementwise_of_explicit_broadcast(e: Eqn, ctx: Any) -> Any:
    """f(broadcast_to(y, S), x) = f(y, x) when NumPy's implicit broadcasting gives S anyway."""
    if not e.prim.elementwise:
        return None
    ins, changed = list(e.inputs), False
    for k, a in enumerate(e.inputs):
        b = ctx.def_of(a, P.broadcast_to)
        if b is None:
            continue
        rest = [x.aval.shape for j, x in enumerate(ins) if j != k]
        try:
            same = np.broadcast_shapes(b.inputs[0].aval.shape, *rest) == e.out.aval.shape
        except ValueError:
            same = False
        if same:
            ins[k], changed = b.inputs[0], True
    return (e.prim, tuple(ins), dict(e.params)) if changed else None


def einsum_permutation(e: Eqn, ctx: Any) -> Any:
    """einsum('abc->cba', x) is a transpose: a view, not a copy."""
    ins, out = parse_spec(e.params["spec"])
    if len(ins) != 1 or sorted(ins[0]) != sorted(out) or len(set(out)) != len(out):
        return None
    return P.transpose, (e.inputs[0],), {"perm": tuple(ins[0].index(c) for c in out)}


def _slice_along(a: Any, ctx: Any, axis: int) -> tuple | None:
    """a as (base, index, start, stop): a read of base[start:stop] along `axis` (of a), its
    other axes whole slices or ints; a one-row read with the row axis put back (reshape of
    base[i, ...]) counts as base[i:i+1]."""
    r = ctx.def_of(a, P.reshape)
    row = r is not None
    e = ctx.def_of(r.inputs[0] if row else a, P.getitem)
    if e is None or not P.is_basic(e.params["idx"]) or None in e.params["idx"]:
        return None
    idx = e.params["idx"]
    kept = [i for i, k in enumerate(idx) if isinstance(k, P.Sl)]
    if row:  # the reshape only puts back the one axis of an int index at `axis`
        ints = [i for i, k in enumerate(idx) if isinstance(k, int)]
        s = e.out.aval.shape
        if a.aval.shape != s[:axis] + (1,) + s[axis:]:
            return None
        b = next((i for i in ints if sum(1 for j in kept if j < i) == axis), None)
        if b is None:
            return None
        return e.inputs[0], idx, b, idx[b], idx[b] + 1
    if axis >= len(kept) or idx[kept[axis]].step != 1:
        return None
    b = kept[axis]
    return e.inputs[0], idx, b, idx[b].start, idx[b].stop


def concatenate_of_empty(e: Eqn, ctx: Any) -> Any:
    """concatenate(x, empty, y) = concatenate(x, y): an operand with no elements adds none
    (np.append to np.array([]) starts a grown array so); kept where the dtype is its."""
    keep = [a for a in e.inputs if a.aval.size]
    if len(keep) == len(e.inputs) or not keep or \
            np.result_type(*[a.aval.dtype for a in keep]) != e.out.aval.dtype:
        return None
    return keep[0] if len(keep) == 1 else (P.concatenate, tuple(keep), dict(e.params))


def concatenate_of_slices(e: Eqn, ctx: Any) -> Any:
    """concatenate(x[a:b], x[b:c], axis) = x[a:c]: adjacent reads of one array, in order."""
    axis = e.params["axis"]
    parts = [_slice_along(a, ctx, axis) for a in e.inputs]
    if any(p is None for p in parts) or len(parts) < 2:
        return None
    base, idx, b, start, _ = parts[0]
    stop = start
    for pb, pidx, pa, s0, s1 in parts:
        if pb is not base or pa != b or s0 != stop or \
                any(k != idx[i] for i, k in enumerate(pidx) if i != b):
            return None
        stop = s1
    new = tuple(P.Sl(start, stop, 1) if i == b else k for i, k in enumerate(idx))
    if P.index_shape(base.aval.shape, new) != e.out.aval.shape:
        return None
    return P.getitem, (base,), {"idx": P.BasicIndex(new)}


def _region(idx: tuple, shape: tuple[int, ...]) -> tuple[int, int, int, int] | None:
    """(axis, start, stop, step) when idx selects base[start:stop:step] along one axis (an
    int is a one-wide range) and the whole of every other axis."""
    if not P.is_basic(idx) or None in idx or len(idx) != len(shape):
        return None
    part = [i for i, (k, d) in enumerate(zip(idx, shape))
            if not (isinstance(k, P.Sl) and k.start == 0 and k.step == 1 and len(k) == d)]
    if len(part) != 1:
        return (0, 0, shape[0], 1) if not part and shape else None
    a = part[0]
    k = idx[a]
    if isinstance(k, int):
        return a, k, k + 1, 1
    return (a, k.start, k.stop, k.step) if k.step >= 1 else None


class _Tiles(NamedTuple):
    """What writes_tiling_zeros knows of a chain zeros.at[r_1].add(v_1)...at[r_k].add(v_k):
    its last write `eqn`, that write's region (axis, start, stop, step) and value, the chain
    before it (None at the zeros), and the length its regions cover along the axis in all."""

    eqn: Eqn
    region: tuple[int, int, int, int]
    value: Any
    prev: _Tiles | None
    covered: int


def _tiles(e: Eqn, ctx: Any) -> _Tiles | None:
    """e's chain summary, from its base's (kept in ctx.memo when the rule met the base's
    write): constant work per write, where walking the chain at every write was quadratic."""
    base, v = e.inputs
    prev = None
    if isinstance(base, Const):
        if base.value.size > 1 << 16 or base.value.any():
            return None
    else:
        d = ctx.def_of(base)
        if d is not None and d.prim is P.full:
            if d.params["value"] != 0:
                return None
        elif d is None or d.prim is not P.setitem_add or ctx.n_uses(base) != 1:
            return None
        else:
            key = ("tiles", base)
            if key not in ctx.memo:
                ctx.memo[key] = _tiles(d, ctx)
            prev = ctx.memo[key]
            if prev is None or prev.eqn is not d:
                return None
    r = _region(e.params["idx"], e.out.aval.shape)
    if r is None or v.aval.dtype != e.out.aval.dtype or (prev and r[0] != prev.region[0]):
        return None
    return _Tiles(e, r, v, prev, (prev.covered if prev else 0) + len(range(*r[1:])))


def writes_tiling_zeros(e: Eqn, ctx: Any) -> Any:
    """zeros.at[r_1].add(v_1)...at[r_n].add(v_n) = concatenate(v_i in order) when the regions
    r_i tile the array along one axis (the cotangent of reading it in pieces)."""
    t = ctx.memo[("tiles", e.out)] = _tiles(e, ctx)
    shape = e.out.aval.shape
    if t is None or t.covered != shape[t.region[0]]:
        return None  # (regions that tile the axis cover exactly its length)
    pieces = []
    while t is not None:
        pieces.append((t.region, t.value))
        t = t.prev
    axis = pieces[0][0][0]
    pieces.sort(key=lambda p: p[0][1])
    if any(r[3] != 1 for r, _ in pieces):
        return _interleaved(e, ctx, pieces, axis)
    stop = 0
    for (_, s0, s1, _), _ in pieces:
        if s0 != stop:
            return None
        stop = s1
    parts = []
    for (_, s0, s1, _), v in pieces:
        want = shape[:axis] + (s1 - s0,) + shape[axis + 1:]
        v = _shaped(ctx, v, want, e)
        if v is None:
            return None
        parts.append(v)
    if len(parts) == 1:
        return parts[0]
    return P.concatenate, tuple(parts), {"axis": axis}


def _shaped(ctx: Any, v: Any, want: tuple[int, ...], e: Eqn) -> Any:
    """v reshaped to `want` (None: a broadcast value, of another size)."""
    if v.aval.shape == want:
        return v
    if int(np.prod(v.aval.shape)) != int(np.prod(want)):
        return None
    return ctx.emit(P.reshape, (v,), {"shape": want}, e.src)


def _interleaved(e: Eqn, ctx: Any, pieces: list, axis: int) -> Any:
    """Pieces x[j::s] for j = 0..s-1 (each of the same length) interleave along the axis:
    stacked along a new axis after it, then merged (the cotangent of reading x[0::2] and
    x[1::2], as an (E, 2) edge array's sources and destinations are)."""
    shape = e.out.aval.shape
    n = shape[axis]
    step = pieces[0][0][3]
    if n % step or len(pieces) != step or any(
            r[1] != j or r[3] != step or len(range(*r[1:])) != n // step
            for j, (r, _) in enumerate(pieces)):
        return None
    want = shape[:axis] + (n // step, 1) + shape[axis + 1:]
    parts = [_shaped(ctx, v, want, e) for _, v in pieces]
    if any(p is None for p in parts):
        return None
    stacked = ctx.emit(P.concatenate, tuple(parts), {"axis": axis + 1}, e.src)
    return P.reshape, (stacked,), {"shape": shape}


def _zero(a: Any, ctx: Any) -> bool:
    if isinstance(a, Const):
        return not a.value.any()
    d = ctx.def_of(a, P.full)
    return d is not None and d.params["value"] == 0


def _disjoint(w: tuple, r: tuple) -> bool | None:
    """Whether two normalized basic indices of one array select no common element (None:
    not known)."""
    if len(w) != len(r) or any(k is None or isinstance(k, P.Adv) for k in w + r):
        return None
    for a, b in zip(w, r):
        ra = range(a, a + 1) if isinstance(a, int) else range(a.start, a.stop, a.step)
        rb = range(b, b + 1) if isinstance(b, int) else range(b.start, b.stop, b.step)
        small, big = (ra, rb) if len(ra) <= len(rb) else (rb, ra)
        if len(small) > 4096:
            if ra.step == rb.step == 1 and (ra.stop <= rb.start or rb.stop <= ra.start):
                return True
            continue
        if not any(i in big for i in small):
            return True
    return False


MAX_WRITES_PASSED = 4096


def read_of_write(e: Eqn, ctx: Any) -> Any:
    """x.at[w].set(v)[r] = v[r - w] when r lies inside w (as x.at[w].add(v)[r] when x is zeros),
    and = x[r] when r and w are disjoint: a loop's packed output read in pieces after its
    cotangents were added into a zero buffer, a tiled write read back."""
    r = e.params["idx"]
    s = ctx.def_of(e.inputs[0], P.setitem) or ctx.def_of(e.inputs[0], P.setitem_add)
    if s is None or not P.is_basic(r) or not P.is_basic(s.params["idx"]):
        return None
    base, v = s.inputs
    w = s.params["idx"]
    if _disjoint(w, r):
        # (past every write before it that r misses, at once: one rewrite per write would
        # look like a cycle on a buffer written many times)
        for _ in range(MAX_WRITES_PASSED):
            u = ctx.def_of(base, P.setitem) or ctx.def_of(base, P.setitem_add)
            if u is None or not P.is_basic(u.params["idx"]) or \
                    not _disjoint(u.params["idx"], r):
                break
            base = u.inputs[0]
        d = ctx.def_of(base, P.full)
        if d is not None:
            a = e.out.aval
            return P.full, (), {"shape": a.shape, "dtype": a.dtype, "value": d.params["value"]}
        return P.getitem, (base,), {"idx": r}
    rel = relative(w, r)
    if rel is None or (s.prim is P.setitem_add and not _zero(base, ctx)) or \
            v.aval.dtype != e.out.aval.dtype:
        return None
    region = P.index_shape(base.aval.shape, w)
    if v.aval.shape != region:
        v = ctx.emit(P.broadcast_to, (v,), {"shape": region}, e.src)
    if P.index_shape(region, rel) != e.out.aval.shape:
        return None
    return P.getitem, (v,), {"idx": P.BasicIndex(rel)}
