"""What composed transformations cost on the seed programs: forward mode and Hessian-vector
products next to the forward and the gradient.

    python bench/transforms.py [--sizes small|seed] [--repeat N]

For each seed (natural-style code, differentiated with respect to its first argument, in a
random direction t), in this one process: the hand-vectorized NumPy forward, vecgrad's jit
forward, grad, jvp (forward mode, computed as the transposed VJP) and hvp (forward over
reverse), each as a multiple of the NumPy forward, with compile times; and, where JAX is
installed, `jax.jit` of jvp and of the Hessian-vector product of the hand-vectorized version.
"""
from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import vecgrad as vg
from vecgrad.examples import seeds as S
from vecgrad.timing import fmt_time, measure, table

SIZES = {
    "small": {"000": {"N": 4, "W": 8, "R": 2, "B": 3},
              "001": {"T": 8, "batch": 4, "n_in": 6, "n_out": 4, "D": 5},
              "002": {"n": 50, "sizes": (1, 20, 8, 1)}},
    "seed": {"000": {}, "001": {}, "002": {}},
}


def cases(sizes: str) -> list[tuple[str, Callable, Any, Callable, Callable]]:
    """(name, loss as a function of x0, x0, the NumPy forward as a thunk, the JAX vectorized
    loss as a function of x0 given the baselines module). seed002 is differentiated with
    respect to its first layer's weights."""
    z = SIZES[sizes]
    a0 = S.seed000_inputs(dtype=np.float64, **z["000"])
    a1 = S.seed001_inputs(dtype=np.float64, **z["001"])
    params, xs = S.seed002_inputs(**z["002"])

    def with_w(w: Any) -> list:
        return [(w, params[0][1])] + params[1:]
    return [
        ("seed000", lambda x: S.seed000_loss(x, *a0[1:]), a0[0], lambda: S.seed000_numpy(*a0),
         lambda B: lambda x: B.j_seed000_vec(x, *a0[1:])),
        ("seed001", lambda x: S.seed001_loss(x, *a1[1:]), a1[0], lambda: S.seed001_numpy(*a1),
         lambda B: lambda x: B.j_seed001_vec(x, *a1[1:])),
        ("seed002", lambda w: S.mapall(with_w(w), xs), params[0][0],
         lambda: S.seed002_numpy(params, xs), lambda B: lambda w: B.j_seed002_vec(with_w(w), xs)),
    ]


def timed(fn: Callable[[], Any], repeat: int | None) -> tuple[float, float]:
    """(first call, min over runs) seconds."""
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    return first, measure(fn, repeat, budget=0.5).min


def jax_mins(make: Callable, x: Any, t: np.ndarray, repeat: int | None) -> list[float] | None:
    """jax.jit(jvp) and jax.jit(hvp) of the vectorized loss, min seconds (None: no JAX)."""
    try:
        import jax
    except ImportError:
        return None
    import baselines  # (bench/, the script's folder, is on sys.path)
    baselines._load()
    jax.config.update("jax_enable_x64", True)
    g = make(baselines)
    jvp = jax.jit(lambda x, t: jax.jvp(g, (x,), (t,)))
    hvp = jax.jit(lambda x, t: jax.jvp(jax.grad(g), (x,), (t,))[1])
    return [timed(lambda: jax.block_until_ready(jvp(x, t)), repeat)[1],
            timed(lambda: jax.block_until_ready(hvp(x, t)), repeat)[1]]


def one(name: str, f: Callable, x0: Any, ref: Callable, make_jax: Callable,
        repeat: int | None) -> list[str]:
    t = np.random.default_rng(0).standard_normal(np.shape(x0))
    ref_min = measure(ref, repeat, budget=0.5).min
    jit, grad = vg.jit(f), vg.grad(f)
    runs = [timed(lambda: jit(x0), repeat), timed(lambda: grad(x0), repeat),
            timed(lambda: vg.jvp(f, (x0,), (t,)), repeat),
            timed(lambda: vg.hvp(f, (x0,), (t,)), repeat)]
    row = [name, fmt_time(ref_min)] + [f"{m / ref_min:.2f}x ({fmt_time(first)})"
                                       for first, m in runs]
    j = jax_mins(make_jax, x0, t, repeat)
    return row + ([f"{v / ref_min:.2f}x" for v in j] if j else ["n/a", "n/a"])


def run(sizes: str, repeat: int | None) -> list[list[str]]:
    return [one(*c, repeat) for c in cases(sizes)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", choices=sorted(SIZES), default="seed")
    ap.add_argument("--repeat", type=int, default=None)
    a = ap.parse_args(argv)
    print(f"Seeds at {a.sizes} sizes, float64, d/d(first argument). Each vecgrad column: min "
          "time / NumPy forward min (first call, compile included, in parentheses).")
    print(table(["seed", "NumPy forward", "vecgrad jit", "vecgrad grad", "vecgrad jvp",
                 "vecgrad hvp", "JAX jit(jvp)", "JAX jit(hvp)"], run(a.sizes, a.repeat)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
