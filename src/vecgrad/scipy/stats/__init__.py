"""`vecgrad.scipy.stats`: log densities, densities and CDFs of scipy.stats distributions for
traced code, with gradients (as jax.scipy.stats). Each distribution is a module:
`from vecgrad.scipy.stats import norm; norm.logpdf(x, loc, scale)`."""
from __future__ import annotations

from . import (
    bernoulli,
    beta,
    chi2,
    dirichlet,
    expon,
    gamma,
    geom,
    laplace,
    logistic,
    multivariate_normal,
    norm,
    poisson,
    t,
    uniform,
)

__all__ = ["bernoulli", "beta", "chi2", "dirichlet", "expon", "gamma", "geom", "laplace",
           "logistic", "multivariate_normal", "norm", "poisson", "t", "uniform"]
