"""Rewrite rules for affine views that overlap (sliding windows, patches).

A batched loop over windows `x[t:t+k]` reads one `strided` view whose window-offset axis
overlaps the window-position axis. NumPy has no fast kernel for contracting such a view (a
contraction first copies it, k times the data). Split over the window offset instead: the view
at one offset is a plain slice, so `sum_a einsum(x[a:a+T], w[a])` runs k BLAS products on
slices, as one would write by hand, and its gradient is k strided adds into one buffer.

Windows of a 1-D array contracted with a vector (`w @ x[t:t+k]` for every t, a moving sum, and
the gradient of either) are one `correlate` instead: NumPy runs it as one call, where the split
makes k passes over the output.
"""
from __future__ import annotations

import math

from .. import primitives as P
from ..ir import Eqn
from ..primitives.gathers import added_loops
from ..primitives.linalg import make_spec, parse_spec
from ..rewrite.engine import Ctx
from .gather import view_steps

# Windows with more offsets than this stay one strided view (the split would emit one
# operation per offset).
MAX_OFFSETS = 64
# A split's terms that read their windows in contiguous runs shorter than this are strided
# passes (see `_strided_terms`).
RUN = 16


def strided_is_basic(e: Eqn, c: Ctx) -> object:
    """A strided view whose axes tile the array is slicing, reshapes and a transpose."""
    x = e.inputs[0]
    steps = view_steps(x.aval.shape, list(e.params["start"]), list(e.params["dims"]))
    if steps is None:
        return None
    for prim, params in steps[:-1]:
        x = c.emit(prim, (x,), params, e.src)
    if not steps:
        return x
    prim, params = steps[-1]
    return prim, (x,), params


def _overlaps(shape: tuple[int, ...], dims: tuple) -> bool:
    """Whether some element of x is at two positions of the view (false where each axis,
    by increasing step through the flattened x, steps past all the shorter ones' extent)."""
    extent = 0
    for n, st in sorted(((n, abs(st)) for (n, _), st in zip(dims, _flat_steps(shape, dims))
                         if n > 1), key=lambda d: d[1]):
        if st <= extent:
            return True
        extent += st * (n - 1)
    return False


def _split_axis(e: Eqn, letters: str, out: str) -> int | None:
    """The window axis to split over: contracted (not in `out`), the fewest offsets, and
    leaving a view whose axes tile (or at least one axis fewer to split). (einsum_of_windows
    then splits only into at most as many terms as each term reads elements of the view: a
    filter's cotangent, sum_t g[t] * x[s*t:s*t+k] with the k taps in the result, split over
    the windows t would be one k-vector product, a NumPy call, per window: a graph growing
    with the trip count up to MAX_OFFSETS windows, and slower than one product over the view
    (60 windows of 4 taps: 42 us against 1.1 us for one np.dot). A split over the taps reads
    whole runs of positions per term, and a sum of windows to a scalar still splits.)"""
    dims = e.params["dims"]
    shape = e.inputs[0].aval.shape
    moves = [{a for a, st in enumerate(d[1]) if st} for d in dims]
    best = None
    for k in sorted(range(len(dims)), key=lambda k: dims[k][0]):
        L = letters[k]
        if L in out or letters.count(L) > 1 or not 1 < dims[k][0] <= MAX_OFFSETS:
            continue
        if not any(moves[k] & moves[j] for j in range(len(dims)) if j != k):
            continue  # moves an axis no other axis moves: no overlap to undo
        rest = dims[:k] + dims[k + 1:]
        if view_steps(shape, list(e.params["start"]), list(rest)) is not None:
            return k
        best = k if best is None else best
    return best


def _offset(c: Ctx, s: Eqn, k: int, a: int) -> object:
    """The view s with its axis k fixed at offset a."""
    dims = s.params["dims"]
    start = tuple(v + a * d for v, d in zip(s.params["start"], dims[k][1]))
    return c.emit(P.strided, (s.inputs[0],), {"start": start, "dims": dims[:k] + dims[k + 1:]},
                  s.src)


