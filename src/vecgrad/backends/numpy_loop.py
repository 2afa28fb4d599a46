"""NumPy lowering of the loop primitive: a Python `for` loop around the compiled step.

The step graph is compiled once (as any graph, by `compile_graph`); the loop around it is
generated source of fixed arity, so a step costs one call of the compiled step plus one
index per sliced input and one row write per stacked output.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..ir import Aval, Graph
from ..primitives.loop import layout, pack_dtype


def lower_loop(avals: list[Aval], body: Graph, length: int, n_carry: int,
               n_xs: int) -> Callable[..., np.ndarray]:
    """The callable running a loop equation: its operands in, its flat result out."""
    from .numpy_backend import compile_graph
    step = compile_graph(body, "step").fn
    nc, nx, n_in = n_carry, n_xs, len(body.inputs)
    lay = layout(body, length, nc)
    total = sum(math.prod(s) for _, s in lay)
    cs = [f"c{i}" for i in range(nc)]
    xs = [f"x{i}" for i in range(nx)]
    ws = [f"w{i}" for i in range(n_in - nc - nx)]
    ys = [f"y{i}" for i in range(len(lay) - nc)]
    lines = [f"def run({', '.join(cs + xs + ws)}):", f"    out = _empty({total}, _dt)"]
    lines += [f"    {y} = out[{o}:{o + math.prod(s)}].reshape({s!r})"
              for y, (o, s) in zip(ys, lay[nc:])]
    targets = cs + [f"{y}[t]" for y in ys]
    args = cs + [f"{x}[t]" for x in xs] + ws
    lines += [f"    for t in range({length}):",
              f"        {', '.join(targets)}, = _step({', '.join(args)})"]
    lines += [f"    out[{o}:{o + math.prod(s)}] = _ravel({c})" for c, (o, s) in zip(cs, lay[:nc])]
    lines.append("    return out")
    env: dict[str, Any] = {"_empty": np.empty, "_dt": pack_dtype(body), "_step": step,
                           "_ravel": np.ravel}
    exec(compile("\n".join(lines) + "\n", "<vecgrad:loop>", "exec"), env)  # noqa: S102
    return env["run"]
