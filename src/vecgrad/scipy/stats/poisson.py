"""The Poisson distribution, as scipy.stats.poisson (gradients in mu)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import numpy as vnp
from .. import special as sp
from ._common import exp_of, floats, nan_unless, scipy_rvs


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """log P(K = k): -inf where k - loc is not a non-negative integer."""
    k, mu, loc = floats(k, mu, loc)
    k = k - loc
    ok = vnp.logical_and(vnp.greater_equal(k, 0), vnp.equal(k, np.floor(k)))
    kc = vnp.where(ok, k, 0.0)
    val = sp.xlogy(kc, mu) - sp.gammaln(kc + 1) - mu
    return nan_unless(vnp.greater_equal(mu, 0), vnp.where(ok, val, -np.inf))


def cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """P(K <= k), the regularized upper incomplete gamma Q(floor(k) + 1, mu)."""
    k, mu, loc = floats(k, mu, loc)
    k = np.floor(k - loc)
    val = sp.gammaincc(vnp.maximum(k, 0.0) + 1, mu)
    return nan_unless(vnp.greater_equal(mu, 0), vnp.where(vnp.less(k, 0), 0.0, val))


pmf = exp_of(logpmf, "pmf")
rvs = scipy_rvs("poisson")

__all__ = ["cdf", "logpmf", "pmf", "rvs"]
