"""The Laplace distribution, as scipy.stats.laplace."""
from __future__ import annotations

import math
from typing import Any

from ... import numpy as vnp
from ._common import exp_of, log_of, nan_unless, scipy_rvs, standardize


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density -|y| - log(2 scale)."""
    y, log_s, ok = standardize(x, loc, scale)
    return nan_unless(ok, -vnp.abs(y) - math.log(2) - log_s)


def _cdf(y: Any) -> Any:
    return vnp.where(vnp.less(y, 0), 0.5 * vnp.exp(vnp.minimum(y, 0.0)),
                     1 - 0.5 * vnp.exp(-vnp.maximum(y, 0.0)))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The CDF: exp(y) / 2 below loc, 1 - exp(-y) / 2 above (y = (x - loc) / scale)."""
    y, _, ok = standardize(x, loc, scale)
    return nan_unless(ok, _cdf(y))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function 1 - cdf(x), as the CDF at -y (no cancellation in the tail)."""
    y, _, ok = standardize(x, loc, scale)
    return nan_unless(ok, _cdf(-y))


pdf = exp_of(logpdf, "pdf")
logcdf = log_of(cdf, "logcdf")
logsf = log_of(sf, "logsf")
rvs = scipy_rvs("laplace")

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "rvs", "sf"]
