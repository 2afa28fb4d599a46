"""`vecgrad.scipy.special`: scipy.special for traced code, with gradients (as jax.scipy.special).

Functions with a derivative rule of their own are primitives (vecgrad.primitives.special);
the others are compositions (logit, xlogy, entr, logsumexp with `b=`, multigammaln, ...).
SciPy's ufuncs called on traced arrays (`scipy.special.gammaln(x)`) dispatch here.
"""
from __future__ import annotations

import math
import sys
from typing import Any

import numpy as _np

from .. import numpy as vnp
from .. import primitives as P
from ..errors import unsupported

__all__ = [
    "beta", "betainc", "betaln", "digamma", "entr", "erf", "erfc", "erfcinv", "erfinv",
    "exp1", "expi", "expit", "factorial", "gamma", "gammainc", "gammaincc", "gammaln",
    "gammasgn", "i0", "i0e", "i1", "i1e", "iv", "ive", "j0", "j1", "jn", "jv", "kl_div",
    "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri",
    "polygamma", "psi", "rel_entr", "rgamma", "softmax", "stdtr", "xlog1py", "xlogy", "y0",
    "y1", "yn", "yv", "zeta",
]


def _fn(prim: P.Primitive, doc: str) -> Any:
    def f(*xs: Any) -> Any:
        return prim(*[vnp.asarray(x) if isinstance(x, (list, tuple)) else x for x in xs])
    f.__name__ = prim.name
    f.__doc__ = doc
    return f


gammaln = _fn(P.gammaln, "log|gamma(x)|; gradient digamma(x).")
digamma = psi = _fn(P.digamma, "The digamma function psi(x) = d/dx log gamma(x).")
polygamma = _fn(P.polygamma, "polygamma(n, x): the n-th derivative of digamma (n integer).")
gamma = _fn(P.gamma, "The gamma function.")
rgamma = _fn(P.rgamma, "1 / gamma(x).")
gammasgn = _fn(P.gammasgn, "The sign of gamma(x) (zero gradient).")
gammainc = _fn(P.gammainc, "Regularized lower incomplete gamma P(a, x); gradient in x only.")
gammaincc = _fn(P.gammaincc, "Regularized upper incomplete gamma Q(a, x); gradient in x only.")
beta = _fn(P.beta, "The beta function B(a, b).")
betaln = _fn(P.betaln, "log|B(a, b)|.")
betainc = _fn(P.betainc, "Regularized incomplete beta I_x(a, b); gradient in x only.")
zeta = _fn(P.zeta, "Hurwitz zeta(x, q); gradient in q only.")
erf = _fn(P.erf, "The error function.")
erfc = _fn(P.erfc, "1 - erf(x), accurate for large x.")
erfinv = _fn(P.erfinv, "The inverse of erf.")
erfcinv = _fn(P.erfcinv, "The inverse of erfc.")
ndtr = _fn(P.ndtr, "The standard normal CDF.")
ndtri = _fn(P.ndtri, "The inverse of the standard normal CDF.")
log_ndtr = _fn(P.log_ndtr, "log of the standard normal CDF, accurate in the far left tail.")
stdtr = _fn(P.stdtr, "Student's t CDF stdtr(df, t); gradient in t only.")
expi = _fn(P.expi, "The exponential integral Ei(x).")
exp1 = _fn(P.exp1, "The exponential integral E1(x).")
j0 = _fn(P.j0, "Bessel function of the first kind, order 0.")
j1 = _fn(P.j1, "Bessel function of the first kind, order 1.")
y0 = _fn(P.y0, "Bessel function of the second kind, order 0.")
y1 = _fn(P.y1, "Bessel function of the second kind, order 1.")
jv = jn = _fn(P.jv, "Bessel function of the first kind of real order v; gradient in x only.")
yv = _fn(P.yv, "Bessel function of the second kind of real order v; gradient in x only.")
yn = _fn(P.yn, "Bessel function of the second kind of integer order n.")
i0 = _fn(P.i0, "Modified Bessel function of order 0.")
i1 = _fn(P.i1, "Modified Bessel function of order 1.")
iv = _fn(P.iv, "Modified Bessel function of real order v; gradient in x only.")
i0e = _fn(P.i0e, "i0(x) * exp(-|x|).")
i1e = _fn(P.i1e, "i1(x) * exp(-|x|).")
ive = _fn(P.ive, "iv(v, x) * exp(-|x|); gradient in x only.")
expit = _fn(P.logistic, "The logistic sigmoid 1 / (1 + exp(-x)).")


def logit(x: Any) -> Any:
    """log(x / (1 - x))."""
    return vnp.log(x) - vnp.log1p(-vnp.asarray(x))


def _xlog(x: Any, y: Any, log_fn: Any, shift: float) -> Any:
    x, y = vnp.asarray(x), vnp.asarray(y)
    # 0 where x == 0 and the log is -inf or undefined (SciPy's rule; NaN in y propagates);
    # elsewhere x * log(y), whose gradient in x at x == 0 is log(y)
    bad = vnp.logical_and(vnp.equal(x, 0), vnp.less_equal(y, -shift))
    return vnp.where(bad, 0.0, x * log_fn(vnp.where(bad, 1.0 - shift, y)))


def xlogy(x: Any, y: Any) -> Any:
    """x * log(y), and 0 where x == 0 (gradient in y there: 0)."""
    return _xlog(x, y, vnp.log, 0.0)


def xlog1py(x: Any, y: Any) -> Any:
    """x * log1p(y), and 0 where x == 0."""
    return _xlog(x, y, vnp.log1p, 1.0)


def entr(x: Any) -> Any:
    """-x log x for x > 0, 0 at 0, -inf for x < 0."""
    x = vnp.asarray(x)
    return vnp.where(vnp.less(x, 0), -_np.inf, -xlogy(x, x))


