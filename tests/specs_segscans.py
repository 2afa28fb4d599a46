"""Specs of the segmented scans `segment_cumsum` and `segment_affine` (primitives/segscans.py):
impl against a plain loop over the rows, VJP by central differences, batching by stacking,
and every backend against NumPy. The starts come in sparse and dense (many runs of one row,
a few long runs), forward and reverse; rates of either sign, some above 1 in size."""
from __future__ import annotations

import numpy as np
from spec_lib import Spec, normal


def seg_ref(a: np.ndarray | None, b: np.ndarray, starts: np.ndarray,
            reverse: bool = False) -> np.ndarray:
    """c[i] = a[i] c[i-1] + b[i] within runs (row 0 and each True in starts begin one); reverse:
    c[i] = b[i] + a[i+1] c[i+1] while row i+1 lies in row i's run. A plain loop."""
    shape = b.shape if a is None else (b.shape[0],) + np.broadcast_shapes(a.shape[1:],
                                                                          b.shape[1:])
    a = np.ones(shape, b.dtype) if a is None else np.broadcast_to(a, shape)
    b = np.broadcast_to(b, shape)
    out = np.zeros(shape, np.result_type(a, b))
    L = shape[0]
    for i in (range(L - 1, -1, -1) if reverse else range(L)):
        if reverse:
            out[i] = b[i] if i == L - 1 or starts[i + 1] else a[i + 1] * out[i + 1] + b[i]
        else:
            out[i] = b[i] if i == 0 or starts[i] else a[i] * out[i - 1] + b[i]
    return out


def sparse(r: np.random.Generator, s: tuple) -> np.ndarray:
    return r.random(s) < 0.25


def dense(r: np.random.Generator, s: tuple) -> np.ndarray:
    return r.random(s) < 0.7


def rates(r: np.random.Generator, s: tuple) -> np.ndarray:
    return r.uniform(-1.3, 1.3, s)


def _cumsum(reverse: bool):
    return lambda b, s: seg_ref(None, b, s, reverse)


def _affine(reverse: bool):
    return lambda a, b, s: seg_ref(a, b, s, reverse)


SPECS: list[Spec] = []
for rev in (False, True):
    tag = "-reverse" if rev else ""
    SPECS += [
        Spec("segment_cumsum", ((9,), (9,)), _cumsum(rev), {"reverse": rev},
             gens=(normal, sparse), label="sparse" + tag),
        Spec("segment_cumsum", ((8, 3), (8,)), _cumsum(rev), {"reverse": rev},
             gens=(normal, dense), label="rows-dense" + tag),
        Spec("segment_affine", ((10,), (10,), (10,)), _affine(rev), {"reverse": rev},
             gens=(rates, normal, sparse), label="sparse" + tag),
        Spec("segment_affine", ((7, 1), (7, 3), (7,)), _affine(rev), {"reverse": rev},
             gens=(rates, normal, dense), label="column-rates" + tag),
        Spec("segment_affine", ((12, 2), (12, 1), (12,)), _affine(rev), {"reverse": rev},
             gens=(rates, normal, sparse), label="broadcast-values" + tag),
    ]
