"""Distributing a contraction over a sum of broadcasts.

A pairwise kernel batched over (i, j) reads the differences `x[:, None, :] - y[None, :, :]`,
an (n, m, d) array, and its gradient contracts a cotangent with them:
`einsum('ij,ijd->jd', g, x_i - y_j)`. The contraction is linear in the difference, so it
equals `einsum('ij,id->jd', g, x) - einsum('ij,jd->jd', g, y)`: a matmul and a scaled row
sum, neither of which reads the (n, m, d) array (issue 13's kmeans, issue 14's kernels).

Accuracy: the terms are rounded before they are subtracted, so the absolute error is about
eps * |g| * (|x| + |y|) where the original's is eps * |g| * |x - y|. That is the size of
the change an eps-relative perturbation of x and y makes to the original (the difference
itself moves by eps * (|x| + |y|)), so the rewrite stays backward stable. It is not applied
when another operand is as large as the difference (`einsum(d, d)`, the squared distance):
expanding |x - y|^2 into x^2 + y^2 - 2xy is not backward stable (its error is
eps * |x|^2, against eps * |x| * |x - y| for a perturbation) and is never done.
"""
from __future__ import annotations

from typing import Any

from .. import primitives as P
from ..ir import Eqn
from ..primitives.linalg import make_spec, parse_spec


def _squeezed(ctx: Any, a: Any, shape: tuple[int, ...], letters: str, e: Eqn
              ) -> tuple[Any, str] | None:
    """Operand `a` of an elementwise sum of shape `shape` (letters `letters`), without the
    axes along which the sum broadcasts it: (the reshaped operand, its letters)."""
    if a.aval.dtype != e.out.aval.dtype or a.aval.ndim > len(shape):
        return None
    padded = (1,) * (len(shape) - a.aval.ndim) + a.aval.shape
    keep = [i for i, (p, s) in enumerate(zip(padded, shape)) if p == s]
    if len(keep) + sum(p == 1 for p, s in zip(padded, shape) if p != s) != len(shape):
        return None
    new = tuple(shape[i] for i in keep)
    x = a if a.aval.shape == new else ctx.emit(P.reshape, (a,), {"shape": new}, e.src)
    return x, "".join(letters[i] for i in keep)


def einsum_of_broadcast_sum(e: Eqn, ctx: Any) -> Any:
    """einsum(.., a - b, ..) = einsum(.., a, ..) - einsum(.., b, ..) (and for a + b), where
    a and b are broadcast along axes of the difference and the result and every other
    operand are smaller than it: each term contracts an operand without the broadcast axes."""
    ins, out = parse_spec(e.params["spec"])
    if len(ins) < 2 or any(len(set(s)) != len(s) for s in ins + [out]):
        return None
    for k, x in enumerate(e.inputs):
        if e.out.aval.size * 2 > x.aval.size:
            continue  # (a result as big as the difference: nothing to save)
        s = ctx.def_of(x, P.sub) or ctx.def_of(x, P.add)
        if s is None or x.aval.dtype.kind != "f" or sum(o is x for o in e.inputs) != 1 or \
                any(o.aval.size >= x.aval.size for j, o in enumerate(e.inputs) if j != k) or \
                any(a.aval.size * 2 > x.aval.size for a in s.inputs):
            continue
        terms = [_term(ctx, e, ins, out, k, a) for a in s.inputs]
        if None not in terms:
            return s.prim, tuple(terms), {}
    return None


def _term(ctx: Any, e: Eqn, ins: list[str], out: str, k: int, a: Any) -> Any:
    """e with operand k replaced by a (an operand of the sum, without its broadcast axes);
    a letter only those axes had is an axis of the result it is constant along (broadcast
    back), or None where it was summed (a sum multiplying by its length: not this rule's)."""
    sq = _squeezed(ctx, a, e.inputs[k].aval.shape, ins[k], e)
    if sq is None:
        return None
    new_ins = ins[:k] + [sq[1]] + ins[k + 1:]
    have = set("".join(new_ins))
    lost = set(ins[k]) - have
    if lost - set(out):
        return None
    ops = tuple(sq[0] if j == k else o for j, o in enumerate(e.inputs))
    sub = "".join(c for c in out if c not in lost)
    t = ctx.emit(P.einsum, ops, {"spec": make_spec(new_ins, sub)}, e.src)
    if not lost:
        return t
    kd = tuple(1 if c in lost else d for c, d in zip(out, e.out.aval.shape))
    t = ctx.emit(P.reshape, (t,), {"shape": kd}, e.src)
    return ctx.emit(P.broadcast_to, (t,), {"shape": e.out.aval.shape}, e.src)