def _fix(c: Ctx, x: object, letters: str, L: str, a: int, src: object) -> object:
    idx = tuple(a if ch == L else P.Sl(0, d, 1) for ch, d in zip(letters, x.aval.shape))
    return c.emit(P.getitem, (x,), {"idx": P.BasicIndex(idx)}, src)


def _copy_cheaper(view: int, res: int, n: int) -> bool:
    """Whether one contraction of the windows (copied once, im2col) beats n per-offset terms.
    Each term passes over the whole output (a multiply-add into it), reading its slice of
    the windows in place; the copy writes and reads the view once, then one product writes
    the output once: the split costs n outputs, the copy one view and one output. (So k
    products of few channels, `x[t:t+k].reshape(-1) @ W` at every t, become one product
    with k times the inner size; a multi-channel 2-D convolution, whose view is p*p times
    its input, stays split.) Terms that do not contract are outer products, by the same
    count (a 1-channel convolution `x[:, t:t+k] @ K.T`). `view`, `res`: the sizes of the
    windows and of the contraction's result. The copy reads a strided view, slower per
    element than a product's pass over its output: it must win by a quarter (a WaveNet
    layer's 3 offsets of 8 channels into 16, 80 against 96, measured 5-10% slower copied)."""
    return 1.25 * (view + res) < n * res


def _flip(c: Ctx, x: object, src: object) -> object:
    return c.emit(P.getitem, (x,), {"idx": P.BasicIndex((P.Sl(x.aval.shape[0] - 1, -1, -1),))},
                  src)


def _one_channel(s: Eqn) -> tuple[int, tuple[int, int], tuple[int, int]] | None:
    """(first position, sizes, steps) of a view `x[lo + p*a + q*i]` of a 1-D array with steps
    p, q of +-1: windows of one channel, read forwards or backwards."""
    dims = s.params["dims"]
    if s.inputs[0].aval.ndim != 1 or len(dims) != 2 or \
            any(abs(st[0]) != 1 or n < 1 for n, st in dims):
        return None
    (n, (p,)), (k, (q,)) = dims
    lo = s.params["start"][0] + min(0, p * (n - 1)) + min(0, q * (k - 1))
    return lo, (n, k), (p, q)


def correlate_of_windows(e: Eqn, c: Ctx) -> object:
    """einsum('ai,i->a', windows(x), v) (or 'ai,a->i', either order, or one operand: v = 1)
    of a 1-D real x = correlate(x[lo:lo+n+k-1], v), flipped where the view runs backwards."""
    ins, out = parse_spec(e.params["spec"])
    if len(out) != 1 or len(e.inputs) > 2 or e.out.aval.dtype.kind != "f":
        return None
    j = 0 if len(e.inputs) == 1 or c.def_of(e.inputs[0], P.strided) else 1
    s = c.def_of(e.inputs[j], P.strided)
    one = _one_channel(s) if s is not None else None
    if one is None or len(set(ins[j])) != 2 or out not in ins[j]:
        return None
    lo, sizes, steps = one
    kept = ins[j].index(out)  # the view's axis in the output; the other one is contracted
    if len(e.inputs) == 2:
        v = e.inputs[1 - j]
        if ins[1 - j] != ins[j][1 - kept] or v.aval.dtype.kind != "f":
            return None
    else:
        v = c.emit(P.full, (), {"shape": (sizes[1 - kept],), "dtype": e.out.aval.dtype,
                                "value": 1.0}, e.src)
    x = c.emit(P.getitem, (s.inputs[0],),
               {"idx": P.BasicIndex((P.Sl(lo, lo + sum(sizes) - 1, 1),))}, e.src)
    if steps[1 - kept] < 0:
        v = _flip(c, v, e.src)
    r = c.emit(P.correlate, (x, v), {"mode": "valid"}, e.src)
    return _flip(c, r, e.src) if steps[kept] < 0 else r


