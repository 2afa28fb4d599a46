"""Recurrences before and after the scans pass, in one process (issue 14 item 6).

    python bench/scans.py [--only names] [--budget S] [--json out.json]

For each program: compile time (first gradient call), gradient and forward time (min over
runs), with the scans pass (rolled loops and scans) and without it (the recurrence left
unrolled, as batching leaves it: `vecgrad.pipeline` with `scans` and `loops` taken out), and
the generated code's size. Gradients (and the forward) are timed in turns, min of each. The programs are the recurrences of GradBench's lstm and ode evals
written as natural loops, a tanh RNN, and a tiny nonlinear step that measures the rolled
loop's own cost per step. (The linear scans against np.cumsum and closed-form references are
in the patterns suite, item 6: `python bench/scans.py --patterns` times them before/after,
in turns, against their references.)
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # (as bench/patterns: a shared 2-core box)
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import contextlib
import gc
import json
import platform
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import pipeline
from vecgrad.timing import fmt_time, table

# ------------------------------------------------------------------ programs

def lstm_cell(weight, bias, hidden, cell, inp):
    """GradBench's lstm model (ADBench): diagonal weights, gates from one product."""
    gates = vnp.concatenate((inp, hidden, inp, hidden)) * weight + bias
    n = hidden.shape[0]
    forget = vg.nn.sigmoid(gates[0:n])
    ingate = vg.nn.sigmoid(gates[n:2 * n])
    outgate = vg.nn.sigmoid(gates[2 * n:3 * n])
    change = vnp.tanh(gates[3 * n:])
    cell = cell * forget + ingate * change
    return outgate * vnp.tanh(cell), cell


def lstm_objective(main_params, extra_params, state, sequence):
    """GradBench's lstm objective in natural style: layers within characters, a log-softmax
    loss per character (GradBench's PyTorch tool, with vnp)."""
    total, count = 0.0, 0
    x_in = sequence[0]
    s = [state[i] for i in range(state.shape[0])]
    for t in range(sequence.shape[0] - 1):
        x = x_in * extra_params[0]
        for i in range(0, len(s), 2):
            s[i], s[i + 1] = lstm_cell(main_params[i], main_params[i + 1], s[i], s[i + 1], x)
            x = s[i]
        ypred = x * extra_params[1] + extra_params[2]
        ynorm = ypred - vnp.log(vnp.sum(vnp.exp(ypred)) + 2)
        ygold = sequence[t + 1]
        total = total + vnp.sum(ygold * ynorm)
        count += ygold.shape[0]
        x_in = ygold
    return -total / count


def lstm_inputs(rng, l, c, b):
    return (rng.random((2 * l, 4 * b)), rng.random((3, b)), rng.random((2 * l, b)),
            (rng.random((c, b)) > 0.5).astype(np.float64))


