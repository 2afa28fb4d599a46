"""The Bernoulli distribution, as scipy.stats.bernoulli (gradients in p)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import numpy as vnp
from .. import special as sp
from ._common import exp_of, floats, nan_unless, scipy_rvs


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """log P(K = k) for k in {0, 1} (-inf elsewhere)."""
    k, p, loc = floats(k, p, loc)
    k = k - loc
    ok = vnp.logical_or(vnp.equal(k, 0), vnp.equal(k, 1))
    val = sp.xlogy(k, p) + sp.xlog1py(1 - k, -p)
    valid = vnp.logical_and(vnp.greater_equal(p, 0), vnp.less_equal(p, 1))
    return nan_unless(valid, vnp.where(ok, val, -np.inf))


def cdf(k: Any, p: Any, loc: Any = 0) -> Any:
    """P(K <= k)."""
    k, p, loc = floats(k, p, loc)
    k = k - loc
    return vnp.where(vnp.less(k, 0), 0.0, vnp.where(vnp.less(k, 1), 1 - p, 1.0))


pmf = exp_of(logpmf, "pmf")
rvs = scipy_rvs("bernoulli")

__all__ = ["cdf", "logpmf", "pmf", "rvs"]
