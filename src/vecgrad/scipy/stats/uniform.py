"""The uniform distribution on [loc, loc + scale], as scipy.stats.uniform."""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import numpy as vnp
from ._common import exp_of, nan_unless, scipy_rvs, standardize


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """-log(scale) inside, -inf outside."""
    y, log_s, ok = standardize(x, loc, scale)
    inside = vnp.logical_and(vnp.greater_equal(y, 0), vnp.less_equal(y, 1))
    return nan_unless(ok, vnp.where(inside, -log_s, -np.inf))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """y clipped to [0, 1]."""
    y, _, ok = standardize(x, loc, scale)
    return nan_unless(ok, vnp.clip(y, 0.0, 1.0))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function 1 - cdf(x): 1 - y clipped to [0, 1]."""
    y, _, ok = standardize(x, loc, scale)
    return nan_unless(ok, vnp.clip(1.0 - y, 0.0, 1.0))


pdf = exp_of(logpdf, "pdf")
rvs = scipy_rvs("uniform")

__all__ = ["cdf", "logpdf", "pdf", "rvs", "sf"]