def _flat_steps(shape: tuple[int, ...], dims: tuple) -> list[int]:
    """Each view axis's step in the row-major flattening of an array of `shape`."""
    row = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        row[i] = row[i + 1] * shape[i + 1]
    return [sum(s * r for s, r in zip(st, row)) for _, st in dims]


def correlate_of_flat_windows(e: Eqn, c: Ctx) -> object:
    """einsum(windows(x), v) contracting one window axis that steps by +-1 through x's
    row-major flattening (np.convolve of every row of a matrix with one kernel) = a view of
    correlate(x.ravel()[lo:hi], v): all the rows' windows are windows of one flat signal, so
    one correlation computes them, with the k - 1 outputs that straddle two rows left
    unread. Taken only where those wasted outputs are at most the ones read; the gradient is
    then one full correlation and one k-tap one, not k strided adds and k dot products."""
    ins, out = parse_spec(e.params["spec"])
    if len(e.inputs) > 2 or e.out.aval.dtype.kind != "f":
        return None
    j = 0 if len(e.inputs) == 1 or c.def_of(e.inputs[0], P.strided) else 1
    s = c.def_of(e.inputs[j], P.strided)
    if s is None or s.inputs[0].aval.dtype.kind != "f" or len(set(ins[j])) != len(ins[j]):
        return None
    gone = [ch for ch in ins[j] if ch not in out]
    if len(gone) != 1 or sorted(out) != sorted(ch for ch in ins[j] if ch != gone[0]):
        return None
    L = ins[j].index(gone[0])
    dims = s.params["dims"]
    k = dims[L][0]
    if len(e.inputs) == 2:
        v = e.inputs[1 - j]
        if ins[1 - j] != gone[0] or v.aval.dtype.kind != "f":
            return None
    else:
        v = None
    x = s.inputs[0]
    steps = _flat_steps(x.aval.shape, dims)
    if abs(steps[L]) != 1 or not 1 < k <= MAX_OFFSETS:
        return None
    first = _flat_steps(x.aval.shape, ((1, s.params["start"]),))[0]
    lo = first + sum(min(0, st * (n - 1)) for (n, _), st in zip(dims, steps))
    hi = first + sum(max(0, st * (n - 1)) for (n, _), st in zip(dims, steps)) + 1
    if hi - lo - k + 1 > 2 * e.out.aval.size:
        return None  # (the outputs between the rows would cost more than the ones read)
    if v is None:
        v = c.emit(P.full, (), {"shape": (k,), "dtype": e.out.aval.dtype, "value": 1.0}, e.src)
    if steps[L] < 0:
        v, first = _flip(c, v, e.src), first - (k - 1)
    flat = c.emit(P.reshape, (x,), {"shape": (x.aval.size,)}, e.src)
    if (lo, hi) != (0, x.aval.size):
        flat = c.emit(P.getitem, (flat,), {"idx": P.BasicIndex((P.Sl(lo, hi, 1),))}, e.src)
    r = c.emit(P.correlate, (flat, v), {"mode": "valid"}, e.src)
    kept = [ins[j].index(ch) for ch in out]
    return P.strided, (r,), {"start": (first - lo,),
                             "dims": tuple((dims[d][0], (steps[d],)) for d in kept)}


def _split_terms(s: Eqn, letters: str, out: str, k: int) -> int:
    """The products that splitting view s at axis k gives once its rest is split too (each
    term's view is split again while it overlaps): a sum over the positions of 2-D windows
    (a transposed convolution's filter cotangent) would be one term per position."""
    dims = s.params["dims"]
    n, rest = dims[k][0], dims[:k] + dims[k + 1:]
    if n > MAX_OFFSETS or view_steps(s.inputs[0].aval.shape, list(s.params["start"]),
                                     list(rest)) is not None:
        return n
    r = Eqn(P.strided, s.inputs, {"start": s.params["start"], "dims": rest}, s.out, s.src)
    sub = letters[:k] + letters[k + 1:]
    k2 = _split_axis(r, sub, out)
    return n if k2 is None else n * _split_terms(r, sub, out, k2)


