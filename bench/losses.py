"""The shared table of bench/linalg.py and bench/numpy_api.py: each loss's compiled forward and
gradient beside its plain NumPy forward, min of repeated runs in one process."""
from __future__ import annotations

import time
from collections.abc import Callable

import vecgrad as vg


def best(fn: Callable, args: tuple, repeat: int) -> float:
    """The fastest of `repeat` timed calls, after one untimed call (which compiles)."""
    fn(*args)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return min(times)


def table(cases: dict[str, tuple], repeat: int) -> None:
    """Print one row per case `name: (numpy_fn, vecgrad_fn, args[, argnums])` (argnums
    defaults to every argument)."""
    print(f"{'loss':42s} {'NumPy fwd':>10s} {'vg fwd':>10s} {'vg grad':>10s} {'grad/fwd':>9s}")
    for name, (ref, f, args, *rest) in cases.items():
        argnums = rest[0] if rest else tuple(range(len(args)))
        t_np, t_fwd = best(ref, args, repeat), best(vg.jit(f), args, repeat)
        t_grad = best(vg.grad(f, argnums=argnums), args, repeat)
        print(f"{name:42s} {t_np * 1e3:8.3f}ms {t_fwd * 1e3:8.3f}ms {t_grad * 1e3:8.3f}ms "
              f"{t_grad / t_np:8.2f}x")
