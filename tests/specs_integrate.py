"""Spec of odeint (primitives/odeint.py), whose VJP is a backward odeint of the adjoint
system. The solver's tolerances are tight so that central differences of solutions (first
and second order) are meaningful."""
from __future__ import annotations

import numpy as np
from scipy.integrate import odeint as sp_odeint
from spec_lib import Spec

KW = (("atol", 1e-12), ("rtol", 1e-12))


def rhs(y, t, a):
    """dy/dt = -a y + sin(t), written with NumPy calls (traced through dispatch)."""
    return -a * y + np.sin(t)


def _solve(f, y0, t):
    return sp_odeint(f, y0, t, **dict(KW))


def _y0(r, s):
    return r.standard_normal(s)


def _times(r, s):
    return np.sort(r.uniform(0.0, 1.0, s))


def _rates(r, s):
    return r.uniform(0.5, 2.0, s)


SPECS: list[Spec] = [
    Spec("odeint", ((3,), (4,), (3,)), lambda y0, t, a: _solve(lambda y, tt: rhs(y, tt, a),
                                                              y0, t),
         {"func": rhs, "kw": KW}, gens=(_y0, _times, _rates), batchable=False, eps=1e-4,
         tol=1e-5, impl_tol=1e-9),
]

