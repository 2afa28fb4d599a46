"""Contractions of `vecgrad.numpy`: einsum (string and sublist forms), matmul, dot, tensordot,
inner and outer, all lowered to the one einsum primitive."""
from __future__ import annotations

import builtins
import functools
from typing import Any

import numpy as _np

from .. import primitives as P
from ..errors import NotWritable, ShapeError
from ..tracing import Tracer, as_view
from ._base import _dtype, _shape, asarray, astype, takes_out
from ._ops import _axis, _int, _ints, broadcast_to, multiply, ravel, reshape, transpose

__all__ = ["dot", "einsum", "inner", "matmul", "outer", "tensordot"]


# ---------------------------------------------------------------------------- contractions

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@takes_out
def einsum(*operands: Any, out: Any = None, optimize: Any = None) -> Any:
    """Einstein summation: `einsum('ij,jk->ik', a, b)` (explicit or implicit output, `...`
    supported) or NumPy's sublist form `einsum(a, [0, 1], b, [1, 2], [0, 2])`. `optimize`
    is accepted and ignored (vecgrad plans contractions itself)."""
    if not operands:
        raise TypeError("einsum() needs at least the subscripts")
    subscripts, operands = (operands[0], operands[1:]) if isinstance(operands[0], str) else \
        _sublist_spec(operands)
    ops = [asarray(o) for o in operands]
    if len({_dtype(o) for o in ops}) > 1:  # NumPy casts every operand to their common type
        dt = _np.result_type(*[_dtype(o) for o in ops])  # first (no float32 partial product)
        ops = [o if _dtype(o) == dt else astype(o, dt) for o in ops]
    spec = _normalize_spec(subscripts.replace(" ", ""), tuple(len(_shape(o)) for o in ops))
    ops, spec = _broadcast_labels(ops, spec)
    ins, out = P.parse_spec(spec)
    if len(ins) == 1 and set(ins[0]) == set(out):
        return _single_view(ops[0], ins[0], out, spec)
    return P.einsum(*ops, spec=spec)


def _single_view(x: Any, sub: str, out: str, spec: str) -> Any:
    """One operand and no summed label: NumPy returns a view (a transpose, or a diagonal
    where a label repeats), so later writes into `x` show through it."""
    if sub == out:
        return x
    if len(set(sub)) == len(sub):
        return transpose(x, tuple(sub.index(c) for c in out))
    y = P.einsum(x, spec=spec)
    return as_view(y, x, P.einsum, {"spec": spec}, readonly=NotWritable(
        "the diagonal view returned by einsum with a repeated subscript"))


def _broadcast_labels(ops: list, spec: str) -> tuple[list, str]:
    """NumPy broadcasts an axis of size 1 against the same label's size in other operands
    ('mnd,mdo->mno' with m of sizes 1 and 20). Such an axis is dropped from its operand (a
    sum or an outer product over the label then comes from the other operands alone, which
    is the same number); one whose label repeats in its operand (a diagonal) is broadcast."""
    ins, out = P.parse_spec(spec)
    size: dict[str, int] = {}
    for t, o in zip(ins, ops):
        for c, d in zip(t, _shape(o)):
            if d != 1 and size.setdefault(c, d) != d:
                raise ShapeError(f"einsum '{spec}': operands could not be broadcast "
                                 f"together: axis '{c}' has sizes {size[c]} and {d} "
                                 f"(shapes {[_shape(x) for x in ops]})")
    if builtins.all(size.get(c, 1) == d for t, o in zip(ins, ops)
                    for c, d in zip(t, _shape(o))):
        return ops, spec
    new_ops, new_ins = [], []
    for t, o in zip(ins, ops):
        sh = _shape(o)
        stretch = [k for k, (c, d) in enumerate(zip(t, sh)) if d == 1 and size.get(c, 1) != 1]
        if stretch and builtins.any(t.count(t[k]) > 1 for k in stretch):
            o = broadcast_to(o, tuple(size.get(c, 1) for c in t))
        elif stretch:
            keep = [k for k in range(len(t)) if k not in stretch]
            o = reshape(o, tuple(sh[k] for k in keep))
            t = "".join(t[k] for k in keep)
        new_ops.append(o)
        new_ins.append(t)
    return new_ops, P.make_spec(new_ins, out)


