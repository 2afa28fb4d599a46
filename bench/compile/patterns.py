"""First calls of pattern programs (issue 11's 1 s compile target for the patterns suite).

    python bench/compile/patterns.py --only coo_matvec_loop,rbf_kernel_quadratic [--repeat 2]

For each named program of bench/patterns at its "default" size, it compiles `vg.grad` in a
fresh function after `vg.clear_cache()` and calls it once (compile plus one gradient run),
`--repeat` times, and prints the min of the CPU seconds this process spent (what the other
jobs of a shared machine do not inflate). bench/patterns/run.py reports the same first call
in wall-clock seconds beside the gradient's speed.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import vecgrad as vg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from patterns import PATTERNS


def first_call(name: str, repeat: int) -> float:
    """CPU seconds of the first call of vg.grad of pattern `name`, min over `repeat`."""
    p = PATTERNS[name]
    args = p.args("default")
    best = float("inf")
    for _ in range(repeat):
        vg.clear_cache()

        def f(*a):
            return p.natural(*a)
        t = time.process_time()
        vg.grad(f, argnums=p.argnums)(*args)
        best = min(best, time.process_time() - t)
    return best


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", required=True, help="comma-separated pattern names")
    ap.add_argument("--repeat", type=int, default=2, help="compiles per program (min kept)")
    args = ap.parse_args(argv)
    for name in args.only.split(","):
        print(f"{name:32s} {first_call(name, args.repeat):6.2f} s", flush=True)


if __name__ == "__main__":
    main()
