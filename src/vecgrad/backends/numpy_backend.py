"""Codegen: a graph becomes straight-line Python source calling NumPy, compiled once.

The schedule frees each intermediate after its last use (`del`), and runs a write
(`setitem`, `setitem_add`) in place when the buffer it writes owns its memory and neither it
nor any view of it is read later.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ir import Const, Graph, Var


@dataclass
class Compiled:
    """A compiled graph: call it with the input arrays; it returns the output arrays."""

    fn: Callable[..., tuple]
    source: str
    graph: Graph

    def __call__(self, *args: Any) -> tuple:
        return self.fn(*args)


def _last_uses(g: Graph) -> dict[Var, int]:
    last: dict[Var, int] = {}
    for i, e in enumerate(g.eqns):
        for a in e.inputs:
            if isinstance(a, Var):
                last[a] = i
    for a in g.outputs:
        if isinstance(a, Var):
            last[a] = len(g.eqns)
    return last


def _ufunc_target(e: Any, reusable: Callable[[Any], bool]) -> int | None:
    """Which operand an elementwise ufunc can write its result into, if any."""
    if not isinstance(e.prim.impl, np.ufunc) or e.prim.impl.nout != 1 or not e.out.aval.shape:
        return None  # (0-d results are NumPy scalars, which cannot be written into)
    for k, a in enumerate(e.inputs):
        if a.aval == e.out.aval and reusable(a) and e.inputs.count(a) == 1:
            return k
    return None


def _with_out(uf: np.ufunc, k: int) -> Callable[..., np.ndarray]:
    return lambda *xs: uf(*xs, out=xs[k])


def compile_graph(g: Graph, name: str = "vecgrad_fn") -> Compiled:
    name = re.sub(r"\W", "_", name)  # e.g. "jit_<lambda>": must be a Python identifier
    env: dict[str, Any] = {"_asarray": np.asarray, "_copy": np.array}
    names: dict[Var, str] = {v: f"x{i}" for i, v in enumerate(g.inputs)}
    consts: dict[int, str] = {}
    last = _last_uses(g)
    root: dict[Var, Var] = {v: v for v in g.inputs}  # which buffer each var's memory is
    aliases: dict[Var, list[Var]] = {v: [v] for v in g.inputs}
    fresh: set[Var] = set()

    def ref(a: Any) -> str:
        if isinstance(a, Const):
            k = id(a.value)
            if k not in consts:
                consts[k] = f"c{len(consts)}"
                env[consts[k]] = a.value
            return consts[k]
        return names[a]

    def reusable(a: Any, i: int) -> bool:
        """`a` owns its memory, and neither it nor a view of it is read after equation i."""
        return isinstance(a, Var) and a in fresh and root[a] is a and \
            all(last.get(v, -1) <= i for v in aliases[a])

    def bind(value: Any) -> str:
        name = f"k{len(env)}"
        env[name] = value
        return name

    body = []
    for i, e in enumerate(g.eqns):
        fn = None if e.prim.inline else e.prim.lowered(e.params, [a.aval for a in e.inputs])
        base = e.inputs[0] if e.inputs else None
        k = _ufunc_target(e, functools.partial(reusable, i=i))
        if e.prim.inplace is not None and reusable(base, i):
            fn = functools.partial(e.prim.inplace, **e.params)
            r = e.out  # base is dead: its memory now belongs to the result
            fresh.add(e.out)
        elif k is not None:  # elementwise into a dead operand's buffer (NumPy's out=)
            fn = _with_out(e.prim.impl, k)
            r = e.out
            fresh.add(e.out)
        elif e.prim.view:  # shares memory with its input (a constant's view owns nothing)
            r = root[base] if isinstance(base, Var) else e.out
        else:
            r = e.out
            fresh.add(e.out)
        root[e.out] = r
        aliases.setdefault(r, []).append(e.out)
        names[e.out] = f"v{i}"
        args = [ref(a) for a in e.inputs]
        if fn is None:
            body.append(f"v{i} = {e.prim.inline(args, e.params, bind)}")
        else:
            env[f"f{i}"] = fn
            body.append(f"v{i} = f{i}({', '.join(args)})")
        dead = [names[a] for a in dict.fromkeys(e.inputs)
                if isinstance(a, Var) and last.get(a) == i and a not in g.inputs]
        if dead:
            body.append(f"del {', '.join(dead)}")
    outs = []
    for a in g.outputs:  # never hand the caller a view of its own input or of a constant
        owned = isinstance(a, Var) and root.get(a) in fresh
        outs.append(f"_asarray({ref(a)})" if owned else f"_copy({ref(a)})")
    args = ", ".join(names[v] for v in g.inputs)
    src = f"def {name}({args}):\n" + "".join(f"    {s}\n" for s in body)
    src += f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})\n"
    code = compile(src, f"<vecgrad:{name}>", "exec")
    exec(code, env)  # noqa: S102 - running the generated code is this module's purpose
    return Compiled(env[name], src, g)