def _sublist_spec(args: tuple) -> tuple[str, tuple]:
    """NumPy's sublist form (op, sublist, op, sublist, ..., [output sublist]) as a
    subscripts string and the operands."""
    out = args[-1] if len(args) % 2 else None
    ops, subs = args[0:len(args) - len(args) % 2:2], args[1::2][:len(args) // 2]

    def letters(sub: Any) -> str:
        if not isinstance(sub, (list, tuple)):
            raise TypeError(f"einsum sublist form: expected a list of axis labels, got "
                            f"{type(sub).__name__}")
        s = ""
        for k in sub:
            if k is Ellipsis:
                s += "..."
                continue
            k = _int(k, "an einsum axis label")
            if not 0 <= k < len(_LETTERS):
                raise ValueError(f"einsum sublist labels must be in [0, {len(_LETTERS)}), "
                                 f"got {k}")
            s += _LETTERS[k]
        return s
    spec = ",".join(letters(t) for t in subs)
    return (spec if out is None else spec + "->" + letters(out)), ops


@functools.lru_cache(maxsize=4096)
def _normalize_spec(spec: str, ranks: tuple[int, ...]) -> str:
    ins, arrow, out = spec.partition("->")
    terms = ins.split(",")
    if len(terms) != len(ranks):
        raise ShapeError(f"einsum '{spec}' names {len(terms)} operands, {len(ranks)} given")
    if "..." in spec:
        free = [c for c in _LETTERS if c not in spec]
        nell = builtins.max(r - len(t.replace("...", "")) for t, r in zip(terms, ranks))
        ell = "".join(free[:nell])
        terms = [t.replace("...", ell[nell - (r - len(t.replace("...", ""))):])
                 for t, r in zip(terms, ranks)]
        out = out.replace("...", ell) if arrow else None
    else:
        ell = ""
    if not arrow or out is None:
        counts: dict[str, int] = {}
        for c in "".join(terms):
            counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    return ",".join(terms) + "->" + out


@takes_out
def matmul(a: Any, b: Any, out: Any = None) -> Any:
    """Matrix product with NumPy's rules for 1-D operands and broadcast batch axes."""
    if a.__class__ is not Tracer or b.__class__ is not Tracer or not a.shape or not b.shape:
        a, b = asarray(a), asarray(b)  # (two traced arrays, the common case, need nothing)
    sa, sb = _shape(a), _shape(b)
    if len(sa) == 2 and len(sb) == 1 and sa[1] == sb[0]:  # the common W @ x, quickly
        return P.einsum(a, b, spec="ij,j->i")
    if len(sa) == 1 and sa == sb:  # and u @ v
        return P.einsum(a, b, spec="i,i->")
    if len(sa) == 0 or len(sb) == 0:
        raise ShapeError("matmul: input operand does not have enough dimensions")
    k_a, k_b = sa[-1], sb[0] if len(sb) == 1 else sb[-2]
    if k_a != k_b:  # (NumPy's words, not the einsum's it would become)
        raise ShapeError("matmul: Input operand 1 has a mismatch in its core dimension 0, "
                         "with gufunc signature (n?,k),(k,m?)->(n?,m?) "
                         f"(size {k_b} is different from {k_a}): shapes {sa} @ {sb}")
    if len(sa) == 1 and len(sb) == 1:
        return einsum("i,i->", a, b)
    if len(sa) == 1:
        return einsum("...ij,i->...j", b, a) if len(sb) > 2 else einsum("i,ij->j", a, b)
    if len(sb) == 1:
        return einsum("...ij,j->...i", a, b)
    batch = _np.broadcast_shapes(sa[:-2], sb[:-2])
    a = broadcast_to(a, batch + sa[-2:]) if len(sa) > 2 or batch else a
    b = broadcast_to(b, batch + sb[-2:]) if len(sb) > 2 or batch else b
    return einsum("...ij,...jk->...ik", a, b)


@takes_out
def dot(a: Any, b: Any, out: Any = None) -> Any:
    """`numpy.dot`: inner product, matrix product, or sum over a's last and b's second-last."""
    sa, sb = _shape(a), _shape(b)
    if len(sa) == 0 or len(sb) == 0:
        return multiply(a, b)
    if len(sb) <= 2:
        if sa[-1] != sb[0 if len(sb) == 1 else -2]:
            raise ShapeError(f"dot: shapes {sa} and {sb} are not aligned")
        return matmul(a, b) if len(sa) <= 2 else tensordot(a, b, ([len(sa) - 1], [0]))
    return tensordot(a, b, ([len(sa) - 1], [len(sb) - 2]))


def tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    """Sum products over the given axes of a and b."""
    na, nb = len(_shape(a)), len(_shape(b))
    if _np.ndim(axes) == 0:
        k = _int(axes, "axes")
        ax_a, ax_b = list(range(na - k, na)), list(range(k))
    else:
        ax_a, ax_b = [_ints(x, "axes") for x in axes]
    ax_a, ax_b = [_axis(x, na) for x in ax_a], [_axis(x, nb) for x in ax_b]
    if len(ax_a) != len(ax_b):
        raise ShapeError(f"tensordot: shape-mismatch for sum (axes {axes})")
    la, lb = list(_LETTERS[:na]), list(_LETTERS[na:na + nb])
    for i, j in zip(ax_a, ax_b):
        lb[j] = la[i]
    out = [c for i, c in enumerate(la) if i not in ax_a] + \
          [c for j, c in enumerate(lb) if j not in ax_b]
    return einsum("".join(la) + "," + "".join(lb) + "->" + "".join(out), a, b)


@takes_out
def outer(a: Any, b: Any, out: Any = None) -> Any:
    """Outer product of the flattened inputs."""
    return einsum("i,j->ij", ravel(a), ravel(b))


def inner(a: Any, b: Any) -> Any:
    """Sum over the last axes of a and b."""
    na, nb = len(_shape(a)), len(_shape(b))
    if na == 0 or nb == 0:
        return multiply(a, b)
    return tensordot(a, b, ([na - 1], [nb - 1]))
