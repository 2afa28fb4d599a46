"""`vg.torch_function`: a vecgrad function as a pair of `torch.library.custom_op`s (forward and
backward, over the torch-lowered graphs from vecgrad.interop.compile_pieces), joined by
`register_autograd`. A custom op is opaque to `torch.compile` (its fake implementation gives
the output shapes), so a compiled model that calls it has no graph break.

The forward op takes the flat list of input tensors and a key naming the argument structure;
the backward op takes the residuals and output cotangents and a key naming the compiled
signature. The Python wrapper around them does only what `torch.compile` can trace: flatten,
two `assume_constant_result` look-ups (structure, outputs), the op call, unflatten."""
from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

import torch

from ...ir import Aval
from ...pytree import flatten, leaf_signature, unflatten
from ...signature import Call
from . import compile_graph, numpy_dtype, torch_dtype

_OPS = itertools.count()


class _Signature:
    """Everything compiled for one argument structure and set of input shapes and dtypes."""

    def __init__(self, p: Any, name: str, sid: str):
        self.p, self.sid = p, sid
        self.fwd = compile_graph(p.fwd, f"{name}_fwd").fn
        self.bwd = compile_graph(p.bwd, f"{name}_bwd").fn
        self.n_out = len(p.primal.outputs)
        self.outs = [o.aval for o in p.fwd.outputs]
        self.grads = [o.aval for o in p.bwd.outputs]


def _empty(like: list[torch.Tensor], avals: list[Aval]) -> list[torch.Tensor]:
    return [like[0].new_empty(a.shape, dtype=torch_dtype(a.dtype)) for a in avals]


class _Function:
    """The compiled signatures of one function, and its two custom ops."""

    def __init__(self, fun: Callable, compile_pieces: Callable, name: str):
        self.fun, self.compile_pieces, self.name = fun, compile_pieces, name
        self.structures: dict[str, Any] = {}  # key -> the argument treedef
        self.sigs: dict[tuple, _Signature] = {}
        self.by_sid: dict[str, _Signature] = {}
        op = f"vecgrad::{re.sub(r'[^0-9A-Za-z_]', '_', name)}_{next(_OPS)}"
        self.fwd_op = torch.library.custom_op(op, self._fwd, mutates_args=())
        self.bwd_op = torch.library.custom_op(op + "_bwd", self._bwd, mutates_args=())
        self.fwd_op.register_fake(
            lambda xs, key: _empty(xs, self.sig(xs, key).outs))
        self.bwd_op.register_fake(lambda xs, sid: _empty(xs, self.by_sid[sid].grads))
        self.fwd_op.register_autograd(self._backward, setup_context=self._setup)

    def sig(self, xs: list[torch.Tensor], key: str) -> _Signature:
        return self.sig_of(key, tuple(Aval(*leaf_signature(x)) for x in xs))

    def sig_of(self, key: str, avals: tuple[Aval, ...]) -> _Signature:
        s = self.sigs.get((key, avals))
        if s is None:
            call = Call((self.structures[key][1], None), [(a.shape, a.dtype) for a in avals])
            p = self.compile_pieces(self.fun, call)
            # named by content: a compiled model cached on disk by torch.compile bakes it in
            sid = key + "|" + ";".join(f"{a.dtype.str}{list(a.shape)}" for a in avals)
            s = self.sigs[(key, avals)] = self.by_sid[sid] = _Signature(p, self.name, sid)
        return s

    def _fwd(self, xs: list[torch.Tensor], key: str) -> list[torch.Tensor]:
        """Primal outputs, then the residuals the backward reads."""
        return list(self.sig(xs, key).fwd(*xs))

    def _bwd(self, xs: list[torch.Tensor], sid: str) -> list[torch.Tensor]:
        """Residuals and output cotangents -> cotangents of the float inputs."""
        return list(self.by_sid[sid].bwd(*xs))

    def _setup(self, ctx: Any, inputs: tuple, output: list) -> None:
        xs, key = inputs
        s = self.sig(xs, key)
        ctx.sid, ctx.n_in, ctx.device = s.sid, len(xs), xs[0].device if xs else None
        ctx.save_for_backward(*output[s.n_out:], *[xs[i] for i in s.p.res_inputs])

    def _backward(self, ctx: Any, grads: list) -> tuple:
        s = self.by_sid[ctx.sid]
        cts = [grads[i] if grads[i] is not None else
               torch.zeros(s.outs[i].shape, dtype=torch_dtype(s.outs[i].dtype),
                           device=ctx.device) for i in s.p.float_outs]
        got = self.bwd_op(list(ctx.saved_tensors) + cts, ctx.sid)
        out: list[Any] = [None] * ctx.n_in
        for i, g in zip(s.p.float_ins, got):
            out[i] = g
        return out, None


_FUNCTIONS: list[_Function] = []


@torch.compiler.assume_constant_result
def _register(fid: int, td: Any) -> str:
    """The key of an argument structure (treedef)."""
    key = repr(td)
    _FUNCTIONS[fid].structures.setdefault(key, td)
    return key


@torch.compiler.assume_constant_result
def _outputs(fid: int, key: str, shapes: tuple, dtypes: tuple) -> tuple:
    """(number of outputs, their treedef) for a signature, compiling it if new. Opaque to
    torch.compile, which takes its result as a constant (it depends on shapes only)."""
    avals = tuple(Aval(sh, numpy_dtype(dt)) for sh, dt in zip(shapes, dtypes))
    s = _FUNCTIONS[fid].sig_of(key, avals)
    return s.n_out, s.p.out_td


def wrap(fun: Callable, compile_pieces: Callable, name: str | None = None) -> Callable:
    """The user-facing function: flattens the arguments, calls the forward op, unflattens."""
    f = _Function(fun, compile_pieces, name or getattr(fun, "__name__", "fn"))
    fid = len(_FUNCTIONS)
    _FUNCTIONS.append(f)

    def call(*args: Any) -> Any:
        leaves, td = flatten(args)
        key = _register(fid, td)
        n_out, out_td = _outputs(fid, key, tuple(tuple(x.shape) for x in leaves),
                                 tuple(x.dtype for x in leaves))
        return unflatten(out_td, f.fwd_op(leaves, key)[:n_out])
    call.__wrapped__ = fun  # type: ignore[attr-defined]
    call.__name__ = getattr(fun, "__name__", "fn")
    call.__doc__ = getattr(fun, "__doc__", None)
    return call


__all__ = ["wrap"]
