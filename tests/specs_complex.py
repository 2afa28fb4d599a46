"""Specs of the complex-part primitives (real, imag, conj, angle) on real inputs; their
complex behaviour is checked with every other primitive's in test_complex.py."""
from __future__ import annotations

import numpy as np
from spec_lib import Spec, away0, unary

SPECS: list[Spec] = [
    unary("real", np.real),
    unary("imag", np.imag),
    unary("conj", np.conjugate),
    unary("angle", np.angle, away0),
]
