"""Kernel choices: which of several equivalent kernels runs an operation, decided quickly and
the same way every time.

Some operations have several exact implementations whose speed depends on shapes, layout and
the machine (a contraction as a BLAS matmul after a transposing copy, or as NumPy's einsum
loop in place). Their results agree to rounding, not bit for bit. A planner states its
candidates and how to estimate and measure them; `choose` picks one:

1. In deterministic mode (`vg.config(deterministic=True)`, or the environment variable
   VECGRAD_DETERMINISTIC=1) the cost model decides with the fixed `REFERENCE` machine: no
   measurement and no file is read, so every process on every machine generates the same code.
2. Otherwise a choice measured before on this machine is taken from the on-disk cache. A
   choice is keyed by (kernel family, shapes, strides, dtypes, parameters).
3. Otherwise, with `vg.config(autotune=True)`, the candidates are timed now and the fastest is
   stored in the cache for every later process. Families whose costs depend on more than a
   model can see (the segment sums and scatter-adds of `backends/numpy/gathers.py`, whose
   speed depends on how the positions repeat) are always measured here, once per machine.
4. Otherwise the cost model decides, with this machine's constants (`Machine`, measured once
   per machine in about 0.1 s and stored next to the cache).

The cache lives in VECGRAD_CACHE_DIR, else the user cache directory (`~/.cache/vecgrad` on
Linux, `~/Library/Caches/vecgrad` on macOS, `%LOCALAPPDATA%\\vecgrad` on Windows). Its files are
named after a fingerprint of the machine and NumPy (a new BLAS or CPU starts afresh), hold at
most `MAX_CHOICES` choices (the oldest are dropped), and are written atomically: several
processes may share them. If the directory cannot be written, choices stay in memory.

This module knows nothing of what a kernel computes; the estimates are the planners' (see
`backends/numpy/planner.py`).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import platform
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .config import settings

FORMAT = 2  # (2: constants are the min over calibration rounds) bump when the meaning of stored choices or constants changes
MAX_CHOICES = 4096


@dataclass(frozen=True)
class Machine:
    """What the cost model knows of a machine: seconds per unit of work of the few things
    kernels are made of (measured by `calibrate`)."""

    call: float          # one NumPy call on a tiny array
    copy: float          # per byte of a contiguous copy
    transpose: float     # per byte of a transposing copy (one side strided)
    tiled: float         # per byte of a tiled transposing copy (backends/numpy/transpose.py)
    gemm64: float        # per multiply-add of a large float64 matmul
    gemm32: float        # per multiply-add of a large float32 matmul
    matrix: float        # per matrix of a batched matmul (dispatch, small-matrix overhead)
    loop: float          # per multiply-add of NumPy's einsum loop, contiguous inner axis
    loop_strided: float  # per multiply-add of the einsum loop, strided inner axis
    inner: float         # per inner loop of the einsum loop (its setup, paid per row)


# Constants measured on the development machine (2-core x86_64 VM, OpenBLAS, NumPy 2.4,
# one BLAS thread): the model deterministic mode uses everywhere.
REFERENCE = Machine(call=3.1e-07, copy=1.9e-11, transpose=2.6e-10, tiled=7.4e-11, gemm64=4.0e-11,
                    gemm32=2.0e-11, matrix=4.2e-08, loop=1.8e-10, loop_strided=1.1e-09,
                    inner=3.3e-09)


# ----------------------------------------------------------------------------- choosing

def deterministic() -> bool:
    """Whether kernel choices ignore measurements (the setting or VECGRAD_DETERMINISTIC)."""
    return settings.deterministic or os.environ.get("VECGRAD_DETERMINISTIC", "") not in ("", "0")


def choose(family: str, key: tuple, estimate: Callable[[Machine], dict[str, float]],
           measure: Callable[[], dict[str, float]] | None = None, tune: bool = False) -> str:
    """The name of the candidate to run, for an operation of `family` identified by `key`
    (shapes, strides, dtypes and parameters: whatever its candidates' speed depends on).
    `estimate(machine)` gives each candidate's modelled seconds, `measure()` its measured
    seconds (only called when autotuning, or when `tune`: a family whose model is too rough
    to trust, measured once per machine and key, then read from the cache). Ties go to the
    first candidate listed."""
    if deterministic():
        return _decided(family, key, _fastest(estimate(REFERENCE)), "reference model")
    k = _key(family, key)
    store = _store()
    hit = store.get(k)
    if hit is not None:
        return _decided(family, key, hit, "stored")
    if (settings.autotune or tune) and measure is not None:
        name = _fastest(measure())
        store.put(k, name)
        return _decided(family, key, name, "measured")
    return _decided(family, key, _fastest(estimate(machine())), "model")


# The latest choices of this process: (family, key, name, how it was decided), for tests and
# for anyone asking which kernels a compilation picked.
history: deque[tuple[str, tuple, str, str]] = deque(maxlen=1000)


def _decided(family: str, key: tuple, name: str, how: str) -> str:
    history.append((family, key, name, how))
    return name


def _fastest(costs: dict[str, float]) -> str:
    return min(costs, key=costs.__getitem__)  # (the first of equal minima: dict order)


def _key(family: str, key: tuple) -> str:
    return family + "|" + repr(key)


def c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """The strides of a C-contiguous array (what planners assume of their operands)."""
    out, step = [], itemsize
    for d in reversed(shape):
        out.append(step)
        step *= max(d, 1)
    return tuple(reversed(out))


# ----------------------------------------------------------------------------- storage

def cache_dir() -> Path:
    """Where choices and machine constants are stored: VECGRAD_CACHE_DIR, else the user cache
    directory of the platform."""
    env = os.environ.get("VECGRAD_CACHE_DIR")
    if env:
        return Path(env)
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "vecgrad"
    if os.name == "nt":
        return Path(os.environ.get("LOCALAPPDATA", Path.home())) / "vecgrad" / "Cache"
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "vecgrad"


def fingerprint() -> str:
    """A short hash of what makes measurements comparable: CPU, core count, NumPy and its
    BLAS thread settings."""
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")),
                       cpu)
    except OSError:
        pass
    threads = [os.environ.get(v, "") for v in
               ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")]
    parts = [FORMAT, platform.machine(), cpu, os.cpu_count(), np.__version__, threads]
    return hashlib.sha1(repr(parts).encode()).hexdigest()[:12]


class Store:
    """The kernel choices of this machine: a JSON file, read once, rewritten on each new
    choice (atomically; a concurrent writer's new entries may be lost, never corrupted)."""

    def __init__(self, path: Path):
        self.path = path
        self.choices: dict[str, str] = _read(path).get("choices", {})

    def get(self, key: str) -> str | None:
        return self.choices.get(key)

    def put(self, key: str, name: str) -> None:
        self.choices[key] = name
        while len(self.choices) > MAX_CHOICES:
            del self.choices[next(iter(self.choices))]
        _write(self.path, {"format": FORMAT, "choices": self.choices})


_STATE: dict[str, Any] = {}  # the loaded Store and Machine, per cache path


def _store() -> Store:
    path = cache_dir() / f"kernels-{fingerprint()}.json"
    st = _STATE.get("store")
    if st is None or st.path != path:
        st = _STATE["store"] = Store(path)
    return st


def machine() -> Machine:
    """This machine's constants: stored, or measured now (once per machine) and stored."""
    path = cache_dir() / f"machine-{fingerprint()}.json"
    hit = _STATE.get("machine")
    if hit is not None and hit[0] == path:
        return hit[1]
    data = _read(path).get("machine")
    try:
        m = Machine(**data) if isinstance(data, dict) else None
    except TypeError:  # (fields changed)
        m = None
    if m is None:
        m = calibrate()
        _write(path, {"format": FORMAT, "machine": dataclasses.asdict(m)})
    _STATE["machine"] = (path, m)
    return m


def store_machine(m: Machine) -> None:
    """Store `m` as this machine's constants (instead of measuring them)."""
    _write(cache_dir() / f"machine-{fingerprint()}.json",
           {"format": FORMAT, "machine": dataclasses.asdict(m)})
    _STATE.pop("machine", None)


def forget() -> None:
    """Drop what this process loaded (the files stay): the next choice reads them again."""
    _STATE.clear()


def _read(path: Path) -> dict:
    try:
        with open(path) as f:
            data = json.load(f)
        return data if isinstance(data, dict) and data.get("format") == FORMAT else {}
    except (OSError, ValueError):
        return {}


def _write(path: Path, data: dict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError:  # a read-only home: choices stay in memory
        pass


# ----------------------------------------------------------------------------- calibration

def _best(fn: Callable[[], Any], n: int = 5, budget: float = 0.03) -> float:
    """Min seconds of `fn()` over n runs, or fewer (at least 3) once `budget` is spent: on a
    busy machine a threaded BLAS call can wait milliseconds for its threads."""
    best, spent = float("inf"), 0.0
    for i in range(n):
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best, spent = min(best, dt), spent + dt
        if spent > budget and i >= 2:
            break
    return best


def calibrate(rounds: int = 3) -> Machine:
    """Measure this machine's constants (about 0.1 s a round; more on a busy machine): min
    times of small fixed kernels, each the min over `rounds` rounds taken one after the other.
    (One round on a loaded machine once measured float32 GEMM 1000x too slow, a BLAS thread
    stall, and the stored constant then steered every float32 contraction away from BLAS;
    a stall rarely hits the same kernel in every round.)"""
    ms = [dataclasses.asdict(_calibrate_round()) for _ in range(rounds)]
    return Machine(**{k: min(m[k] for m in ms) for k in ms[0]})


# The kernels whose speed calibration measures, by Machine field: a backend registers them
# when it is imported (this module sits below the backends that choose through it).
CALIBRATED: dict[str, Callable[..., Any]] = {}


def _calibrate_round() -> Machine:
    transpose_copy = CALIBRATED["tiled"]
    tiny = np.ones(4)
    call = _best(lambda: np.add(tiny, tiny), 50)
    a = np.ones((512, 512))
    out = np.empty_like(a)
    copy = _best(lambda: np.copyto(out, a)) / a.nbytes
    transpose = _best(lambda: np.copyto(out, a.T)) / a.nbytes
    tiled = _best(lambda: transpose_copy(a, (1, 0))) / a.nbytes
    # (64 x 64 matrices: big enough for BLAS's own speed, small enough for one thread, which
    # on a busy machine never waits for a second one)
    m64, m32 = np.ones((64, 64)), np.ones((64, 64), np.float32)
    gemm64 = _best(lambda: m64 @ m64, 20) / 64 ** 3
    gemm32 = _best(lambda: m32 @ m32, 20) / 64 ** 3
    small = np.ones((256, 4, 4))
    matrix = max(_best(lambda: np.matmul(small, small)) / 256 - 64 * gemm64, 0.0)
    x = np.ones((256, 256))
    loop = _best(lambda: np.einsum("ij,ij->i", x, x)) / x.size
    strided = _best(lambda: np.einsum("ij,ji->i", x, x)) / x.size  # (no axis inner in both)
    rows = np.ones((4096, 4))
    inner = max(_best(lambda: np.einsum("ij,ij->i", rows, rows)) / 4096 - 4 * loop, 0.0)
    return Machine(call=call, copy=copy, transpose=transpose, tiled=tiled, gemm64=gemm64,
                   gemm32=gemm32, matrix=matrix, loop=loop, loop_strided=max(strided, loop),
                   inner=inner)
