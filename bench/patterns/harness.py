"""Checks and measurements of one `Pattern`, shared by the benchmark runner and the tests.

- `check_value`: vecgrad's compiled forward of the natural program against the reference.
- `check_grad`: vecgrad's gradient of the natural program against central differences of the
  *reference* (float64, random directions), so the two implementations check each other.
- `measure_pattern`: in one process, the reference forward, the first gradient call (compile),
  the compiled gradient, the cache-hit call overhead, and `vg.explain`'s account of what did not
  batch.
"""
from __future__ import annotations

import functools
import time
from typing import Any

import numpy as np

import vecgrad as vg
from vecgrad.backends.numpy.heap import retain_heap
from vecgrad.pytree import flatten, unflatten
from vecgrad.timing import measure

from .core import COMPILE_TARGET, TARGETS, Pattern


def fresh(fun: Any) -> Any:
    """A new function object wrapping `fun`, so that its compile cache starts empty."""
    @functools.wraps(fun)
    def wrapper(*args: Any) -> Any:
        return fun(*args)
    return wrapper


def as_float64(args: tuple, argnums: tuple[int, ...]) -> tuple:
    """`args` with the floating leaves of the differentiated arguments in float64."""
    out = list(args)
    for a in argnums:
        leaves, td = flatten(args[a])
        out[a] = unflatten(td, [np.asarray(x, np.float64) for x in leaves])
    return tuple(out)


def rel_err(got: float, want: float) -> float:
    """|got - want| relative to |want| (absolute below 1)."""
    return abs(got - want) / max(abs(want), 1.0)


def check_value(p: Pattern, args: tuple) -> float:
    """Relative error of vecgrad's compiled forward against the reference."""
    return rel_err(float(vg.jit(p.natural)(*args)), p.ref_value(args))


def check_grad(p: Pattern, args: tuple, grads: Any, n_dirs: int = 3, eps: float = 1e-6,
               seed: int = 0) -> float:
    """Largest relative error of <grads, d> against the reference's central difference
    (f(x + eps d) - f(x - eps d)) / (2 eps) in float64 along random directions d."""
    grads = (grads,) if len(p.argnums) == 1 else grads
    args64 = as_float64(args, p.argnums)
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(n_dirs):
        dirs = {a: [rng.standard_normal(np.shape(x)) for x in flatten(args64[a])[0]]
                for a in p.argnums}
        analytic = sum(float(np.vdot(np.asarray(g, np.float64), d))
                       for a, ga in zip(p.argnums, grads)
                       for g, d in zip(flatten(ga)[0], dirs[a]))
        fd = (p.ref_value(_shift(args64, dirs, eps)) -
              p.ref_value(_shift(args64, dirs, -eps))) / (2 * eps)
        worst = max(worst, abs(analytic - fd) / max(abs(fd), 1e-3))
    return worst


def _shift(args: tuple, dirs: dict, eps: float) -> tuple:
    out = list(args)
    for a, ds in dirs.items():
        leaves, td = flatten(args[a])
        out[a] = unflatten(td, [x + eps * d for x, d in zip(leaves, ds)])
    return tuple(out)


def not_batched(report: Any, width: int = 400) -> str:
    """One line from a `vg.explain` report: each source line whose work stayed unmerged, with
    its trip count and explain's reason; "all batched" when there are none (a few operations
    left on lines that did batch are a fixed cost, not named here)."""
    major = report.split_unbatched()[0]
    if not major:
        return "all batched"
    parts = []
    for f in major:
        loc = f"{f.src.file.rsplit('/', 1)[-1]}:{f.src.line}"
        parts.append(_clip(f.reason if loc in f.reason else f"{loc} x{f.count}: {f.reason}",
                           160))
    return _clip(f"{len(parts)} line(s) unbatched: " + "; ".join(parts), width)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def measure_pattern(p: Pattern, preset: str = "default", repeat: int | None = None,
                    budget: float = 0.5, explain: bool = True) -> dict[str, Any]:
    """Measure `p` at a size preset in this process; times in seconds. The record holds the
    reference forward and the gradient (`Stats`), the compile time of the first gradient call,
    the call overhead (the gradient call minus its generated code), the value and gradient
    errors, the ratio gradient / reference forward, the target and whether it was met."""
    retain_heap()  # (the reference runs under the malloc settings the gradient's code sets)
    args = p.args(preset)
    ref_args = p.prepare(args)
    rec: dict[str, Any] = {"name": p.name, "item": p.item, "target_kind": p.target,
                           "target": TARGETS[p.target], "sizes": p.sizes[preset]}
    rec["reference"] = measure(lambda: p.reference(*ref_args), repeat, budget)
    loss = fresh(p.natural)
    g = vg.grad(loss, argnums=p.argnums)
    t0 = time.perf_counter()
    entry, leaves = g.entry(*args)
    rec["compile"] = time.perf_counter() - t0
    rec["eqns"] = dict(entry.counts)
    grads = g(*args)
    rec["value_err"] = check_value(p, args)
    rec["grad_err"] = check_grad(p, args, grads)
    rec["grad"] = measure(lambda: g(*args), repeat, budget)
    direct = measure(lambda: entry.compiled.fn(*leaves), repeat, budget / 2)
    rec["overhead"] = max(0.0, rec["grad"].min - direct.min) / rec["grad"].min
    rec["ratio"] = rec["grad"].min / rec["reference"].min
    rec["explain"] = (not_batched(vg.explain(loss, *args, argnums=p.argnums, budget=0.02))
                      if explain else "")
    rec["checks_ok"] = rec["value_err"] < 1e-5 and rec["grad_err"] < 1e-4
    rec["passed"] = (rec["checks_ok"] and rec["ratio"] <= rec["target"]
                     and rec["compile"] <= COMPILE_TARGET
                     and (p.item != 8 or rec["overhead"] <= 0.05))
    return rec
