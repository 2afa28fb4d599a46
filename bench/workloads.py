"""The benchmark engine: the seed workloads (`vecgrad.examples.seeds.WORKLOADS`) measured in
this process, and a BenchmarkTools-style timer (`trial`) for the engines compared with them.
"""
from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from vecgrad.examples.seeds import WORKLOADS, Workload, grad_norm

# One tracemalloc peak for explain and the benchmark (explain's helper; it could live in timing).
from vecgrad.timing import Stats, _sample, fmt_time, measure, peak_memory, table

# Re-exported: bench/run.py and compare.py import the seeds and the timer from here.
__all__ = [
    "WORKLOADS",
    "Stats",
    "Trial",
    "Workload",
    "benchmark",
    "cache_hit_overhead",
    "equation_counts",
    "fmt_time",
    "grad_norm",
    "measure",
    "peak_memory",
    "table",
    "trial",
]


def benchmark(w: Workload, preset: str = "seed", repeat: int | None = None,
              budget: float = 1.0) -> dict[str, Any]:
    """Measure one workload in this process: the NumPy forward, the gradient's compile (by
    stage) and runs, the jit forward, and the equation counts. Times are in seconds."""
    import vecgrad as vg

    args = w.inputs(preset)
    loss = w.fresh_loss()
    rec: dict[str, Any] = {"seed": w.name, "title": w.title, "sizes": preset}
    rec["numpy_forward"] = measure(lambda: w.numpy_forward(*args), repeat, budget)
    g = vg.grad(loss, argnums=w.argnums)
    t0 = time.perf_counter()
    entry, _ = g.entry(*args)
    rec["compile"] = time.perf_counter() - t0
    rec["compile_stages"] = dict(entry.times)
    rec["eqns"] = equation_counts(entry.counts)
    grads = g(*args)
    rec["grad_norm"] = grad_norm(grads)
    rec["grad"] = measure(lambda: g(*args), repeat, budget)
    f = vg.jit(loss)
    t0 = time.perf_counter()
    rec["value"] = float(f(*args))
    rec["jit_compile"] = time.perf_counter() - t0
    rec["jit_forward"] = measure(lambda: f(*args), repeat, budget)
    rec["value_numpy"] = float(w.numpy_forward(*args))
    rec["ratio"] = rec["grad"].min / rec["numpy_forward"].min
    return rec


def equation_counts(counts: dict[str, int]) -> dict[str, int]:
    """Equations traced, after cse, after the batch pass, and in the final gradient graph."""
    return {"traced": counts["traced"], "cse": counts["cse"], "batch": counts["batch"],
            "grad": counts["final"]}


def cache_hit_overhead(repeat: int | None = None) -> dict[str, float]:
    """Seconds that `Transformed.__call__` adds over calling the generated code directly,
    for the gradient and the jit of a tiny function (min over samples)."""
    import vecgrad as vg
    import vecgrad.numpy as vnp

    def tiny(x: Any) -> Any:
        return vnp.sum(x * x)

    x = np.ones(3)
    out = {}
    for kind, t in [("grad", vg.grad(tiny)), ("jit", vg.jit(tiny))]:
        entry, leaves = t.entry(x)
        call = measure(functools.partial(t, x), repeat, budget=0.3)
        direct = measure(functools.partial(entry.compiled.fn, *leaves), repeat, budget=0.3)
        out[kind] = call.min - direct.min
    return out


@dataclass(frozen=True)
class Trial:
    """A BenchmarkTools-style timing: seconds per call over `runs` samples of `number` calls.

    `memory` is the tracemalloc peak of one call in bytes (None where not measured), and
    `capped` means the first call took longer than the cap, so it is the only one timed.
    """

    min: float
    median: float
    mean: float
    runs: int
    number: int
    memory: int | None = None
    capped: bool = False


def trial(fn: Callable[[], Any], repeat: int | None = None, budget: float = 1.0,
          cap: float = 1.0, memory: bool = False) -> Trial:
    """Time `fn()`: a first call, then samples until `budget` seconds are spent (at least 3,
    at most 1000) or exactly `repeat` samples. A first call longer than `cap` seconds is the
    only measurement (slow engines would otherwise take minutes). With `memory`, one more
    call measures the tracemalloc peak (unless capped)."""
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    if first > cap and repeat is None:
        return Trial(first, first, first, 1, 1, None, True)
    number = max(1, int(2e-4 / max(first, 1e-9)))
    samples: list[float] = []
    t0 = time.perf_counter()
    while len(samples) < (repeat or 1000):
        samples.append(_sample(fn, number))
        if repeat is None and len(samples) >= 3 and time.perf_counter() - t0 > budget:
            break
    peak = peak_memory(fn) if memory else None
    return Trial(min(samples), statistics.median(samples), statistics.fmean(samples),
                 len(samples), number, peak)

