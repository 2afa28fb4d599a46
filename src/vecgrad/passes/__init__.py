"""Graph -> Graph passes. The order they run in is declared in `vecgrad.pipeline`.

Three kinds of fusion are kept apart by name: `reassociate` (chains of contractions merged
and reordered, a BACKWARD pass), the softmax/logsumexp rules of `fusion` (hand-written
formulas become fused primitives, inside `simplify`) and `fuse_muladd` (an einsum plus an
add becomes one `muladd` call, a LOWER pass of the NumPy backend: backends/numpy/muladd.py).
"""
from __future__ import annotations

from .batch import batch
from .cse import cse
from .dce import dce
from .markers import strip_ad_markers
from .reassociate import reassociate
from .relayout import relayout
from .scans import loops, scans
from .simplify import simplify

__all__ = ["batch", "cse", "dce", "loops", "reassociate", "relayout", "scans",
           "simplify", "strip_ad_markers"]
