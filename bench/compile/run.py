"""Compile-time benchmark (issue 11): what the first call of a loop-style gradient costs, per
traced operation and per stage, against the user's own loop run on plain NumPy arrays.

    python bench/compile/run.py [--only 000,001,002,loop,loop-decay] [--scales 1,10]
                                [--repeat N] [--loop-n N] [--sizes seed|small] [--memory]
                                [--clock wall|cpu] [--limit N] [--json out.json]

(also `python -m vecgrad bench compile ...`). For each seed program (src/vecgrad/examples/
seeds.py) at 1x and 10x its trip counts (the "seed" and "x10" size presets), and for scalar
loops of `--loop-n` iterations (for which VECGRAD_MAX_EQNS is raised to 4 operations per
iteration), it compiles `vg.grad` in a fresh function `--repeat` times (clearing the compile
cache each time) and prints:

- microseconds per traced operation in each stage (trace, batch, the other passes, AD,
  codegen), min over the repeats, stage by stage; an operation is an equation of the traced
  graph (recorded hash-consed, so a loop-invariant computation counts once);
- the first call (compile and one run of the gradient), min over the repeats, next to the
  floor: the same function run on plain NumPy arrays (the user's own loop, no tracing), min
  over runs in the same process, and their ratio; and the 10x/1x growth of each;
- with --memory, one more compile per workload under tracemalloc: its peak, and the bytes that
  the compile cache keeps for the entry (what a cache hit needs);
- with --limit N, a scalar loop of N iterations (2 operations each) past the default operation
  limit (VECGRAD_MAX_EQNS), in a fresh process: the seconds until its TraceError, the
  operations recorded by then, and the process's peak memory (max RSS) above its size after
  `import vecgrad` (Linux: /proc/self/status).

The machine is shared and noisy: every figure is a min over repeats measured in this one
process, and ratios are taken between figures of the same run.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

# A 2-core machine shared by several jobs: threaded BLAS calls stall on each other (and spin,
# which a CPU clock counts); as bench/patterns, one BLAS thread unless told otherwise.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
# Kernel choices go to a fresh cache directory unless one is given, so that every first call
# measured here is a first call on this machine (set VECGRAD_CACHE_DIR to measure a warm one).
os.environ.setdefault("VECGRAD_CACHE_DIR", tempfile.mkdtemp(prefix="vecgrad-bench-cache-"))

import numpy as np

import vecgrad as vg
from vecgrad.examples.seeds import WORKLOADS
from vecgrad.timing import fmt_time, table

STAGES = ["trace", "batch", "passes", "ad", "codegen"]
SCALES = {1: "seed", 10: "x10"}


# ----------------------------------------------------------------------- scalar loops

def loop_sum(x: Any) -> Any:
    """A running sum, one element at a time: 2 traced operations per iteration."""
    s = 0.0
    for i in range(len(x)):
        s = s + x[i]
    return s


def loop_decay(x: Any) -> Any:
    """A discounted sum (a linear recurrence): 3 traced operations per iteration."""
    s = 0.0
    for i in range(len(x)):
        s = 0.5 * s + x[i]
    return s


LOOPS: dict[str, Callable[[Any], Any]] = {"loop": loop_sum, "loop-decay": loop_decay}


# ----------------------------------------------------------------------- workloads

class Case:
    """One program at one size: a loss, its arguments, the arguments to differentiate."""

    def __init__(self, name: str, scale: int, loss: Callable, args: tuple, argnums: Any,
                 floor_fn: Callable[[], Any]):
        self.name, self.scale, self.loss, self.args = name, scale, loss, args
        self.argnums, self.floor_fn = argnums, floor_fn


def cases(args: argparse.Namespace) -> list[Case]:
    out = []
    for name in args.only:
        for scale in args.scales if name in WORKLOADS else [1]:  # (loops: --loop-n)
            if name in WORKLOADS:
                w = WORKLOADS[name]
                preset = SCALES[scale] if args.sizes == "seed" else "small"
                if args.sizes == "small" and scale != 1:
                    continue
                a = w.inputs(preset)
                out.append(Case(name, scale, w.loss, a, w.argnums,
                                lambda w=w, a=a: w.loss(*a)))
            else:
                fn = LOOPS[name]
                x = np.random.default_rng(0).standard_normal(args.loop_n)
                out.append(Case(name, scale, fn, (x,), 0, lambda fn=fn, x=x: fn(x)))
    return out


def fresh(fn: Callable) -> Callable:
    """A new function object calling `fn`: its compile cache starts empty."""
    def f(*a: Any) -> Any:
        return fn(*a)
    f.__name__ = getattr(fn, "__name__", "f")
    return f


def first_call(c: Case) -> dict[str, Any]:
    """One compile of vg.grad on a fresh function: stage times, counts, first-call time."""
    vg.clear_cache()
    gc.collect()
    g = vg.grad(fresh(c.loss), argnums=c.argnums)
    t0 = time.perf_counter()
    entry, _ = g.entry(*c.args)
    compile_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    g(*c.args)
    run_s = time.perf_counter() - t1
    t = dict(entry.times)
    stages = {"trace": t.pop("trace", 0.0), "batch": t.pop("batch", 0.0),
              "ad": t.pop("ad", 0.0), "codegen": t.pop("codegen", 0.0)}
    stages["passes"] = sum(v for k, v in t.items())
    counts = entry.counts
    return {"stages": stages, "compile": compile_s, "first_call": compile_s + run_s,
            "eqns": counts.get("traced", 0), "batched": counts.get("batch", 0),
            "final": counts.get("final", 0)}


def floor(c: Case, repeat: int) -> float:
    """Min seconds of the user's function on plain NumPy arrays (at most ~3 s of runs)."""
    best, spent = float("inf"), 0.0
    for _ in range(repeat):
        t0 = time.perf_counter()
        c.floor_fn()
        dt = time.perf_counter() - t0
        best, spent = min(best, dt), spent + dt
        if spent > 3.0:
            break
    return best


