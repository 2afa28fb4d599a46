"""The gamma distribution, as scipy.stats.gamma. The CDFs have no gradient in a."""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import numpy as vnp
from .. import special as sp
from ._common import exp_of, floats, log_of, nan_unless, scipy_rvs, standardize


def _parts(x: Any, a: Any, loc: Any, scale: Any) -> tuple:
    y, log_s, ok = standardize(x, loc, scale)
    a, = floats(a)
    return y, log_s, vnp.logical_and(ok, vnp.greater(a, 0)), a


def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the gamma density with shape a (-inf below loc)."""
    y, log_s, ok, a = _parts(x, a, loc, scale)
    inside = vnp.greater_equal(y, 0)
    yc = vnp.where(inside, y, 1.0)
    val = sp.xlogy(a - 1, yc) - yc - sp.gammaln(a) - log_s
    return nan_unless(ok, vnp.where(inside, val, -np.inf))


def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The gamma CDF, the regularized lower incomplete gamma function."""
    y, _, ok, a = _parts(x, a, loc, scale)
    return nan_unless(ok, sp.gammainc(a, vnp.maximum(y, 0.0)))


def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """1 - CDF, the regularized upper incomplete gamma function."""
    y, _, ok, a = _parts(x, a, loc, scale)
    return nan_unless(ok, sp.gammaincc(a, vnp.maximum(y, 0.0)))


pdf = exp_of(logpdf, "pdf")
logcdf = log_of(cdf, "logcdf")
logsf = log_of(sf, "logsf")
rvs = scipy_rvs("gamma")

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "rvs", "sf"]
