"""A rolled loop (the `loop` primitive) as one compiled function: every step in numba.

The NumPy backend runs a loop equation as a Python `for` around its step's NumPy calls, so a
step costs one dispatch per operation (about 0.5 us each, whatever the arrays' size): ode's
Runge-Kutta step is 21 of them. Here the step graph becomes one kernel (kernel.py, as for a
region of the final graph) and a driver, compiled with it in one numba module, runs all the
steps: it slices each sliced input at step t, calls the step, stores its stacked outputs as
row t of the flat result and passes the carry on, all in machine code.

`lower(e, name)` returns the callable, or None where the step holds an equation the kernels
do not compile (`why_not` names it; explain reports it): that loop runs as the NumPy backend
runs it, so every loop works on this backend.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...ir import Const, Eqn, Graph, Var
from ...primitives.loop import layout, pack_dtype
from ...rewrite.markers import strip_ad_markers
from ..numpy.muladd import fuse_muladd
from . import cache, generic
from .kernel import SCALAR, KernelSource, literal
from .regions import WRITES, Region, fusible

# What a step kernel fuses: a region's elementwise ops, and writes at a basic index (a step
# reads and writes its buffers functionally; NumPy's in-place write is no advantage there).
STEP = frozenset(SCALAR) | {"cast", "logistic"} | WRITES


# The choice (measured on this project's 2-core AVX-512 machine, numba 0.68, NumPy 2.x): a
# NumPy call costs about DISPATCH_NS plus ARITH_NS per element of an arithmetic op that a
# kernel fuses away; numba's scalar libm costs EXTRA_NS more per element than NumPy's SIMD
# loops for these functions (tanh: 7.5 against 0.8 ns; sin and cos cost the same in both).
DISPATCH_NS, ARITH_NS = 500.0, 0.5
EXTRA_NS = {"exp": 2.0, "log": 1.8, "tanh": 6.7, "logistic": 6.7, "log1p": 4.8,
            "expm1": 3.4, "pow": 6.2, "log10": 2.0, "softmax": 2.0, "softmax_vjp": 0.0,
            "logsumexp": 2.0, "sqrt": 0.0, "abs": 0.0, "fabs": 0.0, "sin": 0.0, "cos": 0.0}
# (every other function of kernel.SCALAR not below costs about as much as arctan: 6 ns more)
_CHEAP = frozenset({"add", "sub", "mul", "div", "neg", "stop_gradient", "maximum", "minimum",
                    "gt", "lt", "ge", "le", "eq", "ne", "logical_and", "logical_or",
                    "logical_not", "where", "sign", "floor", "ceil", "trunc", "copysign",
                    "fmax", "fmin", "cast"})


def step_graph(e: Eqn) -> Graph:
    """The loop's body as the step kernel compiles it (the NumPy loop's LOWER passes)."""
    return fuse_muladd(strip_ad_markers(e.params["body"]))


def why_not(e: Eqn) -> str | None:
    """Why loop equation e runs as the NumPy backend's loop here (None: as one kernel)."""
    body = step_graph(e)
    if e.params["length"] == 0 or not body.eqns:
        return "an empty loop"
    for b in body.eqns:
        if not fusible(b, STEP, blas=True):
            return f"its step's `{b.prim.name}`{_at(b)} has no numba loop nest"
    saved = extra = 0.0
    slow: dict[str, int] = {}
    for b in body.eqns:
        name, size = b.prim.name, b.out.aval.size
        if name in ("reshape", "transpose", "relayout", "broadcast_to", "getitem"):
            continue  # (free in NumPy too)
        saved += DISPATCH_NS + (ARITH_NS * size if name in _CHEAP else 0.0)
        if name in SCALAR and name not in _CHEAP or name in EXTRA_NS:
            extra += EXTRA_NS.get(name, 6.0) * size
            slow[name] = slow.get(name, 0) + size
    if extra > saved:
        what = ", ".join(f"{n:,} `{k}`" for k, n in slow.items())
        return (f"per step, numba's scalar {what} would cost about {extra / 1e3:.1f} us more "
                f"than NumPy's SIMD loops, above the {saved / 1e3:.1f} us of NumPy calls a "
                "kernel saves")
    return None


def _at(b: Eqn) -> str:
    return f" at {b.src.file.rsplit('/', 1)[-1]}:{b.src.line}" if b.src else ""


