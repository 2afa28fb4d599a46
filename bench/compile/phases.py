"""The batch stage's phases, timed one by one on the same traced graph (issue 11: what grows
from 1x to 10x trip counts).

    python bench/compile/phases.py [--only 000,001,002,loop] [--loop-n 100000]

For each seed program at its "seed" and "x10" size presets (and the scalar loop `s = s + x[i]`
at --loop-n and 10x that many iterations), it traces `vg.grad` once, then runs the batch
stage's phases by hand on the traced graph (as `batching._batch_once` does: use counts,
normalize, the quick scans for scatter-extremes, ragged slices and index lists, the dependence plan, heights,
the schedule, the emission, the final cse and dce, and freeing it all), twice, with the GC
off, and prints the CPU microseconds per traced operation of each (min of the two) at 1x and
10x. The machine is shared: compare columns of one run.
"""
from __future__ import annotations

import argparse
import gc
import os
import time
from typing import Any

import numpy as np

import vecgrad as vg
from vecgrad.batch import agenda
from vecgrad.batch import batching as B
from vecgrad.examples.seeds import WORKLOADS
from vecgrad.ir import Var, dce, uses
from vecgrad.rewrite.cse import cse

clock = time.process_time


def loop_sum(x: Any) -> Any:
    """A running sum, one element at a time (bench/compile/run.py's `loop`)."""
    s = 0.0
    for i in range(len(x)):
        s = s + x[i]
    return s


def traced(name: str, scale: int, loop_n: int) -> Any:
    if name == "loop":
        n = loop_n * scale
        os.environ["VECGRAD_MAX_EQNS"] = str(max(4 * n, 1_000_000))
        entry, _ = vg.grad(loop_sum).entry(np.random.default_rng(0).standard_normal(n))
    else:
        w = WORKLOADS[name]

        def f(*a: Any) -> Any:
            return w.loss(*a)
        entry, _ = vg.grad(f, argnums=w.argnums).entry(*w.inputs("seed" if scale == 1 else "x10"))
    return entry.stages["traced"]


def phases(g: Any) -> dict[str, float]:
    t: dict[str, float] = {}
    c = clock()
    n_uses = uses(g)
    t["uses"], c = clock() - c, clock()
    g1 = B.normalize(g, n_uses)
    t["normalize"], c = clock() - c, clock()
    B.scatter_extremes(g1)
    B.partial_slices(g1)
    B.list_reads(g1)
    t["quick scans"], c = clock() - c, clock()
    p = B.plan(g1, n_uses if g1 is g else None)
    t["plan"], c = clock() - c, clock()
    agenda.heights(p)
    t["heights"], c = clock() - c, clock()
    groups = list(agenda.schedule(p))
    t["schedule"], c = clock() - c, clock()
    em = B._Emitter(p)
    for members in groups:
        em.emit(members)
    em.b.src = None
    t["emit"], c = clock() - c, clock()
    outs = [em.ref(p.resolve(a)).atom if a.__class__ is Var else a for a in p.g.outputs]
    dce(cse(em.b.build(outs, g.notes + em.notes.finish())))
    t["finish"], c = clock() - c, clock()
    del p, em, groups, g1, n_uses
    t["free"] = clock() - c
    return t


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="000,001,002,loop")
    ap.add_argument("--loop-n", type=int, default=100_000)
    args = ap.parse_args(argv)
    vg.config(keep_stages=True, keep_stage_eqns=10**9)
    for name in args.only.split(","):
        per: dict[int, tuple[int, dict[str, float]]] = {}
        for scale in (1, 10):
            g = traced(name, scale, args.loop_n)
            gc.disable()
            try:
                runs = [phases(g) for _ in range(2)]
            finally:
                gc.enable()
            per[scale] = (len(g.eqns), {k: min(r[k] for r in runs) for k in runs[0]})
            del g
        (n1, t1), (n10, t10) = per[1], per[10]
        print(f"{name}: {n1:,} and {n10:,} traced operations; us/op at 1x / 10x")
        for k in t1:
            print(f"  {k:12s} {t1[k] / n1 * 1e6:7.3f} {t10[k] / n10 * 1e6:7.3f}")
        print(f"  {'total':12s} {sum(t1.values()) / n1 * 1e6:7.3f} "
              f"{sum(t10.values()) / n10 * 1e6:7.3f}")


if __name__ == "__main__":
    main()
