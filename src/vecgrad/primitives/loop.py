"""The loop primitive: a rolled sequential loop over a step graph, with `lax.scan`'s meaning.

    loop[body, length, n_carry, n_xs, reverse](*init, *xs, *consts)

`body` is a Graph `(carry, x, consts) -> (carry', y)`: the first `n_carry` inputs are the
carry, the next `n_xs` take the step's slice of each `xs` (arrays with a leading axis of
`length`), the rest are loop invariants. Step t runs `body(carry, xs[t], consts)` for t in
order (from the last when `reverse`); the result is the final carry and every step's `y`
stacked along a new leading axis (ys[t] is step t's, in either order).

The IR has single-output equations, so a loop returns one flat array: the final carry, then
each stacked y, each raveled (`layout`, `loop_outputs`: the packing of `spectral`). Every output has one dtype (`pack_dtype`);
builders cast booleans to it.

The VJP is a reverse loop over the step's VJP. Residuals are stacked, as JAX does: the VJP
emits a copy of the forward loop whose body also returns, per step, the values the step's
VJP reads (`augments` in its body's notes names the original body, so the pass
`batch.loopshare.share_forward` makes the original loop a view of its copy: the forward runs
once). Stacking costs the memory an unrolled gradient would use anyway and no recomputation;
the backward loop accumulates the cotangents of the invariants in its carry (the scans pass
hoists those accumulations out of the loop). The batching rule runs one loop over the
batched step (a batch of independent recurrences is one recurrence on a batched state).

This module sits above the others in `primitives`: its rules trace step graphs (tracing,
below) and differentiate them with the AD driver, a layer above, through hooks.AUTODIFF.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ComplexError, ShapeError
from ..hooks import AUTODIFF
from ..ir import Atom, Aval, Const, Eqn, Graph, Var, dce, eval_graph
from ..notes import Augments
from ..tracing import Builder, Tracer
from .core import Primitive, register
from .elementwise import cast
from .spectral import unpack
from .structural import broadcast_to, concatenate, full, reshape, transpose

__all__ = ["layout", "loop", "loop_outputs", "loop_shapes", "pack_dtype"]


def loop_shapes(body: Graph, length: int, n_carry: int) -> list[tuple[int, ...]]:
    """The shape of each output of a loop: the final carry, then each stacked y."""
    return [o.aval.shape if i < n_carry else (length,) + o.aval.shape
            for i, o in enumerate(body.outputs)]


def layout(body: Graph, length: int, n_carry: int) -> list[tuple[int, tuple[int, ...]]]:
    """(offset, shape) of each output in the loop's flat result."""
    out, off = [], 0
    for s in loop_shapes(body, length, n_carry):
        out.append((off, s))
        off += math.prod(s)
    return out


def pack_dtype(body: Graph) -> np.dtype:
    """The one dtype of all outputs of a loop's body (raises ShapeError when they differ)."""
    dts = {o.aval.dtype for o in body.outputs}
    if len(dts) != 1:
        raise ShapeError(f"loop: the step's outputs have dtypes {sorted(map(str, dts))}; "
                         "a loop packs outputs of one dtype")
    return dts.pop()


def loop_outputs(flat: Any, body: Graph, length: int, n_carry: int) -> list[Any]:
    """The outputs of a loop (traced views of its flat result)."""
    return unpack(flat, loop_shapes(body, length, n_carry))


def _check(avals: tuple[Aval, ...], body: Graph, length: int, n_carry: int,
           n_xs: int, reverse: bool = False) -> Aval:
    ins = body.inputs
    if len(avals) != len(ins) or n_carry + n_xs > len(ins) or length < 0:
        raise ShapeError(f"loop: {len(avals)} operands for a step of {len(ins)} inputs "
                         f"({n_carry} carried, {n_xs} sliced)")
    for i, (a, v) in enumerate(zip(avals, ins)):
        want = Aval((length,) + v.aval.shape, v.aval.dtype) if n_carry <= i < n_carry + n_xs \
            else v.aval
        if a != want:
            if a.dtype.kind == "c" and want.dtype.kind != "c":
                raise ComplexError(f"loop operand {i} ({a})", why=f"the step was traced for "
                                   f"{want}")
            raise ShapeError(f"loop: operand {i} is {a}, the step expects {want}")
    for i in range(n_carry):
        if body.outputs[i].aval != ins[i].aval:
            raise ShapeError(f"loop: carry {i} enters as {ins[i].aval} and leaves as "
                             f"{body.outputs[i].aval}")
    size = sum(math.prod(s) for s in loop_shapes(body, length, n_carry))
    return Aval((size,), pack_dtype(body))


