"""vecgrad's settings: one typed record, read and changed through `vg.config`.

Each field is documented where it is declared, with its type and default. Code that depends
on a setting reads `settings.<field>` when it runs (so a change applies to later compilations
and calls). To add a setting, add a field here with its docstring comment and a test.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Self

from .errors import ArgumentError, _where, user_src


@dataclass
class Config:
    """vecgrad's settings (see `vg.config`)."""

    # Compiled signatures kept in all (every function, every transformation and signature,
    # and the staged graphs of nested calls). Beyond it, the least recently used is dropped
    # (and compiled again if it is called again).
    cache_size: int = 1024
    # Estimated bytes the compiled signatures may hold in all (their graphs, generated code
    # and captured constants; `vecgrad.compile_cache.stats()` gives the current figure).
    # Beyond it, the least recently used are dropped; the most recent always stays.
    cache_bytes: int = 512 * 2**20
    # Keep the graph of every pipeline stage in compiled entries, for `vg.show`, tests and
    # debugging (they are then counted in cache_bytes). Off, an entry keeps what a call
    # needs: the generated code and its final graph; `vg.show` compiles again with it on.
    keep_stages: bool = False
    # With keep_stages, graphs of more equations than this are still not kept: an unbatched
    # trace can hold a million objects, which the cyclic garbage collector would rescan.
    keep_stage_eqns: int = 20_000
    # Python ints, floats and complex numbers passed directly as arguments (an iteration
    # counter, a step size) are traced as weakly typed 0-d values, so a new value does not
    # compile again, unless the function needs the value itself (in a shape, a `range`, an
    # `if`, an index), which then makes that argument static. False: every Python-number
    # argument is static (part of the cache key), as a `jax.jit` static argument.
    trace_scalars: bool = True
    # Where transformations that name no backend run their compiled code: "numpy" (generated
    # NumPy source), "jax" (lowered to jax.numpy/lax, compiled by jax.jit) or "torch" (torch
    # operations). See vecgrad.backends.
    backend: str = "numpy"
    # The torch backend runs the programs it compiles from now on through `torch.compile`
    # (TorchInductor: fused C++ kernels on CPU, Triton on GPU) instead of op by op: the first
    # call per device then compiles for seconds, later calls cost less. Rolled loops stay
    # eager (torch.compile would unroll them). Signatures compiled before keep running as
    # they were (vg.clear_cache() compiles them again). Off: eager torch operations.
    torch_compile: bool = False
    # The `torch.compile` backend that `torch_compile` uses: "inductor" (fused kernels), or
    # any other name torch.compile takes ("aot_eager" traces and runs the same graph without
    # generating kernels: seconds faster to compile, for checking a program).
    torch_compile_backend: str = "inductor"
    # Kernel choices (a contraction as a BLAS matmul or as NumPy's einsum loop, ...) are made
    # by a cost model with fixed constants, never by timing or by the on-disk cache of earlier
    # choices: every process on every machine generates the same code, so results are
    # bit-identical between runs. Also set by the environment variable VECGRAD_DETERMINISTIC=1.
    # Off, choices come from the on-disk cache where one was measured (autotune), else from
    # the cost model calibrated once for this machine (see vecgrad.kernels).
    deterministic: bool = False
    # Time the candidate kernels of a choice not in the on-disk cache while compiling (a few
    # ms per choice, once per machine and shape), and store the fastest for every later
    # process; off, the cost model decides. Ignored in deterministic mode.
    autotune: bool = False
    # When the NumPy backend first compiles, fix glibc malloc's mmap and trim thresholds (32
    # and 128 MiB), so the arrays a compiled call frees stay in the heap for the next call
    # instead of being unmapped and faulted in again page by page (on a virtual machine a
    # page fault costs several elementwise passes over the page). Linux/glibc only; the
    # process may keep up to 128 MiB of freed memory. See vecgrad.backends.numpy.heap.
    retain_heap: bool = True

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        previous = getattr(self, "_previous", None)
        if previous is not None:
            _set(dataclasses.asdict(previous))


settings = Config()

# Checks of a setting's value that a layer above owns, by setting: `backends` registers the
# one of "backend" (is that backend known and installed?) when imported.
CHECKS: dict[str, Callable[[Any], object]] = {}


def _check(name: str, value: Any) -> None:
    known = {f.name: f for f in fields(Config)}
    if name not in known:
        raise ArgumentError(f"vg.config has no setting {name!r}; the settings are "
                            f"{', '.join(sorted(known))}{_where(user_src())}")
    want = {"int": int, "bool": bool, "str": str}[known[name].type]
    if name in CHECKS:
        CHECKS[name](value)  # e.g. BackendError (an ArgumentError) for an unknown backend
    if type(value) is not want or (want is int and value < 1):
        raise ArgumentError(f"vg.config: {name} must be a {'positive ' if want is int else ''}"
                            f"{want.__name__}, got {value!r}{_where(user_src())}")


def _set(changes: dict[str, Any]) -> None:
    for k, v in changes.items():
        setattr(settings, k, v)


def config(**changes: Any) -> Config:
    """Read or change vecgrad's settings (the fields of `Config`, documented there).

        vg.config()                        # the current settings (a copy)
        vg.config(cache_size=32)           # change settings from now on
        with vg.config(trace_scalars=False):
            ...                            # changed inside the block only

    Returns the settings after the change. Unknown names and values of the wrong type raise
    `ArgumentError`.
    """
    for k, v in changes.items():
        _check(k, v)
    previous = dataclasses.replace(settings)
    _set(changes)
    out = dataclasses.replace(settings)
    out._previous = previous if changes else None  # type: ignore[attr-defined]
    return out
