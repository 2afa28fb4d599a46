"""What the tracing layer applies from the layers above it, named here and filled in by them.

Tracing sits below the primitives (their VJP rules are traced) and below `vecgrad.numpy`
(written with tracers), yet a tracer applies a few of them itself: `x[i]` is a getitem, a
write through a view is a setitem of its base, `x += v` casts back, a traced index is a
gather. Rather than import upward, tracing reads them from these records, which
`vecgrad.primitives` and `vecgrad.numpy` fill in when they are imported (importing any part
of vecgrad imports both, through the package's `__init__`).
"""
from __future__ import annotations

from typing import Any


class Filled:
    """A record of names that a layer above fills in once (`fill`), all of them at a time."""

    __slots__ = ()

    def fill(self, **names: Any) -> None:
        """Set every name of the record (no more, no fewer: a misspelt one is an error)."""
        if set(names) != set(self.__slots__):
            raise TypeError(f"{type(self).__name__}.fill takes exactly {sorted(self.__slots__)}"
                            f", got {sorted(names)}")
        for k, v in names.items():
            setattr(self, k, v)

    def __getattr__(self, name: str) -> Any:  # (only for a name not filled in yet)
        raise AttributeError(f"{type(self).__name__}.{name} is not filled in: import vecgrad")


class Primitives(Filled):
    """The primitives tracing applies itself: indexing, writes, views and casts (filled in
    by `vecgrad.primitives`)."""

    __slots__ = ("broadcast_to", "cast", "getitem", "imag", "real", "reshape", "setitem",
                 "setitem_add", "transpose")


class Numpy(Filled):
    """The `vecgrad.numpy` functions a tracer calls: NumPy's dispatch protocols, building an
    array from a list, the casts of in-place results, a masked write and a traced index
    (filled in by `vecgrad.numpy`)."""

    __slots__ = ("asarray", "astype", "dispatch_function", "dispatch_ufunc", "reshape",
                 "traced_getitem", "where")


PRIMITIVES = Primitives()
NUMPY = Numpy()
