"""The NumPy backend: a graph becomes straight-line Python source calling NumPy (codegen), with
a loop primitive's step inlined into a `for` loop (loop), and per-equation profiling for
`explain` (profile)."""
from __future__ import annotations

from .codegen import Compiled, compile_graph, generate, lowered
from .profile import profile_graph

__all__ = ["Compiled", "compile_graph", "generate", "lowered", "profile_graph"]
