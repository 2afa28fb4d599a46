"""A sum of one array's columns, each scaled by a scalar, is one contraction.

An inner loop over a row's few columns (`s = s + X[i, j] * w[j % 4]` for j in range(5)),
batched over the rows, gives one term per coefficient: `X[:, j] * w[k_j]`, or for the columns
that share a coefficient, a strided pair `X[:, 0:5:4] * w[0]` summed over its columns. Each
term is a pass over a column and the adds are passes over the result; the gradient then
writes X's cotangent column by column into zeros, and w's as one dot product per entry. The
sum is one matrix-vector product with the coefficients gathered into a vector:

    sum_j B[.., j, ..] * c[k_j] = einsum(B[.., J, ..], c[K])     (J the columns, K their entries)

whose gradient is one outer product and one matrix-vector product. The same holds for
constant coefficients (a Python list of floats). Exact up to the order of the additions (a
dot product's rounding, as the hand-vectorized `X @ w[K]`).
"""
from __future__ import annotations

import string
from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Const, Eqn
from ..primitives.linalg import make_spec, parse_spec
from .addchain import _terms


def _coefficient(s: Any, ctx: Any) -> tuple[Any, Any] | None:
    """A scalar coefficient as (source, entry): (None, value) for a constant, (c, k) for
    c[k] of a vector c."""
    if s.aval.ndim != 0 or s.aval.dtype.kind != "f":
        return None
    if isinstance(s, Const):
        return None, float(s.value)
    g = ctx.def_of(s, P.getitem)
    if g is None or g.inputs[0].aval.ndim != 1 or len(g.params["idx"]) != 1 or \
            type(g.params["idx"][0]) is not int:
        return None
    return g.inputs[0], g.params["idx"][0]


def _scaled(t: Any, ctx: Any) -> tuple[Any, Any] | None:
    """t = x * s, s a scalar: (x, s), seeing through a reshape of x and back that batching
    puts around a flattened product."""
    back = ctx.def_of(t, P.reshape)
    m = ctx.def_of(back.inputs[0] if back is not None else t, P.mul)
    if m is None or len(m.inputs) != 2:
        return None
    x, s = m.inputs if m.inputs[1].aval.ndim == 0 else m.inputs[::-1]
    if s.aval.ndim != 0 or x.aval.ndim == 0:
        return None
    if back is not None:
        fwd = ctx.def_of(x, P.reshape)
        if fwd is None or fwd.inputs[0].aval.shape != t.aval.shape:
            return None
        x = fwd.inputs[0]
    return x, s


def _scaled_sum(t: Any, ctx: Any) -> tuple[tuple[Any, Any], int] | None:
    """t = sum(x * s, axis) (a reduce_sum, or the einsum('ab,->a') it becomes), s a scalar:
    ((x, s), axis)."""
    r = ctx.def_of(t, P.reduce_sum)
    if r is not None:
        sc = _scaled(r.inputs[0], ctx)
        return (sc, r.params["axes"][0]) if sc is not None and len(r.params["axes"]) == 1 \
            else None
    c = ctx.def_of(t, P.einsum)
    if c is None or len(c.inputs) != 2 or c.inputs[1].aval.ndim != 0:
        return None
    (sx, ss), out = parse_spec(c.params["spec"])
    lost = [a for a, ch in enumerate(sx) if ch not in out]
    if ss or len(set(sx)) != len(sx) or len(lost) != 1 or \
            out != "".join(ch for ch in sx if ch in out):
        return None
    return (c.inputs[0], c.inputs[1]), lost[0]


def _columns(v: Any, ctx: Any, keep_axis: bool) -> tuple[Any, int, list[int]] | None:
    """v = B[:, .., j, .., :] (an int at one axis, keep_axis False) or B[:, .., a:b:s, .., :]
    (a slice, keep_axis True): (B, that axis, the columns read)."""
    g = ctx.def_of(v, P.getitem)
    if g is None:
        return None
    b, idx = g.inputs[0], g.params["idx"]
    if len(idx) != b.aval.ndim:
        return None
    ax, cols = None, None
    for a, (k, d) in enumerate(zip(idx, b.aval.shape)):
        if isinstance(k, P.Sl) and k == (0, d, 1):
            continue
        if ax is not None:
            return None
        if keep_axis and isinstance(k, P.Sl) and len(k) > 0:
            ax, cols = a, list(range(k.start, k.stop, k.step))
        elif not keep_axis and type(k) is int:
            ax, cols = a, [k]
        else:
            return None
    return (b, ax, cols) if ax is not None else None


