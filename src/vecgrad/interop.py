"""vecgrad functions inside other libraries' autodiff: `jax_function` and `torch_function`.

Both compile, per input signature, three graphs from one trace: the optimized forward (what
a call that nobody differentiates runs), and the optimized VJP graph split in two, as JAX's
partial evaluation splits a linearized function:

- `fwd`: primals -> outputs and residuals (the forward values the backward reads),
- `bwd`: residuals and output cotangents -> input cotangents.

The host library's autodiff calls `fwd` on the way forward and `bwd` on the way back
(`jax.custom_vjp`; a `torch.library.custom_op` with `register_autograd`), so the backward
reuses the forward's intermediates instead of recomputing them. The library-specific parts
are in backends/jax/interop.py and backends/torch/interop.py.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import backends, pipeline
from .autodiff import split_graph, vjp_graph
from .backends import Backend
from .ir import Atom, Graph, Var
from .signature import Call
from .staging import lower_passes, trace_call


@dataclass(frozen=True)
class Pieces:
    """The graphs of one signature. `fwd` outputs the primal outputs then the residuals it
    computes; residuals that are inputs are not output again: `bwd` reads those from
    `res_inputs` (input positions) after the computed ones, then one cotangent per output in
    `float_outs`, and returns one cotangent per input in `float_ins`."""

    out_td: Any
    primal: Graph
    fwd: Graph
    bwd: Graph
    res_inputs: tuple[int, ...]
    float_ins: tuple[int, ...]
    float_outs: tuple[int, ...]


def compile_pieces(fun: Callable, call: Call, backend: Backend) -> Pieces:
    """Trace `fun` once for this signature and build its `Pieces` for `backend`."""
    tr = trace_call(fun, call)
    g, lower = tr.graph, lower_passes(backend)
    float_ins = tuple(i for i, a in enumerate(call.avals) if a.dtype.kind in "fc")
    float_outs = tuple(i for i, o in enumerate(g.outputs) if o.aval.dtype.kind in "fc")
    seeds: list[Atom | None] = [Var(o.aval) if i in float_outs else None
                                for i, o in enumerate(g.outputs)]
    gg = vjp_graph(g, float_ins, seeds)
    gg = gg.replace(inputs=gg.inputs + tuple(s for s in seeds if s is not None))
    gg = pipeline.run(gg, pipeline.BACKWARD + lower)
    fwd, bwd = split_graph(gg, len(call.avals), len(g.outputs))
    # residuals that are inputs: the host library keeps those itself (no copy as an output)
    n_out, pos = len(g.outputs), {v: i for i, v in enumerate(fwd.inputs)}
    res = list(fwd.outputs[n_out:])
    taken = [r for r in res if isinstance(r, Var) and r in pos]
    computed = [r for r in res if not (isinstance(r, Var) and r in pos)]
    fwd = fwd.replace(outputs=fwd.outputs[:n_out] + tuple(computed))
    bwd = bwd.replace(inputs=tuple(computed + taken) + bwd.inputs[len(res):])
    return Pieces(tr.out_td, pipeline.run(g, lower), fwd, bwd, tuple(pos[r] for r in taken),
                  float_ins, float_outs)


def jax_function(fun: Callable) -> Callable:
    """`fun` as a JAX function: usable inside `jax.jit`, `jax.grad` (reverse mode, through
    vecgrad's compiled backward) and `jax.vmap`, on JAX arrays or tracers (NumPy arrays too).

    Its arguments are pytrees of arrays; other values, Python numbers included, are static
    (part of the cache key). Each input signature is traced and compiled once; JAX's dtype
    rules apply (without
    `jax_enable_x64`, float64 inputs arrive as float32). `jax.jvp` (forward mode) is not
    supported through it (a `jax.custom_vjp` function has no forward-mode rule).
    """
    from .backends.jax.interop import wrap
    return wrap(fun, functools.partial(compile_pieces, backend=backends.get("jax")))


def torch_function(fun: Callable, name: str | None = None) -> Callable:
    """`fun` as a torch function: a callable on tensors (on any device) that torch's autograd
    differentiates through vecgrad's compiled backward, also inside `torch.compile` (it is a
    `torch.library.custom_op`, so `fullgraph=True` works).

    Its arguments are pytrees (tuples, lists, dicts) of tensors; bind any static argument
    first (`functools.partial`). `name` names the custom op (default: `fun.__name__`).
    """
    from .backends.torch.interop import wrap
    return wrap(fun, functools.partial(compile_pieces, backend=backends.get("torch")), name)


__all__ = ["Pieces", "compile_pieces", "jax_function", "torch_function"]

