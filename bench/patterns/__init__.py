"""The `patterns` benchmark suite of issue 14: natural-style programs, one module per item of
"What must batch", each next to its hand-vectorized NumPy forward.

    python bench/patterns/run.py [--only names] [--sizes small|default] [--repeat N]

`PATTERNS` maps each program's name to its `Pattern` record (see core.py).
"""
from __future__ import annotations

from . import (
    buffers,
    depth,
    indices,
    invariants,
    mixed,
    pipelines,
    scans,
    static,
    variants_edges,
    variants_more,
    variants_natural,
    variants_natural2,
    variants_natural3,
    variants_natural4,
    variants_natural5,
    variants_rmw,
    variants_scans,
    variants_scans2,
    variants_segments,
    variants_simplify,
    variants_simplify2,
    variants_styles,
    variants_windows,
    variants_windows2,
    variants_windows3,
    variants_windows4,
    variants_windows5,
    variants_windows6,
    variants_windows7,
    variants_windows8,
    windows,
)
from .core import COMPILE_TARGET, ITEMS, TARGETS, Pattern

_MODULES = [buffers, windows, indices, mixed, depth, scans, invariants, static, pipelines,
            variants_windows, variants_edges, variants_more, variants_styles,
            variants_windows2, variants_natural, variants_windows3, variants_natural2,
            variants_windows4, variants_natural3, variants_windows5,
            variants_natural4, variants_windows6, variants_windows7, variants_natural5,
            variants_simplify, variants_scans, variants_rmw, variants_windows8,
            variants_segments, variants_simplify2, variants_scans2]

PATTERNS: dict[str, Pattern] = {p.name: p for m in _MODULES for p in m.PATTERNS}
assert len(PATTERNS) == sum(len(m.PATTERNS) for m in _MODULES), "duplicate pattern names"

__all__ = ["COMPILE_TARGET", "ITEMS", "PATTERNS", "TARGETS", "Pattern"]
