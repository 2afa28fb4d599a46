"""Where a trace's values come from: the traced function's arguments (`new_input`, and
`trace`, which runs a function on fresh ones) and fresh constant buffers that the function
writes into (`const_tracer`, what vnp.zeros and the other creation functions return)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .builder import Builder, current_builder
from .ir import Aval, Const, Var
from .tracing import Tracer


def new_input(aval: Aval, builder: Builder, readonly: bool = True) -> Tracer:
    """A traced argument of the function (read-only unless asked otherwise)."""
    v = Var(aval)
    builder.inputs.append(v)
    return Tracer(builder, v, readonly=readonly, ndarray=True)


def trace(fun: Callable, avals: Sequence[Aval], hash_cons: bool = True) -> tuple[Builder, Any]:
    """Trace `fun` on fresh inputs; returns the builder and the (traced) output object.
    `hash_cons=False` records repeated operations as written (to test CSE on them)."""
    with Builder(hash_cons=hash_cons) as b:
        args = [new_input(a, b) for a in avals]
        out = fun(*args)
    return b, out


def const_tracer(value: np.ndarray, uniform: bool = False) -> Any:
    """A traced handle on a fresh constant buffer (so it can be written into), or the array
    itself outside of a trace. A `uniform` buffer (every element equal: zeros, ones, full)
    shares one constant with the trace's other buffers of its shape, dtype and value: SSA
    values are immutable, so they are one value, and the buffers a loop makes afresh each
    iteration (`z = vnp.empty_like(x)` in a step function) are then recorded once (and
    recurrences over them look alike step to step)."""
    b = current_builder()
    if b is None:
        return value
    if not uniform or not b.hash_cons or not value.size:
        return Tracer(b, Const(value), ndarray=True)
    fresh = b.scratch.setdefault("_uniform_consts", {})
    key = (value.dtype.str, value.shape, value.reshape(-1)[:1].tobytes())
    c = fresh.get(key)
    if c is None:
        c = fresh[key] = Const(value)
    return Tracer(b, c, ndarray=True)
