"""Codegen: a graph becomes straight-line Python source calling NumPy, compiled once.

The schedule frees each intermediate after its last use (`del`), and runs a write
(`setitem`, `setitem_add`) in place when the buffer it writes owns its memory and neither it
nor any view of it is read later.
"""
from __future__ import annotations

import functools
import itertools
import keyword
import linecache
import os
import re
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...index import index_shape, is_basic, to_key
from ...ir import Const, Graph, Var, uses
from .clamp import Clamp
from .heap import retain_heap
from .logaddexp import LogAddExp
from .rows import Rows
from .table import entry, lowered


@dataclass
class Compiled:
    """A compiled graph: call it with the input arrays; it returns the output arrays.
    `native` is the backend's own compiled object where it has one (the `jax.jit` function
    of the JAX backend, whose `.lower(*args)` shows the HLO)."""

    fn: Callable[..., tuple]
    source: str
    graph: Graph
    native: Any = None

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


# Ufuncs whose loop runs far slower with its output aliasing its input: np.sign, 507 us
# in place against 57 us into another buffer on (3000, 32) float64, 498 against 40 on
# float32, 9x alike from 8,000 elements (CPU time, NumPy 2.4; the abs VJP's sign(x) of a
# dead x hit it). Every other unary and binary ufunc measured runs in place as fast or faster.
_SLOW_IN_PLACE = frozenset({np.sign})


def _ufunc_target(e: Any, reusable: Callable[[Any], bool]) -> int | None:
    """Which operand an elementwise ufunc can write its result into, if any."""
    if not isinstance(e.prim.impl, np.ufunc) or e.prim.impl.nout != 1 or not e.out.aval.shape:
        return None  # (0-d results are NumPy scalars, which cannot be written into)
    if e.prim.impl in _SLOW_IN_PLACE:
        return None
    for k, a in enumerate(e.inputs):
        if a.aval == e.out.aval and reusable(a) and e.inputs.count(a) == 1:
            return k
    return None


def _computed_into(e: Any, w: Any) -> bool:
    """Whether the elementwise e can be computed into the region that the write w sets to it
    (`buf[key] = e`: a basic index, the region of e's shape and dtype, a plain ufunc)."""
    if w.prim.name != "setitem" or len(w.inputs) != 2 or w.inputs[1] is not e.out or \
            w.inputs[0] is e.out:
        return False
    idx = w.params["idx"]
    if not isinstance(e.prim.impl, np.ufunc) or e.prim.impl.nout != 1 or e.params or \
            entry(e.prim).lower is not None or entry(e.prim).inline is not None or \
            not idx or not is_basic(idx) or not e.out.aval.shape:
        return False
    return e.out.aval.dtype == w.out.aval.dtype and \
        e.out.aval.shape == index_shape(w.inputs[0].aval.shape, idx)


def _into_writes(g: Graph, last: dict[Var, int]) -> set[int]:
    """Equations j whose elementwise result only the write right after them reads, as the
    whole region `buf[key] = v` sets (basic index, same dtype): the ufunc is computed into
    the region (`out=`), with no temporary and no copy of it."""
    return {j for j, (e, w) in enumerate(zip(g.eqns, g.eqns[1:]))
            if last.get(e.out) == j + 1 and e.out not in g.outputs and _computed_into(e, w)}


def sink_into_writes(g: Graph) -> Graph:
    """g with each elementwise value that only a write reads, as that write's whole region,
    computed right before the write (moving an equation later keeps every dependence: its
    one reader is the write), so that `_into_writes` computes it into the region."""
    n = uses(g)
    pos = {e.out: j for j, e in enumerate(g.eqns)}
    before: dict[int, int] = {}  # the write's position -> the value's
    for i, w in enumerate(g.eqns):
        j = pos.get(w.inputs[1]) if w.prim.name == "setitem" and len(w.inputs) == 2 else None
        if j is not None and j < i - 1 and n[w.inputs[1]] == 1 and \
                _computed_into(g.eqns[j], w):
            before[i] = j
    if not before:
        return g
    moved = set(before.values())
    eqns = []
    for i, e in enumerate(g.eqns):
        if i in before:
            eqns.append(g.eqns[before[i]])
        if i not in moved:
            eqns.append(e)
    return g.replace(eqns=tuple(eqns))


def copy(x: Any) -> Any:
    """A copy of x that the code owns, in x's memory order (a transposed view copies
    straight through), but row-major where x repeats elements (a broadcast): NumPy's order
    'K' keeps a zero step's axis innermost, so a (5, n, C) copy of a broadcast (1, n, C)
    array got steps (8, 40n, 40) and every later pass over it, and its reductions along the
    first axis, walked memory at a step of 5 (a sum over 5 rows: 2.4 ms against 0.67)."""
    if isinstance(x, np.ndarray) and 0 in x.strides and x.size > 1:
        return np.array(x, order="C")
    return np.array(x)


