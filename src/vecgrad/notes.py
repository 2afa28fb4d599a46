"""Pass notes: typed records a graph carries (`Graph.notes`) for `explain` and the passes.

Batching says which source lines merged (`Batched`), which stayed one operation each
(`Unbatched`) or ran as a few groups (`Sequential`); the scans pass says which recurrences it
rolled (`Recurrence`). Two records serve the pipeline itself: `Recorded` (how many operations
the trace recorded before hash-consing merged repeats) and `Augments` (a loop body that is the
residual-storing copy of another). Notes never list per-member details, so no note grows with
a trip count.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from .ir import Graph, Src


@dataclass(frozen=True)
class Note:
    """`count` operations of kind `what` written at the user's line `src`."""

    src: Src | None
    what: str
    count: int
    kind: ClassVar[str] = ""  # how explain labels the line (Found.kind)


@dataclass(frozen=True)
class Batched(Note):
    """The operations merged into one, `became` (an equation, described), of shape `shape`
    (None: they became views)."""

    became: str = "?"
    shape: tuple[int, ...] | None = None
    kind: ClassVar[str] = "batched"


@dataclass(frozen=True)
class Unbatched(Note):
    """The operations stay one each, for `reason`."""

    reason: str = ""
    kind: ClassVar[str] = "unbatched"


@dataclass(frozen=True)
class Sequential(Unbatched):
    """The operations ran as `groups` operations: each depends on a previous one (`depends`
    True), or they are independent but were not all ready at once (False), or the trace was
    too large to say (None)."""

    groups: int = 0
    depends: bool | None = True

    @property
    def kind(self) -> str:  # type: ignore[override]
        return "sequential" if self.depends else "split"


@dataclass(frozen=True)
class Recurrence(Note):
    """A recurrence of `count` steps rolled into `became` (a loop or a scan); `lines` are the
    source lines of one step's work."""

    became: str = ""
    reason: str = ""
    lines: tuple[Src, ...] = ()
    kind: ClassVar[str] = "recurrence"


@dataclass(frozen=True)
class Recorded:
    """The trace recorded `count` operations, repeats included (what an eager tape runs)."""

    count: int


@dataclass(frozen=True, eq=False)
class Augments:
    """This graph is a loop body that computes `body`'s outputs and more (its residuals)."""

    body: Graph


def of(notes: tuple[Any, ...], *types: type) -> list[Any]:
    """The notes of these types, in order."""
    return [n for n in notes if isinstance(n, types)]


__all__ = ["Augments", "Batched", "Note", "Recorded", "Recurrence", "Sequential", "Unbatched",
           "of"]
