"""The logistic distribution, as scipy.stats.logistic."""
from __future__ import annotations

from typing import Any

from ... import numpy as vnp
from .. import special as sp
from ._common import exp_of, nan_unless, scipy_rvs, standardize


def _softplus(x: Any) -> Any:  # log(1 + exp(x)), stable
    return vnp.maximum(x, 0.0) + vnp.log1p(vnp.exp(-vnp.abs(x)))


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density -y - 2 log(1 + exp(-y)) - log(scale)."""
    y, log_s, ok = standardize(x, loc, scale)
    return nan_unless(ok, -y - 2 * _softplus(-y) - log_s)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The logistic sigmoid of y."""
    y, _, ok = standardize(x, loc, scale)
    return nan_unless(ok, sp.expit(y))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function 1 - cdf(x), as expit(-y) (no cancellation in the tail)."""
    y, _, ok = standardize(x, loc, scale)
    return nan_unless(ok, sp.expit(-y))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log CDF = -log(1 + exp(-y))."""
    y, _, ok = standardize(x, loc, scale)
    return nan_unless(ok, -_softplus(-y))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log(1 - CDF) = -log(1 + exp(y))."""
    y, _, ok = standardize(x, loc, scale)
    return nan_unless(ok, -_softplus(y))


pdf = exp_of(logpdf, "pdf")
rvs = scipy_rvs("logistic")

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "rvs", "sf"]
