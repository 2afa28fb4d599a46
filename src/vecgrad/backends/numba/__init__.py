"""The numba backend: fused CPU loop nests for the parts of the final graph that NumPy runs
as many small passes, and NumPy (and its BLAS) for the rest.

`regions.schedule` orders the final graph and groups runs of fusible equations (elementwise
chains, reductions, softmax, small contractions and views) into regions; `kernel` turns a
region into one numba function of loop nests; `cache` compiles it with `@njit(cache=True)`
from a file, so a later process loads the machine code from disk. Every other equation (large
matrix products, which go to BLAS through NumPy's planner; gathers, linear algebra, ...) runs
as the NumPy backend runs it, so every primitive works here.

Install with `pip install 'vecgrad[numba]'`; `import vecgrad` never imports numba.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...ir import Const, Eqn, Graph, Var
from .. import Backend
from ..numpy import Compiled, is_view, lowered
from ..numpy.codegen import identifier
from . import blas, cache, generic, loop
from .kernel import SCALAR, KernelSource
from .regions import VIEWS, WRITES, Region, schedule

FUSIBLE = frozenset(SCALAR) | {"cast", "logistic"} | WRITES


class FallbackTable(dict):
    """The lowering table: every primitive, fused or not, has the NumPy backend's lowering
    to fall back on (`missing()` finds none missing)."""

    def __contains__(self, prim: object) -> bool:
        return True

    def get(self, prim: Any, default: Any = None) -> Any:
        return lambda site, **params: lowered(Eqn(prim, tuple(Var(a) for a in site.ins),
                                                  params, Var(site.out)))


def _items(g: Graph) -> list[Eqn | Region]:
    """The schedule, with regions of views only (free in NumPy) run as NumPy views."""
    out: list[Eqn | Region] = []
    for it in schedule(g, FUSIBLE):
        if isinstance(it, Region) and all(e.prim.name in VIEWS for e in it.eqns):
            out.extend(it.eqns)
        else:
            out.append(it)
    return out


class _Outer:
    """The straight-line Python function calling NumPy callables and kernels in order."""

    def __init__(self, g: Graph, name: str):
        self.g, self.name = g, name
        self.env: dict[str, Any] = {"np": np, "_asarray": np.asarray, "_copy": np.array}
        self.names: dict[Var, str] = {v: f"x{i}" for i, v in enumerate(g.inputs)}
        self.borrowed: set[Var] = set(g.inputs)  # may alias an input or a constant
        self.lines: list[str] = []
        self.kernels: list[str] = []  # their sources, for vg.show and tests
        self.count = 0

    def ref(self, a: Any) -> str:
        if isinstance(a, Const):
            n = f"c{id(a.value)}"
            self.env[n] = a.value
            return n
        return self.names[a]

    def fresh(self) -> str:
        """A new value name (v0, v1, ...)."""
        self.count += 1
        return f"v{self.count}"

    def bind(self, obj: Any) -> str:
        n = f"f{len(self.env)}"
        self.env[n] = obj
        return n

    def numpy_eqn(self, e: Eqn) -> None:
        self.names[e.out] = self.fresh()
        args = ", ".join(self.ref(a) for a in e.inputs)
        fn = (loop.lower(e, f"{self.name}_l{len(self.env)}") if e.prim.name == "loop" else
              blas.lowering(e)) or lowered(e)
        self.lines.append(f"{self.names[e.out]} = {self.bind(fn)}({args})")
        if hasattr(fn, "source") and e.prim.name == "loop":
            self.kernels.append(fn.source)
        if is_view(e.prim) and e.inputs and (isinstance(e.inputs[0], Const)
                                         or e.inputs[0] in self.borrowed):
            self.borrowed.add(e.out)

    def region(self, r: Region, live: set[Var], k: int) -> None:
        ks = KernelSource(r, live, f"{self.name}_k{k}")
        src, args, outs = ks.make()
        mod = generic.abstract(src)
        fn = self.bind(None)
        self.env[fn] = cache.FirstCall(cache.kernel(mod.source, ks.name), self.env, fn,
                                       ks.short)
        self.kernels.append(mod.comment() + cache.DECORATOR + mod.source)
        refs = [f"np.{a.aval.dtype.name}({self.ref(a)})" if a.aval.ndim == 0 else self.ref(a)
                for a in args] + [repr(v) for v in mod.values]
        res = ["r" + self.fresh()[1:] for v in outs]
        self.lines.append(f"{', '.join(res)}{',' if len(res) == 1 else ''} = "
                          f"{fn}({', '.join(refs)})")
        for v, t in zip(outs, res):
            self.names[v] = "v" + t[1:]
            conv = f"np.asarray({t}, np.{v.aval.dtype.name})" if v.aval.ndim == 0 else t
            if v in ks.perm and ks.kind[v] == "arr":  # stored in another axis order
                conv = f"{t}.transpose({tuple(int(k) for k in np.argsort(ks.perm[v]))})"
            self.lines.append(f"{self.names[v]} = {conv}")

    def source(self, items: list[Eqn | Region]) -> str:
        reads: list[set[Var]] = []
        for it in items:
            eqns = it.eqns if isinstance(it, Region) else [it]
            made = {e.out for e in eqns}
            reads.append({a for e in eqns for a in e.inputs if isinstance(a, Var)} - made)
        outs = {a for a in self.g.outputs if isinstance(a, Var)}
        later: set[Var] = set(outs)
        live: list[set[Var]] = [set()] * len(items)
        for i in range(len(items) - 1, -1, -1):  # values each region must hand back
            it = items[i]
            if isinstance(it, Region):
                live[i] = {e.out for e in it.eqns} & later
            later |= reads[i]
        for i, it in enumerate(items):
            if isinstance(it, Region):
                self.region(it, live[i], i)
            else:
                self.numpy_eqn(it)
        rets = [f"_copy({self.ref(a)})" if isinstance(a, Const) or a in self.borrowed
                else f"_asarray({self.ref(a)})" for a in self.g.outputs]
        body = "".join(f"    {ln}\n" for ln in self.lines)
        args = ", ".join(self.names[v] for v in self.g.inputs)
        return (f"def {self.name}({args}):\n{body}"
                f"    return ({', '.join(rets)}{',' if len(rets) == 1 else ''})\n")


def compile_graph(g: Graph, name: str = "vecgrad_fn") -> Compiled:
    """The final graph as NumPy code calling fused numba kernels (compiled on first call)."""
    name = identifier(name)
    outer = _Outer(g, name)
    src = outer.source(_items(g))
    code = compile(src, f"<vecgrad-numba:{name}>", "exec")
    exec(code, outer.env)  # noqa: S102 - running the generated code is this module's purpose
    return Compiled(outer.env[name], "\n".join([src] + outer.kernels), g)


# The AD markers go, and multiply-adds are fused for BLAS; NumPy's measured relayout does not
# apply (the kernels read any layout through their index arithmetic).
BACKEND = Backend("numba", compile_graph, ("strip", "muladd"), np.asarray, FallbackTable())

__all__ = ["BACKEND", "FallbackTable", "compile_graph"]
