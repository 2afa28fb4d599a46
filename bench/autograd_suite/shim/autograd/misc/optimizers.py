"""autograd.misc.optimizers: sgd, rmsprop and adam over pytrees of parameters.

`grad(x, i)` is called with the parameters in their user structure; the update runs on the
flattened vector.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .flatten import flatten


def unflatten_optimizer(optimize: Any) -> Any:
    """An optimizer on flat vectors as one on pytrees (autograd's decorator of that name)."""
    @functools.wraps(optimize)
    def run(grad: Any, x0: Any, callback: Any = None, *args: Any, **kwargs: Any) -> Any:
        flat0, unflatten = flatten(x0)
        flat0 = np.asarray(flat0)

        def flat_grad(x: Any, i: int) -> Any:
            return np.asarray(flatten(grad(unflatten(x), i))[0])
        flat_cb = None
        if callback is not None:
            def flat_cb(x: Any, i: int, g: Any) -> Any:
                return callback(unflatten(x), i, unflatten(g))
        return unflatten(optimize(flat_grad, flat0, flat_cb, *args, **kwargs))
    return run


@unflatten_optimizer
def sgd(grad: Any, x: Any, callback: Any = None, num_iters: int = 200, step_size: float = 0.1,
        mass: float = 0.9) -> Any:
    """Stochastic gradient descent with momentum."""
    velocity = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        velocity = mass * velocity - (1.0 - mass) * g
        x = x + step_size * velocity
    return x


@unflatten_optimizer
def rmsprop(grad: Any, x: Any, callback: Any = None, num_iters: int = 100,
            step_size: float = 0.1, gamma: float = 0.9, eps: float = 1e-8) -> Any:
    """Root-mean-square propagation."""
    avg_sq_grad = np.ones(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        avg_sq_grad = avg_sq_grad * gamma + g ** 2 * (1 - gamma)
        x = x - step_size * g / (np.sqrt(avg_sq_grad) + eps)
    return x


@unflatten_optimizer
def adam(grad: Any, x: Any, callback: Any = None, num_iters: int = 100,
         step_size: float = 0.001, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> Any:
    """Adam (Kingma and Ba, 2014), with bias-corrected moment estimates."""
    m = np.zeros(len(x))
    v = np.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        if callback:
            callback(x, i, g)
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * (g ** 2) + b2 * v
        mhat = m / (1 - b1 ** (i + 1))
        vhat = v / (1 - b2 ** (i + 1))
        x = x - step_size * mhat / (np.sqrt(vhat) + eps)
    return x
