"""Python's operators on traced arrays that are one primitive each: `x + y` binds `add`
directly (the hottest path of tracing). Tracing sits below the primitives, so they are set
on its `Tracer` here (`install`, run by this package's `__init__`); the operators that are
`vecgrad.numpy` functions (`**`, `@`, unary `-`, `+`, `abs`) are set by numpy/_ndarray.py."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import inplace
from ..builder import entry
from ..ir import Primitive
from ..tracing import Tracer, bind
from .elementwise import add, div, eq, ge, gt, le, lt, mul, ne, sub
from .ufuncs import (
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    floor_divide,
    invert,
    left_shift,
    remainder,
    right_shift,
)


def _prim_op(prim: Primitive, swap: bool = False) -> Callable:
    """An operator that binds its primitive directly."""
    if swap:
        return entry(lambda self, other: bind(prim, other, self))
    return entry(lambda self, other: bind(prim, self, other))


def _equality(prim: Primitive, other_kind: bool) -> Callable:
    """`==` / `!=`; against None or a string NumPy compares elementwise as objects of another
    kind: all False (`!=`: all True), a constant of the array's shape (a scalar if 0-d)."""
    def op(self: Tracer, other: object) -> object:
        if other is None or isinstance(other, (str, bytes)):
            shape = self._atom.aval.shape
            return np.full(shape, other_kind) if shape else np.bool_(other_kind)
        return bind(prim, self, other)
    return entry(op)


def install() -> None:
    """Set the operators on `Tracer`."""
    inplace.install()
    for n, p in [("add", add), ("sub", sub), ("mul", mul), ("truediv", div)]:
        setattr(Tracer, f"__{n}__", _prim_op(p))
        setattr(Tracer, f"__r{n}__", _prim_op(p, swap=True))
    for n, p in [("lt", lt), ("le", le), ("gt", gt), ("ge", ge)]:
        setattr(Tracer, f"__{n}__", _prim_op(p))
    Tracer.__eq__, Tracer.__ne__ = _equality(eq, False), _equality(ne, True)
    for n, p in [("floordiv", floor_divide), ("mod", remainder), ("and", bitwise_and),
                 ("or", bitwise_or), ("xor", bitwise_xor), ("lshift", left_shift),
                 ("rshift", right_shift)]:
        setattr(Tracer, f"__{n}__", _prim_op(p))
        setattr(Tracer, f"__r{n}__", _prim_op(p, swap=True))
        setattr(Tracer, f"__i{n}__", entry(lambda self, o, p=p: self._inplace(o, p)))
    Tracer.__invert__ = entry(lambda self: bind(invert, self))
    Tracer.__divmod__ = entry(lambda self, o: (bind(floor_divide, self, o),
                                               bind(remainder, self, o)))
    Tracer.__rdivmod__ = entry(lambda self, o: (bind(floor_divide, o, self),
                                                bind(remainder, o, self)))
