"""The `vecgrad` command line (also `python -m vecgrad`).

    vecgrad demo [--small]        the three seed programs in natural style, one table
    vecgrad bench [ARGS...]       bench/run.py of a source checkout, with its arguments
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

from .examples.workloads import WORKLOADS, benchmark, fmt_time, table

DEMO_HEADER = ["seed", "workload", "value", "|grad|", "compile (1st call)", "grad (min)",
               "jit fwd (min)", "numpy fwd (min)", "grad / numpy fwd"]


def demo_row(rec: dict[str, Any]) -> list[str]:
    """One row of the demo table from a `benchmark` record."""
    return [rec["seed"], rec["title"], f"{rec['value']:.6g}", f"{rec['grad_norm']:.6g}",
            fmt_time(rec["compile"]), fmt_time(rec["grad"].min),
            fmt_time(rec["jit_forward"].min), fmt_time(rec["numpy_forward"].min),
            f"{rec['ratio']:.1f}x"]


def demo(small: bool = False, repeat: int | None = None, out: Any = None) -> list[dict]:
    """Run the three seed programs in natural style and print one table: value, gradient
    norm, compile time, gradient / jit forward / NumPy forward times, and the ratio of the
    gradient to the hand-vectorized NumPy forward. Returns the benchmark records."""
    out = out or sys.stdout
    preset = "small" if small else "seed"
    recs = []
    for w in WORKLOADS.values():
        print(f"[demo] seed {w.name}: {w.title} ({preset} sizes) ...", file=sys.stderr,
              flush=True)
        recs.append(benchmark(w, preset, repeat, budget=0.5))
    sizes = "; ".join(f"{w.name}: {_sizes(w.sizes[preset])}" for w in WORKLOADS.values())
    print(f"vecgrad demo ({preset} sizes: {sizes})", file=out)
    print(table(DEMO_HEADER, [demo_row(r) for r in recs]), file=out)
    print("Times are per call, min over several runs in this process. The ratio divides the "
          "gradient's time by the hand-vectorized NumPy forward's.", file=out)
    return recs


def _sizes(s: dict[str, Any]) -> str:
    return ", ".join(f"{k}={getattr(v, '__name__', v)}" for k, v in s.items())


def bench_script() -> Path:
    """The path of bench/run.py in the source checkout this package was installed from."""
    return Path(__file__).resolve().parents[2] / "bench" / "run.py"


def bench(argv: list[str]) -> int:
    """Run bench/run.py's `main(argv)`; needs a source checkout (an editable install)."""
    path = bench_script()
    if not path.is_file():
        print(f"vecgrad bench: {path} not found; the benchmark ships with the source "
              "checkout (pip install -e .)", file=sys.stderr)
        return 2
    spec = importlib.util.spec_from_file_location("vecgrad_bench_run", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return int(mod.main(argv) or 0)


def parser() -> argparse.ArgumentParser:
    """The argument parser with the `demo` and `bench` subcommands."""
    p = argparse.ArgumentParser(prog="vecgrad", description="vecgrad command line")
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="run the three seed programs and print one table")
    d.add_argument("--small", action="store_true", help="tiny sizes (a smoke test)")
    d.add_argument("--repeat", type=int, default=None,
                   help="samples per timing (default: adaptive)")
    sub.add_parser("bench", help="run bench/run.py; other arguments go to it "
                   "(see `vecgrad bench --help`)", add_help=False)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of `vecgrad` and `python -m vecgrad`. Returns the exit code."""
    p = parser()
    args, rest = p.parse_known_args(argv)
    if args.command == "bench":
        return bench(rest)
    if rest:
        p.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.repeat is not None and args.repeat < 1:
        p.error("--repeat must be at least 1")
    demo(args.small, args.repeat)
    return 0
