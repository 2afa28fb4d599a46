"""In-place arithmetic on traced arrays (`x += v`, `t += v` on a NumPy scalar, `x[i] += v`).

NumPy's `x += v` writes into `x`'s memory: a `Tracer` rebinds its handle to the new value
(see tracing.py) and a view passes the write on to its base. Two idioms become one
accumulation that batching recognizes: `x[idx] += v` through a view (one setitem_add into
the base) and `t = x[idx]; t += v; x[idx] = t` on an element (see `_scalar_update`). The
result is cast back to `x`'s dtype with NumPy's casting='same_kind' check.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .builder import entry
from .errors import user_src
from .hooks import NUMPY
from .hooks import PRIMITIVES as P
from .tracing import Tracer, _read_only, to_atom


def inplace(self: Tracer, other: Any, fn: Callable) -> Tracer:
    """`self op= other` (`fn` computes `self op other`): rebinds this handle, and writes
    through a view into its base; `x[i] += v` at a traced int is one np.add.at."""
    if self._readonly:
        raise _read_only(self)
    if (fn is _add or fn is _sub) and "_traced_reads" in self._b.scratch:
        acc = NUMPY.accumulate_at_read(self, other, fn is _sub)
        if acc is not None:  # x[i] += v at a traced int i: np.add.at(x, i, v)
            return acc
    if self._is_scalar():
        return _scalar_update(self, other, fn)
    _check_same_kind(self, other, fn)
    if self._view is not None and self._view[1] is P.getitem and fn is _add:
        base, _, params = self._view  # x[i] += v: one accumulation into the base
        base._write(params["idx"], other, P.setitem_add)
        self._wrote = base.atom
        return self
    new = fn(self, other)
    if new.shape != self.shape:
        from .errors import ShapeError
        raise ShapeError(f"in-place operation would change shape {self.shape} to {new.shape}")
    new = NUMPY.astype(new, self.dtype)
    self._replace(new.atom)
    return self


def _check_same_kind(self: Tracer, other: Any, fn: Callable) -> None:
    """NumPy casts an in-place result back with casting='same_kind' (`int_buf += 0.5`
    raises): so does vecgrad, rather than truncate silently."""
    try:  # (NumPy's own errors, e.g. bool subtract, come from the operation itself)
        dt = to_atom(other, [self.dtype], self._b).aval.dtype
        with np.errstate(all="ignore"):
            res = fn(np.ones((1, 1), self.dtype), np.ones((1, 1), dt)).dtype
    except (TypeError, ValueError):
        return
    if not np.can_cast(res, self.dtype, "same_kind"):
        from .errors import CastingError
        raise CastingError(_INPLACE_NAMES.get(fn, "operation"), res, self.dtype,
                           user_src(3))


def _scalar_update(self: Tracer, other: Any, fn: Callable) -> Tracer:
    """`t += v` on a NumPy scalar is `t = t + v`: a new object. When `t` was read as
    `x[idx]` (so `x[idx] += v` is what the user wrote), the sum is computed as
    `setitem_add(x, v)[idx]` and a write of it back into `x[idx]` is that setitem_add:
    an accumulation that batching recognizes. The element is derived only when read."""
    o = self._origin
    if fn is not _add or o is None or o[0]._readonly:
        return fn(self, other)
    v = to_atom(other, [self.dtype])
    dt = v.aval.dtype
    if v.aval.shape or dt != self.dtype and np.result_type(self.dtype, dt) != self.dtype:
        return fn(self, other)  # (t + v would have another dtype than x: not the idiom)
    base, idx, version, read_from = o
    new = self._b.emit(P.setitem_add, [version, v], {"idx": idx})
    t = Tracer(self._b, self._atom, (Tracer(self._b, new), P.getitem, {"idx": idx}))
    t._base_seen = None  # derived on first read
    t._origin = (base, idx, new, read_from)
    return t


def _iadd(self: Tracer, o: Any) -> Tracer:
    return inplace(self, o, _add)


def _isub(self: Tracer, o: Any) -> Tracer:
    return inplace(self, o, _sub)


def _imul(self: Tracer, o: Any) -> Tracer:
    return inplace(self, o, _mul)


def _itruediv(self: Tracer, o: Any) -> Tracer:
    return inplace(self, o, _div)


def _add(a: Any, b: Any) -> Any:
    return a + b


def _sub(a: Any, b: Any) -> Any:
    return a - b


def _mul(a: Any, b: Any) -> Any:
    return a * b


def _div(a: Any, b: Any) -> Any:
    return a / b


_INPLACE_NAMES = {_add: "add", _sub: "subtract", _mul: "multiply", _div: "divide"}


def install() -> None:
    """Set the in-place operators on `Tracer` (run by primitives/operators.install, which
    sets the other operators' in-place forms through `Tracer._inplace`)."""
    Tracer._inplace = inplace
    Tracer.__iadd__, Tracer.__isub__ = entry(_iadd), entry(_isub)
    Tracer.__imul__, Tracer.__itruediv__ = entry(_imul), entry(_itruediv)