def _strided_terms(s: Eqn, letters: str, out: str, k: int) -> bool:
    """Whether the split's terms would each read their view of the windows in short strided
    pieces (no run of RUN contiguous elements): a strided or dilated 2-D convolution's taps
    `img[a::s, b::s]`, or channels-last taps whose position axes do not merge. Each term is
    then a slow pass (an elementwise product at a step) or a product whose operand NumPy
    copies first, so one copy of all the windows and one product beat them. A term that
    contracts channels with its positions along one axis at a step (a matrix with a leading
    dimension, `x[a*d::s] @ w[a]`, or its transpose) runs as one matrix product and stays
    split: the copy would gather the windows in short runs and add them back so."""
    dims = s.params["dims"]
    shape = s.inputs[0].aval.shape
    rest, sub = list(dims), letters
    while True:  # (the axes every term still has once the split is done)
        rest, sub = rest[:k] + rest[k + 1:], sub[:k] + sub[k + 1:]
        if view_steps(shape, list(s.params["start"]), rest) is not None:
            break
        k2 = _split_axis(Eqn(P.strided, s.inputs, {"start": s.params["start"],
                                                   "dims": tuple(rest)}, s.out, s.src), sub, out)
        if k2 is None:
            break
        k = k2
    axes = sorted((abs(st), n, ch) for (n, _), st, ch in
                  zip(rest, _flat_steps(shape, tuple(rest)), sub) if n > 1)
    run = 1
    for st, n, _ in axes:
        if st == run:
            run *= n
    if run >= RUN:
        return False
    if any(ch not in out for _, _, ch in axes):  # (each term a product: fast where its
        kept = [(st, n) for st, n, ch in axes if ch in out]  # positions are one axis at a step)
        return any(kept[i + 1][0] != kept[i][0] * kept[i][1] for i in range(len(kept) - 1))
    return True


def _rest_copied(s: Eqn, e: Eqn, k: int, letters: str, terms: list[str], out: str) -> bool:
    """Whether the view left by splitting axis k still overlaps and would end up copied (its
    own split refused: outer products): one copy of the whole view then beats a copy per
    offset (a 2-D filter bank: `tensordot(F, img[i:i+p, j:j+p])` at every (i, j))."""
    dims = s.params["dims"]
    rest = dims[:k] + dims[k + 1:]
    if view_steps(s.inputs[0].aval.shape, list(s.params["start"]), list(rest)) is not None:
        return False
    r = Eqn(P.strided, s.inputs, {"start": s.params["start"], "dims": rest}, s.out, s.src)
    sub = letters[:k] + letters[k + 1:]
    k2 = _split_axis(r, sub, out)
    if k2 is None:
        return True
    terms2 = [t.replace(sub[k2], "") for t in terms]
    view = math.prod(n for n, _ in rest)
    if _copy_cheaper(view, e.out.aval.size, rest[k2][0]):
        return True  # (a contraction copies it as einsum_of_windows would; outer products too)
    if not any(ch not in out for t in terms2 for ch in t):
        return False
    return _rest_copied(r, e, k2, sub, terms2, out)


