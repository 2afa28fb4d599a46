"""What a backend other than NumPy is made of: a lowering table and a code generator.

A lowering table maps each primitive to a *builder*: `builder(site, **params) -> callable`,
called once per equation when a graph is linked, where `site` holds the operand and result
avals (and the device, for backends that place arrays). The callable runs the equation on the
backend's arrays. Families (elementwise ops, reductions) get their builders from the helpers
below, so one table entry is one line, as in the primitive modules.

The code generator turns a graph into straight-line Python source, one call per equation
(`v3 = f3(v1, v2)`), the same for every table-driven backend; `link` binds the callables and
constants and compiles it. The JAX backend traces the result once with `jax.jit`; the torch
backend runs it eagerly (its callables are torch ops).
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from .. import primitives as P
from ..ir import Atom, Aval, Const, Graph, Var
from ..primitives import REGISTRY, Primitive
from .numpy.codegen import _last_uses


class Site(NamedTuple):
    """Where an equation runs: its operand avals, its result aval, and the device (None
    where the backend places arrays itself, as jax.jit does)."""

    ins: tuple[Aval, ...]
    out: Aval
    device: Any = None


Builder = Callable[..., Callable[..., Any]]  # builder(site, **params) -> fn(*arrays)
Table = dict[Primitive, Builder]


def missing(table: Table) -> list[str]:
    """The registered primitives that have no entry in `table` (a test asserts none)."""
    return sorted(name for name, p in REGISTRY.items() if p not in table)


# ------------------------------------------------------------------ families of builders

def compute_dtype(site: Site) -> np.dtype:
    """The dtype an elementwise op computes in, as NumPy does: the promoted operand dtype,
    or the float result dtype where integers or bools go in (sqrt of an int, true division)."""
    if not site.ins:
        return site.out.dtype
    dt = np.result_type(*[a.dtype for a in site.ins])
    if site.out.dtype.kind in "fc" and dt.kind in "biu":
        return site.out.dtype
    return dt


def cast_all(fn: Callable, site: Site, cast: Callable[[Any, np.dtype], Any]) -> Callable:
    """fn with its operands cast to the compute dtype where they differ from it (NumPy
    promotes, and the backend's own promotion rules differ: JAX keeps int64 + float32 in
    float32, NumPy computes it in float64)."""
    dt = compute_dtype(site)
    which = [a.dtype != dt for a in site.ins]
    if not any(which):
        return fn
    return lambda *xs: fn(*[cast(x, dt) if w else x for x, w in zip(xs, which)])


def elementwise(fn: Callable, cast: Callable) -> Builder:
    """A broadcasting op that is `fn` on operands of one dtype (params passed by keyword)."""
    def build(site: Site, **params: Any) -> Callable:
        f = (lambda *xs: fn(*xs, **params)) if params else fn
        return cast_all(f, site, cast)
    return build


def reduction(fn: Callable, cast: Callable, axis_kw: str = "axis") -> Builder:
    """A reduction over static `axes` (none: the identity, not a reduction of everything as
    `torch.sum(x, dim=())` would do), computed in the result dtype (NumPy sums int32 and
    bools in int64)."""
    def build(site: Site, axes: tuple[int, ...]) -> Callable:
        dt = site.out.dtype
        pre = (lambda x: cast(x, dt)) if site.ins[0].dtype != dt else (lambda x: x)
        if not axes:
            return pre
        kw = {axis_kw: axes}
        return lambda x: fn(pre(x), **kw)
    return build


def to_out(fn: Callable, cast: Callable) -> Builder:
    """An op whose operands are all cast to the result dtype first (contractions, linalg,
    concatenation: NumPy computes them in the promoted dtype)."""
    def build(site: Site, **params: Any) -> Callable:
        dt = site.out.dtype
        f = (lambda *xs: fn(*xs, **params)) if params else fn
        which = [a.dtype != dt for a in site.ins]
        if not any(which):
            return f
        return lambda *xs: f(*[cast(x, dt) if w else x for x, w in zip(xs, which)])
    return build


def contractions(einsum: Callable, sqrt: Callable, sum_keep: Callable,
                 cast: Callable) -> Table:
    """The contraction family (einsum, norm, muladd, softmax_vjp, sqdist) from a library's
    `einsum(spec, *xs)`, `sqrt` and `sum_keep(x, axis)` (a sum keeping the axis)."""

    def norm(site: Site, spec: str) -> Callable:
        s, t = spec.split("->")
        return lambda x: sqrt(einsum(f"{s},{s}->{t}", x, x))

    def sqdist(x: Any, y: Any) -> Any:  # from the differences (as accurate as NumPy's)
        d = x[:, None, :] - y[None, :, :]
        return einsum("ijk,ijk->ij", d, d)

    def softmax_vjp(g: Any, p: Any, axis: int) -> Any:  # p * (g - <g, p>), as the primitive
        t = g * p
        return t - p * sum_keep(t, axis)
    return {
        P.einsum: lambda site, spec: to_out(lambda *xs: einsum(spec, *xs), cast)(site),
        P.muladd: lambda site, spec: to_out(lambda x, y, c: einsum(spec, x, y) + c, cast)(site),
        P.norm: norm, P.softmax_vjp: to_out(softmax_vjp, cast), P.sqdist: to_out(sqdist, cast)}


def flat_positions(shape: tuple[int, ...], select: Callable[[np.ndarray], Any]) -> np.ndarray:
    """The flat positions (into an array of `shape`) of the elements `select` picks, in the
    shape of its result: a gather or scatter by position runs any NumPy indexing rule
    (negative steps, integer arrays, strided windows) exactly."""
    return np.array(select(np.arange(math.prod(shape), dtype=np.int64).reshape(shape)))


def plain(fn: Callable) -> Builder:
    """An op whose params are passed to `fn` by keyword, unchanged."""
    def build(site: Site, **params: Any) -> Callable:
        return (lambda *xs: fn(*xs, **params)) if params else fn
    return build


# ------------------------------------------------------------------ code generation

@dataclass
class Program:
    """A graph as straight-line source, before its callables and constants are bound."""

    name: str
    source: str
    graph: Graph
    steps: list[tuple[str, Any]]  # (callable name, equation)
    consts: list[tuple[str, np.ndarray]] = field(default_factory=list)


def generate(g: Graph, name: str, views: Iterable[Primitive] = ()) -> Program:
    """Straight-line source for `g`. Values die (`del`) after their last use. An output that
    may share memory (through the `views` primitives) with an input, a constant or an earlier
    output is returned through `_copy`, so that callers never receive an alias of their own
    arguments, and outputs never alias each other (torch's custom ops require it)."""
    name = re.sub(r"\W", "_", name)
    views = frozenset(views)
    names: dict[Var, str] = {v: f"x{i}" for i, v in enumerate(g.inputs)}
    consts: dict[int, tuple[str, np.ndarray]] = {}
    root: dict[Var, Any] = {}  # a view -> the value (or constant) whose memory it shares

    def ref(a: Atom) -> str:
        if isinstance(a, Const):
            hit = consts.setdefault(id(a.value), (f"c{len(consts)}", a.value))
            return hit[0]
        return names[a]

    last = _last_uses(g)  # (outputs: past the last equation, so never deleted)
    ins = set(g.inputs)  # (a tuple scan per freed value was quadratic in the inputs)
    body, steps = [], []
    for i, e in enumerate(g.eqns):
        names[e.out] = f"v{i}"
        args = ", ".join(ref(a) for a in e.inputs)
        body.append(f"v{i} = f{i}({args})")
        steps.append((f"f{i}", e))
        if e.prim in views and e.inputs:
            src = e.inputs[0]
            root[e.out] = id(src.value) if isinstance(src, Const) else root.get(src, src)
        dead = [names[a] for a in dict.fromkeys(e.inputs) if isinstance(a, Var)
                and last.get(a) == i and a not in ins]
        if dead:
            body.append(f"del {', '.join(dead)}")
    owned: set[Any] = set()  # memory already returned
    ret = []
    for a in g.outputs:
        r = id(a.value) if isinstance(a, Const) else root.get(a, a)
        shared = isinstance(a, Const) or not isinstance(r, Var) or r in ins or r in owned
        ret.append(f"_copy({ref(a)})" if shared else ref(a))
        owned.add(r)
    src = f"def {name}({', '.join(names[v] for v in g.inputs)}):\n"
    src += "".join(f"    {s}\n" for s in body)
    src += f"    return ({', '.join(ret)}{',' if len(ret) == 1 else ''})\n"
    return Program(name, src, g, steps, list(consts.values()))


class MissingLowering(NotImplementedError):
    """A primitive has no entry in a backend's lowering table."""


def link(prog: Program, table: Table, const: Callable[[np.ndarray], Any],
         copy: Callable[[Any], Any] = lambda x: x, device: Any = None,
         wrap: Callable[[Callable, Site], Callable] | None = None) -> Callable[..., tuple]:
    """Bind each equation's callable (built from `table` at its site) and each constant
    (converted by `const`) and compile the program's source into a Python function.
    `wrap(fn, site)`, if given, wraps every built callable (e.g. a dtype check)."""
    env: dict[str, Any] = {"_copy": copy}
    env.update((k, const(v)) for k, v in prog.consts)
    for fname, e in prog.steps:
        build = table.get(e.prim)
        if build is None:
            raise MissingLowering(f"primitive {e.prim.name} has no lowering on this backend "
                                  "(add one to its lowering table)")
        site = Site(tuple(a.aval for a in e.inputs), e.out.aval, device)
        fn = build(site, **e.params)
        env[fname] = wrap(fn, site) if wrap is not None else fn
    code = compile(prog.source, f"<vecgrad:{prog.name}>", "exec")
    exec(code, env)  # noqa: S102 - running the generated code is this module's purpose
    return env[prog.name]
