"""Sums of joined or reshaped values: a segment sum of a concatenation whose parts are whole
segments, and a total of a reshape.

Batching joins several running sums of one loop (the M2s and the co-moment of a streaming
correlation, `sxx += ..; syy += ..; sxy += ..`) into one segment sum over the concatenation
of their terms, ids k for the rows of the k-th part:

    segment_sum(concatenate(x_0, .., x_{K-1}), ids) = stack(sum(x_p(0)), .., sum(x_p(K-1)))

where each part's rows all carry one id and each id is one part's (p the parts' order by
id). A reduction per part reads each row once, as the scatter does, without the joined copy
or np.add.at; and each sum then meets the rules for a sum of its own terms (a product
summed is a contraction: rewrite/comoments.py sees a co-moment there).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import primitives as P

# Segments past which a stack of reductions is no longer a few operations.
_PARTS = 16


def segment_sum_of_blocks(e: Any, ctx: Any) -> Any:
    d = ctx.def_of(e.inputs[0], P.concatenate)
    a, num = e.params["axis"], e.params["num"]
    if d is None or d.params["axis"] != a or num > _PARTS or len(d.inputs) != num:
        return None
    ids, at, owner = np.asarray(e.params["ids"].arr), 0, {}
    for x in d.inputs:
        block = ids[at:at + x.aval.shape[a]]
        at += x.aval.shape[a]
        if not block.size or np.any(block != block[0]) or int(block[0]) in owner:
            return None
        owner[int(block[0])] = x
    parts = tuple(ctx.emit(P.reduce_sum, (owner[j],), {"axes": (a,)}, e.src)
                  for j in range(num))
    return P.stack, parts, {"axis": a}


def total_of_reshape(e: Any, ctx: Any) -> Any:
    """sum(reshape(x), every axis) = sum(x, every axis): the total does not see the layout
    (a state of shape (1,) batched to (n, 1) and summed whole), and the sum meets x's own
    definition (a product summed is a contraction)."""
    d = ctx.def_of(e.inputs[0], P.reshape)
    x = d.inputs[0] if d is not None else None
    if x is None or len(e.params["axes"]) != d.out.aval.ndim or not x.aval.ndim:
        return None
    return P.reduce_sum, (x,), {**e.params, "axes": tuple(range(x.aval.ndim))}


__all__ = ["segment_sum_of_blocks", "total_of_reshape"]
