"""The JAX backend: the final graph lowered to jax.numpy / lax (lowering.LOWERINGS) by the
shared code generator, and compiled with `jax.jit`.

Inputs may be NumPy or JAX arrays, on any device and with any sharding: `jax.jit` runs the
computation where its inputs live and leaves the results there (sharded inputs give sharded
computations; XLA inserts the cross-device reductions). Results are JAX arrays.

dtypes are NumPy's, in JAX's canonical form: float64 arrays need `jax_enable_x64` (a
typed error says so, rather than computing in float32 without a word); 64-bit integers
inside a float32 program become 32-bit, as everywhere in JAX without x64.
"""
from __future__ import annotations

from typing import Any

import jax
import numpy as np

from ...errors import VecgradError
from ...ir import Graph
from ...pytree import register_leaf
from .. import Backend, Compiled
from ..lowering import generate, link
from .lowering import LOWERINGS, exact, trace_fn

register_leaf(jax.Array, lambda x: (tuple(x.shape), np.dtype(x.dtype)))


class X64Error(VecgradError, TypeError):
    """float64 (or complex128) arrays on the JAX backend while jax_enable_x64 is off."""


def _wide(g: Graph) -> list[str]:
    """The float64 / complex128 inputs and outputs of the graph (JAX needs x64 for them)."""
    return [f"{kind} {i} ({a.aval})" for kind, atoms in (("input", g.inputs),
                                                         ("output", g.outputs))
            for i, a in enumerate(atoms) if a.aval.dtype in (np.float64, np.complex128)]


def _need_x64(wide: list[str]) -> None:
    if not jax.config.jax_enable_x64:
        raise X64Error(
            f"the JAX backend computes NumPy's dtypes, and this function has 64-bit values "
            f"({', '.join(wide[:3])}{', ...' if len(wide) > 3 else ''}), which JAX keeps only "
            "with x64 enabled: call jax.config.update('jax_enable_x64', True) first (or set "
            "JAX_ENABLE_X64=1), or pass float32 arrays")


def compile_graph(g: Graph, name: str = "vecgrad_fn") -> Compiled:
    """`jax.jit` of the lowered graph."""
    prog = generate(g, name)
    jitted = jax.jit(link(prog, LOWERINGS, const=lambda v: v, wrap=exact))
    scalar_ins = [i for i, v in enumerate(g.inputs) if v.aval.ndim == 0]
    dtypes = [v.aval.dtype for v in g.inputs]

    def call(*xs: Any) -> tuple:
        if scalar_ins:  # Python numbers: give them the traced dtype, not JAX's weak type
            xs = tuple(np.asarray(x, dtypes[i]) if type(x) in (int, float, complex, bool)
                       else x for i, x in enumerate(xs))
        return jitted(*xs)

    fn = call
    wide = _wide(g)
    if wide:
        def fn(*xs: Any) -> tuple:
            _need_x64(wide)
            return call(*xs)
    return Compiled(fn, prog.source, g, native=jitted)


# Lowering strips the AD-only markers; NumPy's measured relayout and addmm fusion do not
# apply (XLA lays out and fuses itself).
BACKEND = Backend("jax", compile_graph, ("strip",), np.asarray, LOWERINGS)

__all__ = ["BACKEND", "LOWERINGS", "X64Error", "compile_graph", "trace_fn"]
