"""Page faults per call of compiled gradients, with vecgrad's heap retention on and off
(backends/numpy/heap.py). glibc's thresholds cannot be restored once fixed, so each setting
runs in its own process; the reference forward runs in the same process as the gradient.

    python bench/heap_faults.py [names, default: rnn_hidden_energy,tanh_rnn,lstm,ode_running_cost]
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

DEFAULT = "rnn_hidden_energy,tanh_rnn,lstm,ode_running_cost"


def per_call(f, n: int = 30) -> tuple[float, float, float]:
    """(min seconds, minor faults per call, system seconds per call) over n calls."""
    f()
    best = float("inf")
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return best, (r1.ru_minflt - r0.ru_minflt) / n, (r1.ru_stime - r0.ru_stime) / n


def child(names: list[str], retain: bool) -> None:
    from patterns import PATTERNS
    from patterns.harness import fresh

    import vecgrad as vg
    vg.config(retain_heap=retain)
    out = {}
    for name in names:
        p = PATTERNS[name]
        args = p.args("default")
        ref_args = p.prepare(args)
        g = vg.grad(fresh(p.natural), argnums=p.argnums)
        g(*args)
        out[name] = {"ref": per_call(lambda p=p, a=ref_args: p.reference(*a)),
                     "grad": per_call(lambda g=g, a=args: g(*a))}
    print(json.dumps(out))


def main() -> None:
    names = (sys.argv[1] if len(sys.argv) > 1 else DEFAULT).split(",")
    rows = {}
    for retain in (False, True):
        r = subprocess.run([sys.executable, __file__, "--child", ",".join(names), str(retain)],
                           capture_output=True, text=True, check=True)
        rows[retain] = json.loads(r.stdout.strip().splitlines()[-1])
    print(f"{'program':20} {'retain_heap':11} {'ref fwd':>9} {'grad':>9} {'ratio':>6} "
          f"{'faults/call':>11} {'sys ms/call':>11}")
    for name in names:
        for retain in (False, True):
            ref, grad = rows[retain][name]["ref"], rows[retain][name]["grad"]
            print(f"{name:20} {retain!s:11} {ref[0] * 1e3:7.2f}ms {grad[0] * 1e3:7.2f}ms "
                  f"{grad[0] / ref[0]:5.1f}x {grad[1]:11.0f} {grad[2] * 1e3:11.2f}")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2].split(","), sys.argv[3] == "True")
    else:
        main()
