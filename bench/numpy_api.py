"""Gradient cost of losses built on the NumPy-API functions (sorting, scans, quantiles,
padding, traced-index gathers and np.add.at): the compiled gradient's time over the plain
NumPy forward of the same loss, in one process (min of repeated runs). The "loop" rows write
the same computation as a Python loop over rows, which vecgrad batches.

    python bench/numpy_api.py [--repeat N]
"""
from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
from losses import table

import vecgrad.numpy as vnp

R = np.random.default_rng(0)
X = R.standard_normal((500, 200))
W = R.standard_normal((500, 200))
EDGES = R.integers(0, 500, (20000, 2))
H = R.standard_normal((500, 32))


def trimmed(m, x):  # sort each row, drop the extremes, weight the rest
    return m.sum(m.sort(x, axis=1)[:, 10:-10] * W[:, 10:-10])


def trimmed_loop(x):
    out = vnp.zeros((500, 180))
    for i in range(500):
        out[i] = vnp.sort(x[i])[10:-10]
    return vnp.sum(out * W[:, 10:-10])


def running(m, x):  # a cumulative sum and a running maximum along rows
    return m.sum(m.cumsum(x, 1) * W) + m.sum(m.maximum.accumulate(x, 1) * W)


def robust(m, x):  # median / quantile normalization per row
    med = m.median(x, axis=1, keepdims=True)
    q = m.quantile(x, [0.25, 0.75], axis=1, keepdims=True)
    return m.sum(((x - med) / (q[1] - q[0])) ** 2)


def padded(m, x):  # reflect-pad, then a 3-point stencil
    p = m.pad(x, ((0, 0), (1, 1)), mode="reflect")
    return m.sum((p[:, :-2] - 2 * p[:, 1:-1] + p[:, 2:]) ** 2)


def message_passing(m, h, e):  # gather by a traced edge list, scatter-add with np.add.at
    agg = m.zeros_like(h)
    np.add.at(agg, e[:, 1], m.tanh(h[e[:, 0]]))
    return m.sum(agg ** 2)


CASES: dict[str, tuple[Callable, Callable, tuple, tuple]] = {
    "sort rows, trimmed weights, 500x200": (lambda x: trimmed(np, x), lambda x: trimmed(vnp, x),
                                            (X,), (0,)),
    "  the same as a loop over rows": (lambda x: trimmed(np, x), trimmed_loop, (X,), (0,)),
    "cumsum + maximum.accumulate, 500x200": (lambda x: running(np, x),
                                             lambda x: running(vnp, x), (X,), (0,)),
    "median/quantile normalization, 500x200": (lambda x: robust(np, x), lambda x: robust(vnp, x),
                                               (X,), (0,)),
    "reflect pad + stencil, 500x200": (lambda x: padded(np, x), lambda x: padded(vnp, x), (X,),
                                       (0,)),
    "gather + np.add.at, 20000 edges x 32": (lambda h, e: message_passing(np, h, e),
                                             lambda h, e: message_passing(vnp, h, e),
                                             (H, EDGES), (0,)),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=20)
    table(CASES, ap.parse_args().repeat)


if __name__ == "__main__":
    main()
