"""The patterns suite on vecgrad's JAX and torch backends, on a device (the GPU run of
`bench/run.py --device gpu --patterns`; `--device cpu` runs the same on the CPU).

For each program, on each backend: vecgrad's gradient of the natural-style program, and the
program's hand-vectorized NumPy reference forward compiled by vecgrad for the same backend
(`vg.jit(reference, backend=...)`: the patterns have no JAX or torch ports, so this is the
vectorized code's cost in the same library, on the same device). Times are mins over runs,
with the device synchronized; gradients are checked against the NumPy backend's.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import vecgrad as vg
from vecgrad.pytree import flatten
from vecgrad.timing import fmt_time, measure, table

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/, for `import patterns`
from baselines import TORCH_THREADS
from patterns import PATTERNS
from patterns.harness import fresh


def placer(backend: str, device: Any) -> tuple[Callable, Callable]:
    """(put: NumPy leaves of a pytree onto the device, done: wait for a result)."""
    if backend == "jax":
        import jax
        jax.config.update("jax_enable_x64", True)  # the patterns are float64
        return (lambda x: jax.device_put(x, device)), jax.block_until_ready
    import torch
    if torch.device(device).type == "cpu":  # (as the seeds' torch engines: see TORCH_THREADS)
        torch.set_num_threads(TORCH_THREADS)

    def done(r: Any) -> Any:
        if torch.device(device).type == "cuda":
            torch.cuda.synchronize(device)
        return r
    return (lambda x: torch.from_numpy(np.array(x)).to(device)), done


def _place(tree: Any, put: Callable) -> Any:
    if isinstance(tree, np.ndarray) and tree.dtype.kind in "fcbiu":
        return put(tree)
    if type(tree) in (list, tuple):
        return type(tree)(_place(t, put) for t in tree)
    if type(tree) is dict:
        return {k: _place(v, put) for k, v in tree.items()}
    return tree


def _numpy(tree: Any) -> np.ndarray:
    leaves = flatten(tree)[0]
    return np.concatenate([np.ravel(np.asarray(x.cpu() if hasattr(x, "cpu") else x,
                                               np.float64)) for x in leaves])


def measure_on(p: Any, backend: str, device: Any, preset: str, repeat: int | None,
               budget: float) -> dict[str, Any]:
    """One program on one backend: gradient and reference-forward times, gradient error."""
    put, done = placer(backend, device)
    args = p.args(preset)
    want = _numpy(vg.grad(fresh(p.natural), argnums=p.argnums)(*args))
    xs = _place(args, put)
    g = vg.grad(fresh(p.natural), argnums=p.argnums, backend=backend)
    got = _numpy(done(g(*xs)))
    rec = {"name": p.name, "backend": backend,
           "grad_err": float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-300)),
           "grad": measure(lambda: done(g(*xs)), repeat, budget)}
    try:
        ref_xs = _place(p.prepare(args), put)
        f = vg.jit(fresh(p.reference), backend=backend)
        done(f(*ref_xs))
        rec["reference"] = measure(lambda: done(f(*ref_xs)), repeat, budget)
    except Exception as e:  # noqa: BLE001 - a reference vecgrad cannot trace: no ratio
        rec["reference"] = None
        rec["why"] = f"{type(e).__name__}: {str(e).splitlines()[0][:80]}"
    return rec


def run(devices: dict[str, Any], preset: str = "small", repeat: int | None = None,
        budget: float = 0.3, names: list[str] | None = None) -> list[dict[str, Any]]:
    """Records for every pattern (or `names`) on every backend with a device."""
    recs = []
    for p in PATTERNS.values():
        if names and p.name not in names:
            continue
        for backend, dev in devices.items():
            if dev is None:
                continue
            print(f"[patterns] {p.name} on {backend}", file=sys.stderr, flush=True)
            try:
                recs.append(measure_on(p, backend, dev, preset, repeat, budget))
            except Exception as e:  # noqa: BLE001 - one failure must not lose the others
                recs.append({"name": p.name, "backend": backend, "failed":
                             f"{type(e).__name__}: {str(e).splitlines()[0][:100]}"})
    return recs


def report(recs: list[dict[str, Any]]) -> str:
    """One row per (program, backend)."""
    rows = []
    for r in recs:
        if "failed" in r:
            rows.append([r["name"], r["backend"], "-", "-", "-", "-", r["failed"]])
            continue
        ref = r["reference"]
        rows.append([r["name"], r["backend"], fmt_time(r["grad"].min),
                     fmt_time(ref.min) if ref else "-",
                     f"{r['grad'].min / ref.min:.1f}x" if ref else "-",
                     f"{r['grad_err']:.0e}", r.get("why", "")])
    return table(["program", "backend", "vecgrad grad (min)", "reference fwd, same backend",
                  "grad / reference", "grad rel. err", "note"], rows)
