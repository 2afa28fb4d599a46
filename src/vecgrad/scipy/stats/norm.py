"""The normal distribution, as scipy.stats.norm (and jax.scipy.stats.norm)."""
from __future__ import annotations

from typing import Any

from ... import numpy as vnp
from .. import special as sp
from ._common import LOG_SQRT_2PI, exp_of, floats, nan_unless, scipy_rvs, standardize


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the normal density."""
    y, log_s, ok = standardize(x, loc, scale)
    return nan_unless(ok, -0.5 * y * y - LOG_SQRT_2PI - log_s)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The normal CDF."""
    y, _, ok = standardize(x, loc, scale)
    return nan_unless(ok, sp.ndtr(y))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log CDF, accurate in the left tail."""
    y, _, ok = standardize(x, loc, scale)
    return nan_unless(ok, sp.log_ndtr(y))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function 1 - CDF."""
    y, _, ok = standardize(x, loc, scale)
    return nan_unless(ok, sp.ndtr(-y))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log(1 - CDF), accurate in the right tail."""
    y, _, ok = standardize(x, loc, scale)
    return nan_unless(ok, sp.log_ndtr(-y))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function (inverse CDF)."""
    q, loc, scale = floats(q, loc, scale)
    return nan_unless(vnp.greater(scale, 0), loc + scale * sp.ndtri(q))


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse survival function."""
    q, loc, scale = floats(q, loc, scale)
    return nan_unless(vnp.greater(scale, 0), loc - scale * sp.ndtri(q))


pdf = exp_of(logpdf, "pdf")
rvs = scipy_rvs("norm")

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "rvs", "sf"]
