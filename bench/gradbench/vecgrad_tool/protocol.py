"""GradBench's JSON-lines protocol (CONTRIBUTING.md, "Protocol") for the vecgrad tool.

Every eval module defines its functions as `prepare` callables: `prepare(input) -> (call, post)`,
where `call()` computes the function once on inputs already converted to arrays (the part that is
timed) and `post(output)` turns the result into the eval's JSON output (not timed), as the JAX and
PyTorch tools split their `pre`/`post` steps.

Timings in an evaluate response:
- `compile`: the first call of a new input signature (trace, batch, differentiate, code
  generation and one run) minus the fastest later run, so it is the compile cost alone; only
  when that call compiled something (vecgrad's caches gained an entry);
- `evaluate`: one entry per later run, repeated until at least `min_runs` runs and `min_seconds`
  seconds (GradBench's `Runs` rule), as every GradBench tool reports them.
A signature seen before (same shapes and static values) compiles nothing, and then no `compile`
entry is reported.
"""
from __future__ import annotations

import json
import sys
import time
import traceback
from collections.abc import Callable
from importlib import import_module
from typing import Any

Prepared = tuple[Callable[[], Any], Callable[[Any], Any]]
PACKAGE = __name__.rpartition(".")[0]


def compiled_entries() -> int:
    """How many compiled functions vecgrad's caches hold (grows when a call compiles)."""
    from vecgrad import api
    return sum(len(c) for c in list(api._CACHE.values())) + len(api._STRONG)


def timed_runs(call: Callable[[], Any], min_runs: int, min_seconds: float
               ) -> tuple[Any, list[dict]]:
    """Run `call` until both `min_runs` runs and `min_seconds` seconds are done."""
    before = compiled_entries()
    t0 = time.perf_counter_ns()
    out = call()
    first = time.perf_counter_ns() - t0
    compiled = compiled_entries() != before
    runs: list[int] = []
    while len(runs) < max(min_runs, 1) or sum(runs) < min_seconds * 1e9:
        t0 = time.perf_counter_ns()
        out = call()
        runs.append(time.perf_counter_ns() - t0)
    timings = [{"name": "evaluate", "nanoseconds": ns} for ns in runs]
    compile_ns = first - min(runs)
    if compiled:
        timings.insert(0, {"name": "compile", "nanoseconds": max(compile_ns, 0)})
    return out, timings


def evaluate(module: str, function: str, input: Any) -> dict:
    mod = import_module(f"{PACKAGE}.{module}")
    prepare = mod.FUNCTIONS[function]
    call, post = prepare(input)
    if isinstance(input, dict) and "min_runs" in input:
        out, timings = timed_runs(call, input["min_runs"], input["min_seconds"])
    else:  # hello: one run, no repetition fields
        t0 = time.perf_counter_ns()
        out = call()
        timings = [{"name": "evaluate", "nanoseconds": time.perf_counter_ns() - t0}]
    return {"success": True, "output": post(out), "timings": timings}


def respond(message: dict) -> dict:
    response: dict = {"id": message["id"]}
    kind = message["kind"]
    try:
        if kind == "start":
            response["tool"] = "vecgrad"
        elif kind == "define":
            t0 = time.perf_counter_ns()
            import_module(f"{PACKAGE}.{message['module']}")
            response["success"] = True
            response["timings"] = [{"name": "import",
                                    "nanoseconds": time.perf_counter_ns() - t0}]
        elif kind == "evaluate":
            response |= evaluate(message["module"], message["function"], message["input"])
    except Exception as e:  # noqa: BLE001 (the protocol reports failures as data, never as a crash)
        response["success"] = False
        response["error"] = "".join(traceback.format_exception(e))
    return response


def main(argv: list[str] | None = None) -> None:
    """Answer GradBench messages from stdin until it closes."""
    import argparse

    ap = argparse.ArgumentParser(description="vecgrad tool for GradBench")
    ap.add_argument("--multithreaded", action="store_true",
                    help="accepted for GradBench's CLI; vecgrad's NumPy code uses what BLAS uses")
    ap.parse_args(argv)
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(respond(json.loads(line))), flush=True)
