"""numba's own fixed cost in a fresh process (issue 12 section 4's "0.2 s from the disk cache"):
the time to `import numba`, then the first call of a one-line `@njit(cache=True)` kernel that
is loaded from numba's disk cache (the first run of this script compiles and stores it; run it
a few times). Nothing of vecgrad runs: this is the floor under any numba-backed first call.

Usage: `python bench/numba_floor.py` (several times, each a fresh process).
"""
import time

t0 = time.perf_counter()
import numba
import numpy as np

t1 = time.perf_counter()


@numba.njit(cache=True)
def add1(x):
    return x + 1.0


x = np.ones(4)
t2 = time.perf_counter()
add1(x)
t3 = time.perf_counter()
print(f"import numba {1e3 * (t1 - t0):.0f} ms; first call of a one-line cached kernel "
      f"{1e3 * (t3 - t2):.0f} ms")