def _column_form(t: Any, ctx: Any) -> tuple[Any, int, list[int], Any, list] | None:
    """A term as (B, axis, columns, coefficient source, entries): B's columns along the axis,
    each scaled by a scalar (a constant, or an entry of a vector)."""
    if ctx.n_uses(t) != 1:
        return None
    summed = _scaled_sum(t, ctx)
    if summed is not None:  # sum over a slice of columns, all scaled by one coefficient
        sc, axis = summed
        cols = _columns(sc[0], ctx, keep_axis=True)
        if cols is None or cols[1] != axis:
            return None
        n = len(cols[2])
    else:
        sc = _scaled(t, ctx)
        cols = _columns(sc[0], ctx, keep_axis=False) if sc is not None else None
        n = 1
    if cols is None or sc is None:
        return None
    co = _coefficient(sc[1], ctx)
    if co is None:
        return None
    return cols[0], cols[1], cols[2], co[0], [co[1]] * n


def _vector(src: Any, entries: list, dtype: Any, ctx: Any, e: Eqn) -> Any:
    """The coefficients as one vector: a constant, src itself, a slice of src or a gather."""
    if src is None:
        return Const(np.asarray(entries, dtype))
    ks = np.asarray(entries)
    n = src.aval.shape[0]
    if len(ks) == n and np.array_equal(ks, np.arange(n)):
        return src
    d = np.diff(ks)
    if len(ks) > 1 and d[0] > 0 and np.all(d == d[0]):
        sl = P.Sl(int(ks[0]), int(ks[-1]) + 1, int(d[0]))
        return ctx.emit(P.getitem, (src,), {"idx": P.BasicIndex((sl,))}, e.src)
    return ctx.emit(P.getitem, (src,), {"idx": (P.Adv(ks),)}, e.src)


def columns_as_contraction(e: Eqn, ctx: Any) -> Any:
    """sum_j B[.., j, ..] * c[k_j] = einsum(B[.., J, ..], c[K]): terms reading distinct
    columns of one array along one axis, scaled by entries of one vector (or constants),
    become one contraction (see the module's note). Other terms of the chain stay."""
    if e.out.aval.dtype.kind != "f" or e.out.aval.ndim == 0:
        return None
    rd = ctx.reader(e.out)
    if rd is not None and rd.prim is P.add and rd.out.aval.shape == e.out.aval.shape:
        return None  # (not the chain's last add: its reader gathers the whole chain)
    terms = _terms(e, ctx)
    groups: dict[tuple, list[tuple[int, tuple]]] = {}
    for i, t in enumerate(terms):
        f = _column_form(t, ctx) if t.aval.shape == e.out.aval.shape else None
        if f is not None and f[0].aval.dtype == e.out.aval.dtype:
            key = (f[0], f[1], f[3] if f[3] is not None else "const")
            groups.setdefault(key, []).append((i, f))
    done: dict[int, Any] = {}
    for (b, ax, _), fs in groups.items():
        cols = [c for _, f in fs for c in f[2]]
        if len(fs) < 2 or len(set(cols)) != len(cols):
            continue
        order = np.argsort(cols, kind="stable")
        cols_s = [cols[j] for j in order]
        entries = [k for _, f in fs for k in f[4]]
        vec = _vector(fs[0][1][3], [entries[j] for j in order], e.out.aval.dtype, ctx, e)
        d, n = np.diff(cols_s), b.aval.shape[ax]
        if cols_s == list(range(n)):
            src = b
        elif len(cols_s) > 1 and np.all(d == d[0]):
            idx = [P.Sl(0, m, 1) for m in b.aval.shape]
            idx[ax] = P.Sl(cols_s[0], cols_s[-1] + 1, int(d[0]))
            src = ctx.emit(P.getitem, (b,), {"idx": P.BasicIndex(tuple(idx))}, e.src)
        else:
            continue  # (columns at uneven positions: a gather of B would copy it)
        letters = string.ascii_letters[:b.aval.ndim]
        out = letters[:ax] + letters[ax + 1:]
        done[fs[0][0]] = ctx.emit(P.einsum, (src, vec),
                                  {"spec": make_spec([letters, letters[ax]], out)}, e.src)
        done.update({i: None for i, _ in fs[1:]})
    if not done:
        return None
    total = None
    for i, t in enumerate(terms):
        t = done.get(i, t)
        if t is not None:
            total = t if total is None else ctx.emit(P.add, (total, t), {}, e.src)
    return total if total.aval == e.out.aval else None


__all__ = ["columns_as_contraction"]