def _impl(*args: np.ndarray, body: Graph, length: int, n_carry: int, n_xs: int,
          reverse: bool = False) -> np.ndarray:
    carry = list(args[:n_carry])
    xs, consts = args[n_carry:n_carry + n_xs], args[n_carry + n_xs:]
    out = np.empty(_check(tuple(Aval(np.shape(a), np.asarray(a).dtype) for a in args), body,
                          length, n_carry, n_xs).shape, pack_dtype(body))
    lay = layout(body, length, n_carry)
    ys = [out[o:o + math.prod(s)].reshape(s) for o, s in lay[n_carry:]]
    for t in range(length - 1, -1, -1) if reverse else range(length):
        res = eval_graph(body, *carry, *[x[t] for x in xs], *consts)
        carry = res[:n_carry]
        for y, v in zip(ys, res[n_carry:]):
            y[t] = v
    for (o, s), c in zip(lay[:n_carry], carry):
        out[o:o + math.prod(s)] = np.ravel(c)
    return out


# ------------------------------------------------------------------ graph transformations

def partial_eval(g: Graph, unknown: set[Var]) -> tuple[list[Eqn], list[Eqn]]:
    """Split g's equations into those computable without `unknown` inputs and the rest."""
    unknown = set(unknown)
    known_eqns, rest = [], []
    for e in g.eqns:
        if any(isinstance(a, Var) and a in unknown for a in e.inputs):
            unknown.add(e.out)
            rest.append(e)
        else:
            known_eqns.append(e)
    return known_eqns, rest


def vmap_graph(g: Graph, n: int, batched: list[bool]) -> Graph:
    """The graph computing `n` instances of g at once: inputs flagged in `batched` carry a
    leading axis of n, the others are shared; every output is batched."""
    ins = [Var(Aval((n,) + v.aval.shape if b else v.aval.shape, v.aval.dtype))
           for v, b in zip(g.inputs, batched)]
    b = Builder(ins)
    env: dict[Var, tuple[Tracer, bool]] = {}
    with b:
        for v, x, f in zip(g.inputs, ins, batched):
            env[v] = (Tracer(b, x), f)

        def read(a: Atom) -> tuple[Any, bool]:
            return (Tracer(b, a), False) if isinstance(a, Const) else env[a]
        for e in g.eqns:
            b.src = e.src
            args = [read(a) for a in e.inputs]
            if any(f for _, f in args):
                out = e.prim.batch(n, tuple(f for _, f in args), *[x for x, _ in args],
                                   **e.params)
                env[e.out] = (out, True)
            else:
                env[e.out] = (Tracer(b, b.emit(e.prim, [x.atom for x, _ in args],
                                                e.params)), False)
        outs = []
        for a in g.outputs:
            x, f = read(a)
            outs.append(x if f else broadcast_to(x, shape=(n,) + x.shape))
    return b.build([o.atom for o in outs])


# ------------------------------------------------------------------ VJP

def _float(v: Atom) -> bool:
    return v.aval.dtype.kind in "fc"


