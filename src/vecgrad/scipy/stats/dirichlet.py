"""The Dirichlet distribution, as scipy.stats.dirichlet: x holds the components on its first
axis (K of them, or K - 1 with the last taken as 1 - sum). Off the simplex the log density is
-inf (SciPy raises there; traced values cannot be checked while tracing)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import numpy as vnp
from .. import special as sp
from ._common import exp_of, floats, scipy_rvs

_SIMPLEX_TOL = 1e-9  # SciPy's tolerance on the sum of the components


def logpdf(x: Any, alpha: Any) -> Any:
    """Log of the Dirichlet density with concentrations alpha (K,)."""
    x, alpha = floats(x, alpha)
    k = vnp.shape(alpha)[0]
    if vnp.shape(x)[0] == k - 1:
        x = vnp.concatenate([x, 1 - vnp.sum(x, axis=0, keepdims=True)], axis=0)
    if vnp.shape(x)[0] != k:
        raise ValueError(f"the first axis of x (length {vnp.shape(x)[0]}) must have as many "
                         f"components as alpha ({k}), or one fewer")
    a = vnp.reshape(alpha, (k,) + (1,) * (len(vnp.shape(x)) - 1))
    on = vnp.logical_and(vnp.less_equal(vnp.abs(vnp.sum(x, axis=0) - 1), _SIMPLEX_TOL),
                         vnp.greater_equal(vnp.min(x, axis=0), 0))
    val = vnp.sum(sp.xlogy(a - 1, x), axis=0) + sp.gammaln(vnp.sum(alpha)) \
        - vnp.sum(sp.gammaln(alpha))
    return vnp.where(on, val, -np.inf)


pdf = exp_of(logpdf, "pdf")
rvs = scipy_rvs("dirichlet")

__all__ = ["logpdf", "pdf", "rvs"]
