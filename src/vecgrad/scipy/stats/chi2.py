"""The chi-squared distribution, as scipy.stats.chi2: gamma with shape df/2 and scale 2."""
from __future__ import annotations

from typing import Any

from . import gamma
from ._common import floats


def _ga(df: Any, scale: Any) -> tuple:
    df, scale = floats(df, scale)
    return df / 2, 2 * scale


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """Log of the chi-squared density with `df` degrees of freedom."""
    a, s = _ga(df, scale)
    return gamma.logpdf(x, a, loc, s)


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The chi-squared density."""
    a, s = _ga(df, scale)
    return gamma.pdf(x, a, loc, s)


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The chi-squared CDF (no gradient in df)."""
    a, s = _ga(df, scale)
    return gamma.cdf(x, a, loc, s)


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log CDF."""
    a, s = _ga(df, scale)
    return gamma.logcdf(x, a, loc, s)


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """1 - CDF."""
    a, s = _ga(df, scale)
    return gamma.sf(x, a, loc, s)


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log(1 - CDF)."""
    a, s = _ga(df, scale)
    return gamma.logsf(x, a, loc, s)


__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]
