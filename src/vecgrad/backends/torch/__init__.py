"""The torch backend: the final graph lowered to torch operations (lowering.LOWERINGS) by the
shared code generator, run eagerly on the device of its inputs (CUDA tensors stay on the GPU),
or through `torch.compile` with `vg.config(torch_compile=True)`.

Inputs may be torch tensors or NumPy arrays (NumPy arrays become CPU tensors, sharing memory);
results are torch tensors. The generated function is linked once per device: its constants and
index tensors are placed there then.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ...config import settings
from ...ir import Graph
from ...pytree import register_leaf
from .. import Backend, Compiled
from ..lowering import Program, generate
from .lowering import LOWERINGS, VIEWS, link_for, torch_dtype

_NUMPY_DTYPE = {torch_dtype(np.dtype(c)): np.dtype(c) for c in "?bhilqBefdFD"}


def numpy_dtype(dt: torch.dtype) -> np.dtype:
    """The NumPy dtype of a torch dtype (bfloat16 and friends have none)."""
    try:
        return _NUMPY_DTYPE[dt]
    except KeyError:
        raise TypeError(f"vecgrad: torch dtype {dt} has no NumPy equivalent") from None


register_leaf(torch.Tensor, lambda x: (tuple(x.shape), numpy_dtype(x.dtype)))


def to_tensor(x: Any, dt: np.dtype) -> torch.Tensor:
    """A tensor of x: tensors as they are, NumPy arrays shared where writable, Python numbers
    with the traced dtype."""
    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, np.ndarray) and x.flags.writeable:
        return torch.from_numpy(x) if x.flags.c_contiguous else torch.as_tensor(x)
    return torch.as_tensor(np.array(x, dtype=dt))


def to_numpy(x: Any) -> np.ndarray:
    """A tensor (on any device) as a NumPy array."""
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


def linker(prog: Program) -> Callable[[torch.device, bool], Callable[..., tuple]]:
    """The program linked for a device, run op by op or through `torch.compile` (cached per
    device and choice)."""
    cache: dict[tuple[torch.device, bool], Callable] = {}

    def get(dev: torch.device, compiled: bool = False) -> Callable[..., tuple]:
        fn = cache.get((dev, compiled))
        if fn is None:
            fn = link_for(prog, dev)
            if compiled:  # (one program per signature: its shapes are static)
                fn = torch.compile(fn, dynamic=False, backend=compiled)
            cache[dev, compiled] = fn
        return fn
    return get


def compile_graph(g: Graph, name: str = "vecgrad_fn") -> Compiled:
    """The lowered graph as a Python function of tensors, run on its inputs' device (through
    `torch.compile` if `vg.config().torch_compile` is on now, when vecgrad compiles it)."""
    prog = generate(g, name, views=VIEWS)
    for_device = linker(prog)
    dtypes = [v.aval.dtype for v in g.inputs]
    cpu = torch.device("cpu")
    compiled = settings.torch_compile and settings.torch_compile_backend  # (or False)

    def call(*xs: Any) -> tuple:
        ts = [to_tensor(x, dt) for x, dt in zip(xs, dtypes)]
        return for_device(ts[0].device if ts else cpu, compiled)(*ts)
    return Compiled(call, prog.source, g)


# Lowering strips the AD-only markers; NumPy's measured relayout and addmm fusion do not
# apply.
BACKEND = Backend("torch", compile_graph, ("strip",), to_numpy, LOWERINGS)

__all__ = ["BACKEND", "LOWERINGS", "compile_graph", "linker", "numpy_dtype", "to_numpy",
           "to_tensor"]
