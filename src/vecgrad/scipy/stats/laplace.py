"""The Laplace distribution, as scipy.stats.laplace."""
from __future__ import annotations

import math
from typing import Any

from ... import numpy as vnp
from ._common import nan_unless, standardize


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log density -|y| - log(2 scale)."""
    y, log_s, ok = standardize(x, loc, scale)
    return nan_unless(ok, -vnp.abs(y) - math.log(2) - log_s)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density."""
    return vnp.exp(logpdf(x, loc, scale))


def _cdf(y: Any) -> Any:
    return vnp.where(vnp.less(y, 0), 0.5 * vnp.exp(vnp.minimum(y, 0.0)),
                     1 - 0.5 * vnp.exp(-vnp.maximum(y, 0.0)))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The CDF."""
    y, _, ok = standardize(x, loc, scale)
    return nan_unless(ok, _cdf(y))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """1 - CDF."""
    y, _, ok = standardize(x, loc, scale)
    return nan_unless(ok, _cdf(-y))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log CDF."""
    return vnp.log(cdf(x, loc, scale))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log(1 - CDF)."""
    return vnp.log(sf(x, loc, scale))


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
