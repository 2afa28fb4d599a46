"""Specs of the special-function primitives (primitives/special.py) against scipy.special.
Orders and shape parameters without a gradient are excluded from `wrt`; one spec per such
family checks that asking their gradient raises NoGradientError."""
from __future__ import annotations

import numpy as np
import scipy.special as sc  # (in the `test` extra)
from spec_lib import BIN_BCAST, UN, Spec, normal, positive, unary


def uniform(lo: float, hi: float):
    return lambda r, s: r.uniform(lo, hi, s)


def choice(*vals: float, dtype: type = np.float64):
    return lambda r, s: r.choice(np.array(vals, dtype), s)


def away0(r: np.random.Generator, s: tuple) -> np.ndarray:
    return r.choice([-1.0, 1.0], s) * r.uniform(0.5, 2.0, s)


def param_x(name: str, ref, gens: tuple, **kw) -> Spec:
    """A two-input function differentiated in its second input x only."""
    return Spec(name, ((3, 4), (3, 4)), ref, gens=gens, wrt=(1,), bcast=BIN_BCAST, tol=1e-5,
                **kw)


ORDERS = choice(0.0, 1.0, 2.5)
INT_ORDERS = choice(0, 1, 2, dtype=np.int64)
SPECS: list[Spec] = [
    unary("gammaln", sc.gammaln, positive),
    unary("digamma", sc.digamma, positive),
    unary("gamma", sc.gamma, positive),
    unary("rgamma", sc.rgamma, positive),
    unary("gammasgn", sc.gammasgn, away0),
    unary("erf", sc.erf),
    unary("erfc", sc.erfc),
    unary("erfinv", sc.erfinv, uniform(-0.9, 0.9), tol=1e-5),
    unary("erfcinv", sc.erfcinv, uniform(0.1, 1.9), tol=1e-5),
    unary("ndtr", sc.ndtr),
    unary("ndtri", sc.ndtri, uniform(0.05, 0.95), tol=1e-5),
    unary("log_ndtr", sc.log_ndtr, lambda r, s: 4 * r.standard_normal(s)),
    unary("expi", sc.expi, away0),
    unary("exp1", sc.exp1, positive),
    unary("j0", sc.j0, uniform(0.5, 6.0)),
    unary("j1", sc.j1, uniform(0.5, 6.0)),
    unary("y0", sc.y0, uniform(0.5, 6.0)),
    unary("y1", sc.y1, uniform(0.5, 6.0)),
    unary("i0", sc.i0),
    unary("i1", sc.i1),
    unary("i0e", sc.i0e, away0),
    unary("i1e", sc.i1e, away0),
    Spec("polygamma", ((3, 4), (3, 4)), sc.polygamma, gens=(INT_ORDERS, positive), wrt=(1,),
         bcast=(((), (3, 4)), ((3, 1), (4,))), tol=1e-5),
    Spec("beta", ((3, 4), (3, 4)), sc.beta, gens=positive, bcast=BIN_BCAST),
    Spec("betaln", ((3, 4), (3, 4)), sc.betaln, gens=positive, bcast=BIN_BCAST),
    Spec("betainc", ((3, 4),) * 3, sc.betainc, gens=(positive, positive, uniform(0.1, 0.9)),
         wrt=(2,), bcast=(((), (4,), (3, 4)),), tol=1e-5),
    Spec("betainc", ((3, 4),) * 3, sc.betainc, gens=(positive, positive, uniform(0.1, 0.9)),
         no_grad=True, label="wrt-a-b"),
    param_x("gammainc", sc.gammainc, (positive, positive)),
    param_x("gammaincc", sc.gammaincc, (positive, positive)),
    Spec("gammainc", ((3, 4), (3, 4)), sc.gammainc, gens=positive, no_grad=True,
         label="wrt-a"),
    param_x("zeta", sc.zeta, (uniform(2.0, 4.0), positive)),
    param_x("stdtr", sc.stdtr, (uniform(1.0, 5.0), normal)),
    param_x("jv", sc.jv, (ORDERS, uniform(0.5, 6.0))),
    param_x("yv", sc.yv, (ORDERS, uniform(0.5, 6.0))),
    param_x("iv", sc.iv, (ORDERS, positive)),
    param_x("ive", sc.ive, (ORDERS, positive)),
    Spec("iv", UN * 2, sc.iv, gens=(ORDERS, positive), no_grad=True, label="wrt-v"),
    Spec("nograd", UN, lambda x: x, {"what": "a test"}, no_grad=True),
    Spec("yn", ((3, 4), (3, 4)), sc.yn, gens=(INT_ORDERS, uniform(0.5, 6.0)), wrt=(1,),
         bcast=(((), (3, 4)),), tol=1e-5),
]
