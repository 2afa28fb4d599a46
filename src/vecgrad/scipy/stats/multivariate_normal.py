"""The multivariate normal distribution, as scipy.stats.multivariate_normal.

`cov` may be a matrix, a vector (its diagonal) or a scalar. The density is computed through
the Cholesky factor of cov, read from its lower triangle (scipy.stats reads the same one), so
the gradient with respect to cov is zero on the strict upper triangle; symmetrize cov yourself
for the gradient of a symmetric parametrization. With `allow_singular=True` the pseudo-inverse
and pseudo-determinant come from eigh, as in SciPy (no gradient with respect to cov then:
the density is not differentiable where its rank could change).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import numpy as vnp
from ... import primitives as P
from ...numpy import linalg as la
from ._common import LOG_2PI, floats, scipy_rvs


def _params(x: Any, mean: Any, cov: Any) -> tuple:
    mean, cov = (None if mean is None else floats(mean)[0]), floats(cov)[0]
    dim = vnp.shape(mean)[0] if mean is not None and vnp.shape(mean) else \
        (vnp.shape(cov)[0] if vnp.shape(cov) else 1)
    if mean is None:
        mean = np.zeros(dim)
    elif not vnp.shape(mean):
        mean = vnp.broadcast_to(mean, (dim,))
    if len(vnp.shape(cov)) == 0:
        cov = cov * np.eye(dim)
    elif len(vnp.shape(cov)) == 1:
        cov = vnp.reshape(cov, (dim, 1)) * np.eye(dim)
    if vnp.shape(cov) != (dim, dim):
        raise ValueError(f"Array 'cov' must be of shape ({dim}, {dim}), got {vnp.shape(cov)}")
    x, = floats(x)
    if len(vnp.shape(x)) == 0:
        x = vnp.reshape(x, (1,))
    elif len(vnp.shape(x)) == 1 and dim == 1:
        x = vnp.reshape(x, (-1, 1))
    return x, mean, cov, dim


def _squeeze(out: Any) -> Any:
    """SciPy squeezes unit axes from the result (one point gives a scalar)."""
    return vnp.squeeze(out) if 1 in vnp.shape(out) else out


def logpdf(x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False) -> Any:
    """Log of the multivariate normal density at the points x (..., d)."""
    x, mean, cov, dim = _params(x, mean, cov)
    dev = x - mean
    lead = vnp.shape(dev)[:-1]
    flat = vnp.reshape(dev, (-1, dim))
    if allow_singular:
        return _squeeze(vnp.reshape(_singular_logpdf(flat, cov, dim), lead))
    low = la.cholesky(cov)
    z = P.triangular_solve(low, vnp.transpose(flat), lower=True, trans=False,
                           unit_diagonal=False)
    half_logdet = vnp.sum(vnp.log(la.diagonal(low)))
    out = -0.5 * vnp.sum(z * z, axis=0) - half_logdet - 0.5 * dim * LOG_2PI
    return _squeeze(vnp.reshape(out, lead))


def _singular_logpdf(dev: Any, cov: Any, dim: int) -> Any:
    cov = P.nograd(cov, what="scipy.stats.multivariate_normal with allow_singular=True with "
                   "respect to cov")
    s, u = la.eigh(cov)
    eps = 1e6 * np.finfo(np.float64).eps * vnp.max(vnp.abs(vnp.stop_gradient(s)))
    big = vnp.greater(s, eps)
    s_pinv = vnp.where(big, 1.0 / vnp.where(big, s, 1.0), 0.0)
    log_pdet = vnp.sum(vnp.where(big, vnp.log(vnp.where(big, s, 1.0)), 0.0))
    rank = vnp.sum(vnp.astype(big, np.float64))
    proj = dev @ u
    maha = vnp.sum(proj * proj * s_pinv, axis=-1)
    residual = vnp.sqrt(vnp.sum(vnp.where(big, 0.0, proj) ** 2, axis=-1))
    out = -0.5 * (rank * LOG_2PI + log_pdet + maha)
    return vnp.where(vnp.less(residual, 1e3 * eps), out, -np.inf)


def pdf(x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False) -> Any:
    """The multivariate normal density."""
    return vnp.exp(logpdf(x, mean, cov, allow_singular))


def entropy(mean: Any = None, cov: Any = 1) -> Any:
    """The differential entropy, 0.5 log det(2 pi e cov)."""
    _, _, cov, dim = _params(np.zeros(1), mean, cov)
    return 0.5 * dim * (1 + LOG_2PI) + vnp.sum(vnp.log(la.diagonal(la.cholesky(cov))))

rvs = scipy_rvs("multivariate_normal")

__all__ = ["entropy", "logpdf", "pdf", "rvs"]
