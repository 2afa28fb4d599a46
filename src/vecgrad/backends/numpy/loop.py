"""NumPy lowering of the loop primitive: a Python `for` loop around the step's own code.

The step's statements are generated as for any graph and placed inside the loop, so a step
costs its NumPy calls plus one index per sliced input, one row write per stacked output and
one tuple assignment of the carry: no call, no copy of the carry. A carry stacked both as it
enters and as it leaves the step is stored once per step (the other stack is its shifted copy).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...ir import Aval, Graph, Var
from ...primitives.loop import layout, pack_dtype
from ...rewrite.markers import strip_ad_markers
from .codegen import generate
from .muladd import fuse_muladd


def lower_loop(avals: list[Aval], body: Graph, length: int, n_carry: int,
               n_xs: int, reverse: bool = False) -> Callable[..., np.ndarray]:
    """The callable running a loop equation: its operands in, its flat result out."""
    # the LOWER passes the whole graph gets before codegen but relayout (pipeline.LOWER; the
    # pipeline sits above the backends): muladd gives an addmm-style call per step
    body = fuse_muladd(strip_ad_markers(body))
    nc, nx, n_in = n_carry, n_xs, len(body.inputs)
    lay = layout(body, length, nc)
    # a stacked output that a ufunc makes is computed into its row (no copy)
    rows: dict[Var, str] = {}
    for k, (o, (_, s)) in enumerate(zip(body.outputs[nc:], lay[nc:])):
        if isinstance(o, Var) and o not in rows and o.aval.shape == s[1:] and \
                o.aval.dtype == pack_dtype(body) and o not in body.inputs:
            rows[o] = f"_y{k}[_t]"
    cg, step = generate(body, rows)
    names = [cg.names[v] for v in body.inputs]
    total = sum(math.prod(s) for _, s in lay)
    ops = [f"_a{i}" for i in range(n_in)]
    lines = [f"def _run({', '.join(ops)}):", f"    _out = _empty({total}, _dt)"]
    lines += [f"    _y{k} = _out[{o}:{o + math.prod(s)}].reshape({s!r})"
              for k, (o, s) in enumerate(lay[nc:])]
    lines += [f"    {names[i]} = {ops[i]}" for i in list(range(nc)) + list(range(nc + nx, n_in))]
    lines.append(f"    for _t in range({length - 1}, -1, -1):" if reverse else
                 f"    for _t in range({length}):")
    lines += [f"        {names[i]} = {ops[i]}[_t]" for i in range(nc, nc + nx)]
    lines += [f"        {ln}" for ln in step]
    refs = [cg.ref(a) for a in body.outputs]
    done = {rows[v] for v in rows if v in cg.into}  # (computed in place)
    shifted = _shifted(body, nc) if length else {}
    lines += [f"        _y{k}[_t] = {r}" for k, r in enumerate(refs[nc:])
              if f"_y{k}[_t]" not in done and k not in shifted]
    if nc:  # last: a stacked output may be this step's carry in
        lines.append(f"        {', '.join(names[:nc])}, = {', '.join(refs[:nc])},")
    if not step and nc + nx == n_in and not refs[nc:]:
        lines.append("        pass")
    lines += [f"    _out[{o}:{o + math.prod(s)}] = _ravel({names[i]})"
              for i, (o, s) in enumerate(lay[:nc])]
    for k, (i, k2) in shifted.items():  # (the stacked carry-in: the carry-out's rows, shifted)
        first, rest, src = (length - 1, ":-1", "1:") if reverse else (0, "1:", ":-1")
        lines += [f"    _y{k}[{first}] = {ops[i]}", f"    _y{k}[{rest}] = _y{k2}[{src}]"]
    lines.append("    return _out")
    env: dict[str, Any] = dict(cg.env)
    env.update({"_empty": np.empty, "_dt": pack_dtype(body), "_ravel": np.ravel})
    src = "\n".join(lines) + "\n"
    exec(compile(src, "<vecgrad:loop>", "exec"), env)  # noqa: S102
    run = env["_run"]
    run.source = src  # type: ignore[attr-defined]
    return run


def _shifted(body: Graph, nc: int) -> dict[int, tuple[int, int]]:
    """The stacked ys that are a carry as it enters the step while another y stacks the same
    carry as it leaves (an RNN's h_{t-1} and h_t): filled after the loop from the initial
    carry and the other's rows, one copy instead of one row store per step.
    y index -> (carry index, the other y's index)."""
    ys = body.outputs[nc:]
    out = {}
    for k, y in enumerate(ys):
        if y in body.inputs[:nc]:
            i = body.inputs.index(y)
            k2 = next((j for j, z in enumerate(ys) if z is body.outputs[i] and
                       z is not body.inputs[i]), None)
            if k2 is not None:
                out[k] = (i, k2)
    return out
