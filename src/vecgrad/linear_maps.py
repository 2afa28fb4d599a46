"""The transformations that hand back a function of cotangents or tangents: vjp, jvp,
linearize, hvp (as JAX's). Each is staged and compiled once per call signature, like the
others (see api.py), and inlined when called inside another trace."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import backends
from .api import _base, _build, _check_fun, _inline, fun_cache, grad, jit
from .config import settings
from .errors import ArgumentError, _where, user_src
from .hooks import API
from .ir import Aval
from .pytree import describe, flatten, is_leaf, leaf_signature, unflatten
from .signature import Call
from .staging import (
    Entry,
    Staged,
    compile_split,
    compile_staged,
    fun_name,
    grad_tree,
    stage_jvp,
    stage_vjp,
)
from .tracing import Tracer, current_builder


def vjp(fun: Callable, *primals: Any, has_aux: bool = False,
        backend: str | None = None) -> tuple:
    """`(out, vjp_fn)` where `vjp_fn(ct)` returns one cotangent per primal (a tuple), as
    `jax.vjp`; with has_aux, `(out, vjp_fn, aux)`.

    `ct` has the structure and shapes of `out` (a Python number is fine for a 0-d output).
    A primal's cotangent has its structure: a 0-d array for a Python float (as in JAX; None
    where the function uses its value as a Python number, which makes it static), None for
    other non-array leaves (static values, Python ints) and for non-float arrays. The
    forward and the backward are compiled once per signature, as two programs: `vg.vjp` runs the forward and keeps the values the
    backward needs; `vjp_fn` runs only the backward. `backend` as in `jit`."""
    _check_fun(fun, "vg.vjp")
    base, chain = _base(fun)
    cache = fun_cache(base)
    backend = backends.get(backend or settings.backend).name
    head = (("vjp", has_aux),) + chain
    if current_builder() is not None:
        st, leaves = _build(cache, ("staged",) + head, primals, {},
                            lambda c: stage_vjp(fun, c, has_aux), lambda st: not st.closure,
                            _every(primals))
        return _vjp_nested(st, leaves, has_aux)
    e, leaves = _build(cache, head + (backend,), primals, {},
                       lambda c: _compile_vjp(fun, c, has_aux, backend), deep=_every(primals))
    outs = e.compiled.fn(*leaves)
    m = e.meta
    res = outs[m["n_fwd"]:]
    bwd = m["backward"].fn

    def vjp_fn(ct: Any) -> tuple:
        cts = bwd(*res, *_cotangents(ct, m))
        return _per_primal(cts, m)
    return _vjp_result(outs, m, vjp_fn, has_aux)


def _compile_vjp(fun: Callable, call: Call, has_aux: bool, backend: str) -> Entry:
    st = stage_vjp(fun, call, has_aux)
    return compile_split(st, f"vjp_{fun_name(fun)}", st.meta["n_fwd"], backend)


def _vjp_result(outs: Sequence, m: dict, vjp_fn: Callable, has_aux: bool) -> tuple:
    n_out, n_fwd = m["n_out"], m["n_fwd"]
    out = unflatten(m["out_td"], outs[:n_out])
    if has_aux:
        return out, vjp_fn, unflatten(m["aux_td"], outs[n_out:n_fwd])
    return out, vjp_fn


def _per_primal(cts: Sequence, m: dict) -> tuple:
    call = m["call"]
    pos = {leaf: k for k, leaf in enumerate(m["wrt"])}
    return tuple(grad_tree(call.td[0][a], cts, call.ranges[a], pos)
                 for a in range(call.nargs))


def _every(primals: tuple) -> frozenset:
    """Every primal is differentiated: the Python floats inside its containers are leaves
    (weak, as at the top level), with cotangents and tangents, as in JAX."""
    return frozenset(range(len(primals)))


def _vjp_nested(st: Staged, leaves: list, has_aux: bool) -> tuple:
    from .autodiff import split_graph
    m = st.meta
    fwd, bwd = split_graph(st.graph, len(st.graph.inputs) - st.extra, m["n_fwd"])
    outs = _inline(Staged(fwd, st.finish, st.closure), leaves)
    res = outs[m["n_fwd"]:]

    def vjp_fn(ct: Any) -> tuple:
        cts = _inline(Staged(bwd, st.finish), res, _cotangents(ct, m))
        return _per_primal(cts, m)
    return _vjp_result(outs, m, vjp_fn, has_aux)


def _leaves_like(x: Any, td: Any, what: str) -> list:
    """The leaves of `x`, which must have the structure `td` (Python numbers are leaves)."""
    out: list = []
    if not _walk(x, td, out):
        raise ArgumentError(f"{what} has the structure {describe(flatten(x)[1])}, which does "
                            f"not match the structure {describe(td)}{_where(user_src())}")
    return out


def _walk(x: Any, td: Any, out: list) -> bool:
    kind = td[0]
    if kind in ("*", "weak"):
        out.append(x)
        return True
    if kind in ("tuple", "list"):
        return isinstance(x, (tuple, list)) and len(x) == len(td[1]) and \
            all(_walk(c, t, out) for c, t in zip(x, td[1]))
    if kind == "dict":
        return isinstance(x, dict) and sorted(x, key=repr) == list(td[1]) and \
            all(_walk(x[k], t, out) for k, t in zip(td[1], td[2]))
    return kind == "static" or x is None


def _cotangents(ct: Any, m: dict) -> list:
    leaves = _leaves_like(ct, m["out_td"], "vjp_fn: the cotangent")
    return [_seed(c, a, "vjp_fn: a cotangent") for c, a in zip(leaves, m["seeds"])]


def _seed(x: Any, aval: Aval, what: str) -> Any:
    """A cotangent or tangent leaf, checked against the value it belongs to (None: zeros)."""
    if x is None:
        return np.zeros(aval.shape, aval.dtype)
    if isinstance(x, Tracer):
        if x.shape != aval.shape:
            raise ArgumentError(f"{what} of shape {x.shape} was given for a value of shape "
                                f"{aval.shape}{_where(user_src())}")
        return x
    if is_leaf(x) and not isinstance(x, (np.ndarray, np.generic)):  # a jax or torch array
        shape, dt = leaf_signature(x)
        if shape != aval.shape or dt != aval.dtype:
            raise ArgumentError(f"{what} of shape {shape} and dtype {dt} was given for a value "
                                f"of shape {aval.shape} and dtype {aval.dtype}"
                                f"{_where(user_src())}")
        return x
    arr = np.asarray(x)
    if arr.shape != aval.shape:
        raise ArgumentError(f"{what} of shape {arr.shape} was given for a value of shape "
                            f"{aval.shape}{_where(user_src())}")
    if arr.dtype.kind == "c" and aval.dtype.kind != "c":
        raise ArgumentError(f"{what} is complex, for a real value of dtype {aval.dtype}"
                            f"{_where(user_src())}")
    return arr.astype(aval.dtype, copy=False)


def jvp(fun: Callable, primals: Sequence, tangents: Sequence) -> tuple:
    """`(fun(*primals), J @ tangents)`: forward mode, as `jax.jvp`. `tangents` has the
    structure of `primals` (the tangents of non-float leaves are ignored). Compiled once per
    signature; forward mode is reverse mode transposed (see vecgrad.autodiff)."""
    _check_fun(fun, "vg.jvp")
    primals, tangents = _as_tuple(primals, "primals"), _as_tuple(tangents, "tangents")
    base, chain = _base(fun)
    cache = fun_cache(base)
    head = (("jvp",),) + chain
    nested = current_builder() is not None
    build = (lambda c: stage_jvp(fun, c)) if nested else (lambda c: _compile_jvp(fun, c))
    e, leaves = _build(cache, (("staged",) + head) if nested else head, primals, {}, build,
                       lambda st: not nested or not st.closure, _every(primals))
    m = e.meta
    tans = _tangents(tangents, m, leaves)
    outs = _inline(e, leaves, tans) if nested else e.compiled.fn(*leaves, *tans)
    n = m["n_out"]
    return unflatten(m["out_td"], outs[:n]), unflatten(m["out_td"], outs[n:2 * n])


def _compile_jvp(fun: Callable, call: Call) -> Entry:
    st = stage_jvp(fun, call)
    return compile_staged(st, f"jvp_{fun_name(fun)}")


def _tangents(tangents: tuple, m: dict, leaves: Sequence) -> list:
    for a, (t, td) in enumerate(zip(tangents, m["call"].td[0])):
        _no_static_tangent(t, td, f"argument {a}")
    flat = _leaves_like(tuple(tangents), ("tuple", m["call"].td[0]), "the tangents")
    return [_seed(flat[i], _aval_of(leaves[i]), "a tangent") for i in m["wrt"]]


def _no_static_tangent(x: Any, td: Any, path: str) -> None:
    """A nonzero tangent for a primal number the function used as a Python value (so static:
    its tangent would be dropped) is an error naming it, as JAX's concretization error."""
    kind = td[0]
    if kind in ("tuple", "list") and isinstance(x, (tuple, list)):
        for k, (c, t) in enumerate(zip(x, td[1])):
            _no_static_tangent(c, t, f"{path}[{k}]")
    elif kind == "dict" and isinstance(x, dict):
        for k, t in zip(td[1], td[2]):
            _no_static_tangent(x.get(k), t, f"{path}[{k!r}]")
    elif kind == "static" and td[1] in (float, complex) and \
            isinstance(x, (int, float, complex, np.generic)) and x != 0:
        raise ArgumentError(f"vg.jvp: the primal {path} is the Python {td[1].__name__} "
                            f"{td[2]!r}, whose value the "
                            f"function uses as a Python number (an `if`, a `range`, a shape), "
                            f"so it is static and its tangent {x!r} would be dropped: pass it "
                            f"through a closure, or use it through array operations only"
                            f"{_where(user_src())}")


