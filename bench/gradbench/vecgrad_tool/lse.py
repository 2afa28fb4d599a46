"""lse: log-sum-exp of a vector by the max trick, from its primitive parts (evals/lse)."""
import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp


def logsumexp(x):
    a = vnp.max(x)
    return a + vnp.log(vnp.sum(vnp.exp(x - a)))


primal = vg.jit(logsumexp)
gradient = vg.grad(logsumexp)


def _prepare(fn, post):
    def prepare(input):
        x = np.asarray(input["x"], dtype=np.float64)
        return (lambda: fn(x)), post
    return prepare


FUNCTIONS = {"primal": _prepare(primal, float),
             "gradient": _prepare(gradient, lambda g: g.tolist())}


def explain_args(function, input):
    """The gradient's function and arguments, for `vg.explain` (bench/gradbench/run.py)."""
    return logsumexp, (np.asarray(input["x"], dtype=np.float64),), 0
