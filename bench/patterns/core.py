"""The record of one benchmark program: a natural-style loss next to its hand-vectorized NumPy
forward, its inputs at two size presets, and the target its gradient is measured against."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# Issue 14's targets: gradient time / reference forward time (mins over runs).
TARGETS: dict[str, float] = {
    "parallel": 3.0,   # independent iterations: at most 3x the hand-vectorized forward
    "single": 2.0,     # one contraction or one elementwise chain: at most 2x
    "scan": 3.0,       # a linear recurrence: at most 3x a reference built on np.cumsum & co
    "rolled": 3.0,     # a nonlinear recurrence: at most 3x the NumPy loop that runs it
}
COMPILE_TARGET = 1.0   # seconds for the first gradient call

ITEMS: dict[int, str] = {
    1: "dependence by region",
    2: "affine positions",
    3: "repeated and irregular indices",
    4: "mixed sources",
    5: "batching across depth",
    6: "recurrences become scans",
    7: "loop invariants stay unstacked",
    8: "static data at call time",
    0: "several patterns at once",
}


def _same(args: tuple) -> tuple:
    return args


@dataclass(frozen=True)
class Pattern:
    """One program of the suite.

    `natural(*args)` is the loss written the way users write it (loops, buffers, comprehensions)
    and `reference(*prepare(args))` is the same scalar computed by hand-vectorized NumPy.
    `prepare` turns static Python data (edge lists, token lists) into the index arrays a
    hand-vectorizing user would keep; it runs once, outside the timed region. `inputs(rng,
    **sizes[preset])` makes the arguments; `argnums` are the ones differentiated.
    """

    name: str
    item: int
    natural: Callable[..., Any]
    reference: Callable[..., Any]
    inputs: Callable[..., tuple]
    sizes: dict[str, dict[str, Any]]
    argnums: tuple[int, ...] = (0,)
    target: str = "parallel"
    prepare: Callable[[tuple], tuple] = _same
    notes: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        assert self.target in TARGETS, self.target
        assert self.item in ITEMS, self.item
        assert set(self.sizes) == {"small", "default"}, self.name

    @property
    def doc(self) -> str:
        """The first line of the natural program's docstring."""
        return (self.natural.__doc__ or "").strip().split("\n")[0]

    def args(self, preset: str, seed: int = 0) -> tuple:
        """The arguments at a size preset ("small" or "default")."""
        return self.inputs(np.random.default_rng(seed), **self.sizes[preset])

    def ref_value(self, args: tuple) -> float:
        """The reference forward on `args` (prepared for it)."""
        return float(self.reference(*self.prepare(args)))


def variant(mod: dict, name: str, item: int, sizes: dict, argnums: tuple, inputs: Callable,
            prepare: Callable | None = None) -> Pattern:
    """A variants module's program `name` and its reference `name + "_ref"` (looked up in
    `mod`, the module's globals) as a Pattern: a scan target for item 6, else parallel."""
    extra = {"prepare": prepare} if prepare else {}
    return Pattern(name, item, mod[name], mod[name + "_ref"], inputs, sizes, argnums,
                   target="scan" if item == 6 else "parallel", tags=("variant", "natural"),
                   **extra)


def presets(small: dict, default: dict) -> dict[str, dict]:
    """The size presets of a program."""
    return {"small": small, "default": default}


def normal(rng: np.random.Generator, *shape: int, scale: float = 1.0,
           dtype: Any = np.float64) -> np.ndarray:
    """Standard normal samples times `scale`, as `dtype`."""
    return (scale * rng.standard_normal(shape)).astype(dtype)


def uniform(rng: np.random.Generator, *shape: int, low: float = 0.0, high: float = 1.0,
            dtype: Any = np.float64) -> np.ndarray:
    """Uniform samples in [low, high), as `dtype`."""
    return rng.uniform(low, high, shape).astype(dtype)


# ------------------------------------------------------------------ helpers for the references


@dataclass(frozen=True)
class Segments:
    """A precomputed plan for summing rows by segment id with sorted `np.add.reduceat` (measured
    about 3x faster than `np.add.at` for 3,000 rows of 16 into 500 segments)."""

    order: np.ndarray
    starts: np.ndarray
    ids: np.ndarray
    n: int


def segments(ids: Any, n: int) -> Segments:
    """The plan for `segment_sum(values, plan)` where `values[e]` goes to row `ids[e]` of `n`."""
    ids = np.asarray(ids)
    order = np.argsort(ids, kind="stable")
    s = ids[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    return Segments(order, starts, s[starts], n)


def segment_sum(values: np.ndarray, plan: Segments) -> np.ndarray:
    """Rows of `values` summed by segment: out[plan.ids[k]] = sum of the k-th run."""
    out = np.zeros((plan.n,) + values.shape[1:], values.dtype)
    out[plan.ids] = np.add.reduceat(values[plan.order], plan.starts, axis=0)
    return out
