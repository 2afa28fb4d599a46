"""The batch stage's passes, timed inside real compiles of pattern programs and seeds (issue
11: which pass makes a program's first call exceed 1 s).

    python bench/compile/passes.py --only coo_matvec_loop,segment_zscores,001 [--repeat 2]

For each named pattern program (bench/patterns, "default" size) or seed (src/vecgrad/examples/
seeds.py, "seed" size), it compiles `vg.grad` in a fresh function `--repeat` times and prints,
for the fastest compile (CPU seconds), the traced operations, the compile's CPU seconds and
each pass of `batching._batch_once` in CPU microseconds per traced operation: the quick looks
and the optional passes (decays, addchains, extremes, rmwchains, setchains, ragged and packed
slices, lists), normalize, uses, dce, the dependence plan, the schedule and the emission (schedule is
a generator: its share is counted in `emit`'s group loop where the two interleave). Unlike
phases.py, which replays the phases by hand on seeds' traced graphs, this wraps the functions
that batching calls, so every pass that runs in a real compile is counted. The machine is
shared: compare figures of one run, or alternate runs of two trees.
"""
from __future__ import annotations

import argparse
import functools
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import vecgrad as vg
from vecgrad.batch import batching as B
from vecgrad.examples.seeds import WORKLOADS

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from patterns import PATTERNS

clock = time.process_time
PASSES = ["uses", "normalize", "dce", "decayed_scatters", "scale_scatters", "static_add_chains",
          "join_static_adds", "scatter_extremes",
          "join_extremes", "affine_rmw_writes", "join_affine_rmw", "traced_set_writes",
          "join_set_writes", "partial_slices", "cumulative_sums", "packed_rows", "list_reads",
          "list_sums", "list_maps", "plan", "cse"]
spent: dict[str, float] = {}


def _timed(name: str, fn: Any) -> Any:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        t = clock()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[name] = spent.get(name, 0.0) + clock() - t
    return run


def instrument() -> None:
    """Wrap the passes in batching's namespace and the emitter's per-group method."""
    for name in PASSES:
        setattr(B, name, _timed(name, getattr(B, name)))
    B._Emitter.emit = _timed("emit", B._Emitter.emit)


def program(name: str) -> tuple[Any, tuple, Any]:
    if name in WORKLOADS:
        w = WORKLOADS[name]
        return w.loss, w.inputs("seed"), w.argnums
    p = PATTERNS[name]
    return p.natural, p.args("default"), p.argnums


def measure(name: str, repeat: int) -> tuple[int, float, dict[str, float]]:
    """(traced operations, CPU seconds, seconds per pass) of the fastest of `repeat` compiles."""
    fun, args, argnums = program(name)
    best: tuple | None = None
    for _ in range(repeat):
        spent.clear()

        def f(*a: Any) -> Any:
            return fun(*a)
        t = clock()
        entry, _ = vg.grad(f, argnums=argnums).entry(*args)
        cpu = clock() - t
        if best is None or cpu < best[1]:
            best = (entry.counts["traced"], cpu, dict(spent))
    assert best is not None
    return best


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", required=True, help="comma-separated pattern or seed names")
    ap.add_argument("--repeat", type=int, default=2, help="compiles per program (min kept)")
    args = ap.parse_args(argv)
    instrument()
    for name in args.only.split(","):
        n, cpu, per = measure(name, args.repeat)
        passes = " ".join(f"{k}={v / n * 1e6:.2f}" for k, v in
                          sorted(per.items(), key=lambda kv: -kv[1]) if v / n * 1e6 >= 0.01)
        print(f"{name:28s} {n:>8,} ops  compile {cpu:5.2f} s CPU  batch passes (us/op): "
              f"{passes}", flush=True)


if __name__ == "__main__":
    main()
