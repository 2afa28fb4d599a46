"""The primitive record and its registry (the rest of this package defines the primitives).

Rule conventions (the AD driver and the batching pass rely on them):
- `impl(*arrays, **params) -> ndarray` is the NumPy implementation.
- `shape_rule(*avals, **params) -> Aval` raises `ShapeError` on bad operands.
- `vjp(g, ans, *ins, **params) -> tuple` gives one cotangent per input, written with traced
  operations (so it emits IR). `None` means zero. A cotangent may have the *broadcast* shape;
  the driver sums it back to the input's shape. `Sparse` marks a cotangent that covers only
  part of an input (a read through an index); the driver accumulates those into one buffer.
- `batch(n, batched, *ins, **params)` computes `n` stacked instances at once: inputs flagged
  in `batched` carry a leading axis of size `n`, the others are shared by all instances.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from ..ir import Primitive

REGISTRY: dict[str, Primitive] = {}


def register(p: Primitive) -> Primitive:
    """Add `p` to REGISTRY (names are unique) and return it."""
    if p.name in REGISTRY:
        raise ValueError(f"primitive {p.name} registered twice")
    REGISTRY[p.name] = p
    return p


class Sparse(NamedTuple):
    """A cotangent `g` for the region `idx` of an input; zero elsewhere."""

    idx: tuple
    g: Any


class NoGrad(NamedTuple):
    """A cotangent that does not exist: `what` names the function and argument (a gradient
    asked through it raises NoGradientError; an input nothing differentiates is fine)."""

    what: str