def _vjp(g: Any, ans: Any, *ins: Any, body: Graph, length: int, n_carry: int,
         n_xs: int, reverse: bool = False) -> tuple:
    nc, nx, nin = n_carry, n_xs, len(body.inputs)
    if not all(_float(v) for v in body.inputs[:nc]):
        raise ShapeError("loop: differentiating a loop needs a floating-point carry")
    wrt = [i for i, v in enumerate(body.inputs) if _float(v)]
    lin = AUTODIFF.vjp_graph(body, wrt)  # inputs: the step's, then one seed per output
    seeds = list(lin.inputs[nin:])
    fwd, bwd = partial_eval(lin, set(seeds))
    cts = dict(zip(wrt, lin.outputs[len(body.outputs):]))
    bwd = _rematerialized(fwd, bwd, list(cts.values()), set(body.inputs[:nc + nx])) + bwd
    known = {e.out for e in fwd} | set(body.inputs)
    made = {e.out for e in bwd}
    need: dict[Var, None] = {}  # forward values the backward step reads, in order
    for a in [a for e in bwd for a in e.inputs] + list(cts.values()):
        if isinstance(a, Var) and a in known and a not in made:
            need[a] = None
    role = {v: i for i, v in enumerate(body.inputs)}
    stored = [v for v in need if v not in role or role[v] < nc]  # stacked per step
    xs_read = [v for v in need if v in role and nc <= role[v] < nc + nx]
    consts_read = [v for v in need if v in role and role[v] >= nc + nx]

    # the forward loop again, also returning the stored values (booleans as the pack dtype)
    dt = pack_dtype(body)
    ys_out = {v: k for k, v in enumerate(body.outputs[nc:]) if isinstance(v, Var)}
    extra = [v for v in stored if v not in ys_out]  # (a value the step returns is stacked)
    aug = _augmented(body, fwd, extra, dt)
    outs = loop_outputs(loop(*ins, body=aug, length=length, n_carry=nc, n_xs=nx,
                             reverse=reverse), aug, length, nc)
    more = iter(outs[len(body.outputs):])
    stacks = [outs[nc + ys_out[v]] if v in ys_out else next(more) for v in stored]
    stacks = [x if v.aval.dtype == dt else cast(x, dtype=v.aval.dtype)
              for x, v in zip(stacks, stored)]

    # the backward loop runs the steps the other way: its carry is the carry's cotangent,
    # then accumulators of the invariants' cotangents
    g_outs = loop_outputs(g, body, length, nc)
    acc_of = [i for i in range(nc + nx, nin) if i in cts and not _zero(cts[i])]
    accs = [Var(body.inputs[i].aval) for i in acc_of]
    back = _backward_body(seeds[:nc], accs, stored + xs_read + seeds[nc:], consts_read, bwd,
                          cts, acc_of, nc, nx)
    zeros = [full(shape=v.aval.shape, dtype=v.aval.dtype, value=0.0) for v in accs]
    steps = stacks + [ins[role[v]] for v in xs_read] + g_outs[nc:]
    bouts = loop_outputs(loop(*g_outs[:nc], *zeros, *steps, *[ins[role[v]] for v in consts_read],
                              body=back, length=length, n_carry=nc + len(accs),
                              n_xs=len(steps), reverse=not reverse),
                         back, length, nc + len(accs))
    wants = [v.aval.dtype for v in seeds[:nc] + accs] + [
        cts[i].aval.dtype for i in range(nc, nc + nx) if i in cts]
    bouts = [o if o.dtype == w else cast(o, dtype=w) for o, w in zip(bouts, wants)]
    res: list[Any] = list(bouts[:nc])
    xs_cts = iter(bouts[nc + len(accs):])
    res += [next(xs_cts) if i in cts else None for i in range(nc, nc + nx)]
    acc_cts = dict(zip(acc_of, bouts[nc:nc + len(accs)]))
    res += [acc_cts.get(i) for i in range(nc + nx, nin)]
    return tuple(res)


# Operations that only re-describe their operand's layout (no arithmetic: NumPy returns views),
# and so are free to recompute in a backward step.
_LAYOUT = frozenset({"getitem", "reshape", "transpose", "broadcast_to", "strided", "real",
                     "imag", "custom_vjp_call"})


def _rematerialized(fwd: list[Eqn], bwd: list[Eqn], reads: list[Atom],
                    varying: set[Var]) -> list[Eqn]:
    """Forward equations the backward step recomputes rather than reads stacked: views of
    stored values (free) and values that do not vary over the steps (zero buffers, functions
    of the invariants: the scans pass hoists them out of the backward loop)."""
    dep = set(varying)
    for e in fwd:
        if any(isinstance(a, Var) and a in dep for a in e.inputs):
            dep.add(e.out)
    defs = {e.out: e for e in fwd}
    pos = {e.out: i for i, e in enumerate(fwd)}
    pulled: set[Var] = set()
    todo = [a for e in bwd for a in e.inputs] + list(reads)
    while todo:
        a = todo.pop()
        e = defs.get(a) if isinstance(a, Var) else None
        if e is None or a in pulled or not (e.prim.name in _LAYOUT or a not in dep):
            continue
        pulled.add(a)
        todo += list(e.inputs)
    return sorted((defs[v] for v in pulled), key=lambda e: pos[e.out])


