"""The values of `x[mask]` (a traced boolean mask): read by reductions and elementwise work.

`x[mask]` has a data-dependent length, so it cannot be a traced array; but what programs
mostly do with it has a static shape: `np.sum(x[m])`, `x[m].mean()`, `np.mean((p[m] -
t[m]) ** 2)`, `np.linalg.norm(r[m])`, `np.count_nonzero(x[m] > 0)`. Such values are kept on
the mask's full shape: `Selected(mask, vals)` holds, at each selected position, NumPy's value
there, and at the others the first selected entry's value (through stop_gradient). So an
elementwise function applied to them (np.log, np.sqrt, division) sees only values that NumPy
applies it to (no nan or inf at unselected positions that a gradient would multiply by 0),
and a reduction is NumPy's `where=` reduction over the mask: np.sum(x[m]) is np.sum(x,
where=m), np.mean of an empty selection nan as NumPy's. The selection's own axes are the mask's
(its axis 0) then x's trailing ones; a reduction that keeps axis 0 is a selection again.

np.max / np.min without `initial=` (NumPy raises ValueError on an empty selection) reduce with
the dtype's extreme as initial= under a mask checked when the compiled code runs
(P.nonempty): NumPy's ValueError naming the line where nothing is selected. Anything whose
shape or values depend on which entries were selected (its length, indexing it along axis 0,
sorting, returning it) raises a TraceError naming the line.
"""
from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as _np
from numpy.lib.array_utils import normalize_axis_index

from .. import primitives as P
from ..errors import TraceError, user_src
from ..tracing import Tracer
from . import _ops


def _data_dependent(made: Any = None, here: bool = True) -> TraceError:
    """The error for a use of x[mask] as an array: at the line using it (`here`: False when
    the use is outside the user's code, the traced function returned it), naming the line
    that `made` the selection when that is another one."""
    at = _at() if here else ""
    if made is not None and f" (at {made.file}:{made.line})" != at:
        at += f" (x[mask] at {made.file}:{made.line})"
    return TraceError(
        "x[mask] with a traced boolean mask has a data-dependent length, which vecgrad cannot "
        "trace; it can be reduced (np.sum, np.mean, np.var, np.std, np.prod, np.any, np.all, "
        "np.count_nonzero, np.linalg.norm, np.max, np.min), worked on entry by "
        "entry before that, updated in place (x[mask] *= c) or copied into an array of x's "
        "shape (y[mask] = x[mask] * 2). Select values with vnp.where(mask, a, b) or multiply "
        "the mask in instead" + at)


def _at() -> str:
    src = user_src(3)
    return f" (at {src.file}:{src.line})" if src else ""


def _vnp() -> Any:
    return _ops.NAMESPACES["numpy"]


def filled(mask: Tracer, value: Any) -> Tracer:
    """`value` (mask.shape + rest) with every unselected entry (row) replaced by the first
    selected one's, whose gradient is not taken (the where's cotangent there is 0)."""
    k, rest = mask.ndim, _np.shape(value)[mask.ndim:]
    if not k or mask.size == 0:  # (an empty mask selects nothing: no entry to fill from)
        return value
    vnp = _vnp()
    first = vnp.argmax(_ops.reshape(mask, (-1,)))
    rows = _ops.reshape(value, (-1, *rest))
    fill = vnp.take(rows, first, axis=0)
    if fill.dtype.kind in "fc":  # (bools and ints have no gradient to stop)
        fill = P.stop_gradient(fill)
    m = _ops.reshape(mask, mask.shape + (1,) * len(rest))
    return _ops.where(m, value, fill)


