"""`np.poly1d` of traced coefficients (`p = np.poly1d(np.polyfit(t, y, 2)); r = y - p(t)`).

NumPy's poly1d drops the leading zero coefficients, so its length, order and coefficient
array depend on the values, which a trace does not know. What a program computes *with* the
polynomial does not: its values at points (Horner's scheme from the first nonzero
coefficient on, as NumPy's trimmed one computes them), its derivatives and antiderivatives,
sums, differences, products, powers and scalings are polynomials whose values agree with
NumPy's. Those work; the coefficients, order, length, roots and indexing raise a TraceError
naming the line. (While a function is traced, `np.poly1d(c)` of a traced `c` is this class:
pyarrays.)"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as _np

from ..errors import TraceError
from . import _ops
from ._base import _dtype, _shape, asarray
from ._polynomial import poly, polyadd, polyder, polyint, polymul

__all__ = ["poly1d"]


def _refused(what: str) -> TraceError:
    return TraceError(
        f"{what} of np.poly1d of traced coefficients depends on the values: NumPy drops the "
        "leading zero coefficients. Its values p(x), p.deriv(), p.integ() and arithmetic "
        "with it are traced; use the coefficient array itself (the one you made it from) "
        "where you need the coefficients")


class poly1d:
    """A polynomial of traced coefficients, highest degree first (see the module)."""

    __array_priority__ = 100  # (x * p with an ndarray x: p's __rmul__, as NumPy's)

    def __init__(self, c_or_r: Any, r: bool = False, variable: str | None = None):
        if isinstance(c_or_r, poly1d):
            c = c_or_r._c
            variable = variable or c_or_r.variable
        elif isinstance(c_or_r, _np.poly1d):
            c = c_or_r.coeffs
            variable = variable or c_or_r.variable
        else:
            c = poly(c_or_r) if r else c_or_r
        c = asarray(c)
        if len(_shape(c)) > 1:
            raise ValueError("Polynomial must be 1d only.")
        self._c = _ops.reshape(c, (1,)) if len(_shape(c)) == 0 else c
        if _shape(self._c)[0] == 0:
            self._c = _np.array([0.0])
        self.variable = variable or "x"

    def __call__(self, val: Any) -> Any:
        """NumPy's value: Horner's scheme from the first nonzero coefficient (the leading
        zeros that NumPy dropped would make 0 * inf a NaN)."""
        if isinstance(val, (poly1d, _np.poly1d)):
            raise _refused("composition p(q)")
        c, val = self._c, asarray(val) if isinstance(val, (list, tuple)) else val
        # (NumPy's y = zeros_like(x) takes the coefficients' dtype at its first step)
        y = _np.zeros(_shape(val), _np.result_type(_dtype(asarray(val)), _dtype(c)))
        started = None
        for k in range(_shape(c)[0]):
            nz = _ops.not_equal(c[k], 0)
            started = nz if started is None else _ops.logical_or(started, nz)
            y = _ops.where(started, _ops.add(_ops.multiply(y, val), c[k]), y)
        return y

    def deriv(self, m: int = 1) -> poly1d:
        return poly1d(polyder(self._c, m), variable=self.variable)

    def integ(self, m: int = 1, k: Any = 0) -> poly1d:
        return poly1d(polyint(self._c, m, k), variable=self.variable)

    @staticmethod
    def _of(other: Any) -> Any:
        return other._c if isinstance(other, poly1d) else poly1d(other)._c

    def __add__(self, other: Any) -> poly1d:
        return poly1d(polyadd(self._c, self._of(other)))

    __radd__ = __add__

    def __sub__(self, other: Any) -> poly1d:
        return poly1d(polyadd(self._c, _ops.negative(self._of(other))))

    def __rsub__(self, other: Any) -> poly1d:
        return poly1d(polyadd(self._of(other), _ops.negative(self._c)))

    def __mul__(self, other: Any) -> poly1d:
        if not isinstance(other, (poly1d, _np.poly1d)) and _np.ndim(other) == 0:
            return poly1d(_ops.multiply(self._c, other))
        return poly1d(polymul(self._c, self._of(other)))

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> poly1d:
        if not isinstance(other, (poly1d, _np.poly1d)) and _np.ndim(other) == 0:
            return poly1d(_ops.true_divide(self._c, other))
        raise _refused("polynomial division")

    def __neg__(self) -> poly1d:
        return poly1d(_ops.negative(self._c))

    def __pos__(self) -> poly1d:
        return self

    def __pow__(self, n: Any) -> poly1d:
        if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 0:
            raise ValueError("Power to non-negative integers only.")
        out = poly1d(_np.array([1.0]))
        for _ in range(int(n)):
            out = poly1d(polymul(out._c, self._c))
        return out

    def _length(self, what: str) -> Any:
        raise _refused(what)

    coeffs = c = coef = coefficients = property(lambda self: self._length("p.coeffs"))
    order = o = property(lambda self: self._length("p.order"))
    roots = r = property(lambda self: self._length("p.roots"))

    def __len__(self) -> int:
        return self._length("len(p)")

    def __getitem__(self, k: Any) -> Any:
        return self._length("p[k]")

    def __iter__(self) -> Any:
        return self._length("iterating over p")

    def __array__(self, *a: Any, **k: Any) -> Any:
        return self._length("np.asarray(p)")

    def __eq__(self, other: object) -> Any:
        return self._length("p == q")

    __ne__ = __eq__
    __hash__ = None  # type: ignore[assignment]