def _aval_of(x: Any) -> Aval:
    return Aval(tuple(x.shape), x.dtype)


def _as_tuple(x: Any, what: str) -> tuple:
    if not isinstance(x, (tuple, list)):
        raise ArgumentError(f"{what} must be a tuple (or list) with one entry per argument, "
                            f"got {type(x).__name__}{_where(user_src())}")
    return tuple(x)


def linearize(fun: Callable, *primals: Any) -> tuple:
    """`(fun(*primals), f_jvp)` where `f_jvp(*tangents)` is the JVP at the primals, as
    `jax.linearize`: the forward runs once, here, and keeps what the tangent map needs;
    each `f_jvp` call runs only the tangent part. Compiled once per signature. Inside a traced
    function both are inlined (the forward is recorded once)."""
    _check_fun(fun, "vg.linearize")
    if current_builder() is not None:  # inlined: the forward is recorded once (hash-consed)
        out = jvp(fun, primals, primals)[0]
        return out, lambda *tangents: jvp(fun, primals, tangents)[1]
    base, chain = _base(fun)
    e, leaves = _build(fun_cache(base), (("linearize",),) + chain, primals, {},
                       lambda c: _compile_linearize(fun, c), deep=_every(primals))
    m = e.meta
    outs = e.compiled.fn(*leaves)
    n = m["n_out"]
    res = outs[n:]
    tangent_fn = m["backward"].fn

    def f_jvp(*tangents: Any) -> Any:
        return unflatten(m["out_td"], tangent_fn(*res, *_tangents(tangents, m, leaves)))
    return unflatten(m["out_td"], outs[:n]), f_jvp


def _compile_linearize(fun: Callable, call: Call) -> Entry:
    st = stage_jvp(fun, call)
    n = st.meta["n_out"]
    g = st.graph
    st.graph = g.replace(outputs=g.outputs[:n] + g.outputs[len(g.outputs) - n:])
    return compile_split(st, f"linearize_{fun_name(fun)}", n)


def hvp(fun: Callable, primals: Sequence, tangents: Sequence, argnums: int = 0) -> Any:
    """The Hessian-vector product of a scalar `fun`: `H @ v`, with H the Hessian with
    respect to argument `argnums` and v its entry in `tangents` (the others are ignored).
    Forward over reverse: `jvp(grad(fun, argnums), primals, tangents)[1]`; it costs a small
    multiple of the gradient, never the Hessian."""
    return jvp(grad(fun, argnums), primals, tangents)[1]


API.fill(jit=jit, vjp=vjp)  # for the odeint primitive (primitives sit below)

__all__ = ["hvp", "jvp", "linearize", "vjp"]
