"""`vg.check_grads`: compare vecgrad's gradient with central differences."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .api import grad, jit
from .pytree import flatten, unflatten


class GradCheckError(AssertionError):
    """The gradient disagrees with finite differences."""


def check_grads(fun: Callable, args: Sequence[Any], argnums: int | Sequence[int] = 0,
                eps: float = 1e-6, rtol: float = 1e-5, atol: float = 1e-7, n_dirs: int = 3,
                seed: int = 0) -> float:
    """Check `grad(fun)` against central differences in float64 along random directions.

    Arguments in `argnums` are converted to float64 (complex ones to complex128, with random
    complex directions). Raises `GradCheckError` when
    |<grad, d> - (f(x + eps d) - f(x - eps d)) / (2 eps)| > atol + rtol * |fd| for a direction
    d, where <g, d> = Re(sum(g * d)) (JAX's convention for complex inputs); returns the
    largest relative error seen.
    """
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    args = list(args)
    for a in nums:
        leaves, td = flatten(args[a])
        args[a] = unflatten(td, [np.asarray(x, np.complex128 if np.iscomplexobj(x) else
                                            np.float64) for x in leaves])
    g = grad(fun, argnums=nums)(*args)
    f = jit(fun)
    rng = np.random.default_rng(seed)
    worst = 0.0

    def direction(x: np.ndarray) -> np.ndarray:
        d = rng.standard_normal(np.shape(x))
        return d + 1j * rng.standard_normal(np.shape(x)) if np.iscomplexobj(x) else d
    for _ in range(n_dirs):
        dirs = {a: [direction(x) for x in flatten(args[a])[0]] for a in nums}
        analytic = sum(float(np.real(np.sum(gl * d))) for a, ga in zip(nums, g)
                       for gl, d in zip(flatten(ga)[0], dirs[a]))
        fd = (float(f(*_shift(args, nums, dirs, eps))) -
              float(f(*_shift(args, nums, dirs, -eps)))) / (2 * eps)
        err = abs(analytic - fd)
        worst = max(worst, err / max(abs(fd), 1e-300))
        if not err <= atol + rtol * abs(fd):
            raise GradCheckError(f"gradient check failed: directional derivative {analytic!r} "
                                 f"vs central difference {fd!r} (abs error {err:.3g})")
    return worst


def _shift(args: list, nums: tuple, dirs: dict, eps: float) -> list:
    out = list(args)
    for a in nums:
        leaves, td = flatten(args[a])
        out[a] = unflatten(td, [x + eps * d for x, d in zip(leaves, dirs[a])])
    return out
