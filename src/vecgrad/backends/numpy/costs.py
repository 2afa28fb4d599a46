"""The cost model of the NumPy kernels that planners choose between (see vecgrad.kernels).

Each estimate adds up what a candidate does, in the units of a `kernels.Machine`: NumPy calls,
bytes copied (contiguous, transposing or tiled), BLAS multiply-adds (with the inefficiency of
small matrices) and multiply-adds of NumPy's einsum loop (fast when one axis is innermost in
every operand that has it, strided otherwise). (NumPy's matmul copies operands BLAS cannot
take itself, so a strided view costs about what a copy does.) A result that is not C-contiguous is charged
the copy that makes it so: its consumers pay at least that in strided reads. Operands are
taken to be C-contiguous.
"""
from __future__ import annotations

import math

import numpy as np

from ...kernels import Machine

Shapes = list[tuple[int, ...]]


def _split(spec: str) -> tuple[list[str], str]:
    ins, out = spec.split("->")
    return ins.split(","), out


def _dims(terms: list[str], shapes: Shapes) -> dict[str, int]:
    return {c: d for t, sh in zip(terms, shapes) for c, d in zip(t, sh)}


def _size(letters: str, dims: dict[str, int]) -> int:
    return math.prod(dims[c] for c in letters)


def _strided(shape: tuple[int, ...], itemsize: int) -> np.ndarray:
    """A data-less C-contiguous stand-in of this shape (for asking NumPy about views)."""
    strides, step = [], itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return np.lib.stride_tricks.as_strided(np.empty(1, np.uint8), shape, strides[::-1])


def _copied(shape: tuple[int, ...], perm: list[int], new: tuple[int, ...],
            itemsize: int) -> bool:
    """Whether `x.transpose(perm).reshape(new)` (3-D: a stack of matrices) is copied before
    or inside NumPy's matmul, for a C-contiguous x: the reshape cannot be a view, or its
    matrices are not BLAS-ready (one axis of unit stride), which matmul copies itself."""
    try:
        v = np.reshape(_strided(shape, itemsize).transpose(perm), new, copy=False)
    except (ValueError, TypeError):
        return True
    (r, c), (sr, sc) = v.shape[-2:], v.strides[-2:]
    return not (sc == itemsize and (r == 1 or sr >= c * itemsize) or
                sr == itemsize and (c == 1 or sc >= r * itemsize))


def _run(shape: tuple[int, ...], perm: list[int] | tuple[int, ...], itemsize: int) -> int:
    """Bytes a copy of `x.transpose(perm)` moves in one contiguous run: the trailing axes
    the permutation keeps in place."""
    run = itemsize
    for k in range(len(perm) - 1, -1, -1):
        if perm[k] != k:
            break
        run *= shape[k]
    return run


def in_order(s: str, lead: str, first: str, second: str) -> bool:
    """Whether operand letters `s` hold `lead`, then `first`, then `second` in memory order
    while `lead + second + first` (the matmul's order) is not."""
    order = lambda t: [s.index(c) for c in t]
    swapped, plain = order(lead + first + second), order(lead + second + first)
    return bool(first and second) and swapped == sorted(swapped) and plain != sorted(plain)

def transposed(m: Machine, shape: tuple[int, ...], perm: tuple[int, ...], itemsize: int,
               tiled: bool = False) -> float:
    """`np.ascontiguousarray(x.transpose(perm))` (or transpose.transpose_copy, `tiled`)."""
    tiles = tiled and tile_count(shape, perm, itemsize) > 0
    return transposing_copy(m, math.prod(shape) * itemsize, tiles, _run(shape, perm, itemsize))


def gemm(m: Machine, b: int, rows: int, inner: int, cols: int, itemsize: int) -> float:
    """A batched matmul (b, rows, inner) @ (b, inner, cols): per-matrix overhead, then BLAS
    multiply-adds slowed down on small matrices (a unit axis makes it a matrix-vector or dot
    kernel, not a slow matrix), or the bytes it reads and writes if that takes longer (a copy
    reads and writes each byte: streaming reads alone cost about a third)."""
    rate = m.gemm32 if itemsize == 4 else m.gemm64
    small = 1.0
    for d in (rows, cols, inner):
        if d > 1:
            small *= 1 + 2 / d
    madds = b * rows * inner * cols
    read = b * (rows * inner + inner * cols) * itemsize
    written = b * rows * cols * itemsize
    return m.call + b * m.matrix + max(madds * rate * small, (read / 3 + written) * m.copy)


