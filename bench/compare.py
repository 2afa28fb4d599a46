"""`bench/run.py --baselines`: each engine's gradient of each seed, on the same inputs, in this
process, against the hand-vectorized NumPy forward.

Engines: vecgrad (natural style), and, wherever installed, PyTorch eager (loop style and
vectorized), `jax.jit(jax.grad)` (vectorized, compile timed separately) and HIPS autograd (loop
style); see `bench/baselines.py`. Each engine's gradient is checked against vecgrad's.
"""
from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from typing import Any

import baselines as BL  # (bench/ is on sys.path: see run.py)
import numpy as np
from workloads import WORKLOADS, Trial, fmt_time, table, trial

import vecgrad as vg
from vecgrad.pytree import flatten

REFERENCE = "numpy forward, vectorized"
VECGRAD = "vecgrad grad, loop"


def log(msg: str) -> None:
    """Progress goes to stderr so that stdout stays the report."""
    print(f"[baselines] {msg}", file=sys.stderr, flush=True)


def _record(seed: str, engine: str, t: Trial, **extra: Any) -> dict[str, Any]:
    return {"seed": seed, "engine": engine, **dataclasses.asdict(t), **extra}


def _err(grads: np.ndarray, ref: np.ndarray) -> float:
    return float(np.linalg.norm(grads - ref) / max(np.linalg.norm(ref), 1e-300))