class _Codegen:
    """Memory bookkeeping for one graph: which buffer each value lives in (`root`), all the
    values living in a buffer (`aliases`), and which buffers this code allocated (`fresh`)."""

    def __init__(self, g: Graph, targets: dict[Var, str] | None = None):
        self.g = g
        self.targets = targets or {}  # values to compute into a named array (ufuncs' out=)
        self.into: set[Var] = set()  # the targets computed in place
        self.env: dict[str, Any] = {"_asarray": np.asarray, "_copy": copy}
        self.names: dict[Var, str] = {v: f"x{i}" for i, v in enumerate(g.inputs)}
        self.consts: dict[int, str] = {}
        self.last = _last_uses(g)
        self.inputs = set(g.inputs)
        self.root: dict[Var, Var] = {v: v for v in g.inputs}
        self.aliases: dict[Var, list[Var]] = {v: [v] for v in g.inputs}
        # the last read of any value living in each buffer (kept as aliases grow, so that
        # `reusable` is one lookup however many views a buffer has)
        self.alias_last: dict[Var, int] = {v: self.last.get(v, -1) for v in g.inputs}
        self.fresh: set[Var] = set()
        self.out_arg: dict[int, int] = {}  # equation -> the operand its ufunc writes into
        self.in_place: set[int] = set()  # equations writing into operand 0's dead buffer
        self.into_write = _into_writes(g, self.last)  # ufuncs computed into the next write

    def ref(self, a: Any) -> str:
        if isinstance(a, Const):
            k = id(a.value)
            if k not in self.consts:
                self.consts[k] = f"c{len(self.consts)}"
                self.env[self.consts[k]] = a.value
            return self.consts[k]
        return self.names[a]

    def bind(self, value: Any) -> str:
        name = f"k{len(self.env)}"
        self.env[name] = value
        return name

    def reusable(self, a: Any, i: int) -> bool:
        """`a` owns its memory, and neither it nor a view of it is read after equation i."""
        return isinstance(a, Var) and a in self.fresh and self.root[a] is a and \
            self.alias_last[a] <= i

    def callable_for(self, i: int, e: Any) -> Callable | None:
        """What runs equation i (None: its inline source), choosing in-place forms where the
        memory they overwrite is dead, and recording where the result lives."""
        low = entry(e.prim)
        fn = None if low.inline else lowered(e)
        base = e.inputs[0] if e.inputs else None
        k = _ufunc_target(e, functools.partial(self.reusable, i=i))
        owner = e.out
        if low.inplace is not None and self.reusable(base, i):
            fn = functools.partial(low.inplace, **e.params)  # base is dead: reuse it
            self.in_place.add(i)
        elif k is not None:  # elementwise into a dead operand's buffer (NumPy's out=)
            fn = fn if isinstance(fn, (Rows, Clamp, LogAddExp)) else e.prim.impl
            self.out_arg[i] = k
        elif low.view:  # shares memory with its input (a constant's view owns nothing)
            owner = self.root[base] if isinstance(base, Var) else None
        if owner is e.out:
            self.fresh.add(e.out)
        r = owner if owner is not None else e.out
        self.root[e.out] = r
        self.aliases.setdefault(r, []).append(e.out)
        self.alias_last[r] = max(self.alias_last.get(r, -1), self.last.get(e.out, -1))
        return fn

    def line(self, i: int, e: Any) -> list[str]:
        fn = self.callable_for(i, e)
        self.names[e.out] = f"v{i}"
        args = [self.ref(a) for a in e.inputs]
        if i - 1 in self.into_write:  # the write its value was computed into (line i - 1)
            return self._dels(i, e, skip=e.inputs[1])
        if i in self.into_write and e.out not in self.targets:
            w = self.g.eqns[i + 1]
            base = self.ref(w.inputs[0])
            self.env[f"f{i}"] = fn
            key = self.bind(to_key(w.params["idx"]))
            first = f"v{i + 1} = {base}" if self.reusable(w.inputs[0], i + 1) else \
                f"v{i + 1} = _copy({base})"
            return [first, f"f{i}({', '.join(args)}, out=v{i + 1}[{key}])"] + \
                self._dels(i, e)
        write = entry(e.prim).write
        stmts = write(f"v{i}", args, e.params, [a.aval for a in e.inputs], self.bind,
                      i in self.in_place) if write is not None else None
        if stmts is not None:
            out = stmts
        elif fn is None:
            out = [f"v{i} = {entry(e.prim).inline(args, e.params, self.bind)}"]
        else:
            self.env[f"f{i}"] = fn
            k = self.out_arg.get(i)
            into = f", out={args[k]}" if k is not None else ""
            t = self.targets.get(e.out)
            if t is not None and isinstance(fn, (np.ufunc, Rows, Clamp, LogAddExp)) and fn.nout == 1 and \
                    e.out.aval.shape:
                into = f", out={t}"  # written where the caller keeps it (a view of its array)
                self.fresh.discard(e.out)
                self.into.add(e.out)
            out = [f"v{i} = f{i}({', '.join(args)}{into})"]
        return out + self._dels(i, e)

    def _dels(self, i: int, e: Any, skip: Any = None) -> list[str]:
        dead = [self.names[a] for a in dict.fromkeys(e.inputs) if isinstance(a, Var) and
                self.last.get(a) == i and a not in self.inputs and a is not skip]
        return [f"del {', '.join(dead)}"] if dead else []

    def output(self, a: Any) -> str:
        """Never hand the caller a view of its own input or of a constant."""
        owned = isinstance(a, Var) and self.root.get(a) in self.fresh
        return f"_asarray({self.ref(a)})" if owned else f"_copy({self.ref(a)})"


