"""Timing kernels while compiling: the min of a few calls, candidates timed in turns."""
from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np


def time_call(fn: Callable, xs: list[np.ndarray], tries: int = 2) -> float:
    """Min seconds of `fn(*xs)` over `tries` calls. A result that is not C-contiguous is
    charged what making it contiguous costs: its consumers pay at least that (strided reads)."""
    best = float("inf")
    for _ in range(tries):
        t0 = time.perf_counter()
        r = fn(*xs)
        if isinstance(r, np.ndarray) and not r.flags.c_contiguous:
            np.ascontiguousarray(r)
        best = min(best, time.perf_counter() - t0)
    return best


def fastest(cands: list[Callable], shapes: list, dtypes: list, tries: int = 3) -> Callable:
    """The fastest candidate on arrays of these shapes, measured now (see `timings`)."""
    best = timings(cands, [np.ones(s, d) for s, d in zip(shapes, dtypes)], tries)
    return cands[best.index(min(best))]


def timings(cands: list[Callable], xs: list[np.ndarray], tries: int = 3) -> list[float]:
    """Min seconds of each candidate on `xs` (see time_call): each called once to warm up,
    then timed in turns, so that a shared machine's load (or the first call's page faults)
    weighs on all of them alike rather than on whichever ran at a bad moment."""
    for c in cands:
        c(*xs)
    best = [float("inf")] * len(cands)
    for _ in range(tries):
        for i, c in enumerate(cands):
            best[i] = min(best[i], time_call(c, xs, 1))
    return best