class SelectedValues:
    """What programs read of x[mask]: elementwise operations and reductions (see the module).
    Subclasses hold `mask` and `src` and give `_vals()` (mask.shape + rest, filled)."""

    __slots__ = ()

    def _vals(self) -> Tracer:
        raise NotImplementedError

    def _reduced(self) -> Tracer:
        """The values a reduction reads (with where=mask): the filled ones, or any values
        at the unselected entries where no entrywise function was applied yet."""
        return self._vals()

    @property
    def ndim(self) -> int:
        return 1 + _np.ndim(self._vals()) - self.mask.ndim

    @property
    def dtype(self) -> _np.dtype:
        return self._vals().dtype

    # ---------------------------------------------------------------- entry by entry
    def _operand(self, other: Any) -> Any:
        """`other` as an operand of the filled values: a selection by the same mask, or a
        value that broadcasts to one selected entry (a scalar, a row)."""
        if isinstance(other, SelectedValues):
            if other.mask.atom is not self.mask.atom or \
                    _np.shape(other._vals()) != _np.shape(self._vals()):
                raise _data_dependent(self.src)
            return other._vals()
        if isinstance(other, (list, tuple)):
            other = _vnp().asarray(other)
        if _np.ndim(other) > self.ndim - 1:  # (an array along axis 0 pairs by position)
            raise _data_dependent(self.src)
        return other

    def _entrywise(self, fn: Callable, *operands: Any) -> Selected:
        args = [self._vals() if o is self else self._operand(o) for o in operands]
        out = fn(*args)
        if _np.shape(out) != _np.shape(self._vals()):
            raise _data_dependent(self.src)
        return Selected(self.mask, out, self.src)

    def _binop(fn: Callable, reflected: bool = False) -> Callable:
        if reflected:
            return lambda self, o: self._entrywise(lambda a, b: fn(b, a), self, o)
        return lambda self, o: self._entrywise(fn, self, o)

    __add__, __radd__ = _binop(operator.add), _binop(operator.add, True)
    __sub__, __rsub__ = _binop(operator.sub), _binop(operator.sub, True)
    __mul__, __rmul__ = _binop(operator.mul), _binop(operator.mul, True)
    __truediv__, __rtruediv__ = _binop(operator.truediv), _binop(operator.truediv, True)
    __floordiv__, __rfloordiv__ = _binop(operator.floordiv), _binop(operator.floordiv, True)
    __mod__, __rmod__ = _binop(operator.mod), _binop(operator.mod, True)
    __pow__, __rpow__ = _binop(operator.pow), _binop(operator.pow, True)
    __and__, __rand__ = _binop(operator.and_), _binop(operator.and_, True)
    __or__, __ror__ = _binop(operator.or_), _binop(operator.or_, True)
    __xor__, __rxor__ = _binop(operator.xor), _binop(operator.xor, True)
    __lt__, __le__ = _binop(operator.lt), _binop(operator.le)
    __gt__, __ge__ = _binop(operator.gt), _binop(operator.ge)
    __eq__, __ne__ = _binop(operator.eq), _binop(operator.ne)  # type: ignore[assignment]
    del _binop

    def __neg__(self) -> Selected:
        return self._entrywise(operator.neg, self)

    def __pos__(self) -> Selected:
        return self._entrywise(operator.pos, self)

    def __abs__(self) -> Selected:
        return self._entrywise(operator.abs, self)

    def __invert__(self) -> Selected:
        return self._entrywise(operator.invert, self)

    def __matmul__(self, other: Any) -> Any:
        """A 1-D selection times one by the same mask: a masked sum of products; rows times
        a matrix or vector: a selection of the products."""
        if isinstance(other, SelectedValues):
            if self.ndim != 1 or other.ndim != 1:
                raise _data_dependent(self.src)
            return (self * other)._reduce("sum", None)
        if self.ndim != 2 or _np.ndim(other) not in (1, 2) or self.mask.ndim != 1:
            raise _data_dependent(self.src)
        return Selected(self.mask, _vnp().matmul(self._vals(), other), self.src)

    def __rmatmul__(self, other: Any) -> Any:
        if isinstance(other, SelectedValues):
            return other.__matmul__(self)
        raise _data_dependent(self.src)

    def astype(self, dtype: Any, *args: Any, **kwargs: Any) -> Selected:
        return self._entrywise(lambda v: v.astype(dtype, *args, **kwargs), self)

    def copy(self, *args: Any, **kwargs: Any) -> Selected:
        return self._entrywise(lambda v: v, self)

    def clip(self, a_min: Any = None, a_max: Any = None, **kwargs: Any) -> Selected:
        return self._entrywise(lambda v, lo, hi: _vnp().clip(v, lo, hi, **kwargs),
                               self, a_min, a_max)

    def round(self, decimals: int = 0) -> Selected:
        return self._entrywise(lambda v: _vnp().round(v, decimals), self)

    def __getitem__(self, key: Any) -> Selected:
        """x[m][:, j] (basic indices past axis 0); anything reading along axis 0 raises."""
        if type(key) is tuple and key and key[0] == slice(None) and all(
                type(k) in (int, slice) or k is Ellipsis or k is None for k in key[1:]) \
                and None not in key[1:]:
            full = (slice(None),) * self.mask.ndim + key[1:]
            return Selected(self.mask, self._vals()[full], self.src)
        raise _data_dependent(self.src)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if ufunc is _np.matmul and method == "__call__" and not kwargs:
            a, b = inputs
            return a.__matmul__(b) if isinstance(a, SelectedValues) else b.__rmatmul__(a)
        if method != "__call__" or ufunc.signature or "out" in kwargs or "where" in kwargs:
            raise _data_dependent(self.src)
        if ufunc.nout == 1:
            return self._entrywise(lambda *a: ufunc(*a, **kwargs), *inputs)
        return tuple(self._entrywise(lambda *a, j=j: ufunc(*a, **kwargs)[j], *inputs)
                     for j in range(ufunc.nout))

    # ---------------------------------------------------------------- reductions
    def _axes(self, axis: Any) -> tuple[tuple[int, ...], bool]:
        """The filled values' axes of a reduction over the selection's `axis`, and whether
        the selection's axis 0 (the mask's axes) is among them."""
        nd, k = self.ndim, self.mask.ndim
        sel = range(nd) if axis is None else axis if isinstance(axis, tuple) else (axis,)
        sel = sorted({normalize_axis_index(operator.index(a), nd)
                      for a in sel})
        axes = tuple(j for a in sel for j in (range(k) if a == 0 else (a - 1 + k,)))
        return axes, 0 in sel

    def _reduce(self, name: str, axis: Any = None, dtype: Any = None, out: Any = None,
                keepdims: bool = False, **kw: Any) -> Any:
        if out is not None:
            raise _data_dependent(self.src)
        vnp = _vnp()
        axes, over_mask = self._axes(axis)
        vals = self._reduced() if over_mask else self._vals()
        if dtype is not None:
            kw["dtype"] = dtype
        if not over_mask:  # (along a selected entry's own axes: a selection again)
            return Selected(self.mask, getattr(vnp, name)(vals, axis=axes, keepdims=keepdims,
                                                          **kw), self.src)
        mask = self.mask
        if name in ("max", "min") and "initial" not in kw:
            mask, kw["initial"] = self._checked(name, vals)
        m = _ops.reshape(mask, mask.shape + (1,) * (vals.ndim - mask.ndim))
        if name in ("count_nonzero", "any", "all"):  # (unselected: the reduction's identity)
            ident = _np.ones((), vals.dtype) if name == "all" else _np.zeros((), vals.dtype)
            res = getattr(vnp, name)(_ops.where(m, vals, ident), axis=axes)
        elif name == "norm":
            res = vnp.sqrt(vnp.sum((abs(vals) if vals.dtype.kind == "c" else vals) ** 2,
                                   axis=axes, where=m))
        else:
            res = getattr(vnp, name)(vals, axis=axes, where=m, **kw)
        if keepdims:
            kept = [a for a in range(self.ndim) if a not in self._selected_axes(axis)]
            shape = [1] * self.ndim
            for a, n in zip(kept, _np.shape(res)):
                shape[a] = n
            res = _ops.reshape(res, tuple(shape))
        return res

    def _checked(self, name: str, vals: Tracer) -> tuple[Tracer, Any]:
        """np.max / np.min of the selection without initial=: the mask, checked to select
        something where the compiled code runs (NumPy's ValueError at this line if not), and
        an initial value that every selected value replaces (the dtype's extreme)."""
        src = user_src(4)
        at = f" (np.{name} of x[mask] at {src.file}:{src.line})" if src else ""
        mask = P.nonempty(self.mask, axes=tuple(range(self.mask.ndim)), error="ValueError",
                          msg=f"zero-size array to reduction operation {_OPS[name]} which "
                          f"has no identity{at}")
        dt, lo = vals.dtype, name == "max"
        if dt.kind == "f":
            return mask, -_np.inf if lo else _np.inf
        if dt.kind in "iu":
            info = _np.iinfo(dt)
            return mask, info.min if lo else info.max
        if dt.kind == "b":
            return mask, not lo
        raise _data_dependent(self.src)  # (complex: NumPy's order, not where= reduced here)

    def _selected_axes(self, axis: Any) -> set:
        nd = self.ndim
        sel = range(nd) if axis is None else axis if isinstance(axis, tuple) else (axis,)
        return {normalize_axis_index(operator.index(a), nd) for a in sel}

    def _method(name: str) -> Callable:
        def method(self: SelectedValues, *args: Any, **kwargs: Any) -> Any:
            return self._reduce(name, *args, **kwargs)
        method.__name__ = name
        return method

    sum, mean, prod, var, std = _method("sum"), _method("mean"), _method("prod"), \
        _method("var"), _method("std")
    any, all, max, min = _method("any"), _method("all"), _method("max"), _method("min")
    del _method

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        name = func.__name__
        if not args or args[0] is not self:
            if name in ("dot", "vdot", "inner", "matmul") and len(args) == 2 \
                    and isinstance(args[1], SelectedValues):
                return args[1].__rmatmul__(args[0])
            raise _data_dependent(self.src)
        rest = args[1:]
        if name in REDUCTIONS:
            if name in ("var", "std", "nanvar", "nanstd") and len(rest) > 3:
                kwargs.setdefault("ddof", rest[3])
                rest = rest[:3]
            return self._reduce(REDUCTIONS[name], *rest, **kwargs)
        if name == "count_nonzero":
            return self._reduce("count_nonzero", *rest, **kwargs)
        if name == "norm" and func.__module__.endswith("linalg") and \
                (rest[:1] in ((), (None,)) and kwargs.get("ord") is None):
            return self._reduce("norm", *rest[1:2], **{k: v for k, v in kwargs.items()
                                                      if k != "ord"})
        if name == "average" and kwargs.get("weights") is None and len(rest) <= 1 \
                and not kwargs.get("returned"):
            return self._reduce("mean", *rest, **{k: v for k, v in kwargs.items()
                                                 if k not in ("weights", "returned")})
        if name in ("dot", "vdot", "inner", "matmul") and len(rest) == 1:
            return self.__matmul__(rest[0])
        if name in ENTRYWISE:
            fn = getattr(_vnp(), name)
            return self._entrywise(lambda v, *o: fn(v, *o, **kwargs), self, *rest)
        raise _data_dependent(self.src)

    def __array__(self, *a: Any, **k: Any) -> Any:
        raise _data_dependent(self.src)

    def __len__(self) -> int:
        raise _data_dependent(self.src)

    def __setitem__(self, key: Any, value: Any) -> None:  # (x[m][-2:] = v: by position)
        raise _data_dependent(self.src)

    def __iter__(self) -> Any:
        raise _data_dependent(self.src)

    def __bool__(self) -> bool:
        raise _data_dependent(self.src)

    def not_an_array(self) -> TraceError:
        """The error for using the selection as an array (tracing asks for it)."""
        return _data_dependent(self.src, here=False)

    def __hash__(self) -> int:  # (returned from a traced function: its outputs are hashed)
        raise _data_dependent(self.src, here=False)

    def __getattr__(self, name: str) -> Any:
        raise _data_dependent(self.src)


