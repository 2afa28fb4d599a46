"""`vg.jax_function`: a vecgrad function as a `jax.custom_vjp` over its JAX-lowered graphs
(the graphs come from vecgrad.interop.compile_pieces)."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax

from ...pytree import flatten, leaf_signature, unflatten
from ...signature import Call
from . import trace_fn


def _custom_vjp(p: Any, name: str) -> Callable[..., tuple]:
    """The signature's function of flat leaves, differentiable by JAX through `p.bwd`.
    Input cotangents of non-float leaves are None (zero)."""
    primal = jax.jit(trace_fn(p.primal, name))
    fwd_fn = jax.jit(trace_fn(p.fwd, f"{name}_fwd"))
    bwd_fn = jax.jit(trace_fn(p.bwd, f"{name}_bwd"))
    n_out, n_in = len(p.primal.outputs), len(p.primal.inputs)

    @jax.custom_vjp
    def f(*xs: Any) -> tuple:
        return tuple(primal(*xs))

    def f_fwd(*xs: Any) -> tuple:
        r = fwd_fn(*xs)
        return tuple(r[:n_out]), tuple(r[n_out:]) + tuple(xs[i] for i in p.res_inputs)

    def f_bwd(res: tuple, cts: tuple) -> tuple:
        grads = bwd_fn(*res, *[cts[i] for i in p.float_outs])
        out: list[Any] = [None] * n_in
        for i, g in zip(p.float_ins, grads):
            out[i] = g
        return tuple(out)

    f.defvjp(f_fwd, f_bwd)
    return f


def wrap(fun: Callable, compile_pieces: Callable) -> Callable:
    """The user-facing function: flattens the arguments, compiles per signature, unflattens."""
    cache: dict[tuple, tuple[Callable, Any]] = {}
    name = getattr(fun, "__name__", "fn")

    @functools.wraps(fun)
    def call(*args: Any) -> Any:
        leaves, td = flatten(args)  # (Python numbers are static: JAX traces its own)
        sig = tuple(leaf_signature(x) for x in leaves)
        hit = cache.get((td, sig))
        if hit is None:
            p = compile_pieces(fun, Call((td[1], None), sig))
            hit = cache[(td, sig)] = (_custom_vjp(p, name), p.out_td)
        f, out_td = hit
        return unflatten(out_td, f(*leaves))
    return call
