"""Compile-time scaling (issue 11): each stage's time per traced operation at sizes n, 2n, 4n.

    python bench/compile/scaling.py [--only gmm,lstm,particle,rbf,gmm_loglik,triplet,...]
                                    [--scale S] [--repeat N] [--clock cpu|wall]
                                    [--against REV] [--json out.json]

For each workload it compiles `vg.grad` (the first call's compile, not the run) on a fresh
function at three sizes whose traced operation counts go about 1 : 2 : 4, `--repeat` times
(compile cache cleared each time), and prints, per pipeline stage, microseconds per traced
operation (min over the repeats) and the stage's **growth**: its time at 4n over its time at n,
divided by the growth of the traced operations (1.0 is linear, 2.0 is quadratic in a 4x range;
stages under 5 ms at every size are printed but not judged, their growth is noise). The
stages after batching are the ones this benchmark watches (the `simplify` lane); trace and
batch are shown for reference.

Workloads (`--scale` multiplies every base size):
- gmm: GradBench's gmm in loop style (bench/gradbench/vecgrad_tool/gmm.py), d=2, K=5,
  n = 250, 500, 1000 points: wide `stack`/`concatenate` nodes of n operands after batching.
- lstm: GradBench's lstm, l=2 layers, c = 256, 512, 1024 characters: a recurrence that the
  scans stage rolls into a loop.
- particle: GradBench's particle, the gradient of `final_x_squared` (outer reverse, inner
  reverse: a grad of a grad) through 50, 100, 200 Euler steps: an unbatched chain.
- zeros_rows, segment_rows: the simplify pass alone, on a graph of primitives that a rule
  follows link by link (rows added into zeros, as gmm's gradient; rows added into a segment
  sum), 1000, 2000, 4000 rows; us per equation of that graph.
- rbf, gmm_loglik, triplet: the patterns suite's rbf_kernel_quadratic (n = 32, 45, 64: n^2
  kernel entries), gmm_loglik (n = 250, 500, 1000) and triplet_margin (m = 750, 1500, 3000).

`--against REV` measures the same workloads, in the same rounds, with the sources of git
revision REV as well (extracted with `git archive` into a temporary directory; every
measurement then runs in a fresh subprocess, the two trees alternating), and prints both:
before/after figures taken under the same machine load.

`--clock cpu` (the default) reads the stage timers on this process's CPU clock, which the
other jobs of a shared machine inflate far less than the wall clock (`--clock wall`).

The machine is shared and noisy: every figure is a min over repeats measured in this run.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("VECGRAD_CACHE_DIR", tempfile.mkdtemp(prefix="vecgrad-bench-cache-"))

BENCH = Path(__file__).resolve().parents[1]
for p in (BENCH, BENCH / "gradbench"):
    sys.path.insert(0, str(p))

import numpy as np

import vecgrad as vg

AFTER_BATCH = ["scans", "simplify", "ad", "grad.loops", "grad.cse", "grad.simplify",
               "grad.reassociate", "strip", "relayout", "muladd", "codegen"]
CLOCK = [time.perf_counter]  # what compile_once reads (set by --clock)
JUDGED_FLOOR = 5e-3  # seconds: a stage this fast at every size is not judged


# ----------------------------------------------------------------------- workloads

def _gmm(n: int) -> tuple[Callable, tuple, Any]:
    from vecgrad_tool import gmm
    d, K = 2, 5
    r = np.random.default_rng(0)
    args = (r.normal(size=K), r.normal(size=(K, d)), 0.1 * r.normal(size=(K, d)),
            r.normal(size=(K, d * (d - 1) // 2)), r.normal(size=(n, d)), (1.0, 0))
    return gmm.gmm_objective, args, (0, 1, 2, 3)


def _lstm(c: int) -> tuple[Callable, tuple, Any]:
    from vecgrad_tool import lstm
    layers, b = 2, 14
    r = np.random.default_rng(0)
    args = (r.normal(size=(2 * layers, 4 * b)), r.normal(size=(3, b)),
            r.normal(size=(2 * layers, b)), r.normal(size=(c, b)))
    return lstm.lstm_objective, args, (0, 1)


def _particle(steps: int) -> tuple[Callable, tuple, Any]:
    from vecgrad_tool import particle
    return particle.final_x_squared, (0.0, steps, "r"), 0


def _pattern(name: str, size_key: str) -> Callable[[int], tuple[Callable, tuple, Any]]:
    def make(size: int) -> tuple[Callable, tuple, Any]:
        from patterns import PATTERNS
        p = PATTERNS[name]
        kw = dict(p.sizes["default"], **{size_key: size})
        return p.natural, p.inputs(np.random.default_rng(0), **kw), p.argnums
    return make


# name -> (what, size parameter, base sizes, maker, a small size compiled first, unmeasured:
# the first compile of a process pays for imports and the kernel cost model's calibration)
WORKLOADS: dict[str, tuple[str, str, tuple[int, ...], Callable, int]] = {
    "gmm": ("GradBench gmm, loop style, d=2 K=5", "n", (250, 500, 1000), _gmm, 10),
    "lstm": ("GradBench lstm, l=2 (a recurrence rolled by scans)", "c", (256, 512, 1024),
             _lstm, 8),
    "particle": ("GradBench particle rr, grad of grad through the Euler steps", "steps",
                 (50, 100, 200), _particle, 5),
    "rbf": ("patterns rbf_kernel_quadratic, d=16", "n", (32, 45, 64),
            _pattern("rbf_kernel_quadratic", "n"), 4),
    "gmm_loglik": ("patterns gmm_loglik, K=5 D=10", "n", (250, 500, 1000),
                   _pattern("gmm_loglik", "n"), 10),
    "triplet": ("patterns triplet_margin, n=500 d=16", "m", (750, 1500, 3000),
                _pattern("triplet_margin", "m"), 20),
}


# ----------------------------------------------------------------------- rule chains

def _traced(fn: Callable, *shapes: tuple[int, ...]) -> Any:
    from vecgrad.inputs import trace
    from vecgrad.ir import Aval
    b, out = trace(fn, [Aval(s, np.dtype(np.float64)) for s in shapes], hash_cons=False)
    return b.build([out.atom])


def _rows_into_zeros(n: int) -> Any:
    """zeros.at[i].add(g_i) for every row of an (n, 3) array, last row first: the cotangent
    of reading it row by row (gmm's points)."""
    from vecgrad import primitives as P

    def f(x: Any) -> Any:
        z = P.full(shape=(n, 3), dtype=np.dtype(np.float64), value=0.0)
        for i in reversed(range(n)):
            z = P.setitem_add(z, P.sin(x[i]), idx=P.normalize_index(i, (n, 3)))
        return P.mul(z, 3.0)
    return _traced(f, (n, 3))


def _rows_into_segment_sum(n: int) -> Any:
    """A segment sum (a gather's cotangent), then one whole row added per unbatched read."""
    from vecgrad import primitives as P
    ids = P.Adv(np.arange(2 * n) % n)

    def f(x: Any, u: Any) -> Any:
        s = P.segment_sum(P.tanh(u), ids=ids, axis=0, num=n)
        for i in range(n):
            s = P.setitem_add(s, P.sin(x[i]), idx=P.normalize_index(i, (n, 3)))
        return P.mul(s, 2.0)
    return _traced(f, (n, 3), (2 * n, 3))


# name -> (what, size parameter, base sizes, graph builder, warm-up size): the simplify pass
# alone on a graph made of primitives, a chain that some rule follows link by link
CHAINS: dict[str, tuple[str, str, tuple[int, ...], Callable, int]] = {
    "zeros_rows": ("simplify on zeros.at[i].add(g_i) for every row", "rows",
                   (1000, 2000, 4000), _rows_into_zeros, 10),
    "segment_rows": ("simplify on segment_sum(u).at[i].add(g_i) for every row", "rows",
                     (1000, 2000, 4000), _rows_into_segment_sum, 10),
}


def chain_once(name: str, size: int) -> dict[str, Any]:
    from vecgrad.rewrite.simplify import simplify
    g = CHAINS[name][3](size)
    clock = CLOCK[0]
    t0 = clock()
    g1 = simplify(g)
    t = clock() - t0
    return {"times": {"simplify": t}, "total": t, "ops": len(g.eqns), "batched": len(g.eqns),
            "grad": len(g1.eqns)}


def sizes(name: str, scale: float) -> list[int]:
    base = (WORKLOADS.get(name) or CHAINS[name])[2]
    if name == "rbf":  # traced operations grow as n^2
        return [max(2, round(b * scale ** 0.5)) for b in base]
    return [max(1, round(b * scale)) for b in base]


def set_clock(clock: str) -> None:
    """Point vecgrad's stage timers (time.perf_counter in pipeline and staging) at the CPU
    clock of this process."""
    if clock == "cpu":
        from types import SimpleNamespace

        from vecgrad import pipeline, staging
        cpu = SimpleNamespace(perf_counter=time.process_time)
        pipeline.time = staging.time = cpu  # type: ignore[attr-defined]
        CLOCK[0] = time.process_time


def compile_once(name: str, size: int) -> dict[str, Any]:
    """One compile of vg.grad on a fresh function: stage seconds, traced operations."""
    if name in CHAINS:
        return chain_once(name, size)
    fun, args, argnums = WORKLOADS[name][3](size)

    def fresh(*a: Any) -> Any:
        return fun(*a)
    vg.clear_cache()
    gc.collect()
    clock = CLOCK[0]
    t0 = clock()
    entry, _ = vg.grad(fresh, argnums=argnums).entry(*args)
    total = clock() - t0
    return {"times": dict(entry.times), "total": total, "ops": entry.counts.get("traced", 0),
            "batched": entry.counts.get("batch", 0), "grad": entry.counts.get("grad", 0)}


# ----------------------------------------------------------------------- running

WORKER = "--worker"


def warm_up(name: str) -> None:
    compile_once(name, (WORKLOADS.get(name) or CHAINS[name])[4])


def measure_here(name: str, size: int, repeat: int) -> dict[str, Any]:
    runs = [compile_once(name, size) for _ in range(repeat)]
    return merge(runs)


def merge(runs: list[dict[str, Any]]) -> dict[str, Any]:
    keys = {k for r in runs for k in r["times"]}
    return {"times": {k: min(r["times"].get(k, 0.0) for r in runs) for k in keys},
            "total": min(r["total"] for r in runs), "ops": runs[0]["ops"],
            "batched": runs[0]["batched"], "grad": runs[0]["grad"]}


def measure_in(src: Path, name: str, size: int, clock: str) -> dict[str, Any]:
    """One compile in a fresh process on the sources under `src` (a tree with src/)."""
    env = dict(os.environ, PYTHONPATH=str(src / "src"))
    p = subprocess.run([sys.executable, __file__, WORKER, name, str(size), clock], env=env,
                       check=True, capture_output=True, text=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def extract(rev: str) -> Path:
    root = Path(subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=BENCH, check=True,
                               capture_output=True, text=True).stdout.strip())
    out = Path(tempfile.mkdtemp(prefix="vecgrad-scaling-"))
    archive = subprocess.run(["git", "archive", rev, "src"], cwd=root, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out


# ----------------------------------------------------------------------- report

def growth(recs: list[dict[str, Any]], key: str) -> str:
    t = [r["times"].get(key, 0.0) if key != "total" else r["total"] for r in recs]
    if max(t) < JUDGED_FLOOR:
        return "-"
    ops = recs[-1]["ops"] / max(recs[0]["ops"], 1)
    return f"{t[-1] / max(t[0], 1e-9) / ops:.2f}"


def stage_rows(recs: list[dict[str, Any]], label: str) -> list[list[str]]:
    stages = [s for s in ["trace", "batch", *AFTER_BATCH]
              if any(s in r["times"] for r in recs)]
    rows = []
    for s in [*stages, "after batching", "total"]:
        def t(r: dict[str, Any], s: str = s) -> float:
            if s == "total":
                return r["total"]
            if s == "after batching":
                return sum(v for k, v in r["times"].items() if k in AFTER_BATCH)
            return r["times"].get(s, 0.0)
        cells = [f"{t(r) / max(r['ops'], 1) * 1e6:.2f}" for r in recs]
        tmp = [dict(r, times={**r["times"], s: t(r)}) for r in recs]
        rows.append([label, s, *cells, f"{1e3 * t(recs[-1]):.0f} ms", growth(tmp, s)])
    return rows


def print_workload(name: str, szs: list[int], results: dict[str, list[dict[str, Any]]]) -> None:
    what, key = (WORKLOADS.get(name) or CHAINS[name])[:2]
    first = next(iter(results.values()))
    counts = ("; traced ops " + ", ".join(f"{r['ops']:,}" for r in first)
              + "; eqns after batching " + ", ".join(f"{r['batched']:,}" for r in first)
              + "; gradient graph " + ", ".join(f"{r['grad']:,}" for r in first)) \
        if name in WORKLOADS else ("; eqns " + ", ".join(f"{r['ops']:,}" for r in first)
                                   + " (us per eqn below)")
    print(f"\n{name}: {what}; {key} = {', '.join(map(str, szs))}{counts}")
    head = ["tree", "stage", *[f"us/op {key}={s}" for s in szs], f"at {key}={szs[-1]}",
            "growth"]
    rows = [row for label, recs in results.items() for row in stage_rows(recs, label)]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    for r in [head, *rows]:
        print("  ".join(str(x).rjust(w) if i > 1 else str(x).ljust(w)
                        for i, (x, w) in enumerate(zip(r, widths))))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bench/compile/scaling.py",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default=",".join([*WORKLOADS, *CHAINS]),
                   help=f"comma-separated workloads: {', '.join([*WORKLOADS, *CHAINS])}")
    p.add_argument("--scale", type=float, default=1.0, help="multiply every base size")
    p.add_argument("--repeat", type=int, default=3, help="compiles per size (min is kept)")
    p.add_argument("--clock", choices=["cpu", "wall"], default="cpu",
                   help="'cpu' (this process's CPU time, default) or 'wall'")
    p.add_argument("--against", metavar="REV", help="also measure git revision REV's sources")
    p.add_argument("--json", metavar="PATH", help="also write the records as JSON")
    a = p.parse_args(argv)
    a.only = [s.strip() for s in a.only.split(",") if s.strip()]
    bad = [s for s in a.only if s not in WORKLOADS and s not in CHAINS]
    if bad:
        p.error(f"unknown workloads {bad}; known: {', '.join([*WORKLOADS, *CHAINS])}")
    return a


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [WORKER]:
        set_clock(argv[3])
        warm_up(argv[1])
        print(json.dumps(compile_once(argv[1], int(argv[2]))))
        return 0
    a = parse_args(argv)
    set_clock(a.clock)
    trees = {"this": None} if not a.against else \
        {"this": BENCH.parent, a.against: extract(a.against)}
    print(f"compile scaling: clock={a.clock}, repeat={a.repeat}, scale={a.scale}, load average "
          f"{os.getloadavg()[0]:.1f}; us per traced op, min over repeats; growth = "
          f"(time at 4n / time at n) / (ops at 4n / ops at n), 1.0 is linear")
    out: dict[str, Any] = {}
    for name in a.only:
        szs = sizes(name, a.scale)
        results: dict[str, list[dict[str, Any]]] = {}
        for label, src in trees.items():
            results[label] = []
        for size in szs:
            if not a.against:
                if size == szs[0]:
                    warm_up(name)
                results["this"].append(measure_here(name, size, a.repeat))
                continue
            runs: dict[str, list] = {label: [] for label in trees}
            for k in range(a.repeat):  # alternate the trees, the first one every other round
                order = list(trees.items()) if k % 2 == 0 else list(trees.items())[::-1]
                for label, src in order:
                    runs[label].append(measure_in(src, name, size, a.clock))
            for label in trees:
                results[label].append(merge(runs[label]))
        print_workload(name, szs, results)
        out[name] = {"sizes": szs, "results": results}
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
