"""First-call time of a seed's gradient in a fresh process (issue 12 §4's compile target):
`python bench/numba_compile.py SEED BACKEND`. Prints the time of `import numba` and of the
first call of vg.grad(..., backend=BACKEND): vecgrad's compile (trace, passes, codegen) plus,
on the numba backend, numba's compile of the kernels, or their load from the disk cache
($VECGRAD_NUMBA_CACHE: point it at an empty directory for a cold run). Wall and CPU time (this
process's: on a shared machine the wall time counts other processes' work)."""
import sys
import time

t0 = time.perf_counter()
import numba  # noqa: F401

t_import = time.perf_counter() - t0
import vecgrad as vg
from vecgrad.examples.seeds import WORKLOADS

w = WORKLOADS[sys.argv[1]]
args = w.inputs("seed")
f = vg.grad(w.fresh_loss(), argnums=w.argnums, backend=sys.argv[2])
t, c = time.perf_counter(), time.process_time()
f(*args)
t_first, c_first = time.perf_counter() - t, time.process_time() - c
print(f"{sys.argv[1]} {sys.argv[2]} import_numba {t_import:.2f} s, first call {t_first:.2f} s"
      f" (CPU {c_first:.2f} s)")
