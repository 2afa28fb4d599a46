"""Broadcast results laid out with a long axis innermost.

A pairwise kernel batched over (i, j) computes `x[:, None, :] - y[None, :, :]`: an (n, m, d)
array whose innermost axis is the short feature axis (d = 4 in a 4-D density estimate).
NumPy's ufunc loop then runs n * m inner loops of d elements, and the einsum that reads it
('ijd,ijd->ij') as many again; each inner loop costs several nanoseconds to set up, more
than its few multiply-adds. Computed as (d, n, m) instead, from transposed copies of the
small operands, the same work is d * n inner loops of m elements: measured 3-4x faster for
the difference and for the contraction. An einsum reads any axis order at no cost (its
letters are permuted), so the result is made in the better order when einsums are its only
readers, when `kernels.choose` finds that it pays (the model: inner-loop setups saved
against the operands' copies and the readers' contractions before and after).
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ... import kernels
from ... import primitives as P
from ...ir import Aval, Const, Eqn, Graph, Params, Var
from ...primitives.linalg import make_spec, parse_spec
from . import costs
from .planner import einsum_cost, plan_einsum
from .table import lower
from .timing import timings

SHORT = 32  # an innermost axis of fewer elements than this is worth moving
MEASURED_MAX = 1 << 21  # elements up to which the orders are timed (larger: the model's)


def permuted_spec(spec: str, k: int, perm: tuple[int, ...]) -> str:
    """The spec reading operand k through its copy in `perm` order."""
    ins, out = parse_spec(spec)
    ins = list(ins)
    ins[k] = "".join(ins[k][p] for p in perm)
    return make_spec(ins, out)


def _operands_small(e: Eqn) -> bool:
    return all(a.aval.size * 4 <= e.out.aval.size for a in e.inputs)


def _perms(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The axis orders worth trying for a result whose innermost axis is short: that axis
    first (the others in order), or the longest axis last (the others in order)."""
    n = len(shape)
    if n < 2 or shape[-1] >= SHORT:
        return []
    out = []
    if shape[-2] >= 2 * shape[-1]:
        out.append((n - 1, *range(n - 1)))
    big = max(range(n - 1), key=lambda a: shape[a])
    if shape[big] >= 2 * shape[-1]:
        p = (*[a for a in range(n) if a != big], big)
        if p not in out:
            out.append(p)
    return out


def _loops(m: kernels.Machine, size: int, inner: int) -> float:
    """An elementwise ufunc loop over `size` elements in inner loops of `inner`."""
    return m.call + size * m.loop + size / max(inner, 1) * m.inner


def _reader_cost(spec: str, shapes: list, dtypes: list, m: kernels.Machine,
                 moved: int | None = None) -> float:
    """A reading contraction, by the planner's model; where it reads the moved result
    (operand `moved`) with another letter innermost than its output's, NumPy's einsum
    writes the output in that order (not C-contiguous): charged the copy that makes it so,
    which its readers pay at least in strided reads."""
    ins, out = parse_spec(spec)
    item = max(d.itemsize for d in dtypes)
    if len(ins) == 2 and all(len(set(t)) == len(t) for t in ins + [out]):
        cost = einsum_cost(spec, shapes, dtypes, m)
    else:
        cost = costs.einsum_loop(m, spec, shapes, item)
    if moved is not None and out and ins[moved][-1] in out and ins[moved][-1] != out[-1]:
        dims = {c: d for t, sh in zip(ins, shapes) for c, d in zip(t, sh)}
        o = tuple(dims[c] for c in out)
        cost += costs.transposed(m, o, tuple(range(1, len(o))) + (0,), item)
    return cost


def _readers(g: Graph, e: Eqn, reads: list[tuple[int, int]], perm: tuple[int, ...] | None
             ) -> list[tuple]:
    """The (spec, shapes, dtypes, operand reading e) of e's readers, reading e's result in
    `perm` order (the operand None: in its own order)."""
    out = []
    for i in sorted({i for i, _ in reads}):
        r = g.eqns[i]
        spec, shapes, moved = r.params["spec"], [a.aval.shape for a in r.inputs], None
        for k, a in enumerate(r.inputs):
            if a is e.out and perm is not None:
                spec = permuted_spec(spec, k, perm)
                shapes[k] = tuple(a.aval.shape[p] for p in perm)
                moved = k
        out.append((spec, shapes, [a.aval.dtype for a in r.inputs], moved))
    return out


def _best(g: Graph, e: Eqn, perms: list[tuple[int, ...]], reads: list[tuple[int, int]]
          ) -> tuple[int, ...] | None:
    """The axis order to make e's result in (None: its own), by the model."""
    shape = e.out.aval.shape
    item = e.out.aval.dtype.itemsize
    orders: dict[str, tuple[int, ...] | None] = {"keep": None}
    orders.update((f"move{j}", p) for j, p in enumerate(perms))

    def estimate(m: kernels.Machine) -> dict[str, float]:
        est = {}
        for name, perm in orders.items():
            p = perm or tuple(range(len(shape)))
            copies = sum(costs.transposed(m, _padded(a, len(shape)), p, item)
                         for a in e.inputs if a.aval.size > 1) if perm else 0.0
            est[name] = _loops(m, e.out.aval.size, shape[p[-1]]) + copies + \
                sum(_reader_cost(*o[:3], m, o[3]) for o in _readers(g, e, reads, perm))
        return est
    def measure() -> dict[str, float]:
        runs = [_trial(g, e, perm, reads) for perm in orders.values()]
        return dict(zip(orders, timings(runs, [])))
    small = e.out.aval.size <= MEASURED_MAX
    olds = _readers(g, e, reads, None)
    key = (e.prim.name, tuple(a.aval.shape for a in e.inputs), shape, tuple(perms),
           tuple(o[0] for o in olds), tuple(tuple(map(tuple, o[1])) for o in olds),
           e.out.aval.dtype.str, tuple(str(p) for p in e.params.values()))
    # measured once per machine and key, then stored: the model's inner-loop and transposing
    # costs were off by 2-5x on arrays that fit in cache (gmm's (1000, 25, 2) differences:
    # kept, 375 us with their readers; moved, 90 us; the model said 191 against 222)
    return orders[kernels.choose("broadcast_layout", key, estimate, measure if small else None,
                                 tune=small)]


