"""What gets batched, as fingerprints: a guard for changes that must only make compiling faster.

    python bench/compile/graphs.py [--sizes small,seed] [--only NAMES] > before.txt
    ... change the tracer or batching's bookkeeping ...
    python bench/compile/graphs.py [--sizes small,seed] [--only NAMES] | diff before.txt -

For each seed program (src/vecgrad/examples/seeds.py) at each size preset and each program of
the patterns suite (bench/patterns, its "small" preset), it compiles `vg.grad` in deterministic
mode with every stage kept and prints one line: the name, then for the trace ("traced"), the
batched graph ("batch"), the graph after scans ("scans") and the compiled one ("final") the
equation count and a hash of its listing (`ir.pretty`: primitives, parameters, avals, wiring and source lines). Two runs
print the same lines exactly when the graphs are the same.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
from pathlib import Path

os.environ.setdefault("VECGRAD_DETERMINISTIC", "1")

import vecgrad as vg
from vecgrad.examples.seeds import WORKLOADS
from vecgrad.ir import pretty

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from patterns import PATTERNS

STAGES = ("traced", "batch", "scans", "final")


def fingerprint(fun, args: tuple, argnums) -> str:
    """`stage:eqns:hash` of each of STAGES of vg.grad(fun) at `args`."""
    def f(*a):
        return fun(*a)
    entry, _ = vg.grad(f, argnums=argnums).entry(*args)
    out = []
    for s in STAGES:
        g = entry.stages.get(s)
        if g is None:
            out.append(f"{s}:-")
            continue
        h = hashlib.sha1(pretty(g).encode()).hexdigest()[:12]
        out.append(f"{s}:{len(g.eqns)}:{h}")
    return " ".join(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="small,seed", help="seed size presets (small,seed,x10)")
    ap.add_argument("--only", default="", help="comma-separated names (seeds or patterns)")
    args = ap.parse_args(argv)
    only = set(filter(None, args.only.split(",")))
    vg.config(keep_stages=True, keep_stage_eqns=10**9, deterministic=True)
    for name, w in WORKLOADS.items():
        for preset in args.sizes.split(","):
            if not only or name in only:
                print(f"seed{name}/{preset} {fingerprint(w.loss, w.inputs(preset), w.argnums)}",
                      flush=True)
    for name, p in PATTERNS.items():
        if not only or name in only:
            print(f"{name} {fingerprint(p.natural, p.args('small'), p.argnums)}", flush=True)


if __name__ == "__main__":
    main()
