"""The beta distribution, as scipy.stats.beta. The CDFs have no gradient in a and b."""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import numpy as vnp
from .. import special as sp
from ._common import exp_of, floats, log_of, nan_unless, scipy_rvs, standardize


def _parts(x: Any, a: Any, b: Any, loc: Any, scale: Any) -> tuple:
    y, log_s, ok = standardize(x, loc, scale)
    a, b = floats(a, b)
    ok = vnp.logical_and(ok, vnp.logical_and(vnp.greater(a, 0), vnp.greater(b, 0)))
    return y, log_s, ok, a, b


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the beta density (-inf outside [loc, loc + scale])."""
    y, log_s, ok, a, b = _parts(x, a, b, loc, scale)
    inside = vnp.logical_and(vnp.greater_equal(y, 0), vnp.less_equal(y, 1))
    yc = vnp.where(inside, y, 0.5)
    val = sp.xlogy(a - 1, yc) + sp.xlog1py(b - 1, -yc) - sp.betaln(a, b) - log_s
    return nan_unless(ok, vnp.where(inside, val, -np.inf))


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The beta CDF, the regularized incomplete beta function (gradient in x, loc, scale)."""
    y, _, ok, a, b = _parts(x, a, b, loc, scale)
    return nan_unless(ok, sp.betainc(a, b, vnp.clip(y, 0.0, 1.0)))


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """1 - CDF, computed as I_{1-y}(b, a) (no cancellation)."""
    y, _, ok, a, b = _parts(x, a, b, loc, scale)
    return nan_unless(ok, sp.betainc(b, a, vnp.clip(1.0 - y, 0.0, 1.0)))


pdf = exp_of(logpdf, "pdf")
logcdf = log_of(cdf, "logcdf")
logsf = log_of(sf, "logsf")
rvs = scipy_rvs("beta")

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "rvs", "sf"]
