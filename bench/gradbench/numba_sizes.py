"""First calls and run time of GradBench programs (ode, lstm) on the numba backend at several
sizes, with size-generic kernels (backends/numba/generic.py) against literal ones.

    OPENBLAS_NUM_THREADS=1 nice python bench/gradbench/numba_sizes.py \\
        ode:1000,10 ode:2000,50 ode:10000,100 lstm:2,256 lstm:2,512 lstm:2,1024

First, each size's first call on the default NumPy backend (vecgrad's own compile: trace,
passes, code). Then each kernel mode gets an empty numba cache (a temporary folder); the sizes then run in order,
each in a fresh process, and the first size once more: `first call` is the gradient's first
call in that process (vecgrad's compile plus numba's compile or disk-cache load; wall and CPU
time of the process). With literal kernels every new size compiles anew; with generic ones
only the first does. Then, in one process per size, the warm gradient's run time on the
default NumPy backend, the numba backend with literal kernels and with generic ones
(alternating rounds, min of thread CPU time, and of wall time in parentheses: on a loaded
machine a call of milliseconds waits for the CPU), and that the three agree.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def program(spec: str):
    """(gradient-able function, args, argnums) of `eval:sizes` on random inputs."""
    sys.path.insert(0, str(HERE))
    ev, sizes = spec.split(":")
    dims = [int(v) for v in sizes.split(",")]
    rng = np.random.default_rng(0)
    if ev == "ode":
        from vecgrad_tool import ode
        n, s = dims
        return ode.last, (rng.random(n), s), 0
    if ev == "lstm":  # GradBench's lstm at b=7 (its data's width), l layers, c characters
        from vecgrad_tool import lstm
        layers, c = dims
        b = 7
        args = (rng.standard_normal((2 * layers, 4 * b)) * 0.5,
                rng.standard_normal((3, b)) * 0.5, rng.standard_normal((2 * layers, b)),
                rng.standard_normal((c, b)))
        return lstm.lstm_objective, args, (0, 1)
    raise SystemExit(f"unknown eval {ev}")


def child_first(spec: str, mode: str) -> dict:
    """The first call of the gradient in this (fresh) process (mode "numpy": on the default
    backend, vecgrad's own compile), and how many kernel modules it wrote to the cache."""
    import vecgrad as vg
    from vecgrad.backends.numba import cache, generic
    generic.ENABLED = mode == "generic"
    fn, args, argnums = program(spec)
    g = vg.grad(fn, argnums=argnums, backend="numpy" if mode == "numpy" else "numba")
    before = set(cache.directory().glob("vk_*.py"))
    t, c = time.perf_counter(), time.process_time()
    g(*args)
    return {"wall": time.perf_counter() - t, "cpu": time.process_time() - c,
            "new": len(set(cache.directory().glob("vk_*.py")) - before)}


def child_run(spec: str, caches: dict[str, str], rounds: int) -> dict:
    """Warm run time of the gradient: NumPy backend, numba literal, numba generic."""
    import vecgrad as vg
    from vecgrad.backends.numba import generic
    fn, args, argnums = program(spec)
    fns = {"numpy": vg.grad(fn, argnums=argnums)}
    for mode in ("literal", "generic"):
        os.environ["VECGRAD_NUMBA_CACHE"] = caches[mode]
        generic.ENABLED = mode == "generic"
        fns[mode] = vg.grad(fn, argnums=argnums, backend="numba")
        fns[mode](*args)  # (compiled, or loaded from that mode's cache, now)
    ref = [np.asarray(a) for a in np.atleast_1d(fns["numpy"](*args))] \
        if not isinstance(argnums, tuple) else [np.asarray(a) for a in fns["numpy"](*args)]
    for mode in ("literal", "generic"):
        got = fns[mode](*args)
        got = [got] if not isinstance(argnums, tuple) else got
        for a, b in zip(got, ref):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    best = {k: float("inf") for k in fns}
    cpu = {k: float("inf") for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            runs = 5
            t, c = time.perf_counter(), time.thread_time()
            for _ in range(runs):
                f(*args)
            cpu[k] = min(cpu[k], (time.thread_time() - c) / runs)
            best[k] = min(best[k], (time.perf_counter() - t) / runs)
    return {**best, **{f"{k}_cpu": v for k, v in cpu.items()}}


def _child(*argv: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", *argv], check=False,
                         capture_output=True,
                         text=True, env=os.environ.copy())
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _ms(x: float) -> str:
    return f"{x * 1e3:.3g} ms" if x < 1 else f"{x:.2f} s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="*", default=["ode:1000,10", "ode:2000,50",
                                                 "ode:10000,100", "lstm:2,256", "lstm:2,512",
                                                 "lstm:2,1024"])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--run-only", action="store_true",
                    help="only the run-time table (the caches of a previous --keep run)")
    ap.add_argument("--keep", metavar="DIR", help="keep the kernel caches in DIR")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        kind, spec = a.child[0], a.child[1]
        res = child_first(spec, a.child[2]) if kind == "first" else \
            child_run(spec, json.loads(a.child[2]), a.rounds)
        print(json.dumps(res))
        return
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
        tables(a, a.keep)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            tables(a, tmp)


def tables(a: argparse.Namespace, tmp: str) -> None:
    """The first-call table (unless --run-only), then the run-time table."""
    caches = {m: os.path.join(tmp, m) for m in ("literal", "generic")}
    by_eval: dict[str, list[str]] = {}
    for s in a.sizes:
        by_eval.setdefault(s.split(":")[0], []).append(s)
    if not a.run_only:
        print("| program | mode | " + " | ".join(
            f"first call: {s}" for s in ["1st size (empty cache)", "2nd size", "3rd size",
                                         "1st size again"]) + " |")
        print("|---|---|---|---|---|---|")
        for ev, specs in by_eval.items():
            for mode in ("numpy", "literal", "generic"):
                os.environ["VECGRAD_NUMBA_CACHE"] = os.path.join(caches.get(mode, tmp), ev)
                cells = []
                for s in specs + (specs[:1] if mode != "numpy" else []):
                    r = _child("first", s, mode)
                    new = f", {r['new']} new kernel modules" if mode != "numpy" else ""
                    cells.append(f"{s.split(':')[1]}: CPU {_ms(r['cpu'])} (wall "
                                 f"{_ms(r['wall'])}{new})")
                print(f"| {ev} | {mode} | " + " | ".join(cells) + " |", flush=True)
    print("\n| program | NumPy backend | numba, literal kernels | numba, generic kernels "
          "| generic / literal | NumPy / generic |")
    print("|---|---|---|---|---|---|")
    for ev, specs in by_eval.items():
        for s in specs:
            r = _child("run", s, json.dumps({m: os.path.join(caches[m], ev) for m in caches}))
            print(f"| {s} | " + " | ".join(f"{_ms(r[m + '_cpu'])} ({_ms(r[m])})" for m in
                                          ("numpy", "literal", "generic")) +
                  f" | {r['generic_cpu'] / r['literal_cpu']:.2f} | "
                  f"{r['numpy_cpu'] / r['generic_cpu']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