def einsum_of_windows(e: Eqn, c: Ctx) -> object:
    r = correlate_of_windows(e, c)
    if r is None:
        r = correlate_of_flat_windows(e, c)
    if r is not None:
        return r
    ins, out = parse_spec(e.params["spec"])
    for j, x in enumerate(e.inputs):
        s = c.def_of(x, P.strided)
        if s is None or view_steps(s.inputs[0].aval.shape, list(s.params["start"]),
                                   list(s.params["dims"])) is not None:
            continue
        if len(e.inputs) > 1 and not _overlaps(s.inputs[0].aval.shape, s.params["dims"]):
            continue  # (rows with gaps between them: np.einsum reads the view as it is; a
            #           plain sum over a short axis of it is still split, into adds)
        cols = c.kept_as(P.relayout, (x,), {"perm": tuple(range(x.aval.ndim))})
        if cols is not None:  # (patches copied for another contraction: read that copy)
            return P.einsum, tuple(cols if i == j else y for i, y in enumerate(e.inputs)), \
                e.params
        k = _split_axis(s, ins[j], out)
        if k is None or s.params["dims"][k][0] ** 2 > s.out.aval.size:
            continue  # (more terms than each reads elements: see _split_axis)
        L = ins[j][k]
        terms = [t.replace(L, "") for t in ins]
        contracts = any(ch not in out for t in terms for ch in t)
        if not contracts and _weighted_rows(s, ins, j, L, out):
            continue  # (np.einsum reads the view in place, one pass: see _weighted_rows)
        cheaper = _copy_cheaper(s.out.aval.size, e.out.aval.size, s.params["dims"][k][0]) \
            or _split_terms(s, ins[j], out, k) > MAX_OFFSETS \
            or contracts and _strided_terms(s, ins[j], out, k)
        if cheaper and not contracts:
            continue  # (outer products of the view: no copy to share)
        if cheaper or _rest_copied(s, e, k, ins[j], terms, out):
            # the windows copied once, contiguous, and contracted by one product
            perm = _copy_order(s, ins[j], out)
            cols = c.emit(P.relayout, (x,), {"perm": perm}, e.src)
            ins2 = [("".join(t[p] for p in perm) if i == j else t) for i, t in enumerate(ins)]
            return c.emit(P.einsum, tuple(cols if i == j else y for i, y in
                                          enumerate(e.inputs)),
                          {"spec": make_spec(ins2, out)}, e.src)
        order = _matmul_order(terms, out, j, _memory_letters(s, ins[j], k))
        spec = make_spec(terms, order)
        c.added_uses(s.inputs[0], s.params["dims"][k][0] - 1)
        total = None
        for a in range(s.params["dims"][k][0]):
            ops = [_offset(c, s, k, a) if i == j else
                   (_fix(c, y, ins[i], L, a, e.src) if L in ins[i] else y)
                   for i, y in enumerate(e.inputs)]
            term = c.emit(P.einsum, tuple(ops), {"spec": spec}, e.src)
            total = term if total is None else c.emit(P.add, (total, term), {}, e.src)
        if order != out:
            total = c.emit(P.transpose, (total,), {"perm": tuple(order.index(ch) for ch in out)},
                           e.src)
        return total
    return None


def _weighted_rows(s: Eqn, ins: list[str], j: int, L: str, out: str) -> bool:
    """Whether a product of the windows with per-window weights over the offsets (`a @
    V[t-r:t+r+1]` for every t: 'ai,aij->aj', the offsets i contracted, j kept) runs best
    as one np.einsum over the view: split per offset, each term is a scaled copy of a
    slice (a broadcast multiply-add of rows, no BLAS), k passes over the output; np.einsum
    reads each window row once, in runs of the row (71 against 104 us for 9 offsets of
    (992, 16); 115 against 1550 us at (1994, 7, 16)), or, where its windows are matrices
    BLAS takes as they are, the planner's matmul on the view (77 us at (1994, 7, 16):
    backends/numpy/viewplans.blas_view). Rows of RUN elements or more, of 1-D windows (a
    (positions, offsets, row) view), the weights varying along the positions (4 channels:
    the split 10% faster; 2-D windows of 8: 30% faster)."""
    dims = s.params["dims"]
    k = ins[j].index(L)
    rest = dims[:k] + dims[k + 1:]
    if len(ins) != 2 or L not in ins[1 - j] or len(dims) > 3 or \
            view_steps(s.inputs[0].aval.shape, list(s.params["start"]), list(rest)) is None:
        return False  # (2-D windows: np.einsum walks a 4- or 5-D view slowly; split)
    moves = {a for a, st in enumerate(dims[k][1]) if st}
    if not any(ch != L and ch in out and moves & {a for a, st in enumerate(dims[i][1]) if st}
               for i, ch in enumerate(ins[j]) if ch in ins[1 - j]):
        return False  # (weights per offset only, a filter: each term a scaled slice)
    steps = _flat_steps(s.inputs[0].aval.shape, dims)
    return any(st == 1 and n >= RUN for st, (n, _) in zip(steps, dims))


