"""NumPy kernels of `sqdist` (pairwise squared distances), each computed from the differences
(never |x|^2 + |y|^2 - 2 x.y): SciPy's `cdist(x, y, 'sqeuclidean')` where SciPy is installed
(one C loop, no temporary; float64 only, its working precision), one outer subtraction, square
and add per coordinate (`taps`: (n, m) temporaries), or the (d, n, m) differences contracted
with themselves (`diff`), whichever `kernels.choose` picks for the shapes: measured once per
machine, the model's choice in deterministic mode."""
from __future__ import annotations

from collections.abc import Callable
from importlib.util import find_spec

import numpy as np

from ... import kernels
from ...ir import Aval
from .gathers import _pick
from .lowering import Lowering


def _cdist() -> Callable:
    from scipy.spatial.distance import cdist

    def cdist_sq(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return cdist(x, y, "sqeuclidean")
    return cdist_sq


def _taps(dt: np.dtype) -> Callable:
    def taps(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        acc = np.subtract.outer(x[:, 0], y[:, 0]).astype(dt, copy=False)
        np.multiply(acc, acc, out=acc)
        tmp = np.empty_like(acc)
        for k in range(1, x.shape[1]):
            np.subtract.outer(x[:, k], y[:, k], out=tmp)
            np.multiply(tmp, tmp, out=tmp)
            acc += tmp
        return acc
    return taps


def diff(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    d = x.T[:, :, None] - y.T[:, None, :]
    return np.einsum("kij,kij->ij", d, d)


def _sqdist(avals: list[Aval]) -> Callable:
    x, y = avals
    (n, d), m = x.shape, y.shape[0]
    dt = np.result_type(x.dtype, y.dtype)
    if n * m * d == 0 or d == 1:
        return diff
    cands = [diff, _taps(dt)]
    if dt == np.float64 and find_spec("scipy") is not None:
        cands.insert(0, _cdist())
    b = dt.itemsize

    def model(mc: kernels.Machine) -> dict[str, float]:
        # cdist: a multiply-add per coordinate and a few per pair, in one call; taps: three
        # calls and passes over the (n, m) result per coordinate; diff: the differences
        # written and read, and the contraction's loop
        pairs = n * m
        return {"cdist_sq": 3 * mc.call + pairs * (d + 8) * mc.loop,
                "taps": d * (3 * mc.call + 5 * pairs * b * mc.copy + pairs * mc.loop),
                "diff": 4 * mc.call + 3 * pairs * d * b * mc.copy + pairs * d * mc.loop}
    return _pick("sqdist", cands, (n, m, d, dt.str),
                 lambda: [np.ones(x.shape, x.dtype), np.ones(y.shape, y.dtype)], model)


LOWERINGS = {"sqdist": Lowering(lower=_sqdist)}
