"""The chi-squared distribution, as scipy.stats.chi2: gamma with shape df/2 and scale 2.
The CDFs have no gradient in df."""
from __future__ import annotations

from typing import Any

from . import gamma
from ._common import floats, scipy_rvs


def _via_gamma(name: str) -> Any:
    fn = getattr(gamma, name)

    def f(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
        df, scale = floats(df, scale)
        return fn(x, df / 2, loc, 2 * scale)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"The chi-squared {name} with `df` degrees of freedom (gamma.{name})."
    return f


logpdf, pdf, cdf, logcdf, sf, logsf = (_via_gamma(n) for n in
                                       ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"))
rvs = scipy_rvs("chi2")

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "rvs", "sf"]