def rel_entr(x: Any, y: Any) -> Any:
    """x log(x / y) for x, y > 0; 0 where x == 0 and y >= 0; inf otherwise."""
    x, y = vnp.asarray(x), vnp.asarray(y)
    ok = vnp.logical_and(vnp.greater(x, 0), vnp.greater(y, 0))
    zero = vnp.logical_and(vnp.equal(x, 0), vnp.greater_equal(y, 0))
    sx, sy = vnp.where(ok, x, 1.0), vnp.where(ok, y, 1.0)
    return vnp.where(ok, sx * (vnp.log(sx) - vnp.log(sy)), vnp.where(zero, 0.0, _np.inf))


def kl_div(x: Any, y: Any) -> Any:
    """x log(x / y) - x + y for x, y > 0; y where x == 0 and y >= 0; inf otherwise."""
    x, y = vnp.asarray(x), vnp.asarray(y)
    return rel_entr(x, y) - x + y


def multigammaln(a: Any, d: int) -> Any:
    """The log of the multivariate gamma function of dimension d."""
    if not isinstance(d, (int, _np.integer)) or d < 1:
        raise ValueError("d should be a positive integer (dimension)")
    d = int(d)
    a = vnp.asarray(a)
    terms = vnp.sum(gammaln(vnp.expand_dims(a, -1) - _np.arange(d) / 2.0), axis=-1)
    return terms + d * (d - 1) / 4.0 * math.log(math.pi)


def factorial(n: Any, exact: bool = False) -> Any:
    """gamma(n + 1) for n >= 0 and 0 for n < 0 (exact=True needs concrete integers)."""
    if exact:
        raise unsupported("scipy.special.factorial with exact=True")
    n = vnp.asarray(n)
    return vnp.where(vnp.less(n, 0), 0.0, gamma(vnp.where(vnp.less(n, 0), 0.0, n) + 1.0))


def _axes(axis: Any, nd: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(nd))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        if not -nd <= a < nd:
            raise _np.exceptions.AxisError(a, nd)
        out.append(a % nd)
    return tuple(sorted(set(out)))


def _keep(r: Any, shape: tuple, axes: tuple[int, ...]) -> Any:
    return vnp.reshape(r, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False) -> Any:
    """log(sum(b * exp(a))) over `axis` (an int, a tuple, or all axes), without overflow.
    With `return_sign`, returns (log|s|, sign(s)); otherwise a negative sum gives nan."""
    a = vnp.asarray(a)
    if _np.dtype(a.dtype).kind in "biu":
        a = vnp.astype(a, _np.float64)
    shape = vnp.shape(a)
    axes = _axes(axis, len(shape))
    if b is None and not return_sign:
        if not axes:
            return a
        rest = [i for i in range(len(shape)) if i not in axes]
        x = vnp.transpose(a, rest + list(axes)) if rest + list(axes) != list(range(len(shape))) \
            else a
        x = vnp.reshape(x, tuple(shape[i] for i in rest) + (-1,))
        r = P.logsumexp(x, axis=len(rest))
        return _keep(r, shape, axes) if keepdims else r
    if b is not None:
        a, b = vnp.asarray(a), vnp.asarray(b)
        shape = _np.broadcast_shapes(shape, vnp.shape(b))
        a, b = vnp.broadcast_to(a, shape), vnp.broadcast_to(b, shape)
        axes = _axes(axis, len(shape))
    m = vnp.max(vnp.stop_gradient(a), axis=axes, keepdims=True)
    m = vnp.where(vnp.logical_and(vnp.greater(m, -_np.inf), vnp.less(m, _np.inf)), m, 0.0)
    e = vnp.exp(a - m)
    s = vnp.sum(e if b is None else b * e, axis=axes, keepdims=True)
    if return_sign:
        sgn = vnp.sign(s)
        r = vnp.log(vnp.abs(s)) + m
    else:
        r = vnp.log(s) + m
    if not keepdims:
        squeeze = tuple(d for i, d in enumerate(shape) if i not in axes)
        r = vnp.reshape(r, squeeze)
        if return_sign:
            sgn = vnp.reshape(sgn, squeeze)
    return (r, sgn) if return_sign else r


def softmax(x: Any, axis: Any = None) -> Any:
    """exp(x) / sum(exp(x)) over `axis` (all axes when None), as scipy.special.softmax."""
    x = vnp.asarray(x)
    return vnp.exp(x - logsumexp(x, axis=axis, keepdims=True))


def log_softmax(x: Any, axis: Any = None) -> Any:
    """x - logsumexp(x) over `axis` (all axes when None)."""
    x = vnp.asarray(x)
    return x - logsumexp(x, axis=axis, keepdims=True)


# ------------------------------------------------------------------------- dispatching

_UFUNCS: dict[int, Any] = {}


def dispatch_ufunc(ufunc: Any, method: str, inputs: tuple, kwargs: dict) -> Any:
    """Route a scipy.special ufunc called on traced arrays here; None if it is not one."""
    sc = sys.modules.get("scipy.special")
    if sc is None:
        return None
    if not _UFUNCS:
        mod = sys.modules[__name__]
        _UFUNCS.update({id(getattr(sc, n)): getattr(mod, n) for n in __all__
                        if isinstance(getattr(sc, n, None), _np.ufunc)})
    fn = _UFUNCS.get(id(ufunc))
    if fn is None:
        return None
    if method != "__call__" or kwargs:
        raise unsupported(f"scipy.special.{ufunc.__name__}"
                          + (f".{method}" if method != "__call__" else f" with {sorted(kwargs)}"))
    return fn(*inputs)
