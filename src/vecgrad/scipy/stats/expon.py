"""The exponential distribution, as scipy.stats.expon."""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import numpy as vnp
from ._common import exp_of, log_of, nan_unless, scipy_rvs, standardize


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density (-inf below loc)."""
    y, log_s, ok = standardize(x, loc, scale)
    return nan_unless(ok, vnp.where(vnp.greater_equal(y, 0), -y - log_s, -np.inf))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """1 - exp(-y) for y >= 0."""
    y, _, ok = standardize(x, loc, scale)
    return nan_unless(ok, -vnp.expm1(-vnp.maximum(y, 0.0)))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """exp(-y) for y >= 0, 1 below."""
    y, _, ok = standardize(x, loc, scale)
    return nan_unless(ok, vnp.exp(-vnp.maximum(y, 0.0)))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log(1 - CDF) = -y."""
    y, _, ok = standardize(x, loc, scale)
    return nan_unless(ok, -vnp.maximum(y, 0.0))


pdf = exp_of(logpdf, "pdf")
logcdf = log_of(cdf, "logcdf")
rvs = scipy_rvs("expon")

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "rvs", "sf"]