def ode(x, s):
    """GradBench's ode eval (cmpad an_ode): y_0' = x_0, y_i' = x_i y_{i-1}, solved from y = 0
    by s Runge-Kutta steps over [0, 2]; the gradient of y[-1] at the end."""
    def f(y):
        return vnp.concatenate((x[:1], x[1:] * y[:-1]))
    y, h = vnp.zeros(x.shape), 2.0 / s
    for _ in range(s):
        k1 = f(y)
        k2 = f(y + h / 2 * k1)
        k3 = f(y + h / 2 * k2)
        k4 = f(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y[-1]


def ode_inputs(rng, n, s):
    return rng.random(n), s


def tanh_rnn(W, U, b, xs):
    """h = tanh(W h + U x_t + b), with a loss on every state."""
    h = vnp.zeros(W.shape[0])
    loss = 0.0
    for t in range(xs.shape[0]):
        h = vnp.tanh(W @ h + U @ xs[t] + b)
        loss = loss + vnp.sum(h ** 2)
    return loss


def rnn_inputs(rng, T, n_in, n_h):
    return (rng.standard_normal((n_h, n_h)) / np.sqrt(n_h),
            rng.standard_normal((n_h, n_in)) / np.sqrt(n_in), 0.1 * rng.standard_normal(n_h),
            rng.standard_normal((T, n_in)))


def tiny_step(w, xs):
    """A nonlinear step of two tiny operations: what the loop itself costs per step."""
    h = vnp.zeros(xs.shape[1])
    for t in range(xs.shape[0]):
        h = vnp.sin(h * w + xs[t])
    return vnp.sum(h)


def tiny_inputs(rng, T):
    return rng.standard_normal(2), rng.standard_normal((T, 2))


@dataclass
class Program:
    name: str
    fn: Callable[..., Any]
    inputs: Callable[..., tuple]
    sizes: dict[str, Any]
    argnums: tuple[int, ...]
    steps: int  # the recurrence's trip count


PROGRAMS = [
    Program("lstm l=2 c=1024", lstm_objective, lstm_inputs, {"l": 2, "c": 1024, "b": 7}, (0, 1),
            1024),
    Program("lstm l=2 c=4096", lstm_objective, lstm_inputs, {"l": 2, "c": 4096, "b": 7}, (0, 1),
            4096),
    Program("ode n=1000 s=100", ode, ode_inputs, {"n": 1000, "s": 100}, (0,), 100),
    Program("tanh rnn T=1000 H=64", tanh_rnn, rnn_inputs, {"T": 1000, "n_in": 32, "n_h": 64},
            (0, 1, 2, 3), 1000),
    Program("tiny step T=1000", tiny_step, tiny_inputs, {"T": 1000}, (0, 1), 1000),
]


# ------------------------------------------------------------------ measurement

@contextlib.contextmanager
def without_scans() -> Iterator[None]:
    """The pipeline as it was before the scans pass: recurrences stay unrolled."""
    fwd, bwd = pipeline.FORWARD, pipeline.BACKWARD
    pipeline.FORWARD = tuple(s for s in fwd if s.name != "scans")
    pipeline.BACKWARD = tuple(s for s in bwd if s.name != "loops")
    try:
        yield
    finally:
        pipeline.FORWARD, pipeline.BACKWARD = fwd, bwd


def compile_one(p: Program) -> dict[str, Any]:
    """Compile the gradient and the forward of p (with the passes as they are now)."""
    args = p.inputs(np.random.default_rng(0), **p.sizes)
    fn = (lambda *a: p.fn(*a)) if p.fn is not ode else (lambda x, s=args[1]: ode(x, s))
    call = args if p.fn is not ode else args[:1]
    g, j = vg.grad(fn, argnums=p.argnums), vg.jit(fn)
    gc.collect()
    t0 = time.perf_counter()
    e, _ = g.entry(*call)
    compile_s = time.perf_counter() - t0
    j(*call)
    grads = g(*call)
    return {"compile": compile_s, "times": dict(e.times), "g": g, "j": j, "call": call,
            "source_lines": e.compiled.source.count("\n"), "value": float(j(*call)),
            "grad_value": [np.asarray(x).ravel()[:3].tolist() for x in
                           (grads if isinstance(grads, tuple) else (grads,))],
            "rolled": [f"{n['count']} x {n['became']}" for n in e.notes
                       if isinstance(n, dict) and n.get("kind") == "recurrence"]}


def interleaved(fns: dict[str, Callable[[], Any]], budget: float) -> dict[str, float]:
    """Min seconds per call of each function, timed in turns (a shared machine's load then
    weighs on all of them alike)."""
    best = dict.fromkeys(fns, float("inf"))
    t_end = time.perf_counter() + budget * len(fns)
    rounds = 0
    while rounds < 3 or (time.perf_counter() < t_end and rounds < 200):
        for k, f in fns.items():
            t0 = time.perf_counter()
            f()
            best[k] = min(best[k], time.perf_counter() - t0)
        rounds += 1
    return best


def _pattern_row(p: Any, budget: float, targets: dict[str, float]) -> list[str]:
    args = p.inputs(np.random.default_rng(0), **p.sizes["default"])
    prepared = p.prepare(args)
    gs = {}
    for mode in ("after", "before"):
        ctx = without_scans() if mode == "before" else contextlib.nullcontext()
        with ctx:
            gs[mode] = vg.grad(lambda *a, f=p.natural: f(*a), argnums=p.argnums)
            gs[mode](*args)
    t = interleaved({"ref": lambda: p.reference(*prepared),
                     "after": lambda: gs["after"](*args),
                     "before": lambda: gs["before"](*args)}, budget)
    return [p.name, p.target, fmt_time(t["ref"]), fmt_time(t["before"]),
            f"{t['before'] / t['ref']:.1f}x", fmt_time(t["after"]),
            f"{t['after'] / t['ref']:.1f}x", f"{targets[p.target]:g}x"]


def patterns_item6(budget: float) -> int:
    """The recurrences of the patterns suite (item 6): reference forward (np.cumsum & co, the
    closed form, or a NumPy loop), and the gradient with and without the scans pass, timed in
    turns."""
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from patterns import PATTERNS
    from patterns.core import TARGETS
    rows = []
    for p in (PATTERNS.values() if isinstance(PATTERNS, dict) else PATTERNS):
        if p.item != 6:
            continue
        print(f"[scans] {p.name} ...", file=sys.stderr, flush=True)
        rows.append(_pattern_row(p, budget, TARGETS))
    print(table(["program", "kind", "reference fwd", "grad before", "x ref", "grad after",
                 "x ref", "target"], rows))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/scans.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="comma-separated substrings of program names")
    ap.add_argument("--budget", type=float, default=1.0, help="seconds per timing")
    ap.add_argument("--json", metavar="PATH")
    ap.add_argument("--patterns", action="store_true",
                    help="the patterns suite's recurrences (item 6) before/after instead")
    args = ap.parse_args(argv)
    if args.patterns:
        return patterns_item6(args.budget)
    terms = [t.strip() for t in args.only.split(",") if t.strip()]
    progs = [p for p in PROGRAMS if not terms or any(t in p.name for t in terms)]
    print(f"vecgrad scans benchmark: python {platform.python_version()}, numpy {np.__version__}"
          f", {platform.machine()}, BLAS threads {os.environ['OPENBLAS_NUM_THREADS']}\n")
    rows, records = [], []
    for p in progs:
        print(f"[scans] {p.name} ...", file=sys.stderr, flush=True)
        after = compile_one(p)
        with without_scans():
            before = compile_one(p)
        t = interleaved({k: (lambda r=r, f=f: r[f](*r["call"]))
                         for k, r, f in [("grad after", after, "g"), ("grad before", before, "g"),
                                         ("fwd after", after, "j"), ("fwd before", before, "j")]},
                        args.budget)
        after["grad"], before["grad"], after["fwd"], before["fwd"] = \
            t["grad after"], t["grad before"], t["fwd after"], t["fwd before"]
        same = np.allclose(after["value"], before["value"], rtol=1e-9) and all(
            np.allclose(a, b, rtol=1e-7, atol=1e-12)
            for a, b in zip(after["grad_value"], before["grad_value"]))
        for r in (after, before):
            del r["g"], r["j"], r["call"]
        records.append({"program": p.name, "after": after, "before": before, "same": same})
        rows.append([p.name, fmt_time(before["compile"]), fmt_time(after["compile"]),
                     f"{before['compile'] / after['compile']:.1f}x",
                     fmt_time(before["grad"]), fmt_time(after["grad"]),
                     f"{after['grad'] / after['fwd']:.1f}x",
                     fmt_time(before["fwd"]), fmt_time(after["fwd"]),
                     fmt_time((after["fwd"] - before["fwd"]) / p.steps),
                     f"{before['source_lines']:,} / {after['source_lines']:,}",
                     "ok" if same else "DIFFERS"])
    print(table(["program", "compile before", "compile after", "faster", "grad before",
                 "grad after", "grad/fwd after", "fwd before", "fwd after",
                 "fwd +/step", "code lines before / after", "same result"],
                rows))
    print("\nwhat each recurrence became:")
    for r in records:
        for line in r["after"]["rolled"]:
            print(f"  {r['program']}: {line}")
    print("\ncompile stages after (s):")
    for r in records:
        t = r["after"]["times"]
        print(f"  {r['program']}: " + ", ".join(f"{k} {v:.3f}" for k, v in t.items()
                                                 if v >= 0.005))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1, default=str)
    return 0 if all(r["same"] for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
