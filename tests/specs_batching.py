"""Specs of the primitives that batching emits for moving positions: affine views (`strided`)
and their adjoint (`strided_add`), gathers by static ids (`take`) and their adjoint (`segment_sum`), and the
one-channel window contraction (`correlate`)."""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from spec_lib import Spec

from vecgrad.primitives import Adv

# windows x[t:t+3] for t = 1..4 of a (7, 3) array: rows overlap
WIN = {"start": (1, 0), "dims": ((4, (1, 0)), (3, (1, 0)), (3, (0, 1)))}
# the anti-diagonal of a 4x4 array, with a broadcast axis in front
ANTI = {"start": (0, 3), "dims": ((2, (0, 0)), (4, (1, -1)))}
# 2x2 patches of a (5, 6) array at a stride of 2 columns (gaps between them) and 1 row
PATCH = {"start": (0, 1), "dims": ((3, (1, 0)), (2, (0, 2)), (2, (1, 0)), (2, (0, 1)))}
# windows x[2t:2t+5] for t = 0..4 of a (13, 2) array: width 5 at a hop of 2, added as 3
# residue classes of windows (t = 0, 3 | 1, 4 | 2) that do not overlap, not 5 offsets
HOP = {"start": (0, 0), "dims": ((5, (2, 0)), (5, (1, 0)), (2, (0, 1)))}
# windows of no columns (a minor's empty left part, A[1:, :0], stacked): nothing is added
EMPTY = {"start": (1, 0), "dims": ((4, (1, 0)), (3, (1, 0)), (0, (0, 1)))}


def _windows(x: np.ndarray) -> np.ndarray:
    return sliding_window_view(x, 3, axis=0)[1:5].transpose(0, 2, 1)


def _hop_windows(x: np.ndarray) -> np.ndarray:
    return sliding_window_view(x, 5, axis=0)[::2].transpose(0, 2, 1)


def _anti(x: np.ndarray) -> np.ndarray:
    return np.broadcast_to(np.fliplr(x).diagonal(), (2, 4))


def _patches(x: np.ndarray) -> np.ndarray:
    return np.stack([np.stack([x[i:i + 2, 1 + 2 * j:3 + 2 * j] for j in range(2)])
                     for i in range(3)])


def _add_ref(view, shape):
    def ref(base: np.ndarray, v: np.ndarray) -> np.ndarray:
        out = base.astype(np.result_type(base, v))  # (complex v: a complex result)
        idx = np.arange(out.size).reshape(out.shape)
        pos = view(idx)
        np.add.at(out.reshape(-1), pos.reshape(-1),
                  np.broadcast_to(v, pos.shape).reshape(-1))
        return out
    return ref


IDS = Adv(np.array([4, 0, 0, 2, 4, 1]))
PERM = Adv(np.array([2, 0, 3, 1]))
SEG = Adv(np.array([0, 2, 2, 1, 0, 2]))
RUNS = Adv(np.array([0, 0, 1, 1, 1, 2]))  # (sorted, every segment filled: packed rows)

SPECS: list[Spec] = [
    Spec("strided", ((7, 3),), _windows, WIN, label="windows"),
    Spec("strided", ((4, 4),), _anti, ANTI, label="antidiagonal"),
    Spec("strided", ((5, 6),), _patches, PATCH, label="patches"),
    Spec("strided_add", ((7, 3), (4, 3, 3)), _add_ref(_windows, (7, 3)), WIN,
         bcast=(((7, 3), (4, 1, 3)),), label="windows"),
    Spec("strided_add", ((4, 4), (2, 4)), _add_ref(_anti, (4, 4)), ANTI, label="antidiagonal"),
    Spec("strided", ((13, 2),), _hop_windows, HOP, label="hop-windows"),
    Spec("strided_add", ((13, 2), (5, 5, 2)), _add_ref(_hop_windows, (13, 2)), HOP,
         bcast=(((13, 2), (5, 1, 2)),), label="hop-windows"),
    Spec("strided_add", ((5, 6), (3, 2, 2, 2)), _add_ref(_patches, (5, 6)), PATCH,
         label="patches"),
    Spec("strided_add", ((7, 3), (4, 3, 0)), _add_ref(lambda x: _windows(x)[:, :, :0], (7, 3)),
         EMPTY, label="empty"),
    Spec("correlate", ((7,), (3,)), lambda x, w: np.correlate(x, w, "valid"),
         {"mode": "valid"}, label="valid"),
    Spec("correlate", ((5,), (3,)), lambda x, w: np.correlate(x, w, "full"),
         {"mode": "full"}, label="full"),
    Spec("correlate", ((2,), (4,)), lambda x, w: np.correlate(x, w, "full"),
         {"mode": "full"}, label="full, kernel longer"),
    Spec("correlate", ((4,), (4,)), lambda x, w: np.correlate(x, w, "valid"),
         {"mode": "valid"}, label="valid, one output"),
    Spec("take", ((5, 3),), lambda x: np.take(x, IDS.arr, axis=0), {"ids": IDS, "axis": 0},
         label="repeats"),
    Spec("take", ((3, 4),), lambda x: np.take(x, PERM.arr, axis=1), {"ids": PERM, "axis": 1},
         label="permutation"),
    Spec("segment_sum", ((6, 3),),
         lambda v: np.stack([v[SEG.arr == j].sum(0) for j in range(4)]),
         {"ids": SEG, "axis": 0, "num": 4}, label="rows"),
    Spec("segment_sum", ((2, 6),),
         lambda v: np.stack([v[:, SEG.arr == j].sum(1) for j in range(3)], axis=1),
         {"ids": SEG, "axis": 1, "num": 3}, label="columns"),
    Spec("segment_max", ((6, 3),), lambda v: np.stack([v[SEG.arr == j].max(0) for j in range(3)]),
         {"ids": SEG, "axis": 0, "num": 3}, label="rows, unsorted ids"),
    Spec("segment_max", ((2, 6),),
         lambda v: np.maximum.reduceat(v, [0, 2, 5], axis=1),
         {"ids": RUNS, "axis": 1, "num": 3}, label="sorted runs (reduceat)"),
    Spec("segment_min", ((6, 2),),
         lambda v: np.stack([v[SEG.arr == j].min(0) for j in range(3)]),
         {"ids": SEG, "axis": 0, "num": 3}, label="rows"),
    Spec("segment_min", ((6,),), lambda v: np.minimum.reduceat(v, [0, 2, 5]),
         {"ids": RUNS, "axis": 0, "num": 3}, label="sorted runs (reduceat)"),
]