def _copy_order(s: Eqn, letters: str, out: str) -> tuple[int, ...]:
    """The axes of view s with its contracted ones (not in `out`) reordered among their own
    places from the largest step in memory to the least: the copy then writes each window as
    the runs it lies in, where the view's order may walk a tap innermost at a row's step (a
    1-D convolution's cotangent windows 'position, channel, tap': 3x slower to copy than
    'position, tap, channel'), and the product still reads them as one block."""
    steps = _flat_steps(s.inputs[0].aval.shape, s.params["dims"])
    places = [a for a, ch in enumerate(letters) if ch not in out]
    moved = iter(sorted(places, key=lambda a: -abs(steps[a])))
    return tuple(next(moved) if ch not in out else a for a, ch in enumerate(letters))


def _memory_letters(s: Eqn, letters: str, k: int) -> str:
    """The letters of view `s` but its axis k, from the largest step in memory to the least."""
    shape = s.inputs[0].aval.shape
    base = [math.prod(shape[a + 1:]) for a in range(len(shape))]
    step = {ch: (d[0] == 1, -abs(sum(st * b for st, b in zip(d[1], base))))
            for i, (ch, d) in enumerate(zip(letters, s.params["dims"])) if i != k}
    return "".join(sorted(step, key=step.__getitem__))


def _matmul_order(terms: list[str], out: str, j: int, x: str) -> str:
    """The output letters of the per-offset products in the order of the window operand j
    (its letters `x` in memory order), its contracted letters replaced by the other
    operands' output letters: the order a matmul of the view with a small filter writes
    (w @ x[b] for 'bca,fc': 'bfa'), which the offsets' sum and the cotangents then share.
    Its transpose into `out` meets the consumer's own (a stack along the last axis cancels
    it; elementwise work and sums move it along)."""
    if len(terms) != 2:
        return out
    if all(ch in out for ch in x):  # (no contraction: the view's order, the rest after)
        return x + "".join(ch for ch in out if ch not in x)
    other = "".join(ch for ch in out if ch not in x)
    order = ""
    for ch in x:
        if ch in out:
            order += ch
        elif other:
            order, other = order + other, ""
    return order + other


def _fixed(c: Ctx, a: object, k: int, i: int, nd: int, src: object) -> object:
    """Operand `a` of a product of rank nd with axis k fixed at i (kept where it broadcasts)."""
    ka = k - (nd - a.aval.ndim)
    if ka < 0:
        return a
    if a.aval.shape[ka] == 1:  # (a broadcast axis: dropped, which undoes a reshape)
        shape = a.aval.shape[:ka] + a.aval.shape[ka + 1:]
        return c.emit(P.reshape, (a,), {"shape": shape}, src)
    idx = tuple(i if j == ka else P.Sl(0, d, 1) for j, d in enumerate(a.aval.shape))
    return c.emit(P.getitem, (a,), {"idx": P.BasicIndex(idx)}, src)


