"""vecgrad's gradient against GradBench's own JAX tool in one process, on random inputs of
an eval's sizes: the ratio of the two measured in one window, without the protocol's overhead
(the runner, run.py, gives the validated table; this is for A/B runs of a change).

    OPENBLAS_NUM_THREADS=1 python bench/gradbench/jax_ab.py --gradbench WORK/gradbench \\
        ode:1000,10 ode:10000,1 gmm:2,5,1000 gmm:10,25,1000

WORK is run.py's --work folder (its GradBench checkout, whose python/gradbench holds the JAX
tool); the JAX tool's results are blocked (`block_until_ready`), unlike GradBench's own timing
of it. Each size prints the compile (first call, wall), the min of `--rounds` alternating rounds of
`--runs` calls of each, and vecgrad/JAX; results are compared (rtol 1e-8) before timing.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent


def _best(f: Any, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


def _ode(sizes: list[int], rng: np.random.Generator) -> tuple:
    import jax.numpy as jnp
    from gradbench.tools.jax import ode as jode
    from vecgrad_tool import ode

    n, s = sizes
    x = rng.random(n)
    xj = jnp.asarray(x)
    return (lambda: ode.gradient(x, s)), (lambda: jode.grad_ode(xj, s).block_until_ready())


def _gmm(sizes: list[int], rng: np.random.Generator) -> tuple:
    import jax
    from gradbench.tools.jax import gmm as jgmm
    from vecgrad_tool import gmm

    d, k, n = sizes
    inp = {"d": d, "k": k, "n": n, "alpha": rng.standard_normal(k).tolist(),
           "mu": rng.random((k, d)).tolist(), "q": rng.standard_normal((k, d)).tolist(),
           "l": rng.standard_normal((k, d * (d - 1) // 2)).tolist(),
           "x": rng.random((n, d)).tolist(), "gamma": 1.0, "m": 0}
    args = gmm._arrays(inp)
    fixed, ind = jgmm.prepare(inp)

    def jax_grad() -> list:
        g = jax.block_until_ready(jgmm.jac(ind, **fixed))
        return [g[name] for name in ("alpha", "mu", "q", "l")]
    return (lambda: gmm.jacobian(*args)), jax_grad


EVALS = {"ode": _ode, "gmm": _gmm}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gradbench", type=Path, required=True,
                    help="a GradBench work tree (run.py's WORK/gradbench)")
    ap.add_argument("--runs", type=int, default=100, help="calls per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--backend", default="numpy",
                    help="vecgrad's backend (numpy, or numba: loops as one compiled kernel)")
    ap.add_argument("sizes", nargs="+", help="eval:size,size,... (ode:n,s or gmm:d,k,n)")
    a = ap.parse_args(argv)
    sys.path[:0] = [str(HERE), str(a.gradbench / "python" / "gradbench")]
    import jax

    import vecgrad as vg
    jax.config.update("jax_enable_x64", True)
    vg.config(backend=a.backend)
    for spec in a.sizes:
        name, _, rest = spec.partition(":")
        ours, theirs = EVALS[name]([int(v) for v in rest.split(",")],
                                   np.random.default_rng(0))
        t0 = time.perf_counter()
        got = ours()
        compile_s = time.perf_counter() - t0
        want = theirs()
        for g, w in zip(got if isinstance(got, tuple) else [got],
                        want if isinstance(want, list) else [want]):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-8, atol=1e-10)
        runs = max(5, a.runs // 10) if name == "ode" and np.prod(
            [int(v) for v in rest.split(",")]) >= 1e6 else a.runs
        t_ours = t_jax = float("inf")
        for _ in range(a.rounds):  # alternating, so that both see the same load
            t_ours, t_jax = min(t_ours, _best(ours, runs)), min(t_jax, _best(theirs, runs))
        print(f"{spec:18} compile {compile_s:6.2f} s  vecgrad {t_ours * 1e6:9.1f} us  "
              f"JAX {t_jax * 1e6:9.1f} us  vecgrad/JAX {t_ours / t_jax:5.2f}x", flush=True)


if __name__ == "__main__":
    main()