def _zero(a: Atom) -> bool:
    return isinstance(a, Const) and not a.value.any()


def _augmented(body: Graph, fwd: list[Eqn], stored: list[Var], dt: np.dtype) -> Graph:
    """The forward step, also returning `stored` (cast to dt where they differ)."""
    b = Builder(body.inputs, hash_cons=False)
    b.eqns = list(fwd)
    b.src = body.eqns[-1].src if body.eqns else None
    extra = [v if v.aval.dtype == dt else b.emit(cast, [v], {"dtype": dt}) for v in stored]
    return dce(Graph(body.inputs, tuple(b.eqns), tuple(body.outputs) + tuple(extra),
                     (Augments(body),)))


def _backward_body(lam: list[Var], accs: list[Var], x_in: list[Var], consts: list[Var],
                   bwd: list[Eqn], cts: dict[int, Atom], acc_of: list[int], nc: int,
                   nx: int) -> Graph:
    """(carry cotangent, accumulators, per-step values, invariants) -> (cotangent of the
    carry in, accumulators plus this step's invariant cotangents, this step's xs
    cotangents)."""
    b = Builder(lam + accs + x_in + consts, hash_cons=False)
    b.eqns = list(bwd)
    b.src = bwd[-1].src if bwd else None
    with b:
        outs = [_dense(cts.get(i), lam[i].aval) for i in range(nc)]
        outs += [(Tracer(b, acc) + Tracer(b, _dense(cts[i], acc.aval))).atom
                 for acc, i in zip(accs, acc_of)]
        outs += [_dense(cts[i], cts[i].aval) for i in range(nc, nc + nx) if i in cts]
        # (one pack dtype: float32 xs' cotangents beside a float64 carry's go up and back)
        dt = np.result_type(*[o.aval.dtype for o in outs])
        outs = [o if o.aval.dtype == dt else b.emit(cast, [o], {"dtype": dt}) for o in outs]
    return dce(b.build(outs))


def _dense(a: Atom | None, aval: Aval) -> Atom:
    """A cotangent as an atom of the expected aval (a zero constant is materialized)."""
    if a is None:
        return Const(np.zeros(aval.shape, aval.dtype))
    if isinstance(a, Const) and a.aval != aval:
        return Const(np.broadcast_to(a.value, aval.shape).astype(aval.dtype))
    return a


# ------------------------------------------------------------------ batching

def _batch(n: int, batched: tuple[bool, ...], *ins: Any, body: Graph, length: int,
           n_carry: int, n_xs: int, reverse: bool = False) -> Any:
    nc, nx = n_carry, n_xs
    ins = list(ins)
    flags = list(batched)
    for i in range(nc):  # the carry is batched as soon as anything is
        if not flags[i]:
            ins[i] = broadcast_to(ins[i], shape=(n,) + ins[i].shape)
            flags[i] = True
    for i in range(nc, nc + nx):  # (n, T, ...) -> (T, n, ...): step t is xs[t]
        if flags[i]:
            ins[i] = transpose(ins[i], perm=(1, 0) + tuple(range(2, ins[i].ndim)))
    vb = vmap_graph(body, n, flags)
    flat = loop(*ins, body=vb, length=length, n_carry=nc, n_xs=nx, reverse=reverse)
    parts = []
    for i, x in enumerate(loop_outputs(flat, vb, length, nc)):  # back to one flat row per instance
        if i >= nc:
            x = transpose(x, perm=(1, 0) + tuple(range(2, x.ndim)))
        parts.append(reshape(x, shape=(n, math.prod(x.shape[1:]))))
    return parts[0] if len(parts) == 1 else concatenate(*parts, axis=1)


loop = register(Primitive("loop", _impl, lambda *avals, **p: _check(avals, **p), _vjp, _batch))
