"""llsq: linear least squares objective of cmpad (evals/llsq), one loop over the n points.

    y(x) = 1/2 sum_i (s_i - x_0 - x_1 t_i - x_2 t_i^2 - ...)^2,  t_i = -1 + 2i/(n-1), s_i = sign(t_i)
"""
import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp


def llsq(x, n):
    m = x.shape[0]
    total = 0.0
    for i in range(n):
        t = -1 + i * 2 / (n - 1)
        powers = t ** np.arange(m)            # 1, t, t^2, ...
        r = np.sign(t) - vnp.sum(x * powers)
        total = total + r * r
    return total / 2


primal = vg.jit(llsq)
gradient = vg.grad(llsq)


def _prepare(fn, post):
    def prepare(input):
        x = np.asarray(input["x"], dtype=np.float64)
        n = int(input["n"])
        return (lambda: fn(x, n)), post
    return prepare


FUNCTIONS = {"primal": _prepare(primal, float),
             "gradient": _prepare(gradient, lambda g: g.tolist())}


def explain_args(function, input):
    """The gradient's function and arguments, for `vg.explain` (bench/gradbench/run.py)."""
    return llsq, (np.asarray(input["x"], dtype=np.float64), int(input["n"])), 0