def einsum_loop(m: Machine, spec: str, shapes: Shapes, itemsize: int) -> float:
    """NumPy's einsum loop: every multiply-add, fast when some letter is the innermost axis
    of every input holding it (its iterator orders the axes so), plus a setup per inner
    loop."""
    terms, _ = _split(spec)
    dims = _dims(terms, shapes)
    madds = _size("".join(dims), dims)
    good = [c for c in dims if all(t.endswith(c) for t in terms if c in t)]
    inner = max((dims[c] for c in good), default=dims[terms[0][-1]] if terms[0] else 1)
    per = m.loop if good else m.loop_strided
    return m.call + madds * per + madds / max(inner, 1) * m.inner


def transposing_copy(m: Machine, nbytes: int, tiled: bool = False, run: int = 0) -> float:
    """A copy into another axis order: strided reads cost `transpose` per byte, a tiled copy
    `tiled`; runs of 32 bytes or more (trailing axes kept in place) stream at about twice
    the plain copy's cost."""
    if run >= 32:
        return m.call + nbytes * 2 * m.copy
    return m.call + nbytes * (m.tiled if tiled else m.transpose)


def matmul_plan(m: Machine, spec: str, shapes: Shapes, itemsize: int,
                tiled_out: bool = False) -> float:
    """primitives.linalg._plan_matmul: operands moved to (batch, free, contracted) order (a
    copy where a reshape cannot be a view), one batched matmul, the result transposed into
    the output's order (charged as a copy, tiled with `tiled_out`)."""
    (a, b), out = _split(spec)
    dims = _dims([a, b], shapes)
    sum_a = "".join(c for c in a if c not in b and c not in out)
    sum_b = "".join(c for c in b if c not in a and c not in out)
    batch = "".join(c for c in out if c in a and c in b)
    contr = "".join(c for c in a if c in b and c not in out)
    fa = "".join(c for c in a if c in out and c not in b)
    fb = "".join(c for c in b if c in out and c not in a)
    n_out = _size(out, dims)
    if not contr:  # a broadcasting multiply, with sums of one-operand letters first
        cost = 4 * m.call + 3 * n_out * itemsize * m.copy
        return cost + sum(_size(t, dims) * itemsize * m.copy for t, s in ((a, sum_a), (b, sum_b))
                          if s)
    if out == batch + fb + fa and out != batch + fa + fb:  # planned with the operands swapped
        return matmul_plan(m, f"{b},{a}->{out}", shapes[::-1], itemsize, tiled_out)
    cost = 3 * m.call
    ga = (contr, fa) if in_order(a, sum_a + batch, contr, fa) else (fa, contr)
    gb = (fb, contr) if in_order(b, sum_b + batch, fb, contr) else (contr, fb)
    for term, shape, summed, groups in ((a, shapes[0], sum_a, (batch, *ga)),
                                        (b, shapes[1], sum_b, (batch, *gb))):
        perm = [term.index(c) for c in summed + "".join(groups)]
        nbytes = _size(term, dims) * itemsize
        if summed:
            cost += m.call + nbytes * m.copy
        elif _copied(shape, perm, tuple(_size(g, dims) for g in groups), itemsize):
            cost += transposing_copy(m, nbytes, run=_run(shape, perm, itemsize))
    cost += gemm(m, _size(batch, dims), _size(fa, dims), _size(contr, dims), _size(fb, dims),
                 itemsize)
    res = batch + fa + fb
    if res != out:  # the result transposed into the output's order (a view, copied later)
        cost += transposed(m, tuple(dims[c] for c in res), tuple(res.index(c) for c in out),
                           itemsize, tiled_out)
    return cost


def matmul_in_place(m: Machine, spec: str, shapes: Shapes, itemsize: int) -> float:
    """The matmul plan on operands it hands to BLAS as they are (no copy, no transpose):
    its batched matmul and the calls around it."""
    (a, b), out = _split(spec)
    dims = _dims([a, b], shapes)
    batch = "".join(c for c in out if c in a and c in b)
    contr = "".join(c for c in a if c in b and c not in out)
    fa = "".join(c for c in a if c in out and c not in b)
    fb = "".join(c for c in b if c in out and c not in a)
    return 3 * m.call + gemm(m, _size(batch, dims), _size(fa, dims), _size(contr, dims),
                             _size(fb, dims), itemsize)


