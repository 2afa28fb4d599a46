"""A small step computed element by element.

Batching merges the isomorphic scalar operations of one iteration (three filters in cascade,
`s[0] = 0.9 s[0] + x; s[1] = 0.85 s[1] + 0.15 s[0]; ...`, or the products of a 3x3 coupling)
into operations on short stacked vectors: a loop whose carries are vectors of 2-8 elements,
stitched by takes, concatenates and reshapes, which neither the affine nor the linear forms
read. Inside a sequential step that stacking buys nothing. `scalarize` writes the part of the
step that depends on the carries on their elements instead: every carry becomes its elements
(scalars, or rows of a trailing state shape where the carry has one), every operation the
operations on the elements it combines. The carries are then single values again, which the
scan recognition (affine, linear, fission by groups) reads.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P
from ..ir import Aval, Const, Eqn, Graph, Params, Var

MAX_ELEMS = 8  # elements at most in a carry-dependent value (a vector state of more stays whole)
MAX_READ = 64  # ... and in a value it reads (a coupling matrix)


class _Fail(Exception):
    pass


def scalarize(body: Graph, nc: int) -> tuple[Graph, list[int]] | None:
    """The step with each carry of at most MAX_ELEMS elements carried as its elements, and
    the number of elements of each original carry (the new carries, in order); None when
    some carry-dependent operation has no element-wise reading, or nothing would change."""
    carries = body.inputs[:nc]
    if all(c.aval.ndim == 0 for c in carries) or any(
            c.aval.size > MAX_ELEMS or c.aval.size == 0 for c in carries):
        return None
    eqns: list[Eqn] = []
    env: dict[Var, np.ndarray] = {}
    ins: list[Var] = []
    sizes = []
    for c in carries:
        parts = [Var(Aval((), c.aval.dtype)) for _ in range(c.aval.size)]
        ins += parts
        sizes.append(len(parts))
        arr = np.empty(len(parts), object)
        arr[:] = parts
        env[c] = arr.reshape(c.aval.shape)
    dep = set(carries)
    src = None  # (the line of the equation being split; none yet for a step's bare reads)

    def emit(prim: P.Primitive, args: tuple, params: Any) -> Var:
        out = Var(prim.shape_rule(*[a.aval for a in args], **dict(params)))
        eqns.append(Eqn(prim, args, params, out, src))
        return out

    def elems(a: Any) -> np.ndarray:
        if isinstance(a, Const):
            v = np.asarray(a.value)
            if v.size > MAX_READ:
                raise _Fail
            arr = np.empty(v.shape, object)
            for i in np.ndindex(v.shape):
                arr[i] = Const(np.asarray(v[i], v.dtype))
            return arr
        got = env.get(a)
        if got is not None:
            return got
        if a.aval.size > MAX_READ:
            raise _Fail
        arr = np.empty(a.aval.shape, object)
        for i in np.ndindex(a.aval.shape):
            arr[i] = emit(P.getitem, (a,), Params(idx=P.BasicIndex(i))) if i else a
        env[a] = arr
        return arr
    try:
        for e in body.eqns:
            src = e.src
            if not any(isinstance(a, Var) and a in dep for a in e.inputs):
                eqns.append(e)
                continue
            dep.add(e.out)
            env[e.out] = _apply(e, [elems(a) for a in e.inputs], emit)
        outs: list[Any] = []
        for o in body.outputs[:nc]:
            outs += list(elems(o).reshape(-1))
        for o in body.outputs[nc:]:  # (ys: put back together where the step split them)
            outs.append(_whole(o, env, emit) if isinstance(o, Var) and o in dep else o)
    except _Fail:
        return None
    return Graph(tuple(ins) + body.inputs[nc:], tuple(eqns), tuple(outs)), sizes


def _whole(o: Var, env: dict, emit: Any) -> Var:
    arr = env[o]
    if arr.ndim == 0:
        return arr[()]
    flat = emit(P.stack, tuple(arr.reshape(-1)), Params(axis=0))
    return emit(P.reshape, (flat,), Params(shape=o.aval.shape)) if arr.ndim > 1 else flat


def _arr(x: Any) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    out = np.empty((), object)
    out[()] = x
    return out


def _apply(e: Eqn, xs: list[np.ndarray], emit: Any) -> np.ndarray:
    """e's result as an array of element atoms, from its operands' element arrays."""
    p, ps = e.prim, e.params
    shape = e.out.aval.shape
    if e.out.aval.size > MAX_ELEMS:
        raise _Fail
    if p.elementwise:
        bs = np.broadcast_arrays(*xs)
        out = np.empty(shape, object)
        for i in np.ndindex(shape):
            out[i] = emit(p, tuple(b[i] for b in bs), ps)
        return out
    if p is P.getitem and P.is_basic(ps["idx"]) and all(
            isinstance(k, (int, P.Sl)) for k in ps["idx"]):
        idx = tuple(slice(k.start, k.stop if k.stop >= 0 else None, k.step)
                    if isinstance(k, P.Sl) else k for k in ps["idx"])
        return _arr(xs[0][idx]).reshape(shape)
    if p is P.reshape:
        return xs[0].reshape(shape)
    if p is P.broadcast_to:
        return np.broadcast_to(xs[0], shape)
    if p is P.transpose:
        return xs[0].transpose(ps["perm"])
    if p is P.concatenate:
        return np.concatenate(xs, axis=ps["axis"])
    if p is P.stack:
        return np.stack(xs, axis=ps["axis"])
    if p is P.take and len(xs) == 1:
        return np.take(xs[0], np.asarray(ps["ids"].arr), axis=ps["axis"])
    if p is P.einsum and "..." not in ps["spec"]:
        return _einsum(ps["spec"], xs, shape, emit)
    if p is P.reduce_sum:
        axes = tuple(ps["axes"])
        x = np.moveaxis(xs[0], axes, tuple(range(len(axes))))
        x = x.reshape((-1,) + x.shape[len(axes):])
        out = np.empty(x.shape[1:], object)
        for i in np.ndindex(out.shape):
            acc = x[(0,) + i]
            for j in range(1, x.shape[0]):
                acc = emit(P.add, (acc, x[(j,) + i]), Params())
            out[i] = acc
        return out.reshape(shape)
    raise _Fail


def _einsum(spec: str, xs: list[np.ndarray], shape: tuple, emit: Any) -> np.ndarray:
    """Each element of a small einsum: the sum over the contracted letters of the
    products of the operands' elements."""
    ins, out = spec.split("->")
    ins = ins.split(",")
    size = {ch: d for term, x in zip(ins, xs) for ch, d in zip(term, x.shape)}
    summed = sorted(set("".join(ins)) - set(out))
    res = np.empty(shape, object)
    for i in np.ndindex(shape):
        at = dict(zip(out, i))
        acc = None
        for j in np.ndindex(tuple(size[ch] for ch in summed)):
            at.update(zip(summed, j))
            term = None
            for t, x in zip(ins, xs):
                v = x[tuple(at[ch] for ch in t)]
                term = v if term is None else emit(P.mul, (term, v), Params())
            acc = term if acc is None else emit(P.add, (acc, term), Params())
        res[i] = acc
    return res


__all__ = ["MAX_ELEMS", "scalarize"]
