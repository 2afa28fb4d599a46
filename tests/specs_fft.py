"""Specs of the FFT primitives (primitives/fft.py): complex-to-complex forward and inverse,
real-to-complex and complex-to-real, over one or several axes, with each normalization."""
from __future__ import annotations

import numpy as np
from spec_lib import Spec, cnormal, normal

NORMS = (None, "ortho", "forward")


def _c2c(axes: tuple, inverse: bool, norm):
    fn = np.fft.ifftn if inverse else np.fft.fftn
    return lambda x: fn(x, axes=axes, norm=norm)


def _irfft_ref(axes: tuple, n: int, norm):
    return lambda x: np.fft.irfftn(x, s=[x.shape[a] for a in axes[:-1]] + [n], axes=axes,
                                   norm=norm)


SPECS: list[Spec] = [
    Spec("fft", ((3, 5),), _c2c(axes, inv, norm), {"axes": axes, "inverse": inv, "norm": norm},
         gens=cnormal, bcast=(((2, 3, 5),),) if axes == (1,) else (),
         label=f"{axes}-{'inv' if inv else 'fwd'}-{norm}")
    for axes in ((1,), (0, 1)) for inv in (False, True) for norm in NORMS
] + [
    Spec("rfft", (shape,), lambda x, axes=axes, norm=norm: np.fft.rfftn(x, axes=axes, norm=norm),
         {"axes": axes, "norm": norm}, gens=normal, label=f"{shape}-{axes}-{norm}")
    for shape, axes in (((3, 6), (1,)), ((3, 5), (1,)), ((4, 6), (0, 1)), ((4, 5), (1, 0)))
    for norm in NORMS
] + [
    Spec("irfft", (shape,), _irfft_ref(axes, n, norm), {"axes": axes, "n": n, "norm": norm},
         gens=cnormal, label=f"{shape}-{axes}-n{n}-{norm}")
    for shape, axes, n in (((3, 4), (1,), 6), ((3, 4), (1,), 7), ((3, 4), (1, 0), 5),
                           ((3, 4), (0, 1), 6))
    for norm in NORMS
]