def tile_rows(row_bytes: int) -> int:
    """transpose.transpose_copy's rows per tile of about 32 KiB, rounded up to a power of two, 8 to 128."""
    return min(128, max(8, 1 << max(0, math.ceil(math.log2(32768 / row_bytes)))))


def tile_count(shape: tuple[int, ...], perm: tuple[int, ...], itemsize: int) -> int:
    """How many tiles transpose.transpose_copy cuts a C-contiguous array into (0: it copies plainly)."""
    n, size = len(shape), math.prod(shape)
    if size < 1 << 15 or n < 2:
        return 0
    if perm[-1] == 0:
        rows = shape[0]
        tile = tile_rows(size // rows * itemsize)
    elif tuple(perm) == (n - 1,) + tuple(range(n - 1)):
        rows = size // shape[-1]
        tile = tile_rows(shape[-1] * itemsize)
    else:
        return 0
    return -(-rows // tile) if tile < rows else 0


def broadcast_lead(a: str, b: str, out: str) -> tuple | None:
    """The letters of a matmul that broadcasts the smaller operand over the leading free
    letters of the other ('bca,fc->abf' as w @ x[b] for every b: (b, f, a), no copy of x):
    (which operand leads, lead, its matrix groups in memory order, the other's, the result's
    letters), or None. Only without batch or summed-alone letters."""
    for k, (x, y) in enumerate(((a, b), (b, a))):
        contr = "".join(c for c in x if c in y)
        if not contr or any(c in out for c in contr) or \
                any(c not in out for c in x + y if c not in contr) or \
                "".join(c for c in y if c in contr) != contr:
            continue
        lead = ""
        for c in x:
            if c in contr:
                break
            lead += c
        tail = x[len(lead):]
        free = "".join(c for c in tail if c not in contr)
        if not lead or not free or tail not in (contr + free, free + contr):
            continue
        fy = "".join(c for c in y if c not in contr)
        if y not in (contr + fy, fy + contr):
            continue
        res = lead + (fy + free if tail.startswith(contr) else free + fy)
        return k, lead, (tail[:len(contr)], tail[len(contr):]) if tail.startswith(contr) \
            else (free, contr), y, fy, contr, res
    return None


def batched_broadcast(a: str, b: str, out: str) -> tuple | None:
    """The letters of np.matmul(X, Y) broadcasting over shared batch letters, where each
    operand is its leading letters then two groups, one contracted: a grouped convolution's
    taps 'bdce,doc->bdoe' as W (d, o, c) @ x (b, d, c, e) -> (b, d, o, e), without moving x's
    batch letter d first (the matmul plan's copy) and with BLAS per block (NumPy's einsum loop
    has none). (X's operand index, lead P, X's (M, K) in memory order, Y's (K, N) likewise,
    M, N, the result's letters), or None. Only with a batch letter (broadcast_lead covers
    the rest) and without summed-alone letters."""
    contr = "".join(c for c in a if c in b and c not in out)
    if not contr or any(c not in out and c not in contr for c in a + b):
        return None
    for k, (x, y) in enumerate(((a, b), (b, a))):
        for gx, px in _matrix_tails(x, contr, out):
            for gy, py in _matrix_tails(y, contr, out):
                mx, ny = gx[0] if gx[1] == contr else gx[1], gy[0] if gy[1] == contr else gy[1]
                lead = out[:len(out) - len(mx) - len(ny)]
                if out[len(lead):] == mx + ny and set(px) & set(py) and \
                        not set(mx) & set(y) and not set(ny) & set(x) and \
                        set(px) | set(py) == set(lead) and \
                        "".join(c for c in lead if c in px) == px and \
                        "".join(c for c in lead if c in py) == py:
                    return k, lead, gx, gy, mx, ny, lead + mx + ny
    return None


def _matrix_tails(t: str, contr: str, out: str) -> list[tuple[tuple[str, str], str]]:
    """The ways `t` ends in two groups, the contracted letters and a run of output letters
    (in memory order), with what leads them."""
    found = []
    for n in range(1, len(t) - len(contr) + 1):
        for g in ((t[-n - len(contr):-len(contr)], contr), (contr, t[-n:])):
            if "".join(g) == t[len(t) - n - len(contr):] and all(c in out for c in g[0] + g[1]
                                                                  if c not in contr):
                found.append((g, t[:len(t) - n - len(contr)]))
    return found


def einsum_plan(name: str, spec: str, shapes: Shapes, dtypes: list[np.dtype],
                m: Machine) -> float:
    """The modelled seconds of one of `linalg._candidates`' plans."""
    item = max(d.itemsize for d in dtypes)
    (a, b), out = _split(spec)
    if name == "mm":
        return matmul_plan(m, spec, shapes, item)
    if name == "mm_c":  # (contiguous() looks at the strides in Python first)
        return matmul_plan(m, spec, shapes, item, tiled_out=True) + 6 * m.call
    if name == "loop":
        return einsum_loop(m, spec, shapes, item)
    if name == "blas":  # tensordot without batch letters, else the loop; path overhead
        batch = any(c in b and c in out for c in a)
        return 8 * m.call + (einsum_loop(m, spec, shapes, item) if batch
                             else matmul_plan(m, spec, shapes, item))
    if name == "lead":  # a matmul keeping the leading contracted letters, then their sum
        dims = _dims([a, b], shapes)
        lead = ""
        for x, y in zip(a, b):
            if x != y or x in out:
                break
            lead += x
        mid = lead + "".join(c for c in out if c in a or c in b)
        return matmul_plan(m, f"{a},{b}->{mid}", shapes, item) + m.call + \
            _size(mid, dims) * item * m.copy
    if name == "aligned":  # the smaller operand copied into the output's order, then the loop
        small = 0 if math.prod(shapes[0]) <= math.prod(shapes[1]) else 1
        s = (a, b)[small]
        order = sorted(s, key=lambda c: (c in out, out.index(c) if c in out else s.index(c)))
        terms = ["".join(order) if i == small else t for i, t in enumerate((a, b))]
        new = [tuple(shapes[small][s.index(c)] for c in order) if i == small else shapes[i]
               for i in range(2)]
        perm = tuple(s.index(c) for c in order)
        return transposed(m, shapes[small], perm, item) + \
            einsum_loop(m, ",".join(terms) + "->" + out, new, item)
    if name == "bcast":  # the smaller operand broadcast over the other's leading free letters
        k, lead, (g1, g2), y, fy, contr, res = broadcast_lead(a, b, out)
        dims = _dims([a, b], shapes)
        x = (a, b)[k]
        cost = 3 * m.call
        if _copied(shapes[k], list(range(len(x))), tuple(dims[c] for c in lead) +
                   (_size(g1, dims), _size(g2, dims)), item):
            cost += _size(x, dims) * item * m.copy
        rows, cols = (_size(fy, dims), _size(g2, dims)) if g1 == contr else \
            (_size(g1, dims), _size(fy, dims))
        cost += gemm(m, _size(lead, dims), rows, _size(contr, dims), cols, item)
        if res != out:
            cost += transposed(m, tuple(dims[c] for c in res), tuple(res.index(c) for c in out),
                               item)
        return cost
    if name == "bmm":  # np.matmul broadcasting over the batch letters
        k, lead, gx, gy, mx, ny, res = batched_broadcast(a, b, out)
        dims = _dims([a, b], shapes)
        cost = 3 * m.call
        for t, sh, g in (((a, b)[k], shapes[k], gx), ((a, b)[1 - k], shapes[1 - k], gy)):
            if any(len(x) > 1 for x in g) and _copied(
                    sh, list(range(len(t))), tuple(dims[c] for c in t[:len(t) - len(g[0]) -
                                                                     len(g[1])]) +
                    (_size(g[0], dims), _size(g[1], dims)), item):
                cost += _size(t, dims) * item * m.copy
        contr = "".join(c for c in a if c in b and c not in out)
        cost += gemm(m, _size(lead, dims), _size(mx, dims), _size(contr, dims), _size(ny, dims),
                     item)
        if res != out:
            cost += transposed(m, tuple(dims[c] for c in res), tuple(res.index(c) for c in out),
                               item)
        return cost
    raise ValueError(f"no cost model for the einsum plan {name!r}")
