"""Benchmark the seed programs, written in natural style, against their hand-vectorized NumPy
forwards, all in this one process.

    python3 bench/run.py [--sizes small|seed] [--only 000,001,002] [--repeat N] [--json out.json]
                         [--baselines] [--plot out.png]

For each workload it reports min and median seconds per call of the NumPy forward (the
reference), the vecgrad gradient and the vecgrad jit forward; the compile time of the first
gradient call by stage; equation counts; and the ratio gradient / NumPy forward (of the mins).
It also reports the cache-hit overhead of a transformed function on a tiny input.

With --baselines it also times, on the same inputs, PyTorch eager (loop style and vectorized),
jax.jit(jax.grad) (vectorized), HIPS autograd (loop style) and vecgrad's JAX and torch
backends (loop style), wherever installed (see bench/compare.py); --plot draws their gradient
cost as a bar chart (needs matplotlib).

The GPU run, `--device gpu`, runs the JAX and torch engines (jax.jit(grad) and torch eager of
the hand-vectorized code, vecgrad's two backends on the loop-style code) on the first GPU of
each library, and with `--patterns small|default` the patterns suite on both backends
(bench/on_backends.py). Without a GPU it says so and exits cleanly; `--device cpu --patterns
small` runs the same patterns path on the CPU.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from vecgrad import pipeline

# workloads.py, compare.py and plot.py sit next to this file; `vecgrad bench` loads it by path.
sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare
import plot
from workloads import WORKLOADS, Stats, benchmark, cache_hit_overhead, fmt_time, table

STAGES = pipeline.timing_keys()  # (the declared stages: vecgrad.pipeline)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bench/run.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", choices=["small", "seed", "x10"], default="seed",
                   help="input sizes: 'seed' (the user reports, default), 'x10' (10x their batch sizes) or 'small' (smoke test)")
    p.add_argument("--only", default=",".join(WORKLOADS),
                   help="comma-separated seeds to run, e.g. 000,002 (default: all)")
    p.add_argument("--repeat", type=int, default=None,
                   help="samples per measurement (default: adaptive, about 1 s each)")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--engines", default=None,
                   help="with --baselines: only the engines whose label contains one of these "
                        "comma-separated terms, e.g. 'jax,vectorized' (default: all)")
    p.add_argument("--baselines", action="store_true",
                   help="also time PyTorch eager, jax.jit(grad) and HIPS autograd where installed")
    p.add_argument("--plot", metavar="PNG", help="with --baselines: bar chart of gradient cost "
                   "per engine (needs matplotlib: pip install 'vecgrad[bench]')")
    p.add_argument("--device", choices=["cpu", "gpu"], default="cpu",
                   help="'gpu': the GPU run (JAX and torch engines only; skipped cleanly "
                        "without a GPU)")
    p.add_argument("--patterns", choices=["none", "small", "default"], default="none",
                   help="also run the patterns suite on vecgrad's JAX and torch backends, on "
                        "--device (at these sizes)")
    args = p.parse_args(argv)
    args.only = [s.strip() for s in args.only.split(",") if s.strip()]
    args.engines = [t.strip() for t in args.engines.split(",")] if args.engines else None
    unknown = [s for s in args.only if s not in WORKLOADS]
    if unknown:
        p.error(f"unknown seed(s) {', '.join(unknown)}; choose from {', '.join(WORKLOADS)}")
    if args.repeat is not None and args.repeat < 1:
        p.error("--repeat must be at least 1")
    if args.plot and not args.baselines:
        p.error("--plot needs --baselines")
    return args


def fmt_stats(st: Stats) -> str:
    return f"{fmt_time(st.min)} / {fmt_time(st.median)}"


def runtime_table(recs: list[dict]) -> str:
    rows = [[r["seed"], r["title"], fmt_stats(r["numpy_forward"]), fmt_stats(r["jit_forward"]),
             fmt_stats(r["grad"]), f"{r['grad'].runs}", f"{r['ratio']:.1f}x"] for r in recs]
    return table(["seed", "workload", "numpy fwd (min / med)", "vecgrad jit fwd (min / med)",
                  "vecgrad grad (min / med)", "grad runs", "grad / numpy fwd"], rows)


def compile_table(recs: list[dict]) -> str:
    rows = [[r["seed"]] + [fmt_time(r["compile_stages"].get(s, 0.0)) for s in STAGES]
            + [fmt_time(r["compile"]), fmt_time(r["jit_compile"])] for r in recs]
    return table(["seed"] + STAGES + ["grad total", "jit first call"], rows)


def eqns_table(recs: list[dict]) -> str:
    rows = [[r["seed"], str(r["eqns"]["traced"]), str(r["eqns"]["cse"]), str(r["eqns"]["batch"]),
             str(r["eqns"]["grad"]), f"{r['value']:.6g}", f"{r['value_numpy']:.6g}",
             f"{r['grad_norm']:.6g}"] for r in recs]
    return table(["seed", "eqns traced", "after cse", "after batch", "gradient graph", "value (vecgrad)",
                  "value (numpy)", "|grad|"], rows)


def report(recs: list[dict], overhead: dict[str, float], args: argparse.Namespace) -> str:
    """The printed report: runtimes, compile breakdown, equation counts, cache-hit overhead."""
    head = (f"vecgrad benchmark: sizes={args.sizes}, repeat={args.repeat or 'adaptive'}, "
            f"python {platform.python_version()}, numpy {np.__version__}, "
            f"{platform.machine()}")
    hit = ", ".join(f"{k} {v * 1e6:.1f} us" for k, v in overhead.items())
    return "\n\n".join([
        head,
        "Runtime per call (min / median)\n" + runtime_table(recs),
        "Compile time, first gradient call, by stage\n" + compile_table(recs),
        "Equations and values\n" + eqns_table(recs),
        f"Cache-hit overhead (Transformed.__call__ minus entry.compiled.fn, tiny input): {hit}",
    ])


def to_json(recs: list[dict], overhead: dict[str, float], args: argparse.Namespace,
            extra: dict[str, Any]) -> dict:
    def conv(v: Any) -> Any:
        return dataclasses.asdict(v) if isinstance(v, Stats) else v
    return {"sizes": args.sizes, "repeat": args.repeat, "date": time.strftime("%Y-%m-%d %H:%M"),
            "python": platform.python_version(), "numpy": np.__version__,
            "cache_hit_overhead_s": overhead,
            "workloads": [{k: conv(v) for k, v in r.items()} for r in recs], **extra}


def run_vecgrad(args: argparse.Namespace) -> list[dict]:
    """The vecgrad records (`benchmark`) of the chosen seeds, with progress on stderr."""
    recs = []
    for name in args.only:
        w = WORKLOADS[name]
        print(f"[bench] {name} {w.title} ({args.sizes} sizes) ...", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        recs.append(benchmark(w, args.sizes, args.repeat))
        print(f"[bench] {name} done in {time.perf_counter() - t0:.1f} s", file=sys.stderr,
              flush=True)
    return recs


def versions() -> str:
    """The installed baseline engines and their versions."""
    from importlib.metadata import PackageNotFoundError, version
    out = []
    for pkg in ["torch", "jax", "autograd", "matplotlib"]:
        try:
            out.append(f"{pkg} {version(pkg)}")
        except PackageNotFoundError:
            out.append(f"{pkg} not installed")
    return ", ".join(out)


def describe(name: str, preset: str) -> str:
    """A seed's title and sizes, for table captions."""
    w = WORKLOADS[name]
    sizes = ", ".join(f"{k}={getattr(v, '__name__', v)}" for k, v in w.sizes[preset].items())
    return f"{w.title} ({preset} sizes: {sizes})"


