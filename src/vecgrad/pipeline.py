"""The pipeline, declared once. Staging runs it; the README's pipeline line (checked by a
test), `vg.show`'s stage order and `explain`'s compile-time breakdown are read from it.

    trace -> FORWARD -> differentiate -> BACKWARD -> LOWER (the backend's own) -> codegen

The trace is recorded hash-consed (tracing.Builder.emit), so it arrives with CSE done; the
forward pipeline starts with `roll`: a recurrence through a nonlinear function (which
batching could not break) becomes a loop on the trace, so batching never walks its steps.
`scans` rolls what batching left sequential (linear recurrences, buffers, copies of one
recurrence that batching merged) into loops and scans. On the gradient graph, `loops` shares
each forward loop with its residual-storing copy and optimizes the backward loops the same
way; CSE runs again there, since AD combines rules' output from many equations. LOWER runs after FORWARD (jit) or
BACKWARD (grad): AD-only markers are dropped, then come rewrites only a backend understands;
each backend names the ones it runs (backends.Backend.lower_passes).
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .backends.numpy.muladd import fuse_muladd
from .backends.numpy.relayout import relayout
from .batch.batching import batch
from .batch.scans import loops, recurrences, scans
from .ir import Graph, dce, typecheck
from .rewrite.cse import cse
from .rewrite.markers import strip_ad_markers
from .rewrite.reassociate import reassociate
from .rewrite.simplify import simplify

Pass = Callable[[Graph], Graph]


@dataclass(frozen=True)
class Stage:
    """One step of the pipeline. `name` keys its timing and its graph in a compiled entry;
    `run` is the Graph -> Graph pass (None for the steps that are not one: tracing, AD, code
    generation); `label` and `note` are how the README names it."""

    name: str
    run: Pass | None = None
    label: str = ""
    note: str = ""

    def __str__(self) -> str:
        return (self.label or self.name) + (f" ({self.note})" if self.note else "")


def _cse_dce(g: Graph) -> Graph:
    return cse(dce(g))


TRACE = Stage("trace", note="recorded hash-consed, which is CSE")
FORWARD: tuple[Stage, ...] = (Stage("roll", recurrences, note="nonlinear recurrences"),
                              Stage("batch", batch), Stage("scans", scans),
                              Stage("simplify", simplify))
AD = Stage("ad", label="differentiate")
BACKWARD: tuple[Stage, ...] = (Stage("loops", loops), Stage("cse", _cse_dce),
                               Stage("simplify", simplify), Stage("reassociate", reassociate))
LOWER: tuple[Stage, ...] = (Stage("strip", strip_ad_markers), Stage("relayout", relayout),
                            Stage("muladd", fuse_muladd))
CODEGEN = Stage("codegen")
PIPELINE: tuple[Stage, ...] = (TRACE, *FORWARD, AD, *BACKWARD, *LOWER, CODEGEN)
GRAD = "grad."  # the prefix of the backward stages' keys (their names repeat forward ones)


def describe() -> str:
    """The pipeline in one line, as the README states it."""
    return " -> ".join(map(str, PIPELINE))


def timing_keys() -> list[str]:
    """The keys of a compiled entry's stage timings (`Entry.times`), in pipeline order."""
    return [TRACE.name, *(s.name for s in FORWARD), AD.name,
            *(GRAD + s.name for s in BACKWARD), *(s.name for s in LOWER), CODEGEN.name]


def graph_keys() -> list[str]:
    """The keys of a compiled entry's stage graphs (`Entry.stages`), in pipeline order: the
    trace (also kept as "cse", which recording did), each pass's result, the gradient graph
    ("grad", straight out of AD), and "final", the graph compiled (split into "forward" and
    "backward" where a transformation compiles two programs)."""
    return ["traced", "cse", *(s.name for s in FORWARD), "grad",
            *(GRAD + s.name for s in BACKWARD), *(s.name for s in LOWER), "final", "forward",
            "backward"]


def lowering(names: Sequence[str]) -> tuple[Stage, ...]:
    """The LOWER stages a backend runs (by name, in pipeline order)."""
    return tuple(s for s in LOWER if s.name in names)


def backward() -> tuple[Stage, ...]:
    """The BACKWARD stages under their keys in a compiled entry (prefixed `grad.`)."""
    return tuple(Stage(GRAD + s.name, s.run, s.label, s.note) for s in BACKWARD)


def run(g: Graph, stages: Sequence[Stage], times: dict[str, float] | None = None,
        graphs: dict[str, Graph] | None = None, check: bool | None = None) -> Graph:
    """Run the stages' passes in order, adding each one's seconds to `times` and its result
    to `graphs` under its name. `check` (default: env VECGRAD_TYPECHECK=1) typechecks after
    each."""
    check = os.environ.get("VECGRAD_TYPECHECK") == "1" if check is None else check
    for s in stages:
        t0 = time.perf_counter()
        g = s.run(g)  # type: ignore[misc]
        if times is not None:
            times[s.name] = times.get(s.name, 0.0) + time.perf_counter() - t0
        if graphs is not None:
            graphs[s.name] = g
        if check:
            typecheck(g)
    return g


__all__ = ["AD", "BACKWARD", "CODEGEN", "FORWARD", "GRAD", "LOWER", "PIPELINE", "TRACE",
           "Pass", "Stage", "backward", "describe", "graph_keys", "lowering", "run",
           "timing_keys"]
