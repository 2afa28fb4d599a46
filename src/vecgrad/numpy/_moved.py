"""`X[:, m]`, `X[i, m]`, `X[..., m]`: a traced boolean mask past x's leading axis (an
Ellipsis is first written as the full slices it stands for).

NumPy's result has the selected entries in the mask's place: axes (the leading ones, the
selection, the trailing ones). vecgrad keeps it as the selection of x with the mask's axes
moved first (numpy/_selected.py's layout), and renumbers the axes a reduction names: a
reduction over the selection (`X[:, m].sum(axis=1)`, `np.mean(X[:, m])`) is NumPy's where=
reduction; one that keeps the selection is a selection again where its axes come first in
NumPy's order too (all leading axes reduced). Entrywise work with scalars or values along
the trailing axes keeps the layout; anything else that depends on the selection's length
or on pairing by position raises a TraceError at the line.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as _np
from numpy.lib.array_utils import normalize_axis_index

from ..errors import user_src
from ..tracing import Tracer
from . import _ops
from ._base import astype
from ._selected import Selected, SelectedValues, _data_dependent


class MovedSelected(Selected):
    """The values of x[(:,) * lead + (mask,)] (read-only), held as the selection of x with
    the mask's axes moved first: `vals` is mask.shape + lead shape + trailing shape."""

    __slots__ = ("lead",)

    def __init__(self, mask: Tracer, vals: Tracer, src: Any, lead: int):
        super().__init__(mask, vals, src)
        self.lead = lead

    def _entrywise(self, fn: Any, *operands: Any) -> Selected:
        out = Selected._entrywise(self, fn, *operands)
        return MovedSelected(self.mask, out.vals, self.src, self.lead)

    def _operand(self, o: Any) -> Any:
        """An operand in the held layout: values along the trailing axes as they are; along
        the leading ones with length 1 in the selection's place, that axis moved first."""
        nd, lead, k = self.ndim, self.lead, self.mask.ndim
        if isinstance(o, SelectedValues):
            raise _data_dependent(self.src)  # (NumPy pairs them by position)
        if isinstance(o, (list, tuple)):
            o = _ops.NAMESPACES["numpy"].asarray(o)
        shape = _np.shape(o)
        if len(shape) <= nd - 1 - lead:
            return o
        shape = (1,) * (nd - len(shape)) + shape
        if len(shape) > nd or shape[lead] != 1:
            raise _data_dependent(self.src)
        return _ops.reshape(o, (1,) * k + shape[:lead] + shape[lead + 1:])

    def _reduce(self, name: str, axis: Any = None, dtype: Any = None, out: Any = None,
                keepdims: bool = False, **kw: Any) -> Any:
        nd, lead = self.ndim, self.lead
        axes = range(nd) if axis is None else axis if isinstance(axis, tuple) else (axis,)
        axes = {normalize_axis_index(operator.index(a), nd) for a in axes}
        if lead not in axes and (keepdims or not set(range(lead)) <= axes):
            raise _data_dependent(self.src)  # (the selection would sit after kept axes)
        inner = tuple(sorted(a + 1 if a < lead else 0 if a == lead else a for a in axes))
        plain = Selected(self.mask, self.vals, self.src)
        res = plain._reduce(name, inner, dtype, out, **kw)
        if keepdims:  # (NumPy's order: the kept leading axes, then the trailing ones)
            shape = [1 if a in axes else n for a, n in enumerate(self._numpy_shape())]
            res = _ops.reshape(res, tuple(shape))
        return res

    def _numpy_shape(self) -> list:
        """NumPy's shape of the selection but for the selection's own (unknown) length."""
        s = _np.shape(self.vals)[self.mask.ndim:]
        return [*s[:self.lead], None, *s[self.lead:]]

    def __getitem__(self, key: Any) -> Selected:
        raise _data_dependent(self.src)

    def __matmul__(self, other: Any) -> Selected:
        raise _data_dependent(self.src)

    __rmatmul__ = __matmul__

    def write_into(self, target: Tracer, mask: Any) -> bool:  # (x[m] = x[:, m]: NumPy
        raise _data_dependent(self.src)  # pairs them by position)


