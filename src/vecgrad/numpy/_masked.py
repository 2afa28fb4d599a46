"""`x[mask]` for a traced boolean mask: a selection whose length depends on the data.

It cannot be a traced array (shapes are static), yet NumPy programs use it in two forms whose
result has x's own shape: an in-place update of the selected entries, `x[x < 0] *= 0.1`
(Python runs `t = x[m]; t *= 0.1; x[m] = t`), and a copy between arrays of one shape,
`y[m] = x[m]`. A `MaskedSelection` keeps the array it selects from and applies those as
`where(m, f(x), x)`: exactly NumPy's values, since f works entry by entry. Any other use
(reading its values, its length, arithmetic that makes a new array) raises.
"""
from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, Self

import numpy as _np

from ..errors import CastingError, TraceError, user_src
from ..tracing import Tracer
from . import _ops
from ._base import _dtype, astype


def _data_dependent(made: Any = None, here: bool = True) -> TraceError:
    """The error for a use of x[mask] as an array: at the line using it (`here`: False when
    the use is outside the user's code, the traced function returned it), naming the line
    that `made` the selection when that is another one."""
    at = _at() if here else ""
    if made is not None and f" (at {made.file}:{made.line})" != at:
        at += f" (x[mask] at {made.file}:{made.line})"
    return TraceError(
        "x[mask] with a traced boolean mask has a data-dependent length, which vecgrad cannot "
        "trace; it can only be updated in place (x[mask] *= c, x[mask] += y[mask]) or copied "
        "into an array of x's shape (y[mask] = x[mask]). Select values with vnp.where(mask, "
        "a, b) or multiply the mask in instead" + at)


def _at() -> str:
    src = user_src(3)
    return f" (at {src.file}:{src.line})" if src else ""


class MaskedSelection:
    """The entries of `base` where `mask` (over its leading axes) is true, as `value` (an
    array of base's shape whose selected entries are the selection's current values)."""

    __slots__ = ("base", "mask", "src", "value", "version")

    def __init__(self, base: Tracer, mask: Tracer):
        self.base, self.mask, self.version, self.value = base, mask, base.atom, base
        self.src = user_src(3)  # (the line of `x[mask]`)

    def _update(self, other: Any, fn: Callable, name: str) -> Self:
        if isinstance(other, MaskedSelection):
            if other.mask.atom is not self.mask.atom or other.value.shape != self.value.shape:
                raise _data_dependent(self.src)
            other = other.value
        elif _np.ndim(other) != 0:  # (an array must match the data-dependent count)
            raise _data_dependent(self.src)
        new = fn(self.value, other)
        if not _np.can_cast(_dtype(new), self.base.dtype, "same_kind"):
            raise CastingError(name, _dtype(new), self.base.dtype, user_src(3))
        self.value = astype(new, self.base.dtype)
        return self

    def __iadd__(self, o: Any) -> Self:
        return self._update(o, _ops.add, "add")

    def __isub__(self, o: Any) -> Self:
        return self._update(o, _ops.subtract, "subtract")

    def __imul__(self, o: Any) -> Self:
        return self._update(o, _ops.multiply, "multiply")

    def __itruediv__(self, o: Any) -> Self:
        return self._update(o, _ops.divide, "divide")

    def __ipow__(self, o: Any) -> Self:
        return self._update(o, operator.pow, "power")

    def write_into(self, target: Tracer, mask: Any) -> bool:
        """`target[mask] = self`: where(mask, value, target), if the masks are one and the
        shapes agree (else raise: NumPy would pair entries by position)."""
        if not isinstance(mask, Tracer) or mask.atom is not self.mask.atom \
                or target.shape != self.value.shape:
            raise _data_dependent(self.src)
        if self.base.atom is not self.version:
            raise TraceError("x[mask] was read, then x was written, then the selection was "
                             "written back: vecgrad keeps x[mask] as a view of x. Use "
                             "vnp.where(mask, ...) instead" + _at())
        m = _ops.reshape(self.mask, self.mask.shape + (1,) * (target.ndim - self.mask.ndim))
        new = astype(_ops.where(m, self.value, target), target.dtype)
        target._replace(new.atom)
        return True

    def not_an_array(self) -> TraceError:
        """The error for using the selection as an array (tracing asks for it)."""
        return _data_dependent(self.src, here=False)

    def __getattr__(self, name: str) -> Any:
        raise _data_dependent(self.src)

    def __array__(self, *a: Any, **k: Any) -> Any:
        raise _data_dependent(self.src)

    def __len__(self) -> int:
        raise _data_dependent(self.src)

    def __iter__(self) -> Any:
        raise _data_dependent(self.src)

    def __bool__(self) -> bool:
        raise _data_dependent(self.src)

    def _binary(self, *a: Any) -> Any:
        raise _data_dependent(self.src)

    def __hash__(self) -> int:  # (returned from a traced function: its outputs are hashed)
        raise _data_dependent(self.src, here=False)

    __getitem__ = __setitem__ = __float__ = __int__ = __index__ = __abs__ = _binary
    __eq__ = __ne__ = __and__ = __or__ = __invert__ = __floordiv__ = __mod__ = _binary

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _binary
    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __matmul__ = __neg__ = _binary
    __lt__ = __le__ = __gt__ = __ge__ = _binary
    __array_ufunc__ = __array_function__ = _binary


def select(x: Tracer, key: Any) -> MaskedSelection | None:
    """`x[key]` as a MaskedSelection where key is one traced boolean mask over x's leading
    axes (None otherwise)."""
    if type(key) is tuple and len(key) == 1:
        key = key[0]
    if isinstance(key, Tracer) and key.dtype == bool and key.ndim \
            and x.shape[:key.ndim] == key.shape:
        return MaskedSelection(x, key)
    return None


def write_masked(x: Tracer, mask: Any, value: Any) -> bool:
    """`x[mask] = v` for a traced boolean mask over x's leading axes and a v that broadcasts
    to one selected entry (a scalar, or a row): `where(mask, v, x)`, exactly NumPy's result.
    False if the write is not of that form (tracing's write at a traced key asks here
    first)."""
    write_into = getattr(type(value), "write_into", None)  # (MaskedSelection)
    if write_into is not None:  # y[mask] = x[mask], or x[mask] *= c written back
        return write_into(value, x, mask)
    if not (isinstance(mask, Tracer) and mask.dtype == bool and mask.ndim
            and x.shape[:mask.ndim] == mask.shape):
        return False
    rest = x.shape[mask.ndim:]
    try:
        ok = _np.broadcast_shapes(_np.shape(value), rest) == rest
    except ValueError:
        ok = False
    if not ok:
        return False
    m = _ops.reshape(mask, mask.shape + (1,) * len(rest))
    new = astype(_ops.where(m, value, x), x.dtype)
    x._replace(new.atom)
    return True
