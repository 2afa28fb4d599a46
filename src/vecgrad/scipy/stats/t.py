"""Student's t distribution, as scipy.stats.t. The CDFs have no gradient in `df`."""
from __future__ import annotations

import math
from typing import Any

from ... import numpy as vnp
from .. import special as sp
from ._common import exp_of, floats, log_of, nan_unless, scipy_rvs, standardize


def _parts(x: Any, df: Any, loc: Any, scale: Any) -> tuple:
    y, log_s, ok = standardize(x, loc, scale)
    df, = floats(df)
    return y, log_s, vnp.logical_and(ok, vnp.greater(df, 0)), df


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the t density with `df` degrees of freedom."""
    y, log_s, ok, df = _parts(x, df, loc, scale)
    return nan_unless(ok, sp.gammaln((df + 1) / 2) - sp.gammaln(df / 2)
                      - 0.5 * vnp.log(df * math.pi) - log_s
                      - (df + 1) / 2 * vnp.log1p(y * y / df))


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The t CDF (gradient in x, loc and scale)."""
    y, _, ok, df = _parts(x, df, loc, scale)
    return nan_unless(ok, sp.stdtr(df, y))


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function 1 - CDF."""
    y, _, ok, df = _parts(x, df, loc, scale)
    return nan_unless(ok, sp.stdtr(df, -y))


pdf = exp_of(logpdf, "pdf")
logcdf = log_of(cdf, "logcdf")
logsf = log_of(sf, "logsf")
rvs = scipy_rvs("t")

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "rvs", "sf"]
