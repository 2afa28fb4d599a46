"""det: determinant by expansion by minors along the first row, recursively (evals/det, cmpad).

Natural recursion on the minors, as the reference does: the work is O(ell!) scalar products.
"""
import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp


def det(A):
    n = A.shape[0]
    if n == 1:
        return A[0, 0]
    total = 0.0
    for j in range(n):
        minor = vnp.concatenate([A[1:, :j], A[1:, j + 1:]], axis=1)
        term = A[0, j] * det(minor)
        total = total + term if j % 2 == 0 else total - term
    return total


primal = vg.jit(det)
gradient = vg.grad(det)


def _prepare(fn, post):
    def prepare(input):
        ell = int(input["ell"])
        A = np.asarray(input["A"], dtype=np.float64).reshape(ell, ell)
        return (lambda: fn(A)), post
    return prepare


FUNCTIONS = {"primal": _prepare(primal, float),
             "gradient": _prepare(gradient, lambda g: g.ravel().tolist())}


def explain_args(function, input):
    """The gradient's function and arguments, for `vg.explain` (bench/gradbench/run.py)."""
    ell = int(input["ell"])
    return det, (np.asarray(input["A"], dtype=np.float64).reshape(ell, ell),), 0
