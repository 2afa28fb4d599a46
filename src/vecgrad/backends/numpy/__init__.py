"""The NumPy backend: a graph becomes straight-line Python source calling NumPy (codegen), with
a loop primitive's step inlined into a `for` loop (loop), and per-equation profiling for
`explain` (profile)."""
from __future__ import annotations

from .codegen import Compiled, compile_graph, generate
from .profile import profile_graph
from .table import LOWERINGS, is_view, lowered

__all__ = ["LOWERINGS", "Compiled", "compile_graph", "generate", "is_view", "lowered",
           "profile_graph"]