def _trial(g: Graph, e: Eqn, perm: tuple[int, ...] | None, reads: list[tuple[int, int]]
           ) -> Callable[[], None]:
    """e and its reading einsums run on ones with e's result in `perm` order (the operands'
    transposing copies included); a reader's result that is not C-contiguous is copied, as
    its own readers pay at least that."""
    n = e.out.aval.ndim
    xs = [np.ones(_padded(a, n), a.aval.dtype) if isinstance(a, Var) else
          np.reshape(a.value, _padded(a, n)) for a in e.inputs]
    p = perm or tuple(range(n))
    fn = lower(e.prim, e.params, [Aval(tuple(x.shape[i] for i in p), x.dtype) for x in xs])
    rs = []
    for i, (spec, shapes, dtypes, _) in zip(sorted({i for i, _ in reads}),
                                            _readers(g, e, reads, perm)):
        ks = {k for k, a in enumerate(g.eqns[i].inputs) if a is e.out}
        rs.append((plan_einsum(spec, shapes, dtypes), ks,
                   [np.ones(s, d) for s, d in zip(shapes, dtypes)]))

    def run() -> None:
        out = fn(*([np.ascontiguousarray(np.transpose(x, perm)) for x in xs] if perm else xs))
        for plan, ks, others in rs:
            r = plan(*[out if k in ks else o for k, o in enumerate(others)])
            if not r.flags.c_contiguous:
                np.ascontiguousarray(r)
    return run


def _padded(a: object, n: int) -> tuple[int, ...]:
    return (1,) * (n - a.aval.ndim) + a.aval.shape


def _moved_operand(a: object, n: int, perm: tuple[int, ...], e: Eqn) -> tuple[object, list]:
    """Operand `a` of e in the permuted axis order: (the new atom, equations making it)."""
    pad = _padded(a, n)
    if isinstance(a, Const):
        v = np.ascontiguousarray(np.transpose(np.reshape(a.value, pad), perm))
        return (a if a.value.ndim == 0 else Const(v)), []
    eqns = []
    if a.aval.shape != pad:
        r = Var(P.reshape.shape_rule(a.aval, shape=pad))
        eqns.append(Eqn(P.reshape, (a,), Params({"shape": pad}), r, e.src))
        a = r
    new = tuple(pad[p] for p in perm)
    if [p for p in perm if pad[p] != 1] == sorted(p for p in perm if pad[p] != 1):
        out = Var(P.reshape.shape_rule(a.aval, shape=new))  # (only unit axes move: a view)
        eqns.append(Eqn(P.reshape, (a,), Params({"shape": new}), out, e.src))
    else:
        out = Var(P.relayout.shape_rule(a.aval, perm=perm))
        eqns.append(Eqn(P.relayout, (a,), Params({"perm": perm}), out, e.src))
    return out, eqns


def broadcast_layout(g: Graph) -> Graph:
    """Make elementwise results of broadcast operands, read only by einsums, with their
    short innermost axis moved first, or their longest axis moved last, where that is
    modelled to pay."""
    reads: dict[Var, list[tuple[int, int]]] = {}
    for i, e in enumerate(g.eqns):
        for k, a in enumerate(e.inputs):
            if isinstance(a, Var):
                reads.setdefault(a, []).append((i, k))
    outs = set(g.outputs)
    moved: dict[Var, tuple[Var, tuple[int, ...]]] = {}
    eqns: list[Eqn] = []
    for i, e in enumerate(g.eqns):
        if e.prim is P.einsum and any(a in moved for a in e.inputs):
            ins, spec = list(e.inputs), e.params["spec"]
            for k, a in enumerate(e.inputs):
                if a in moved:
                    ins[k], perm = moved[a]
                    spec = permuted_spec(spec, k, perm)
            eqns.append(Eqn(e.prim, tuple(ins), Params({"spec": spec}), e.out, e.src))
            continue
        perms = _perms(e.out.aval.shape) if e.prim.elementwise and e.inputs else []
        rs = reads.get(e.out, [])
        perm = None
        if perms and e.out not in outs and rs and _operands_small(e) and \
                e.out.aval.dtype.kind in "fc" and \
                all(g.eqns[j].prim is P.einsum for j, _ in rs) and \
                math.prod(e.out.aval.shape) >= 4096:
            perm = _best(g, e, perms, rs)
        if perm is None:
            eqns.append(e)
            continue
        n = e.out.aval.ndim
        ins = []
        for a in e.inputs:
            x, made = _moved_operand(a, n, perm, e)
            eqns += made
            ins.append(x)
        out = Var(e.prim.shape_rule(*[a.aval for a in ins], **e.params))
        eqns.append(Eqn(e.prim, tuple(ins), e.params, out, e.src))
        moved[e.out] = (out, perm)
    return g.replace(eqns=tuple(eqns)) if moved else g
