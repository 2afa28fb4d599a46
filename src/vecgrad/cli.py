"""The `vecgrad` command line (also `python -m vecgrad`).

    vecgrad demo [--small]             the three seed programs: explain summaries, one table
    vecgrad bench [ARGS...]            bench/run.py of a source checkout, with its arguments
    vecgrad bench patterns [ARGS...]   bench/patterns/run.py (issue 14's patterns suite)
    vecgrad bench compile [ARGS...]    bench/compile/run.py (compile time per stage, issue 11)
    vecgrad explain script.py:func     vg.explain on a function of a script (see --help)
    vecgrad support-table [--output F]  the table of supported NumPy functions (markdown)
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

import vecgrad as vg

from .examples.seeds import WORKLOADS, Workload, grad_norm
from .explain import Report
from .explain_text import summary
from .timing import fmt_time, measure, table

DEMO_HEADER = ["seed", "workload", "value", "|grad|", "compile (1st call)", "grad (min)",
               "jit fwd (min)", "numpy fwd (min)", "grad / numpy fwd"]


def demo_row(rec: dict[str, Any]) -> list[str]:
    """One row of the demo table from a `benchmark` record."""
    return [rec["seed"], rec["title"], f"{rec['value']:.6g}", f"{rec['grad_norm']:.6g}",
            fmt_time(rec["compile"]), fmt_time(rec["grad"].min),
            fmt_time(rec["jit_forward"].min), fmt_time(rec["numpy_forward"].min),
            f"{rec['ratio']:.1f}x"]


def demo_seed(w: Workload, preset: str, budget: float) -> tuple[dict[str, Any], Report]:
    """Explain one seed's gradient and time its NumPy forward; returns a record for the demo
    table and the `explain` report."""
    loss = w.fresh_loss()
    args = w.inputs(preset)
    r = vg.explain(loss, *args, argnums=w.argnums, budget=budget)
    # Same function object: the jit and grad calls below hit the cache explain filled.
    rec = {"seed": w.name, "title": w.title, "value": float(vg.jit(loss)(*args)),
           "grad_norm": grad_norm(vg.grad(loss, argnums=w.argnums)(*args)),
           "compile": r.compile_seconds, "grad": r.gradient, "jit_forward": r.forward,
           "numpy_forward": measure(lambda: w.numpy_forward(*args), budget=budget)}
    rec["ratio"] = r.gradient.min / rec["numpy_forward"].min
    return rec, r


def demo(small: bool = False, budget: float | None = None, out: Any = None) -> list[dict]:
    """Run the three seed programs in natural style. For each, print the short `explain`
    report (summary, loops found); then one table: value, gradient norm, compile time,
    gradient / jit forward / NumPy forward times, and the gradient's time in multiples of the
    hand-vectorized NumPy forward. Returns the records."""
    out = out or sys.stdout
    preset = "small" if small else "seed"
    budget = budget if budget is not None else (0.05 if small else 0.5)
    recs = []
    for w in WORKLOADS.values():
        print(f"[demo] seed {w.name}: {w.title} ({preset} sizes) ...", file=sys.stderr,
              flush=True)
        rec, report = demo_seed(w, preset, budget)
        print(f"=== seed {w.name}: {w.title} ({preset} sizes: {_sizes(w.sizes[preset])})",
              file=out)
        print(summary(report) + "\n", file=out, flush=True)
        recs.append(rec)
    print(f"=== gradient time in multiples of the hand-vectorized NumPy forward ({preset} "
          "sizes)", file=out)
    print(table(DEMO_HEADER, [demo_row(r) for r in recs]), file=out)
    print("Times are per call, min over several runs in this process. The ratio divides the "
          "gradient's time by the hand-vectorized NumPy forward's.", file=out)
    return recs


def _sizes(s: dict[str, Any]) -> str:
    return ", ".join(f"{k}={getattr(v, '__name__', v)}" for k, v in s.items())


def bench_script(suite: str | None = None) -> Path:
    """The path of bench/run.py (or bench/<suite>/run.py) in the source checkout this package
    was installed from."""
    bench_dir = Path(__file__).resolve().parents[2] / "bench"
    return (bench_dir / suite if suite else bench_dir) / "run.py"


def bench(argv: list[str]) -> int:
    """Run bench/run.py's `main(argv)`, or bench/patterns/run.py's (bench/compile/run.py's)
    when argv starts with "patterns" ("compile"); needs a source checkout (an editable
    install)."""
    suite = argv[0] if argv[:1] in (["patterns"], ["compile"]) else None
    argv = argv[1:] if suite else argv
    path = bench_script(suite)
    if not path.is_file():
        print(f"vecgrad bench: {path} not found; the benchmark ships with the source "
              "checkout (pip install -e .)", file=sys.stderr)
        return 2
    spec = importlib.util.spec_from_file_location(f"vecgrad_bench_{suite or 'seeds'}_run", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return int(mod.main(argv) or 0)


EXPLAIN_HELP = """\
Runs vg.explain on FUNCTION of a Python script and prints the report.

The script supplies example inputs by convention:
  example_args()    module-level function returning the tuple of arguments to call FUNCTION
                    with (required)
  example_argnums   module-level int or tuple of ints: the arguments to differentiate
                    (optional, default 0)

Example: python -m vecgrad explain examples/pairwise.py:pairwise_loss
"""


class UsageError(Exception):
    """A mistake in the command line or in the script's conventions (exit code 2)."""


def load_target(target: str) -> tuple[Any, tuple, Any]:
    """Import `path.py:function` and return (function, example_args(), example_argnums)."""
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"expected path/to/script.py:function, got {target!r}")
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"{path}: no such file")
    mod = _import_script(file)
    fun = getattr(mod, name, None)
    if not callable(fun):
        raise UsageError(f"{path} defines no function {name!r}")
    make = getattr(mod, "example_args", None)
    if not callable(make):
        raise UsageError(f"{path} defines no example_args(); add a module-level function "
                         f"returning the tuple of arguments to call {name} with")
    args = make()
    if not isinstance(args, (tuple, list)):
        raise UsageError(f"{path}: example_args() must return a tuple of arguments, "
                         f"got {type(args).__name__}")
    return fun, tuple(args), getattr(mod, "example_argnums", 0)


