"""The `patterns` benchmark suite of issue 14: natural-style programs, one module per item of
"What must batch", each next to its hand-vectorized NumPy forward.

    python bench/patterns/run.py [--only names] [--sizes small|default] [--repeat N]

`PATTERNS` maps each program's name to its `Pattern` record (see core.py).
"""
from __future__ import annotations

import importlib
import pkgutil

from .core import COMPILE_TARGET, ITEMS, TARGETS, Pattern

# The item modules first, in the order of issue 14's list; then every `variants_*.py` in this
# folder, found rather than listed, so that engineers adding variant files in parallel never
# edit (and conflict in) one shared list.
_ITEMS = ["buffers", "windows", "indices", "mixed", "depth", "scans", "invariants", "static",
          "pipelines"]
_VARIANTS = sorted(m.name for m in pkgutil.iter_modules(__path__)
                   if m.name.startswith("variants_"))
_MODULES = [importlib.import_module(f"{__name__}.{name}") for name in _ITEMS + _VARIANTS]

PATTERNS: dict[str, Pattern] = {p.name: p for m in _MODULES for p in m.PATTERNS}
assert len(PATTERNS) == sum(len(m.PATTERNS) for m in _MODULES), "duplicate pattern names"

__all__ = ["COMPILE_TARGET", "ITEMS", "PATTERNS", "TARGETS", "Pattern"]
