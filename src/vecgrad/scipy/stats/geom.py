"""The geometric distribution on k = 1, 2, ..., as scipy.stats.geom (gradients in p)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import numpy as vnp
from .. import special as sp
from ._common import exp_of, floats, nan_unless, scipy_rvs


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """log P(K = k) = (k - 1) log(1 - p) + log p for integers k >= 1."""
    k, p, loc = floats(k, p, loc)
    k = k - loc
    ok = vnp.logical_and(vnp.greater_equal(k, 1), vnp.equal(k, np.floor(k)))
    kc = vnp.where(ok, k, 1.0)
    val = sp.xlog1py(kc - 1, -p) + vnp.log(p)
    valid = vnp.logical_and(vnp.greater(p, 0), vnp.less_equal(p, 1))
    return nan_unless(valid, vnp.where(ok, val, -np.inf))


def cdf(k: Any, p: Any, loc: Any = 0) -> Any:
    """P(K <= k) = 1 - (1 - p)^floor(k)."""
    k, p, loc = floats(k, p, loc)
    k = np.floor(k - loc)
    val = -vnp.expm1(vnp.maximum(k, 0.0) * vnp.log1p(-p))
    return vnp.where(vnp.less(k, 1), 0.0, val)


pmf = exp_of(logpmf, "pmf")
rvs = scipy_rvs("geom")

__all__ = ["cdf", "logpmf", "pmf", "rvs"]
