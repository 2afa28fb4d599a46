"""The record of the NumPy backend's lowering table: how the generated code runs a primitive
when its impl (the reference semantics, called with the static params bound) is not the
best it can do. Each kernel module of this package holds the entries of its primitives next
to their kernels; `table` joins them."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Lowering:
    """`lower(in_avals, **params)` builds the callable the generated code invokes (bound
    once, when compiling: plans, measured kernel choices); `inline(arg names, params, bind)`
    is the source of an expression computing it instead (saves a Python call per op;
    parameters are never formatted into the source: every value goes through `bind`);
    `inplace(*operands, **params)` may overwrite operand 0 (used when its buffer is dead);
    `view`: the result may share operand 0's memory (no fresh buffer);
    `write(out, arg names, params, avals, bind, inplace)` is the source of statements
    computing a write (`out[key] = v`: no Python call, the key converted once) where it
    applies (else None), in place into operand 0 when `inplace`."""

    lower: Callable[..., Callable] | None = None
    inline: Callable[..., str] | None = None
    inplace: Callable[..., np.ndarray] | None = None
    view: bool = False
    write: Callable[..., list[str] | None] | None = None


PLAIN = Lowering()  # the impl, with its params bound
VIEW = Lowering(view=True)
