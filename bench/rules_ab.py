"""A seed's compiled gradient with and without some rewrite rules, timed in turns in one process.

    python bench/rules_ab.py SEED [--drop 'substring,substring'] [--rounds 3] [--calls 50]

Rules whose algebra comment contains one of the substrings are dropped from
`vecgrad.rewrite.simplify.RULES` for the "without" build. Prints the min time of the compiled
gradient of each build and of the NumPy forward, round by round.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import functools
import sys
import time

import vecgrad as vg
from vecgrad.examples import seeds
from vecgrad.rewrite import simplify as S

# The rules added for issue 14's patterns (2026-11-23 afternoon).
ISSUE14 = "f(x, full(c)),a * (b * x),-(a * x),(-x) * a,sum(-x),sum(einsum,x.at[w],segment_sum(u, i)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/rules_ab.py", description=__doc__)
    ap.add_argument("seed", choices=sorted(seeds.WORKLOADS))
    ap.add_argument("--drop", default=ISSUE14)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=50)
    a = ap.parse_args(argv)
    w = seeds.WORKLOADS[a.seed]
    args = w.inputs("seed")
    every = list(S.RULES)
    drop = [d for d in a.drop.split(",") if d]

    def build(without: bool):
        S.RULES[:] = [r for r in every if not (without and any(d in r.algebra for d in drop))]
        f = functools.wraps(w.loss)(lambda *xs: w.loss(*xs))
        e, leaves = vg.grad(f, argnums=w.argnums).entry(*args)
        S.RULES[:] = every
        return functools.partial(e.compiled.fn, *leaves), len(e.stages["final"].eqns) \
            if "final" in e.stages else None

    def best(fn) -> float:
        out = float("inf")
        for _ in range(a.calls):
            t0 = time.perf_counter()
            fn()
            out = min(out, time.perf_counter() - t0)
        return out
    (with_, n1), (without, n2) = build(False), build(True)
    ref = functools.partial(w.numpy_forward, *args)
    for k in range(a.rounds):
        print(f"round {k}: with {best(with_) * 1e3:.3f} ms, without {best(without) * 1e3:.3f} ms,"
              f" NumPy forward {best(ref) * 1e3:.3f} ms")
    print(f"operations in the compiled gradient: with {n1}, without {n2}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
