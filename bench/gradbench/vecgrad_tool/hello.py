"""hello: f(x) = x * x and its derivative (GradBench's protocol check)."""
import numpy as np

import vecgrad as vg


def square(x):
    return x * x


double = vg.grad(square)
square_jit = vg.jit(square)


def _prepare(fn):
    def prepare(input):
        x = np.float64(input)
        return (lambda: fn(x)), float
    return prepare


FUNCTIONS = {"square": _prepare(square_jit), "double": _prepare(double)}
