"""Run the `patterns` suite (issue 14): each natural-style program against its hand-vectorized
NumPy forward, in this one process.

    python bench/patterns/run.py [--only names|items] [--sizes small|default] [--repeat N]
                                 [--budget S] [--no-explain] [--json out.json]

(also `python -m vecgrad bench patterns ...`). For each program it checks vecgrad's value and
gradient against the reference (the gradient by central differences of the reference in
float64), times the reference forward and vecgrad's compiled gradient (min / median), the first
gradient call (compile) and the call overhead, and prints the ratio gradient / reference forward
against the program's target, pass/fail, and `vg.explain`'s line on what did not batch.
"""
from __future__ import annotations

import os

# A 2-core machine shared by several jobs: multi-threaded BLAS calls stall on each other (a
# 1000x64 @ 64x32 matmul measured 8 ms threaded, 90 us on one thread). Both sides of every
# ratio use the same BLAS, so the suite runs it single-threaded unless told otherwise.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import dataclasses
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/, for `import patterns`
from patterns import COMPILE_TARGET, ITEMS, PATTERNS, TARGETS
from patterns.harness import measure_pattern
from vecgrad.timing import Stats, fmt_time, table


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bench/patterns/run.py",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default="",
                   help="comma-separated program names or item numbers (e.g. 'conv1d,6'); "
                        "default: all")
    p.add_argument("--sizes", choices=["small", "default"], default="default",
                   help="'default' (reference forward 50 us - 50 ms) or 'small' (smoke test)")
    p.add_argument("--repeat", type=int, default=None,
                   help="samples per measurement (default: adaptive, about --budget s each)")
    p.add_argument("--budget", type=float, default=0.5, help="seconds per measurement")
    p.add_argument("--no-explain", dest="explain", action="store_false",
                   help="skip vg.explain (faster)")
    p.add_argument("--json", metavar="PATH", help="also write the records as JSON")
    p.add_argument("--list", action="store_true", help="list the programs and exit")
    args = p.parse_args(argv)
    args.names = select(p, [s.strip() for s in args.only.split(",") if s.strip()])
    if args.repeat is not None and args.repeat < 1:
        p.error("--repeat must be at least 1")
    return args


def select(p: argparse.ArgumentParser, terms: list[str]) -> list[str]:
    """Program names for `--only` terms: a name, or an item number (all of its programs)."""
    if not terms:
        return list(PATTERNS)
    out = []
    for t in terms:
        if t in PATTERNS:
            out.append(t)
        elif t.isdigit() and int(t) in ITEMS:
            out += [n for n, q in PATTERNS.items() if q.item == int(t)]
        else:
            p.error(f"unknown program or item {t!r}; see --list")
    return list(dict.fromkeys(out))


def run_one(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """The record of one program; a crash is recorded, not raised, so the suite goes on."""
    print(f"[patterns] {name} ...", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    try:
        rec = measure_pattern(PATTERNS[name], args.sizes, args.repeat, args.budget,
                              args.explain)
    except Exception as e:  # noqa: BLE001 - a crash is a finding of the benchmark
        p = PATTERNS[name]
        rec = {"name": name, "item": p.item, "target_kind": p.target,
               "target": TARGETS[p.target], "passed": False,
               "error": f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"}
    print(f"[patterns] {name} done in {time.perf_counter() - t0:.1f} s", file=sys.stderr,
          flush=True)
    return rec


def row(r: dict[str, Any]) -> list[str]:
    """One row of the results table."""
    head = [r["name"], str(r["item"] or "mix"), f"{r['target_kind']} {r['target']:g}x"]
    if "error" in r:
        return head + ["-"] * 6 + ["ERROR"]
    return head + [
        fmt_time(r["reference"].min),
        f"{fmt_time(r['grad'].min)} / {fmt_time(r['grad'].median)}",
        f"{r['ratio']:.1f}x", f"{r['compile']:.2f} s", f"{r['overhead']:.0%}",
        "ok" if r["checks_ok"] else f"BAD ({r['value_err']:.0e}, {r['grad_err']:.0e})",
        "pass" if r["passed"] else "FAIL"]


def report(recs: list[dict[str, Any]], args: argparse.Namespace) -> str:
    """The printed report: the table, the explain lines, errors and a summary."""
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    head = (f"vecgrad patterns suite: sizes={args.sizes}, repeat={args.repeat or 'adaptive'}, "
            f"python {platform.python_version()}, numpy {np.__version__}, "
            f"{platform.machine()}, BLAS threads {threads}")
    tab = table(["program", "item", "target", "ref fwd (min)", "grad (min / med)",
                 "grad / ref", "compile", "call ovh", "checks", "result"],
                [row(r) for r in recs])
    expl = [f"  {r['name']}: {r['error']}" if "error" in r else f"  {r['name']}: {r['explain']}"
            for r in recs if "error" in r or r.get("explain")]
    n_ok = sum(r["passed"] for r in recs)
    legend = (f"grad / ref: min gradient time / min reference forward time; pass: checks ok, "
              f"ratio <= target, compile <= {COMPILE_TARGET:g} s (and call overhead <= 5% for "
              "item 8)")
    parts = [head, tab, legend]
    if expl:
        parts.append("What did not batch (vg.explain), and errors\n" + "\n".join(expl))
    parts.append(f"passed {n_ok} of {len(recs)}")
    return "\n\n".join(parts)


def to_json(recs: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any]:
    def conv(v: Any) -> Any:
        return dataclasses.asdict(v) if isinstance(v, Stats) else v
    return {"sizes": args.sizes, "repeat": args.repeat, "date": time.strftime("%Y-%m-%d %H:%M"),
            "python": platform.python_version(), "numpy": np.__version__,
            "programs": [{k: conv(v) for k, v in r.items()} for r in recs]}


def main(argv: list[str] | None = None) -> int:
    """Run the suite and print the report (and write JSON if asked). Exit code 0."""
    args = parse_args(argv)
    if args.list:
        for n, p in PATTERNS.items():
            print(f"{n:26} item {p.item or 'mix':<3} {p.target:8} {p.doc}")
        return 0
    recs = [run_one(n, args) for n in args.names]
    print(report(recs, args), flush=True)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(to_json(recs, args), f, indent=2, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
