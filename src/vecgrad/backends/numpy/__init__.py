"""The NumPy backend: a graph becomes straight-line Python source calling NumPy (codegen), with
a loop primitive's step inlined into a `for` loop (loop), and per-equation profiling for
`explain` (profile)."""
from __future__ import annotations

from .codegen import Compiled, compile_graph, generate
from .loop import lower_loop
from .lowering import Lowering
from .profile import profile_graph
from .table import LOWERINGS, is_view, lowered

# The loop primitive's lowering generates its step with codegen, which reads this table: it
# is set here, above both, so that imports point one way.
LOWERINGS["loop"] = Lowering(lower=lower_loop)

__all__ = ["LOWERINGS", "Compiled", "compile_graph", "generate", "is_view", "lowered",
           "profile_graph"]