def windows_added_product(e: Eqn, c: Ctx) -> object:
    """strided_add(base, a * b) over overlapping windows where a or b is the same for every
    window offset (`out[t:t+k] += x[t] * w`): one multiply-add into a slice per offset, never
    the (T, k, ...) product; for a 1-D base, one full correlation of the two factors."""
    base, v = e.inputs
    m = c.def_of(v, P.mul)
    start, dims = e.params["start"], e.params["dims"]
    shape = base.aval.shape
    if m is None or view_steps(shape, list(start), list(dims)) is not None or \
            v.aval.shape != tuple(n for n, _ in dims):
        return None
    nd = v.aval.ndim
    moves = [{a for a, st in enumerate(d[1]) if st} for d in dims]
    for k in sorted(range(nd), key=lambda k: dims[k][0]):
        rest = dims[:k] + dims[k + 1:]
        if not 1 < dims[k][0] <= MAX_OFFSETS or \
                not any(moves[k] & moves[j] for j in range(nd) if j != k) or \
                view_steps(shape, list(start), list(rest)) is None:
            continue
        big = max(m.inputs, key=lambda a: a.aval.size)
        kb = k - (nd - big.aval.ndim)
        if v.aval.size < 2 * big.aval.size or (kb >= 0 and big.aval.shape[kb] > 1):
            continue  # (no outer product to avoid, or its big factor varies along axis k)
        out = _correlated(c, e, m, k)
        if out is not None:
            return out
        for i in range(dims[k][0]):
            vi = c.emit(P.mul, tuple(_fixed(c, a, k, i, nd, e.src) for a in m.inputs), {},
                        e.src)
            st = tuple(s0 + i * d for s0, d in zip(start, dims[k][1]))
            base = c.emit(P.strided_add, (base, vi), {"start": st, "dims": rest}, e.src)
        return base
    return None


def windows_add_loops_first(e: Eqn, c: Ctx) -> object:
    """strided_add(base, einsum(...)) over overlapping windows (the gradient of a contraction
    of windows copied once): the add runs one pass per window offset, each reading v at that
    offset, so the product writes the offset axes first and every pass reads one contiguous
    block of v instead of every k-th element (a 3x3 filter bank's image cotangent: 90 -> 15 us)."""
    base, v = e.inputs
    s = c.def_of(v, P.einsum)
    dims = e.params["dims"]
    if s is None or c.n_uses(v) != 1 or v.aval.shape != tuple(n for n, _ in dims):
        return None
    loops = added_loops(base.aval.shape, dims)
    if not loops or loops == list(range(len(loops))):
        return None
    order = loops + [k for k in range(len(dims)) if k not in loops]
    new_dims = tuple(dims[k] for k in order)
    if added_loops(base.aval.shape, new_dims) != list(range(len(loops))):
        return None  # (the add would loop over other axes once reordered)
    ins, out = parse_spec(s.params["spec"])
    w = c.emit(P.einsum, s.inputs, {"spec": make_spec(ins, "".join(out[k] for k in order))},
               e.src)
    return P.strided_add, (base, w), {"start": e.params["start"], "dims": new_dims}

def _correlated(c: Ctx, e: Eqn, m: Eqn, k: int) -> object:
    """out[t + i] += x[t] w[i] on a 1-D real base: one full correlation of x with w reversed,
    added into the slice it covers."""
    base, dims = e.inputs[0], e.params["dims"]
    if base.aval.ndim != 1 or len(dims) != 2 or len(m.inputs) != 2 or \
            e.out.aval.dtype.kind != "f" or any(st != (1,) for _, st in dims):
        return None
    (n, _), (kk, _) = dims
    x = next((a for a in m.inputs if a.aval.shape == (n, 1)), None)
    w = next((a for a in m.inputs if a is not x and a.aval.shape in ((kk,), (1, kk))), None)
    if x is None or w is None or x.aval.dtype.kind != "f" or w.aval.dtype.kind != "f":
        return None
    x = c.emit(P.reshape, (x,), {"shape": (n,)}, e.src)
    if w.aval.ndim == 2:
        w = c.emit(P.reshape, (w,), {"shape": (kk,)}, e.src)
    full = c.emit(P.correlate, (x, _flip(c, w, e.src)), {"mode": "full"}, e.src)
    return c.emit(P.strided_add, (base, full),
                  {"start": e.params["start"], "dims": ((n + kk - 1, (1,)),)}, e.src)


