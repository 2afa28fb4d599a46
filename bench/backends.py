"""vecgrad's JAX and torch backends against the same library's gradient of the hand-vectorized
seeds (issue 12 §1-2), in one process.

    python bench/backends.py [--sizes seed] [--only 000,001,002] [--rounds 100] [--budget 15]
                             [--compile] [--device cpu|gpu]

Engines per seed: `vg.grad(loop-style seed, backend="jax")` against `jax.jit(jax.grad)` of the
hand-vectorized JAX port, and `backend="torch"` against torch eager of the hand-vectorized torch
port (and, with --compile, `torch.compile` of it, and the torch backend with
`vg.config(torch_compile=True)`); see bench/baselines.py. One library at a
time, each round calls its engines once, in turn (reversed every other round), so that the
machine's load falls on all of them alike; the table gives the wall-clock min and median and
the median CPU time of the process (all threads: the work done, which a loaded machine
disturbs less than the wall clock), and each vecgrad backend's ratio to its library's reference. Gradients are checked against the NumPy backend.
`--device gpu` places everything on the first GPU of each library (skipped without one).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import baselines as BL  # (bench/ is on sys.path: the script's own folder)
import numpy as np
from workloads import WORKLOADS, fmt_time, table

import vecgrad as vg
from vecgrad.pytree import flatten

# (vecgrad's backend, the library's reference) pairs, by engine label
PAIRS = [("vecgrad jax backend, loop", "jax jit(grad), vectorized"),
         ("vecgrad torch backend, loop", "torch eager, vectorized"),
         ("vecgrad torch backend, loop", "torch.compile, vectorized"),
         ("vecgrad torch backend + torch.compile, loop", "torch eager, vectorized"),
         ("vecgrad torch backend + torch.compile, loop", "torch.compile, vectorized")]


def engines(compile_torch: bool) -> list[BL.Engine]:
    """The engines to time: the two backends and their references (installed ones only);
    with `compile_torch`, also torch.compile of the vectorized port and the torch backend
    with vg.config(torch_compile=True)."""
    by = {e.label: e for e in BL.ENGINES}
    out = [by[label] for pair in PAIRS[:2] for label in pair if BL.available(by[label])]
    if compile_torch and BL.available(by["torch eager, vectorized"]):
        ref, ours = by["torch eager, vectorized"], by["vecgrad torch backend, loop"]

        def prep(loss: Callable, *a: Any) -> BL.Prepared:
            return BL._torch_prepare(BL.torch.compile(loss), *a)

        def prep_ours(loss: Callable, *a: Any) -> BL.Prepared:
            with vg.config(torch_compile=True):  # (compiled at the first call, made here)
                return ours.prepare(lambda *xs: loss(*xs), *a)  # (not the eager entry)
        out.append(BL.Engine("torch.compile", "vectorized", "torch", ref.programs, prep))
        out.append(BL.Engine("vecgrad torch backend + torch.compile", "loop", "torch",
                             ours.programs, prep_ours))
    return out


def measure(preps: dict[str, BL.Prepared], rounds: int, budget: float) -> dict[str, dict]:
    """Interleaved rounds (at least 5, at most `rounds`, until `budget` seconds have passed),
    the order reversed every other round (a call right after another library's pays for
    waking its thread pool): wall min / median and CPU-time median per engine."""
    wall: dict[str, list[float]] = {k: [] for k in preps}
    cpu: dict[str, list[float]] = {k: [] for k in preps}
    order = list(preps)
    t_end = time.perf_counter() + budget
    for r in range(rounds):
        if r >= 5 and time.perf_counter() > t_end:
            break
        for k in order if r % 2 == 0 else order[::-1]:
            t0, c0 = time.perf_counter(), time.process_time()
            preps[k].call()
            wall[k].append(time.perf_counter() - t0)
            cpu[k].append(time.process_time() - c0)
    return {k: {"min": min(wall[k]), "median": statistics.median(wall[k]),
                "cpu": statistics.median(cpu[k]), "runs": len(wall[k])} for k in preps}


def run_seed(name: str, sizes: str, es: list[BL.Engine], rounds: int, budget: float,
             devices: dict[str, Any] | None) -> list[list[str]]:
    """Table rows for one seed."""
    w = WORKLOADS[name]
    args = w.inputs(sizes)
    want = BL.flat(flatten(vg.grad(w.fresh_loss(), argnums=w.argnums)(*args))[0])
    preps, errs, first = {}, {}, {}
    for e in es:
        print(f"[backends] {name}: {e.label}", file=sys.stderr, flush=True)
        dev = None if devices is None else devices[e.module]
        t0 = time.perf_counter()
        p = BL.prepare(e, name, args, w.argnums, dev)
        got = BL.flat(p.to_numpy(p.call()))
        first[e.label] = time.perf_counter() - t0
        errs[e.label] = float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-300))
        preps[e.label] = p
    st: dict[str, dict] = {}
    for lib in ("jax", "torch"):  # one library at a time: their thread pools do not mix
        group = {e.label: preps[e.label] for e in es if e.module == lib}
        if group:
            st.update(measure(group, rounds, budget))
    rows = [[name, k, fmt_time(s["min"]), fmt_time(s["median"]), fmt_time(s["cpu"]),
             str(s["runs"]), f"{errs[k]:.0e}", fmt_time(first[k])] for k, s in st.items()]
    for ours, ref in PAIRS:
        if ours in st and ref in st:
            a, b = st[ours], st[ref]
            rows.append([name, f"  {ours.split(',')[0]} / {ref}",
                         f"{a['min'] / b['min']:.2f}x", f"{a['median'] / b['median']:.2f}x",
                         f"{a['cpu'] / b['cpu']:.2f}x", "", "", ""])
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/backends.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", choices=["small", "seed", "x10"], default="seed")
    p.add_argument("--only", default=",".join(WORKLOADS))
    p.add_argument("--rounds", type=int, default=100, help="at most this many rounds a seed")
    p.add_argument("--budget", type=float, default=15.0, help="seconds of rounds a seed")
    p.add_argument("--compile", action="store_true", help="also torch.compile (inductor)")
    p.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    a = p.parse_args(argv)
    devices = None
    if a.device == "gpu":
        import run  # bench/run.py, next to this file
        devices, why = run.gpu_devices()
        if not all(devices.values()):
            print(f"GPU run skipped: no GPU for {'; '.join(why)}")
            return 0
    es = engines(a.compile)
    if not es:
        print("skipped: neither jax nor torch is installed")
        return 0
    BL._load()
    if BL.jax is not None:
        BL.jax.config.update("jax_enable_x64", True)  # seeds/002 is float64 everywhere
    rows = [r for n in a.only.split(",") for r in run_seed(n.strip(), a.sizes, es, a.rounds,
                                                            a.budget, devices)]
    print(f"Backends against the same library's vectorized gradient ({a.sizes} sizes, "
          f"{a.device}; {BL.TORCH_THREADS} torch thread)\n")
    print(table(["seed", "engine (ratios: min, median, CPU median)", "wall min", "wall median",
                 "CPU median", "rounds", "grad rel. err", "first call"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