def memory(c: Case) -> dict[str, int]:
    """tracemalloc figures of one more compile: the peak while compiling, and what stays
    allocated afterwards in the cache entry (measured as the drop when the cache is cleared)."""
    vg.clear_cache()
    gc.collect()
    g = vg.grad(fresh(c.loss), argnums=c.argnums)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        g.entry(*c.args)
        gc.collect()
        held, peak = tracemalloc.get_traced_memory()
        vg.clear_cache()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return {"peak": peak - base, "entry": held - after}


def measure(c: Case, args: argparse.Namespace) -> dict[str, Any]:
    print(f"[compile] {c.name} x{c.scale} ...", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    limit = os.environ.get("VECGRAD_MAX_EQNS")
    if c.name in LOOPS:  # (a scalar loop records 2-3 operations per iteration)
        os.environ["VECGRAD_MAX_EQNS"] = str(max(int(limit or 0), 4 * len(c.args[0])))
    try:
        runs = [first_call(c) for _ in range(args.repeat)]
    finally:
        if limit is None:
            os.environ.pop("VECGRAD_MAX_EQNS", None)
        else:
            os.environ["VECGRAD_MAX_EQNS"] = limit
    rec: dict[str, Any] = {"name": c.name, "scale": c.scale, "eqns": runs[0]["eqns"],
                           "batched": runs[0]["batched"], "final": runs[0]["final"]}
    rec["stages"] = {s: min(r["stages"][s] for r in runs) for s in STAGES}
    rec["compile"] = min(r["compile"] for r in runs)
    rec["first_call"] = min(r["first_call"] for r in runs)
    rec["floor"] = floor(c, max(args.repeat, 3))
    if args.memory:
        rec["memory"] = memory(c)
    print(f"[compile] {c.name} x{c.scale} done in {time.perf_counter() - t0:.1f} s",
          file=sys.stderr, flush=True)
    return rec


# ----------------------------------------------------------------------- the operation limit

LIMIT_SCRIPT = """
import sys, time
import numpy as np
import vecgrad as vg
from vecgrad.builder import _limit
def rss(field):  # kB -> bytes (VmHWM, the peak, starts afresh at exec, unlike ru_maxrss)
    line = next(l for l in open('/proc/self/status') if l.startswith(field))
    return int(line.split()[1]) * 1024
def loop_sum(x):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i]
    return s
x = np.ones(int(sys.argv[1]))
base = rss('VmRSS:')
t0, c0 = time.perf_counter(), time.process_time()
try:
    vg.grad(loop_sum)(x)
    print("no error", file=sys.stderr)
    sys.exit(1)
except vg.TraceError as e:
    dt, dc = time.perf_counter() - t0, time.process_time() - c0
    print(dt, dc, rss('VmHWM:') - base, _limit(), str(e).split(":", 1)[0])
"""


def limit_case(n: int) -> dict[str, Any]:
    """A loop of n iterations past the operation limit, in a fresh process (max RSS is per
    process): seconds to the error, the limit, peak memory above the imported baseline."""
    import subprocess
    env = {k: v for k, v in os.environ.items() if k != "VECGRAD_MAX_EQNS"}
    print(f"[compile] limit: a loop of {n:,} iterations ...", file=sys.stderr, flush=True)
    p = subprocess.run([sys.executable, "-c", LIMIT_SCRIPT, str(n)], env=env, check=True,
                       capture_output=True, text=True)
    dt, cpu, peak, limit, head = p.stdout.strip().split(" ", 4)
    return {"n": n, "seconds": float(dt), "cpu": float(cpu), "peak": int(peak),
            "limit": int(limit), "message": head}


def limit_table(rec: dict[str, Any]) -> str:
    return table(["loop iterations", "operation limit", "to the error (wall)", "(cpu)",
                  "peak memory (RSS growth)", "error"],
                 [[f"{rec['n']:,}", f"{rec['limit']:,}", f"{rec['seconds']:.2f} s",
                   f"{rec['cpu']:.2f} s", f"{rec['peak'] / 2**20:.0f} MB", rec["message"]]])


# ----------------------------------------------------------------------- report

def us_per_op(rec: dict[str, Any], s: float) -> str:
    return f"{s / max(rec['eqns'], 1) * 1e6:.2f}"


def stage_table(recs: list[dict[str, Any]]) -> str:
    rows = [[r["name"], f"{r['scale']}x", f"{r['eqns']:,}"]
            + [us_per_op(r, r["stages"][s]) for s in STAGES]
            + [us_per_op(r, r["compile"]), f"{r['batched']:,}", f"{r['final']:,}"]
            for r in recs]
    return table(["program", "trips", "ops traced"] + [f"{s} us/op" for s in STAGES]
                 + ["compile us/op", "eqns batched", "eqns final"], rows)


def call_table(recs: list[dict[str, Any]]) -> str:
    one = {r["name"]: r for r in recs if r["scale"] == 1}
    rows = []
    for r in recs:
        base = one.get(r["name"]) if r["scale"] != 1 else None
        growth = f"{r['first_call'] / base['first_call']:.1f}x" if base else "-"
        rows.append([r["name"], f"{r['scale']}x", fmt_time(r["first_call"]),
                     fmt_time(r["floor"]), f"{r['first_call'] / r['floor']:.1f}x", growth,
                     f"{r['eqns'] / base['eqns']:.1f}x" if base else "-"])
    return table(["program", "trips", "first call", "NumPy loop (floor)", "first / floor",
                  "first call vs 1x", "ops vs 1x"], rows)


def memory_table(recs: list[dict[str, Any]]) -> str:
    mb = 1 / 2**20
    rows = [[r["name"], f"{r['scale']}x", f"{r['memory']['peak'] * mb:.1f} MB",
             f"{r['memory']['peak'] / max(r['eqns'], 1):.0f} B",
             f"{r['memory']['entry'] * mb:.2f} MB"] for r in recs if "memory" in r]
    return table(["program", "trips", "compile peak (tracemalloc)", "peak per op",
                  "kept by the cache entry"], rows)


def report(recs: list[dict[str, Any]], args: argparse.Namespace) -> str:
    head = (f"vecgrad compile benchmark: clock={args.clock}, repeat={args.repeat}, python "
            f"{platform.python_version()}, numpy {np.__version__}, {platform.machine()}, "
            f"loop n={args.loop_n:,}")
    parts = [head,
             "Compile time per traced operation, by stage (us/op, min over repeats)\n"
             + stage_table(recs),
             "First call (compile + one gradient run) against the user's loop on NumPy "
             "arrays\n" + call_table(recs)]
    if args.memory:
        parts.append("Memory\n" + memory_table(recs))
    return "\n\n".join(parts)


def calibrate() -> float | None:
    """Seconds to measure this machine's kernel cost model (None: this vecgrad has none)."""
    try:
        from vecgrad import kernels
    except ImportError:
        return None
    t0 = time.perf_counter()
    kernels.machine()
    return time.perf_counter() - t0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bench/compile/run.py",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default="000,001,002,loop",
                   help=f"comma-separated programs: {', '.join(list(WORKLOADS) + list(LOOPS))}")
    p.add_argument("--scales", default="1,10", help="trip-count multiples: 1, 10 or 1,10")
    p.add_argument("--sizes", choices=["seed", "small"], default="seed",
                   help="'seed' (the user reports' sizes) or 'small' (smoke test, 1x only)")
    p.add_argument("--repeat", type=int, default=3, help="compiles per program (min is kept)")
    p.add_argument("--loop-n", type=int, default=1_000_000,
                   help="iterations of the scalar loops at 1x")
    p.add_argument("--memory", action="store_true", help="also measure memory (tracemalloc)")
    p.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                   help="'wall' (time.perf_counter, default) or 'cpu' (this process's CPU time: "
                        "what the other jobs of a shared machine do not inflate)")
    p.add_argument("--limit", type=int, default=0, metavar="N",
                   help="also run a scalar loop of N iterations past the operation limit "
                        "(e.g. 5000000): time to the error and peak memory")
    p.add_argument("--json", metavar="PATH", help="also write the records as JSON")
    args = p.parse_args(argv)
    args.only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in args.only if s not in WORKLOADS and s not in LOOPS]
    if unknown:
        p.error(f"unknown program(s) {', '.join(unknown)}")
    try:
        args.scales = [int(s) for s in args.scales.split(",")]
    except ValueError:
        p.error("--scales takes 1, 10 or 1,10")
    if any(s not in SCALES for s in args.scales):
        p.error("--scales takes 1, 10 or 1,10")
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the report (and write JSON if asked)."""
    args = parse_args(argv)
    wall = time.perf_counter
    if args.clock == "cpu":  # every timer, vecgrad's stage timers too, reads CPU time
        time.perf_counter = time.process_time
    try:
        calibration = calibrate()
        recs = [measure(c, args) for c in cases(args)]
    finally:
        time.perf_counter = wall
    lim = limit_case(args.limit) if args.limit else None
    print(report(recs, args), flush=True)
    if lim is not None:
        print("\nA trace past the operation limit (fresh process)\n"
              + limit_table(lim), flush=True)
    if calibration is not None:
        print(f"\nThe kernel cost model was calibrated for this machine in {calibration:.3f} s "
              f"before the first compile (once per machine; stored in {os.environ['VECGRAD_CACHE_DIR']}).")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"date": time.strftime("%Y-%m-%d %H:%M"), "repeat": args.repeat,
                       "loop_n": args.loop_n, "records": recs, "limit": lim}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
