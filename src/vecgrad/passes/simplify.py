"""Algebraic simplification (the rewrite engine lands with the simplify issue; for now the
pass removes dead code so that the pipeline has its final shape)."""
from __future__ import annotations

from ..ir import Graph
from .dce import dce


def simplify(g: Graph) -> Graph:
    return dce(g)
