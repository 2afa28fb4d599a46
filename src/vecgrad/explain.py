"""`vg.explain`: why a gradient costs what it costs, in the user's own terms.

The report has five parts: a summary (forward and gradient time, the compile time by stage),
the loops and maps that were batched (with source lines and trip counts) and what could not be
batched, where the time goes (the slowest operations of the forward and the backward, mapped
to source lines), what an eager tape-based AD would have paid for the same code, and memory.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from . import primitives as P
from .api import grad, jit, trace_graph
from .autodiff import vjp_graph
from .backends import available
from .backends.numpy import is_view, profile_graph
from .config import settings
from .explain_text import Found, Hot, Report, _where
from .index import Adv, is_basic
from .ir import Eqn, Graph, Var, dce
from .notes import Note
from .show import loss_of
from .timing import measure, peak_memory


def _found(notes: tuple, *kinds: str) -> list[Found]:
    by_line: dict[tuple, Found] = {}
    for n in notes:
        if not isinstance(n, Note) or n.kind not in kinds or n.src is None:
            continue
        s = n.src
        f = by_line.setdefault((s.file, s.line), Found(s, 0, [], getattr(n, "reason", ""),
                                                       n.kind))
        f.count = max(f.count, n.count)
        f.what.append(n.what)
        item = getattr(n, "became", "") or n.what
        if item and item not in f.became:
            f.became.append(item)
    return sorted(by_line.values(), key=lambda f: (-f.count, f.src.line))


_LAYOUT = ("reshape", "transpose", "broadcast_to", "getitem", "relayout")


def _became(found: list[Found], entry: Any) -> list[Found]:
    """Say what each batched line became in the compiled forward (after simplification),
    leaving out pure layout operations; buffer writes that left no scatter say so."""
    final = entry.stages.get("final")
    if final is None:
        return found
    fwd = _forward_vars(entry.meta, final) if "forward_vars" in entry.meta else frozenset()
    by_line: dict[tuple, list[str]] = {}
    for e in final.eqns:
        if e.src is not None and e.out in fwd and (e.prim.name not in _LAYOUT or _gathers(e)):
            d = f"{_what(e)} -> {e.out.aval}"
            items = by_line.setdefault((e.src.file, e.src.line), [])
            if d not in items:
                items.append(d)
    for f in found:
        ops = by_line.get((f.src.file, f.src.line), [])
        if not ops and "write" in f.what:
            ops = ["no scatter: the buffer is a reshape/transpose of the batched values"]
        elif not ops and "getitem" in f.what:
            ops = ["no gather: a strided view (reshape/transpose) of the array"]
        f.became = ops or f.became
    return found


# At least this many operations of one kind and type left at one source line in the compiled
# gradient: the line's iterations still run one operation each (one slice per row of a
# ragged CSR loop, a short sum kept as a chain of adds), whatever batching merged.
REPEATED = 16


def _repeated(entry: Any, notes: tuple) -> list[Found]:
    """Lines of the compiled gradient holding REPEATED or more operations of one kind and
    type: "batched" alone would hide that their count grows with the trip count."""
    final = entry.stages.get("final")
    if final is None:
        return []
    # (a line noted as batched, or as a recurrence rolled into a loop or scan, may still hold
    # repeated work: another chain on the same line, `v, p = b * v + g[t], p - v`)
    said = {(n.src.file, n.src.line) for n in notes if isinstance(n, Note) and n.src is not None
            and n.kind not in ("batched", "recurrence")}
    count: dict[tuple, int] = {}
    srcs: dict[tuple, Any] = {}
    for e in final.eqns:
        if e.src is None or (e.src.file, e.src.line) in said:
            continue
        k = (e.src.file, e.src.line, e.prim.name, str(e.out.aval))
        count[k] = count.get(k, 0) + 1
        srcs.setdefault(k, e.src)
    by_line: dict[tuple, list[tuple[int, str]]] = {}
    for k, c in count.items():
        if c >= REPEATED:
            by_line.setdefault(k[:2], []).append((c, k[2], f"{c} `{k[2]}` -> {k[3]}"))
    out = []
    for (file, line), kinds in by_line.items():
        kinds.sort(reverse=True)
        whats = [w for _, _, w in kinds]
        src = next(srcs[k] for k in count if k[:2] == (file, line))
        out.append(Found(src, sum(c for c, _, _ in kinds), whats, (
            f"{', '.join(whats)} remain at {file}:{line} in the compiled gradient, one per "
            "iteration or piece: its iterations were not all merged into whole-array "
            "operations"), "repeated", [p for _, p, _ in kinds]))
    return sorted(out, key=lambda f: (-f.count, f.src.line))


def _hot(entry: Any, leaves: list, top: int) -> list[Hot]:
    g = entry.stages.get("final")
    if g is None:  # larger than the cache keeps (settings.keep_stage_eqns): not profiled
        return []
    fwd_vars = _forward_vars(entry.meta, g)
    copies = {e.out for e in g.eqns if e.prim.name == "relayout"}
    # an operand copy the forward reads (backends/numpy/relayout.py) is forward work
    fwd_vars = fwd_vars | {a for c in g.eqns if c.out in fwd_vars for a in c.inputs
                           if a in copies}
    prof = profile_graph(g, leaves, repeat=5)
    total = sum(t for _, t in prof) or 1.0
    hot = [Hot(t, t / total, _what(e), _shapes(e), e.src, e.out not in fwd_vars)
           for e, t in prof]
    return sorted(hot, key=lambda h: -h.seconds)[:top]


def _forward_vars(meta: dict, g: Graph) -> frozenset:
    """The final graph's forward work: what the traced forward computed, and everything the
    primal outputs (value and aux) depend on. The second catches equations the backward
    passes rebuilt: `loops` replaces a forward loop by its residual-storing copy, a new
    variable that still runs forward."""
    primal = dce(g.replace(outputs=g.outputs[:meta.get("primal_outputs", 0)]))
    return meta["forward_vars"] | {e.out for e in primal.eqns}


def _gathers(e: Eqn) -> bool:
    """A getitem with an integer-array index: a gather (a copy of every element it reads),
    not a view."""
    return e.prim.name == "getitem" and not is_basic(e.params["idx"])


def _what(e: Eqn) -> str:
    if _gathers(e):
        arrays = sum(1 for k in e.params["idx"] if isinstance(k, Adv))
        return f"gather[{arrays} index array{'s' if arrays > 1 else ''}]"
    if e.prim.name == "loop":  # a rolled recurrence: its steps run one after another, each
        # paying one NumPy dispatch per operation (the floor on small arrays)
        n = sum(1 for b in e.params["body"].eqns if not is_view(b.prim))
        how = ""
        if settings.backend == "numba":  # (explain compiles on the configured backend)
            from .backends.numba.loop import why_not
            why = why_not(e)
            how = ", one numba kernel" if why is None else f", NumPy's loop: {why}"
        elif settings.backend == "numpy" and available("numba"):
            from .backends.numba.loop import why_not
            if why_not(e) is None:  # (not by default: BENCHMARKS.md, session 23 gradbench)
                how = (f", {e.params['length'] * n:,} NumPy calls; backend='numba' would run "
                       "them as one kernel, compiled on its first call (seconds; disk-cached)")
        return f"loop[{e.params['length']} steps x {n} operations{how}]"
    ps = ", ".join(f"{k}={v}" for k, v in e.params.items() if k in ("spec", "axes", "axis"))
    return e.prim.name + (f"[{ps}]" if ps else "")


def _shapes(e: Eqn) -> str:
    """Operand types, runs of equal ones folded (`f64[] x400`: a stack of 400 scalars)."""
    runs: list[list] = []
    for a in e.inputs:
        t = str(a.aval)
        if runs and runs[-1][0] == t:
            runs[-1][1] += 1
        else:
            runs.append([t, 1])
    ins = ", ".join(", ".join([t] * k) if k < 3 else f"{t} x{k}" for t, k in runs)
    return f"{ins} -> {e.out.aval}"


def _op_floor() -> float:
    """The cost of dispatching one NumPy call on a tiny array here: a floor for any eager AD."""
    x = np.ones(16)
    return measure(lambda: np.multiply(x, x), budget=0.05).min


def _backward_ops(traced: Graph, wrt: list[int]) -> int:
    """Operations an eager tape would run backward: for each differentiable equation, the
    size of its VJP (measured once per kind of equation on a one-equation graph)."""
    active = {traced.inputs[i] for i in wrt}
    per_kind: dict[tuple, int] = {}
    total = 0
    for e in traced.eqns:
        flags = tuple(isinstance(a, Var) and a in active for a in e.inputs)
        if e.prim.vjp is None or not any(flags):
            continue
        active.add(e.out)
        key = (e.prim, e.params, tuple(a.aval for a in e.inputs), flags)
        if key not in per_kind:
            per_kind[key] = _vjp_size(e, flags)
        total += per_kind[key]
    return total


def _vjp_size(e: Eqn, flags: tuple[bool, ...]) -> int:
    ins = [Var(a.aval) for a in e.inputs]
    one = Eqn(e.prim, tuple(ins), e.params, Var(e.out.aval), e.src)
    g = Graph(tuple(ins), (one,), (one.out,))
    back = vjp_graph(g, [i for i, f in enumerate(flags) if f])
    return len(back.eqns) - 1


def _eager_counts(traced: Graph, wrt: list[int]) -> tuple[dict[str, int], int, int]:
    n_back = _backward_ops(traced, wrt)
    active_reads = [e for e in traced.eqns if e.prim is P.getitem]
    zero_bytes = sum(e.inputs[0].aval.size * e.inputs[0].aval.dtype.itemsize
                     for e in active_reads)
    return {"forward": len(traced.eqns), "backward": n_back}, len(active_reads), zero_bytes


def _inplace(traced: Graph) -> dict[str, int]:
    out: dict[str, int] = {}
    for e in traced.eqns:
        if e.prim in (P.setitem, P.setitem_add):
            k = _where(e.src)
            out[k] = out.get(k, 0) + 1
    return out


def explain(fun: Callable, *args: Any, argnums: int | tuple = 0, budget: float = 0.5,
            top: int = 8) -> Report:
    """Compile `grad(fun, argnums)` for `args`, measure it, and explain its cost.

    `fun` is the scalar loss; `vg.grad(loss, argnums=k)`, `vg.value_and_grad(...)` and
    `vg.jit(loss)` are accepted for it and stand for `loss` (with their argnums).

    `budget` is the time in seconds spent timing each of the forward and the gradient. Returns
    a `Report` (print it for the text form); its fields are documented on the class.
    """
    fun, argnums = loss_of(fun, argnums, "vg.explain")
    g_fn, j_fn = grad(fun, argnums=argnums), jit(fun)
    t0 = time.perf_counter()
    entry, leaves = g_fn.entry(*args)
    compile_s = time.perf_counter() - t0
    jentry, _ = j_fn.entry(*args)
    fwd = measure(lambda: j_fn(*args), budget=budget)
    grd = measure(lambda: g_fn(*args), budget=budget)
    # (as an eager tape runs it, its leaves numbered as the gradient's are)
    traced = trace_graph(fun, args, hash_cons=False, call=entry.meta["call"])
    eager, n_zero, zero_bytes = _eager_counts(traced, entry.meta["wrt"])
    notes = entry.notes
    return Report(
        name=getattr(fun, "__name__", "function"), forward=fwd, gradient=grd,
        ratio=grd.min / fwd.min, compile_seconds=compile_s, compile_stages=dict(entry.times),
        eqns=dict(entry.counts),
        batched=_became(_found(notes, "batched"), entry),
        unbatched=_found(notes, "sequential", "split", "unbatched") + _repeated(entry, notes),
        hot=_hot(entry, leaves, top), eager_ops=eager, op_floor=_op_floor(),
        view_zero_arrays=n_zero, view_zero_bytes=zero_bytes, inplace_writes=_inplace(traced),
        memory={"forward_peak": peak_memory(lambda: j_fn(*args)),
                "gradient_peak": peak_memory(lambda: g_fn(*args)),
                "forward_arrays": _fresh(jentry.stages.get("final")),
                "gradient_arrays": _fresh(entry.stages.get("final"))},
        recurrences=_found(notes, "recurrence"))


def _fresh(g: Graph | None) -> int:
    """Arrays the compiled graph allocates (-1: the graph was too large to keep)."""
    return -1 if g is None else sum(1 for e in g.eqns if not is_view(e.prim))


__all__ = ["Found", "Hot", "Report", "explain"]