def elementwise_of_windows(e: Eqn, c: Ctx) -> object:
    """f(windows(x), scalars) = windows(f(x, scalars)) where the windows overlap (so read each
    element more than once): f then runs once per element of x, not once per window entry
    (`exp(x[t:t+k])` for every t). Several operands that are the same windows of arrays of one
    shape go together (`x[t:t+k] * y[t:t+k]`)."""
    views = [c.def_of(a, P.strided) if a.aval.ndim else None for a in e.inputs]
    s = next((v for v in views if v is not None), None)
    if s is None or any(v is None and a.aval.ndim for v, a in zip(views, e.inputs)):
        return None
    base = s.inputs[0].aval
    if any(v is not None and (v.params != s.params or v.inputs[0].aval.shape != base.shape)
           for v in views) or s.out.aval.size <= base.size or \
            e.out.aval.shape != s.out.aval.shape:
        return None
    ins = tuple(v.inputs[0] if v is not None else a for v, a in zip(views, e.inputs))
    y = c.emit(e.prim, ins, e.params, e.src)
    return c.emit(P.strided, (y,), s.params, e.src)


def sum_of_windows(e: Eqn, c: Ctx) -> object:
    s = c.def_of(e.inputs[0], P.strided)
    if s is None:
        return None
    axes = e.params["axes"]
    letters = "".join(chr(97 + i) for i in range(e.inputs[0].aval.ndim))
    out = "".join(ch for i, ch in enumerate(letters) if i not in axes)
    return einsum_of_windows(Eqn(P.einsum, e.inputs, {"spec": letters + "->" + out}, e.out,
                                 e.src), c)


def reduce_of_view_rows(e: Eqn, c: Ctx) -> object:
    """reduce(windows(x), axes), each reduced axis running along a whole axis of x that no
    other axis of the view moves along (the channels of windows of rows: `np.sum(W * W,
    axis=1)` for each window W = x[t-k:t]) = windows(reduce(x, those axes of x)): each element
    reduced once, not once per window holding it; the cotangent then goes back through k
    windows of a column, not of the rows ((1995, 5, 16) windows of (2000, 16): a sum of 160k
    elements and a broadcast add of as many, against one of 32k)."""
    s = c.def_of(e.inputs[0], P.strided)
    if s is None:
        return None
    shape, start, dims = s.inputs[0].aval.shape, s.params["start"], s.params["dims"]
    if not _overlaps(shape, dims):
        return None
    base = []
    for k in e.params["axes"]:
        n, st = dims[k]
        moved = [a for a, v in enumerate(st) if v]
        if len(moved) != 1 or st[moved[0]] != 1 or start[moved[0]] or n != shape[moved[0]] or \
                any(d[1][moved[0]] for j, d in enumerate(dims) if j != k and d[0] > 1):
            return None
        base.append(moved[0])
    if not base:
        return None
    r = c.emit(e.prim, (s.inputs[0],), {**e.params, "axes": tuple(sorted(base))}, e.src)
    keep = [a for a in range(len(shape)) if a not in base]
    return P.strided, (r,), {"start": tuple(start[a] for a in keep), "dims": tuple(
        (n, tuple(st[a] for a in keep)) for j, (n, st) in enumerate(dims)
        if j not in e.params["axes"])}


__all__ = ["correlate_of_flat_windows", "correlate_of_windows", "einsum_of_windows",
           "elementwise_of_windows", "reduce_of_view_rows", "strided_is_basic",
           "sum_of_windows", "windows_add_loops_first", "windows_added_product"]