def lower(e: Eqn, name: str) -> Callable[..., np.ndarray] | None:
    """The callable running loop equation e as one numba function (None: see why_not)."""
    if why_not(e) is not None:
        return None
    p = e.params
    body = step_graph(e)
    length, nc, nx = p["length"], p["n_carry"], p["n_xs"]
    produced = {b.out for b in body.eqns}
    live = {o for o in body.outputs if isinstance(o, Var) and o in produced}
    ks = KernelSource(Region(list(body.eqns)), live, f"{name}_step", blas=True)
    lay = layout(body, length, nc)
    for o, (off, s) in zip(body.outputs[nc:], lay[nc:]):  # each step writes its rows
        row = math.prod(s[1:])
        if isinstance(o, Var) and o in produced and len(s) > 1 and o not in ks.rows:
            ks.rows[o] = f"out_[{off} + t_ * {row}:{off} + (t_ + 1) * {row}]"
    step_src, args, outs = ks.make()
    src, consts = _driver(body, ks, args, outs, length, nc, nx, p.get("reverse", False),
                          name)
    mod = generic.abstract(step_src + "\n\n" + cache.DECORATOR + src)
    disp = cache.kernel(mod.source, name)
    env: dict[str, Any] = {}
    env[name] = cache.FirstCall(disp, env, name, ks.short)
    zero_d = [a.ndim == 0 for a in (v.aval for v in body.inputs)]
    dts = [v.aval.dtype for v in body.inputs]
    tail = (*consts, length, *mod.values)

    def run(*ops: Any) -> np.ndarray:
        vals = [dt.type(o) if z else np.ascontiguousarray(o)
                for o, z, dt in zip(ops, zero_d, dts)]
        return env[name](*vals, *tail)
    run.source = mod.comment() + cache.DECORATOR + mod.source  # type: ignore[attr-defined]
    return run


def _driver(body: Graph, ks: KernelSource, args: list, outs: list[Var], length: int,
            nc: int, nx: int, reverse: bool, name: str) -> tuple[str, list[np.ndarray]]:
    """The driver's source (operands, the step's constant arrays, then the trip count
    `len_`: an argument at every length, so one compile serves them all) and those arrays."""
    n_in = len(body.inputs)
    dt = pack_dtype(body)
    here = {v: (f"c{i}" if i < nc else f"a{i}[t]" if i < nc + nx else f"a{i}")
            for i, v in enumerate(body.inputs)}
    consts: list[np.ndarray] = []
    const_name: dict[int, str] = {}
    for a in args:
        if isinstance(a, Const) and id(a.value) not in const_name:
            const_name[id(a.value)] = f"k{len(consts)}"
            consts.append(np.ascontiguousarray(a.value))
    res = {v: f"r{k}" for k, v in enumerate(outs)}

    def ref(a: Any) -> str:
        if isinstance(a, Const):
            if a.aval.size == 1:
                return literal(a.value, a.aval.dtype)
            if id(a.value) not in const_name:  # (a body output that is a constant array)
                const_name[id(a.value)] = f"k{len(consts)}"
                consts.append(np.ascontiguousarray(a.value))
            return const_name[id(a.value)]
        if a in res:  # a fresh array, in the step's storage order
            perm = ks.perm.get(a) if ks.kind.get(a) == "arr" else None
            if perm is not None:
                return f"np.transpose({res[a]}, {tuple(int(k) for k in np.argsort(perm))})"
            return res[a]
        return here[a]
    lay = layout(body, length, nc)
    total = sum(math.prod(s) for _, s in lay)
    lines = [f"    out = np.empty({total}, np.{dt.name})"]
    for i, v in enumerate(body.inputs[:nc]):  # (a private, writable copy: one numba type)
        lines.append(f"    c{i} = a{i}" if v.aval.ndim == 0 else f"    c{i} = a{i}.copy()")
    lines.append("    for t in range(len_ - 1, -1, -1):" if reverse else
                 "    for t in range(len_):")
    step_args = ", ".join([ref(a) for a in args] + (["out", "t"] if ks.rows else []))
    written = {ks.rows[v] for v in ks.in_rows if v in ks.rows}
    if outs:
        lines.append(f"        {', '.join(res[v] for v in outs)}, = {ks.name}({step_args})")
    for k, (o, (off, s)) in enumerate(zip(body.outputs[nc:], lay[nc:])):
        row = math.prod(s[1:])
        if ks.rows.get(o) == f"out_[{off} + t_ * {row}:{off} + (t_ + 1) * {row}]" and \
                ks.rows[o] in written:
            continue  # (the step wrote it)
        if len(s) == 1:
            lines.append(f"        out[{off} + t] = {ref(o)}")
        else:
            lines.append(f"        out[{off} + t * {row}:{off} + (t + 1) * {row}] = "
                         f"np.ravel({ref(o)})")
    if nc:
        new = []
        for o, v in zip(body.outputs[:nc], body.inputs[:nc]):
            r = ref(o)
            fresh = o in res and ks.perm.get(o) is None
            new.append(r if fresh or v.aval.ndim == 0 else f"np.ascontiguousarray({r}).copy()")
        lines.append(f"        {', '.join(f'c{i}' for i in range(nc))}, = {', '.join(new)},")
    for i, (v, (off, s)) in enumerate(zip(body.inputs[:nc], lay[:nc])):
        n = math.prod(s)
        lines.append(f"    out[{off}] = c{i}" if v.aval.ndim == 0 else
                     f"    out[{off}:{off + n}] = np.ravel(c{i})")
    lines.append("    return out")
    params = [f"a{i}" for i in range(n_in)] + [f"k{j}" for j in range(len(consts))] + ["len_"]
    return f"def {name}({', '.join(params)}):\n" + "\n".join(lines) + "\n", consts
