"""NumPy kernels of `correlate`: `np.correlate` (one call, k multiply-adds per output) or, for a
short kernel over a long signal, one multiply-add pass per kernel tap (`out += w[a] *
x[a:a+n]`), whichever `kernels.choose` picks for the shapes: measured once per machine, the
model's choice in deterministic mode."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ... import kernels
from ...ir import Aval
from .gathers import _pick
from .lowering import Lowering

# A kernel longer than this always runs as np.correlate (the taps' passes would not pay).
MAX_TAPS = 64


def _offsets(mode: str, k: int) -> Callable:
    """out[j] = sum_a w[a] x[j + a - pad], one multiply-add pass per tap a."""
    def offsets(x: np.ndarray, w: np.ndarray) -> np.ndarray:
        if mode == "full":
            pad = np.zeros(k - 1, x.dtype)
            x = np.concatenate([pad, x, pad])
        n = x.shape[0] - k + 1
        dt = np.result_type(x, w)
        out = np.multiply(x[:n], w[0], dtype=dt)
        tmp = np.empty_like(out)
        for a in range(1, k):
            np.multiply(x[a:a + n], w[a], out=tmp)
            out += tmp
        return out
    return offsets


def _correlate(avals: list[Aval], mode: str) -> Callable:
    x, w = avals
    n, k = x.shape[0], w.shape[0]
    out = n - k + 1 if mode == "valid" else n + k - 1

    def correlate(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.correlate(a, b, mode)
    if k > MAX_TAPS or k >= out:
        return correlate
    cands = [correlate, _offsets(mode, k)]
    b = np.result_type(x.dtype, w.dtype).itemsize

    def model(m: kernels.Machine) -> dict[str, float]:
        # np.correlate: one dot of k per output (its setup about an einsum row's);
        # offsets: per tap two calls and a multiply and an add over the output
        return {"correlate": m.call + out * (m.inner + k * m.loop),
                "offsets": k * (2 * m.call + 5 * out * b * m.copy + out * m.loop)}
    return _pick("correlate", cands, (n, k, mode, x.dtype.str, w.dtype.str),
                 lambda: [np.ones(x.shape, x.dtype), np.ones(w.shape, w.dtype)], model)


LOWERINGS = {"correlate": Lowering(lower=_correlate)}