def identifier(name: str) -> str:
    """An ASCII Python identifier for a function name ("jit_<lambda>", "grad_ﬁ", a callable
    object's class name...): Python would NFKC-normalize other letters in source, and the
    name looked up after exec would then not be the one defined."""
    name = re.sub(r"[^0-9A-Za-z_]", "_", name)
    return name if name.isidentifier() and not keyword.iskeyword(name) else "_" + name


def generate(g: Graph, targets: dict[Var, str] | None = None) -> tuple[_Codegen, list[str]]:
    """The statements computing g's equations (inputs are named x0, x1, ..., values v0, v1,
    ...), and the code generator holding their names and the objects they refer to. A value
    in `targets` that an elementwise ufunc makes is written into that expression's array.
    `cg.line_src[k]` is the user's source line of statement k's equation (its first one)."""
    cg = _Codegen(sink_into_writes(g), targets)
    lines: list[str] = []
    cg.line_src = []
    for i, e in enumerate(cg.g.eqns):
        stmts = cg.line(i, e)
        lines += stmts
        cg.line_src += [e.src] + [None] * (len(stmts) - 1) if stmts else []
    return cg, lines


_serial = itertools.count()


def _show_in_tracebacks(filename: str, fn: Callable, src: str, line_src: list) -> None:
    """Tracebacks and NumPy's runtime warnings (`invalid value encountered in log`) from
    generated code print its line with the user's line it computes, as a comment: the shown
    text lives only in linecache (never compiled: user strings stay out of the code), for
    as long as the function does."""
    shown = src.split("\n")
    for k, where in enumerate(line_src):
        if where is not None:  # statement k is source line k + 2 (after the def)
            note = re.sub(r"[^\x20-\x7e]", "?", f"{os.path.basename(where.file)}:"
                                                  f"{where.line} in {where.func}")
            shown[k + 1] += f"  # {note}"
    lines = [ln + "\n" for ln in shown]
    linecache.cache[filename] = (len(src), None, lines, filename)
    weakref.finalize(fn, linecache.cache.pop, filename, None)


def compile_graph(g: Graph, name: str = "vecgrad_fn") -> Compiled:
    """Generate, compile and return straight-line NumPy code for `g`. The source holds only
    names this generator made (values, constants and callables are bound in its namespace);
    that every global it reads is bound is checked here, so no call can fail with NameError."""
    retain_heap()
    name = identifier(name)
    cg, body = generate(g)
    outs = [cg.output(a) for a in g.outputs]
    args = ", ".join(cg.names[v] for v in g.inputs)
    src = f"def {name}({args}):\n" + "".join(f"    {s}\n" for s in body)
    src += f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})\n"
    filename = f"<vecgrad:{name}:{next(_serial)}>"
    code = compile(src, filename, "exec")
    fn_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    attrs = set(re.findall(r"\.([A-Za-z_]\w*)", src))  # co_names also lists attributes
    unbound = set(fn_code.co_names) - cg.env.keys() - attrs
    if unbound:
        raise RuntimeError(f"vecgrad codegen bug: unbound names {sorted(unbound)} in\n{src}")
    exec(code, cg.env)  # noqa: S102 - running the generated code is this module's purpose
    if all("\n" not in ln for ln in body):  # (else the numbering would need the splits)
        _show_in_tracebacks(filename, cg.env[name], src, cg.line_src)
    return Compiled(cg.env[name], src, cg.g)