def select_moved(x: Tracer, key: Any, filled: Any) -> MovedSelected | None:
    """x[key] for a key of ints and full slices, then one traced boolean mask over the next
    axes, then full slices (or an Ellipsis): the ints read first (x[1, m] is x[1][m]), a
    MovedSelected past the leading slices; None for any other key."""
    if type(key) is not tuple:
        return None
    at = [j for j, k in enumerate(key) if isinstance(k, Tracer)]
    if len(at) != 1 or key[at[0]].dtype != bool or not key[at[0]].ndim:
        return None
    j, mask = at[0], key[at[0]]
    head, tail = key[:j], key[j + 1:]
    if not all(type(k) is int or _full(k) for k in head) or \
            not all(_full(k) or k is Ellipsis for k in tail) or sum(k is Ellipsis for k in tail) > 1:
        return None
    if any(type(k) is int for k in head):
        x = x[tuple(k if type(k) is int else slice(None) for k in head)]
        head = tuple(k for k in head if type(k) is not int)
    lead, k = len(head), mask.ndim
    if x.shape[lead:lead + k] != mask.shape:
        return None
    if not lead:
        return None  # (x[i, m]: x[i][m], numpy/_masked.py's selection)
    perm = (*range(lead, lead + k), *range(lead), *range(lead + k, x.ndim))
    moved = _ops.transpose(x, perm)
    return MovedSelected(mask, filled(mask, moved), user_src(2), lead)


def write_moved(x: Tracer, key: Any, value: Any) -> bool:
    """x[:, m] = v (full slices, the mask, full slices): where(m, v, x), v a scalar or
    values along the trailing axes, values along the leading ones with length 1 in the
    mask's place, or x[:, m] worked on entrywise (`x[:, m] *= 2`: a copy, as NumPy's);
    False for any other key."""
    if type(key) is not tuple:
        return False
    at = [j for j, k in enumerate(key) if isinstance(k, Tracer)]
    if len(at) != 1 or not all(_full(k) for j, k in enumerate(key) if j != at[0]):
        return False
    lead, mask = at[0], key[at[0]]
    k = mask.ndim
    if mask.dtype != bool or not k or not lead or x.shape[lead:lead + k] != mask.shape:
        return False
    trail = x.ndim - lead - k
    m = _ops.reshape(mask, (1,) * lead + mask.shape + (1,) * trail)
    if isinstance(value, MovedSelected):
        if value.mask.atom is not mask.atom or value.lead != lead or \
                _np.shape(value.vals)[k:] != x.shape[:lead] + x.shape[lead + k:]:
            raise _data_dependent(value.src)
        value = _ops.transpose(value.vals, (*range(k, k + lead), *range(k), *range(k + lead,
                                                                                  x.ndim)))
    elif isinstance(value, SelectedValues):
        raise _data_dependent(value.src)
    elif _np.ndim(value) > trail and not (k == 1 and _np.ndim(value) == x.ndim and
                                          _np.shape(value)[lead] == 1):
        return False
    try:
        _np.broadcast_shapes(_np.shape(value), x.shape)
    except ValueError:
        return False
    x._replace(astype(_ops.where(m, value, x), x.dtype).atom)
    return True


def expand_ellipsis(key: Any, ndim: int) -> Any:
    """A key holding one traced boolean mask and an Ellipsis (`X[..., m]`, `X[m, ...]`) with
    the Ellipsis written as the full slices it stands for (a mask covers its own ndim axes);
    any other key as it is."""
    if type(key) is not tuple or sum(k is Ellipsis for k in key) != 1 or any(
            k is None for k in key):
        return key
    masks = [k for k in key if isinstance(k, Tracer) and k.dtype == bool]
    if len(masks) != 1 or any(isinstance(k, Tracer) and k is not masks[0] for k in key):
        return key
    used = sum(k.ndim if k is masks[0] else 1 for k in key if k is not Ellipsis)
    if used > ndim:
        return key  # (NumPy's IndexError, from the ordinary path)
    j = next(i for i, k in enumerate(key) if k is Ellipsis)
    return (*key[:j], *(slice(None),) * (ndim - used), *key[j + 1:])


def _full(k: Any) -> bool:
    return type(k) is slice and k == slice(None)


__all__ = ["MovedSelected", "expand_ellipsis", "select_moved", "write_moved"]