def _import_script(file: Path) -> Any:
    # The script's folder goes on sys.path so that it can import its neighbours, as under
    # `python script.py`.
    sys.path.insert(0, str(file.resolve().parent))
    spec = importlib.util.spec_from_file_location(file.stem, file)
    if spec is None or spec.loader is None:
        raise UsageError(f"{file}: not a Python script")
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # the script's own error: report it without a traceback
        raise UsageError(f"{file} raised {type(e).__name__} on import: {e}") from e
    return mod


def explain_cmd(target: str, budget: float, short: bool) -> int:
    """`vecgrad explain path.py:function`: print the report; exit code 2 on usage errors."""
    try:
        fun, args, argnums = load_target(target)
    except UsageError as e:
        print(f"vecgrad explain: {e}", file=sys.stderr)
        return 2
    try:
        r = vg.explain(fun, *args, argnums=argnums, budget=budget)
    except Exception as e:  # noqa: BLE001 - vecgrad's errors name the user's file:line
        print(f"vecgrad explain: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(summary(r) if short else str(r))
    return 0


def parser() -> argparse.ArgumentParser:
    """The argument parser with the `demo`, `bench` and `explain` subcommands."""
    p = argparse.ArgumentParser(prog="vecgrad", description="vecgrad command line")
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="explain the three seed programs and print one table")
    d.add_argument("--small", action="store_true", help="tiny sizes (a smoke test)")
    d.add_argument("--budget", type=float, default=None,
                   help="seconds per timing (default 0.5, or 0.05 with --small)")
    sub.add_parser("bench", help="run bench/run.py (or `bench patterns ...`: "
                   "bench/patterns/run.py); other arguments go to it (see `vecgrad bench "
                   "--help`)", add_help=False)
    e = sub.add_parser("explain", help="explain the gradient of a function in a script",
                       description=EXPLAIN_HELP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("target", metavar="path/to/script.py:FUNCTION")
    e.add_argument("--budget", type=float, default=0.5, help="seconds per timing (default 0.5)")
    e.add_argument("--short", action="store_true", help="only the summary and the loops found")
    t = sub.add_parser("support-table", help="print (or write) the table of the NumPy "
                       "functions vecgrad traces (docs/numpy_support.md)")
    t.add_argument("--output", "-o", default=None, help="write the markdown to this file")
    return p


def support_table(output: str | None) -> int:
    """`vecgrad support-table`: the markdown of docs/numpy_support.md."""
    from .support import table
    text = table()
    if output:
        Path(output).write_text(text)
    else:
        print(text, end="")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of `vecgrad` and `python -m vecgrad`. Returns the exit code."""
    p = parser()
    args, rest = p.parse_known_args(argv)
    if args.command == "bench":
        return bench(rest)
    if rest:
        p.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.command == "support-table":
        return support_table(args.output)
    if args.budget is not None and args.budget <= 0:
        p.error("--budget must be positive")
    if args.command == "explain":
        return explain_cmd(args.target, args.budget, args.short)
    demo(args.small, args.budget)
    return 0