def run_baselines(args: argparse.Namespace) -> dict[str, Any]:
    """Time every engine, print its section, draw the plot if asked; returns the JSON part."""
    recs, skipped = compare.run(args.only, args.sizes, args.repeat, engines=args.engines)
    print(f"\nBaselines ({versions()})\n")
    print(compare.report(recs, skipped, args.only, lambda n: describe(n, args.sizes)))
    if args.plot:
        if plot.have_matplotlib():
            plot.bar_chart(recs, args.only, args.plot, f"Gradient cost per engine "
                           f"({args.sizes} sizes, {platform.machine()}, one process)")
            print(f"\nwrote {args.plot}")
        else:
            print("\n--plot skipped: matplotlib is not installed "
                  "(pip install 'vecgrad[bench]')")
    return {"baselines": recs, "skipped": skipped, "engines": versions()}


def gpu_devices() -> tuple[dict[str, Any], list[str]]:
    """The first GPU of jax and of torch (None where there is none), and why not."""
    out: dict[str, Any] = {"jax": None, "torch": None}
    why = []
    try:
        import jax
        out["jax"] = jax.devices("gpu")[0]
    except ImportError:
        why.append("jax is not installed")
    except RuntimeError as e:
        why.append(f"jax: {str(e).splitlines()[0]}")
    try:
        import torch
        if torch.cuda.is_available():
            out["torch"] = torch.device("cuda", 0)
        else:
            why.append("torch: CUDA is not available")
    except ImportError:
        why.append("torch is not installed")
    return out, why


def run_devices(args: argparse.Namespace) -> int:
    """The GPU run (or, with --device cpu, the patterns on the backends on the CPU)."""
    if args.device == "gpu":
        devices, why = gpu_devices()
        if not any(devices.values()):
            print(f"GPU run skipped: no GPU found ({'; '.join(why)})")
            return 0
        print(f"GPU run: {', '.join(f'{k} on {v}' for k, v in devices.items() if v)}"
              + (f" ({'; '.join(why)})" if why else ""), flush=True)
        recs, skipped = compare.run(args.only, args.sizes, args.repeat, engines=args.engines,
                                    devices=devices)
        print(f"\nSeeds ({versions()})\n")
        print(compare.report(recs, skipped, args.only, lambda n: describe(n, args.sizes)))
    else:
        import importlib.util
        devices = {}
        if importlib.util.find_spec("jax"):
            import jax
            devices["jax"] = jax.devices("cpu")[0]
        if importlib.util.find_spec("torch"):
            devices["torch"] = "cpu"
    if args.patterns != "none":
        import on_backends
        precs = on_backends.run(devices, args.patterns, args.repeat)
        print(f"\nPatterns on vecgrad's backends ({args.patterns} sizes, {args.device})\n")
        print(on_backends.report(precs))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the report (and write JSON if asked). Returns an exit code."""
    args = parse_args(argv)
    if args.device == "gpu" or args.patterns != "none":
        return run_devices(args)
    recs = run_vecgrad(args)
    overhead = cache_hit_overhead(args.repeat)
    print(report(recs, overhead, args), flush=True)
    extra = run_baselines(args) if args.baselines else {}
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(to_json(recs, overhead, args, extra), f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
