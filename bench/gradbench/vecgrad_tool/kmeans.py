"""kmeans: the k-means cost and its Newton direction J / diag(H) (evals/kmeans).

The cost loops over the points (the distance to each centroid, the nearest one kept); the
direction takes the gradient with respect to the centroids and, in forward mode over it, the
Hessian's diagonal (the Hessian is diagonal, so H @ ones is its diagonal).
"""
import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp


def cost(points, centroids):
    total = 0.0
    for i in range(points.shape[0]):
        d2 = vnp.sum((centroids - points[i]) ** 2, axis=1)
        total = total + vnp.min(d2)
    return total


grad_centroids = vg.grad(cost, argnums=1)


def newton_direction(points, centroids):
    J, H = vg.jvp(lambda c: grad_centroids(points, c), (centroids,),
                  (vnp.ones_like(centroids),))
    return J / H


cost_jit = vg.jit(cost)
direction = vg.jit(newton_direction)


def _arrays(input):
    return (np.asarray(input["points"], dtype=np.float64),
            np.asarray(input["centroids"], dtype=np.float64))


def _prepare(fn, post):
    def prepare(input):
        args = _arrays(input)
        return (lambda: fn(*args)), post
    return prepare


FUNCTIONS = {"cost": _prepare(cost_jit, float),
             "dir": _prepare(direction, lambda d: d.tolist())}


def explain_args(function, input):
    """The gradient's function and arguments, for `vg.explain` (bench/gradbench/run.py)."""
    return cost, _arrays(input), 1
