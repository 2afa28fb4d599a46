"""Keep freed array memory in the process heap between calls of generated code (glibc only).

glibc's malloc hands every block above its mmap threshold (128 KiB at start, raised to the
largest block freed so far, up to 32 MiB) to the kernel with `munmap` when it is freed, and
returns the top of the heap with `sbrk` once more than twice that threshold lies free there.
A compiled gradient allocates and frees the same few megabytes on every call (a rolled loop's
stacked states, the cotangents of the steps), so each call then touches freshly mapped pages:
one page fault per 4 KiB. On virtual machines a fault costs 2-3 us when idle and far more under
load, about 4 ns per float64 element, several times an elementwise NumPy pass. Measured: a
tanh-RNN gradient (T=100, 64x32 states) took 1,772-2,184 faults per call, 3-5 ms of system
time against 1.4 ms of the reference forward, and 24-37 ms on a loaded machine; with the
thresholds fixed, no fault at all. Whether it faults depends on what the process freed before
(the thresholds are dynamic), which is why a rolled loop ran in 1 ms alone and 30 ms inside
the gradient.

`retain_heap()` fixes the mmap threshold at glibc's maximum and the trim threshold above it,
once per process, when vecgrad first compiles NumPy code (`vg.config(retain_heap=False)`
turns it off). Freed blocks below 32 MiB then stay in the heap for the next call, as with
`MALLOC_MMAP_THRESHOLD_` / `MALLOC_TRIM_THRESHOLD_` in the environment; the process keeps up
to `TRIM` bytes of freed memory. Elsewhere (macOS, Windows, musl) it does nothing.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import sys

from ...config import settings

# mallopt parameters (malloc.h) and values: glibc accepts an mmap threshold up to
# HEAP_MAX_SIZE / 2 = 32 MiB on 64-bit systems.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
MMAP = 32 * 2**20
TRIM = 128 * 2**20

_state: dict[str, bool] = {}


def retain_heap() -> bool:
    """Fix glibc's malloc thresholds (see the module doc) once per process; True when they are
    set now or were set before, False when turned off or not on glibc."""
    if "done" in _state:
        return _state["done"]
    if not settings.retain_heap:
        return False
    _state["done"] = ok = _mallopt(M_MMAP_THRESHOLD, MMAP) and _mallopt(M_TRIM_THRESHOLD, TRIM)
    return ok


def _mallopt(param: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        fn = libc.mallopt
    except (OSError, AttributeError):  # no libc to load, or not glibc (musl has no mallopt)
        return False
    fn.argtypes, fn.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return fn(param, value) == 1
