"""Why compile time per operation grows with the trace (issue 11's 10x target): the cost of the
table operations batching does once per equation, on a seed's traced graph at two sizes.

    python bench/compile/tables.py [--seed 001] [--sizes seed,x10] [--repeat 3]

For each size it traces `vg.grad` of the seed once and times, in nanoseconds per equation (CPU
time, min over the repeats), loops that do only what `deps.plan` does per equation: unpack the
equation, read its operands' avals, append one list per node, insert its result into a dict
keyed by the result var (`Plan.prod`), and look its operands up there. The code is the same at
both sizes; what changes is how many entries the tables hold.
"""
from __future__ import annotations

import argparse
import gc
import time

import vecgrad as vg
from vecgrad.examples.seeds import WORKLOADS
from vecgrad.ir import Graph, Var


def traced(seed: str, preset: str) -> Graph:
    w = WORKLOADS[seed]

    def f(*a):
        return w.loss(*a)
    entry, _ = vg.grad(f, argnums=w.argnums).entry(*w.inputs(preset))
    return entry.stages["traced"]


def loops(g: Graph) -> dict:
    eqns = g.eqns

    def unpack():
        for e in eqns:
            _prim, _ins, _params, _out, _ = e

    def avals():
        for e in eqns:
            for a in e[1]:
                _ = a.aval

    def lists():
        succ = []
        for _ in eqns:
            succ.append([])

    def insert():
        prod = {}
        for i, e in enumerate(eqns):
            prod[e[3]] = i
        return prod
    prod = insert()

    def lookup():
        get = prod.get
        for e in eqns:
            for a in e[1]:
                if a.__class__ is Var:
                    get(a)
    return {"unpack": unpack, "operand avals": avals, "a list per node": lists,
            "dict insert (result)": insert, "dict lookup (operands)": lookup}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", default="001")
    ap.add_argument("--sizes", default="seed,x10")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    vg.config(keep_stages=True, keep_stage_eqns=10**9)
    rows = {}
    sizes = args.sizes.split(",")
    for preset in sizes:
        g = traced(args.seed, preset)
        n = len(g.eqns)
        gc.disable()
        for name, fn in loops(g).items():
            best = min(_timed(fn) for _ in range(args.repeat))
            rows.setdefault(name, {})[preset] = (best * 1e9 / n, n)
        gc.enable()
    head = f"{'seeds/' + args.seed + ', ns per equation':32}" + "".join(
        f"{p + ' (' + format(rows['unpack'][p][1], ',') + ' eqns)':>24}" for p in sizes)
    print(head)
    for name, r in rows.items():
        print(f"{name:32}" + "".join(f"{r[p][0]:>24.0f}" for p in sizes))


def _timed(fn) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


if __name__ == "__main__":
    main()