def run_seed(name: str, preset: str, repeat: int | None, budget: float,
             skipped: dict[str, str], engines: list[str] | None = None,
             devices: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Records for one seed: the NumPy forward, vecgrad's gradient and each baseline.
    `devices` (the GPU run): library -> device; only the engines marked `gpu` run, there."""
    w = WORKLOADS[name]
    args = w.inputs(preset)
    log(f"{name}: {REFERENCE}")
    recs = [_record(name, REFERENCE, trial(lambda: w.numpy_forward(*args), repeat, budget,
                                           memory=True))]
    log(f"{name}: {VECGRAD} (compiling)")
    g = vg.grad(w.fresh_loss(), argnums=w.argnums)
    ref = BL.flat(flatten(g(*args))[0])
    recs.append(_record(name, VECGRAD, trial(lambda: g(*args), repeat, budget, memory=True),
                        grad_err=0.0))
    for e in BL.ENGINES:
        if engines and not any(term in e.label for term in engines):
            skipped[e.label] = "not selected (--engines)"
            continue
        if not BL.available(e):
            skipped[e.label] = f"{e.module} is not installed"
            continue
        if devices is not None and not (e.gpu and devices.get(e.module) is not None):
            skipped[e.label] = "not in the GPU run" if not e.gpu else \
                f"no GPU for {e.module}"
            continue
        log(f"{name}: {e.label}")
        dev = None if devices is None else devices[e.module]
        rec = _run_engine(e, name, args, w.argnums, ref, repeat, budget, skipped, dev)
        if rec:
            recs.append(rec)
    return recs


def _run_engine(e: BL.Engine, name: str, args: tuple, argnums: tuple, ref: np.ndarray,
                repeat: int | None, budget: float, skipped: dict[str, str],
                device: Any = None) -> dict | None:
    # One engine failing (an API change, say) must not lose the others' numbers.
    try:
        p = BL.prepare(e, name, args, argnums, device)
        err = _err(BL.flat(p.to_numpy(p.call())), ref)
        t = trial(p.call, repeat, budget, memory=p.numpy_based)
    except Exception as exc:  # noqa: BLE001
        skipped[f"{e.label} on {name}"] = f"failed: {type(exc).__name__}: {exc}"
        return None
    return _record(name, e.label, t, compile_s=p.compile_seconds, grad_err=err)


def run(names: list[str], preset: str, repeat: int | None, budget: float = 1.0,
        engines: list[str] | None = None, devices: dict[str, Any] | None = None
        ) -> tuple[list[dict], dict[str, str]]:
    """All records for the seeds `names`, and the engines skipped (label -> why).
    `engines`: keep only the baselines whose label contains one of these terms; `devices`:
    see run_seed."""
    skipped: dict[str, str] = {}
    recs = [r for n in names for r in run_seed(n, preset, repeat, budget, skipped, engines,
                                              devices)]
    ref = {r["seed"]: r["min"] for r in recs if r["engine"] == REFERENCE}
    for r in recs:
        r["ratio"] = r["min"] / ref[r["seed"]]
    return recs, skipped


def _mem(r: dict) -> str:
    if r["memory"] is None:
        return "n/a (capped)" if r["capped"] else "n/a"
    n = r["memory"]
    return f"{n / 2**20:.2f} MiB" if n >= 2**20 else f"{n / 2**10:.1f} KiB"


def _row(r: dict) -> list[str]:
    err = r.get("grad_err")
    runs = f"{r['runs']}" + (" (1 call, capped)" if r["capped"] else "")
    return [r["engine"], fmt_time(r["min"]), fmt_time(r["median"]), fmt_time(r["mean"]),
            runs, _mem(r), f"{r['ratio']:.1f}x", "-" if err is None else f"{err:.0e}"]


HEADER = ["engine, style", "min", "median", "mean", "runs", "memory (peak)",
          "x numpy fwd (min)", "grad rel. err"]


def seed_table(recs: list[dict], name: str) -> str:
    """The BenchmarkTools-style table of one seed."""
    return table(HEADER, [_row(r) for r in recs if r["seed"] == name])


def ratio_table(recs: list[dict], names: list[str]) -> str:
    """Gradient time in multiples of the NumPy forward: one row per engine, one column a seed."""
    engines = list(dict.fromkeys(r["engine"] for r in recs if r["engine"] != REFERENCE))
    by = {(r["engine"], r["seed"]): r for r in recs}
    rows = [[e] + [_ratio(by.get((e, n))) for n in names] for e in engines]
    return table(["gradient, engine / style"] + [f"seed {n}" for n in names], rows)


def _ratio(r: dict | None) -> str:
    if r is None:
        return "-"
    return f"{r['ratio']:,.1f}x" + ("*" if r["capped"] else "")


# vecgrad's backends against the same library's gradient of hand-vectorized code
SAME_LIBRARY = [("vecgrad jax backend, loop", "jax jit(grad), vectorized"),
                ("vecgrad torch backend, loop", "torch eager, vectorized")]


def backend_table(recs: list[dict], names: list[str]) -> str | None:
    """Each vecgrad backend's gradient time over its library's gradient of the hand-vectorized
    code (min / min, same run), or None when neither pair ran."""
    by = {(r["engine"], r["seed"]): r for r in recs}
    rows = [[f"{ours} / {theirs}"] + [f"{by[(ours, n)]['min'] / by[(theirs, n)]['min']:.2f}x"
                                      if (ours, n) in by and (theirs, n) in by else "-"
                                      for n in names]
            for ours, theirs in SAME_LIBRARY
            if any((ours, n) in by and (theirs, n) in by for n in names)]
    if not rows:
        return None
    return table(["vecgrad backend / same library, vectorized"] +
                 [f"seed {n}" for n in names], rows)


def notes(recs: list[dict], skipped: dict[str, str], cap_s: float = 1.0) -> list[str]:
    """Compile times (JAX), capped measurements and skipped engines, one line each."""
    out = [f"compile of {r['engine']} on {r['seed']}: {fmt_time(r['compile_s'])} "
           "(not in the times above)" for r in recs if r.get("compile_s") is not None]
    out += [f"* {r['engine']} on {r['seed']}: the first call took {fmt_time(r['min'])} "
            f"(> {cap_s:g} s), so it is the only call timed" for r in recs if r["capped"]]
    if any(r["engine"].startswith("torch") for r in recs):
        out.append(f"torch ran with torch.set_num_threads({BL.TORCH_THREADS}) "
                   "(see baselines.TORCH_THREADS)")
    out += [f"skipped {k}: {v}" for k, v in skipped.items()]
    return out


def report(recs: list[dict], skipped: dict[str, str], names: list[str],
           describe: Callable[[str], str]) -> str:
    """The printed baselines section: one table a seed, then the ratios and the notes."""
    parts = [f"Gradient, seed {n}: {describe(n)}\n" + seed_table(recs, n) for n in names]
    parts.append("Gradient time in multiples of the hand-vectorized NumPy forward (min / min)\n"
                 + ratio_table(recs, names))
    same = backend_table(recs, names)
    if same:
        parts.append("vecgrad's JAX and torch backends against the same library's gradient of "
                     "hand-vectorized code (min / min)\n" + same)
    parts.append("\n".join(notes(recs, skipped)) or "no notes")
    return "\n\n".join(parts)