# NumPy's reductions of a selection -> vecgrad.numpy's (with where=mask)
REDUCTIONS = {n: n for n in ("sum", "mean", "prod", "var", "std", "any", "all", "max", "min",
                             "nansum", "nanmean", "nanprod", "nanvar", "nanstd")}
REDUCTIONS.update(amax="max", amin="min")
_OPS = {"max": "maximum", "min": "minimum"}  # (NumPy's ufunc names in its error)
# NumPy functions that work entry by entry (the selection's other arguments broadcast)
ENTRYWISE = frozenset({"clip", "round", "around", "nan_to_num", "real", "imag", "conj",
                       "conjugate", "angle", "sinc", "i0", "heaviside", "copy", "fix",
                       "isclose", "isreal", "iscomplex", "where"})


class Selected(SelectedValues):
    """Values of x[mask] after entrywise work (`x[m] ** 2`, `p[m] - t[m]`): read-only."""

    __slots__ = ("mask", "src", "vals")

    def __init__(self, mask: Tracer, vals: Tracer, src: Any):
        self.mask, self.vals, self.src = mask, vals, src

    def _vals(self) -> Tracer:
        return self.vals

    def write_into(self, target: Tracer, mask: Any) -> bool:
        """`target[mask] = values` by the same mask, into an array of the filled values'
        shape: where(mask, values, target) (cast to target's dtype, as NumPy's write)."""
        if not isinstance(mask, Tracer) or mask.atom is not self.mask.atom \
                or target.shape != _np.shape(self.vals):
            raise _data_dependent(self.src)
        m = _ops.reshape(mask, mask.shape + (1,) * (target.ndim - mask.ndim))
        from ._base import astype
        target._replace(astype(_ops.where(m, self.vals, target), target.dtype).atom)
        return True


__all__ = ["REDUCTIONS", "Selected", "SelectedValues", "filled"]
