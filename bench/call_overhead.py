"""Per-call cost of a transformed function on a cache hit, and of static data (issue 14 item 8).

    python bench/call_overhead.py [--repeat N]

Every figure is measured in this one process: the time of the call through vecgrad minus the
time of the generated code called directly (`entry.compiled.fn(*leaves)`), min over runs.

- "cache hit": a tiny function (sum of squares of a 3-vector), jit and grad, called with one
  array, a dict of four arrays, a Python float argument, and a keyword argument.
- "vjp": `vg.vjp(f, x)` followed by `vjp_fn(ct)`, against the compiled forward and backward.
- "static edge list": the gradient of a loop over an edge list passed as a static argument
  (3,000 index pairs, as a list of tuples and as a tuple of tuples), the whole call overhead,
  and the static argument's own cost (keying the call with it, minus keying it with None in
  its place) as a share of the compiled gradient's time (the target is at most 5%).
"""
from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.timing import fmt_time, measure, table


def tiny(x: Any) -> Any:
    return vnp.sum(x * x)


def tiny_tree(p: dict) -> Any:
    return vnp.sum(p["a"] * p["b"]) + vnp.sum(p["c"] * p["d"])


def tiny_scaled(x: Any, lr: float) -> Any:
    return vnp.sum(x * x) * lr


def edge_loss(x: Any, edges: Any) -> Any:
    total = 0.0
    for i, j in edges:
        total = total + (x[i] - x[j]) ** 2
    return total


def _overhead(t: Any, args: tuple, kwargs: dict, repeat: int | None) -> tuple[float, float]:
    """(call through vecgrad, generated code alone), min seconds per call."""
    entry, leaves = t.entry(*args, **kwargs)
    call = measure(functools.partial(t, *args, **kwargs), repeat, budget=0.3)
    direct = measure(functools.partial(entry.compiled.fn, *leaves), repeat, budget=0.3)
    return call.min, direct.min


def cache_hits(repeat: int | None) -> list[list[str]]:
    x = np.ones(3)
    tree = {k: np.ones(3) for k in "abcd"}
    cases: list[tuple[str, Callable, tuple, dict]] = [
        ("one array", tiny, (x,), {}),
        ("dict of 4 arrays", tiny_tree, (tree,), {}),
        ("array + Python float", tiny_scaled, (x, 0.1), {}),
        ("array + keyword float", tiny_scaled, (x,), {"lr": 0.1}),
    ]
    rows = []
    for label, fn, args, kw in cases:
        for kind in ("jit", "grad"):
            call, direct = _overhead(getattr(vg, kind)(fn), args, kw, repeat)
            rows.append([label, kind, fmt_time(call), fmt_time(direct), fmt_time(call - direct)])
    return rows


def vjp_row(repeat: int | None) -> list[str]:
    x = np.ones(3)
    ct = np.ones(3)

    def f(x: Any) -> Any:
        return vnp.tanh(x) * x

    def both() -> Any:
        _, fn = vg.vjp(f, x)
        return fn(ct)
    total = measure(both, repeat, budget=0.3).min
    jit = vg.jit(f)
    e, leaves = jit.entry(x)
    fwd = measure(functools.partial(e.compiled.fn, *leaves), repeat, budget=0.3).min
    return ["vjp(f, x) + vjp_fn(ct)", fmt_time(total), f"{fmt_time(fwd)} (jit forward alone)",
            fmt_time(total - fwd)]


def static_data(repeat: int | None, n_edges: int = 3000, n: int = 500) -> list[list[str]]:
    """The gradient's call overhead with the edge list, and the static argument's own share:
    keying the call with it minus keying it with None in its place (signature.flatten_call)."""
    from vecgrad.signature import flatten_call
    rng = np.random.default_rng(0)
    pairs = [(int(a), int(b)) for a, b in rng.integers(0, n, (n_edges, 2))]
    x = rng.standard_normal(n)
    g = vg.grad(edge_loss)
    none = measure(functools.partial(flatten_call, (x, None), {}), repeat, budget=0.3).min
    rows = []
    for label, edges in [("list of tuples", list(pairs)), ("tuple of tuples", tuple(pairs))]:
        call, direct = _overhead(g, (x, edges), {}, repeat)
        key = measure(functools.partial(flatten_call, (x, edges), {}), repeat, budget=0.3).min
        rows.append([label, fmt_time(call), fmt_time(direct), fmt_time(call - direct),
                     f"{(call - direct) / direct:.1%}", fmt_time(key - none),
                     f"{(key - none) / direct:.1%}"])
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=None, help="samples per measurement")
    a = ap.parse_args(argv)
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    print("\nCache-hit overhead (tiny function)\n" + table(
        ["arguments", "kind", "call", "generated code", "overhead"], cache_hits(a.repeat)))
    print("\nvjp per call\n" + table(["call", "total", "reference", "difference"],
                                     [vjp_row(a.repeat)]))
    print("\nStatic edge list (3,000 pairs), gradient of a loop over it\n" + table(
        ["static argument", "call", "generated code", "overhead", "overhead / compiled",
         "the argument's own cost", "its share of compiled"], static_data(a.repeat)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
