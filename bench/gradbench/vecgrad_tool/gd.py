"""Gradient descent with step-size adaptation, as GradBench's cpp/gradbench/gd.hpp does it.

The loop's trip count and branches depend on the values, so it runs in Python on concrete
numbers; the objectives and gradients it calls are vecgrad-compiled functions.
"""
import numpy as np


def argmin(objective, gradient, x0):
    x = np.array(x0, dtype=np.float64)
    fx, gx = objective(x), gradient(x)
    i, eta = 0, 1e-5
    while True:
        if np.linalg.norm(gx) <= 1e-5:
            return x
        if i == 10:
            eta *= 2
            i = 0
            continue
        x_prime = x - eta * gx
        if np.linalg.norm(x - x_prime) <= 1e-5:
            return x
        fx_prime = objective(x_prime)
        if fx_prime < fx:
            x, fx = x_prime, fx_prime
            gx = gradient(x)
            i += 1
        else:
            eta /= 2
            i = 0


def argmax(objective, gradient, x0):
    return argmin(lambda x: -objective(x), lambda x: -gradient(x), x0)