def sqdist_of_differences(e: Eqn, ctx: Any) -> Any:
    """einsum('ijk,ijk->ij', d, d) with d = a - b, a broadcast along j and b along i, is
    sqdist(a, b): the squared distances computed from the differences by one kernel, without
    the (n, m, k) array of them (and never expanded: see the module's note on accuracy)."""
    ins, out = parse_spec(e.params["spec"])
    d = e.inputs[0]
    if len(ins) != 2 or e.inputs[1] is not d or ins[0] != ins[1] or len(ins[0]) != 3 or \
            len(set(ins[0])) != 3 or len(out) != 2 or not set(out) < set(ins[0]):
        return None
    s = ctx.def_of(d, P.sub)
    if s is None or d.aval.dtype.kind != "f":
        return None
    letters = ins[0]
    k = next(c for c in letters if c not in out)
    sides = [_squeezed(ctx, a, d.aval.shape, letters, e) for a in s.inputs]
    if None in sides:
        return None
    rows = []
    for x, lx in sides:
        own = [c for c in lx if c != k]
        if k not in lx or len(own) != 1:
            return None
        if lx != own[0] + k:
            x = ctx.emit(P.transpose, (x,), {"perm": (1, 0)}, e.src)
        rows.append((x, own[0]))
    (x, i), (y, j) = rows
    if i == j:
        return None
    r = ctx.emit(P.sqdist, (x, y), {}, e.src)
    return r if out == i + j else (P.transpose, (r,), {"perm": (1, 0)})


def einsum_of_own_sums(e: Eqn, ctx: Any) -> Any:
    """einsum('ab,bc->bc', p, y) = einsum('b,bc->bc', einsum('ab->b', p), y) where the graph
    already sums p so: letters that one operand alone has and the result lacks are summed out
    of it by that sum, not again (the column sums of a one-hot assignment a gradient takes
    twice). (Elsewhere the planner sums them first anyway: no new equation.)"""
    ins, out = parse_spec(e.params["spec"])
    if len(ins) < 2 or any(len(set(s)) != len(s) for s in ins + [out]):
        return None
    for k, a in enumerate(ins):
        others = set(out).union(*[s for j, s in enumerate(ins) if j != k])
        own = [c for c in a if c not in others]
        if not own or len(own) == len(a):
            continue
        kept = "".join(c for c in a if c not in own)
        x = ctx.kept_as(P.einsum, (e.inputs[k],), {"spec": f"{a}->{kept}"})
        if x is None:
            continue
        ops = tuple(x if j == k else o for j, o in enumerate(e.inputs))
        return P.einsum, ops, {"spec": make_spec(ins[:k] + [kept] + ins[k + 1:], out)}
    return None


def _shared_form(ctx: Any, u: Any, v: Any) -> tuple | None:
    """u = einsum(x, a) and v = einsum(x, b) (any operand order, any letters) where b, its
    axes permuted by `perm`, is read by v's contraction as a is by u's: (u's einsum, the
    position of a in it, b, perm)."""
    s, t = ctx.def_of(u, P.einsum), ctx.def_of(v, P.einsum)
    if s is None or t is None or len(s.inputs) != 2 or len(t.inputs) != 2:
        return None
    (si, so), (ti, to) = parse_spec(s.params["spec"]), parse_spec(t.params["spec"])
    if any(len(set(w)) != len(w) for w in [*si, so, *ti, to]) or len(so) != len(to):
        return None
    for kx in (0, 1):
        for jx in (0, 1):
            x = s.inputs[kx]
            if t.inputs[jx] is not x or t.inputs[1 - jx] is x or s.inputs[1 - kx] is x:
                continue
            ren: dict[str, str] = {}  # t's letters -> s's
            for p, q in (*zip(ti[jx], si[kx]), *zip(to, so)):
                if ren.setdefault(p, q) != q:
                    ren = {}
                    break
            b_letters, a_letters = ti[1 - jx], si[1 - kx]
            if not ren or len(set(ren.values())) != len(ren) or \
                    any(c not in ren for c in b_letters) or \
                    sorted(ren[c] for c in b_letters) != sorted(a_letters):
                continue
            mapped = [ren[c] for c in b_letters]
            perm = tuple(mapped.index(c) for c in a_letters)
            return s, 1 - kx, t.inputs[1 - jx], perm
    return None


def sum_of_shared_contractions(e: Eqn, ctx: Any) -> Any:
    """einsum(x, a) + einsum(x, b) = einsum(x, a + b') (and for -), b' the transpose of b that
    the second contraction reads as the first reads a: where a and b are small beside the
    result, one contraction and a small add replace two and a full-size add (the gradient of
    a quadratic form x P x is x (P + P^T); one contraction kept for another reader still
    saves the add). Accuracy: distributivity, each term rounded as a product of the sums."""
    u, v = e.inputs
    if u.aval != e.out.aval or v.aval != e.out.aval or e.out.aval.dtype.kind not in "fc" or \
            (ctx.n_uses(u) > 1 and ctx.n_uses(v) > 1):
        return None
    form = _shared_form(ctx, u, v)
    if form is None:
        return None
    s, ka, b, perm = form
    a = s.inputs[ka]
    if a.aval.size * 2 > e.out.aval.size or a.aval.size * 2 > s.inputs[1 - ka].aval.size or \
            a.aval.dtype != b.aval.dtype:
        return None
    if perm != tuple(range(len(perm))):
        b = ctx.emit(P.transpose, (b,), {"perm": perm}, e.src)
    if b.aval != a.aval:
        return None
    ab = ctx.emit(e.prim, (a, b), {}, e.src)
    ops = tuple(ab if j == ka else o for j, o in enumerate(s.inputs))
    return P.einsum, ops, s.params
