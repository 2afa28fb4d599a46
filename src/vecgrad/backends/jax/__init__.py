"""The JAX backend: the final graph lowered to jax.numpy / lax (lowering.LOWERINGS) by the
shared code generator, and compiled with `jax.jit`.

Inputs may be NumPy or JAX arrays, on any device and with any sharding: `jax.jit` runs the
computation where its inputs live and leaves the results there (sharded inputs give sharded
computations; XLA inserts the cross-device reductions). Results are JAX arrays.

dtypes are NumPy's: a graph that computes in 64 bits (float64 inputs, say) runs with
`jax.enable_x64` on, whatever the global setting, so a float64 gradient stays float64.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from ...ir import Const, Graph
from ...pytree import register_leaf
from .. import Backend, Compiled
from ..lowering import Site, generate, link
from .lowering import LOWERINGS

register_leaf(jax.Array, lambda x: (tuple(x.shape), np.dtype(x.dtype)))


def _exact(fn: Callable, site: Site) -> Callable:
    """Check each lowered op's result shape and give it NumPy's dtype (in JAX's canonical
    form: without x64, float64 is float32). Runs while jax.jit traces, so it costs nothing."""
    def run(*xs: Any) -> Any:
        r = fn(*xs)
        dt = jax.dtypes.canonicalize_dtype(site.out.dtype)  # x64 is on while tracing, or not
        if r.shape != site.out.shape:
            raise AssertionError(f"JAX lowering gave shape {r.shape}, expected {site.out}")
        return r if r.dtype == dt else r.astype(dt)
    return run


def _wide(g: Graph) -> bool:
    """Whether the graph has a 64-bit value (which JAX keeps only with x64 on)."""
    avals = [v.aval for v in g.inputs] + [e.out.aval for e in g.eqns] + \
        [a.aval for e in g.eqns for a in e.inputs if isinstance(a, Const)]
    return any(a.dtype.itemsize >= 8 and a.dtype.kind in "fiu" or a.dtype == np.complex128
               for a in avals)


def trace_fn(g: Graph, name: str) -> Callable[..., tuple]:
    """The graph as a Python function of JAX arrays (to be traced by jax.jit or by a user's
    transformation)."""
    return link(generate(g, name), LOWERINGS, const=lambda v: v, wrap=_exact)


def compile_graph(g: Graph, name: str = "vecgrad_fn") -> Compiled:
    """`jax.jit` of the lowered graph; 64-bit graphs run with x64 enabled."""
    prog = generate(g, name)
    jitted = jax.jit(link(prog, LOWERINGS, const=lambda v: v, wrap=_exact))
    scalar_ins = [i for i, v in enumerate(g.inputs) if v.aval.ndim == 0]
    dtypes = [v.aval.dtype for v in g.inputs]

    def call(*xs: Any) -> tuple:
        if scalar_ins:  # Python numbers: give them the traced dtype, not JAX's weak type
            xs = tuple(np.asarray(x, dtypes[i]) if type(x) in (int, float, complex, bool)
                       else x for i, x in enumerate(xs))
        return jitted(*xs)

    fn = call
    if _wide(g):
        def fn(*xs: Any) -> tuple:
            with jax.enable_x64(True):
                return call(*xs)
    return Compiled(fn, prog.source, g, native=jitted)


BACKEND = Backend("jax", compile_graph, (), np.asarray, LOWERINGS)

__all__ = ["BACKEND", "LOWERINGS", "compile_graph", "trace_fn"]
