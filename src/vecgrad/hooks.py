"""Upward references, inverted: what a lower layer calls in a higher one, named here and filled
in by the higher layer when it is imported (importing any part of vecgrad imports them all,
through the package's `__init__`), so that imports point down only (tests/test_layers.py).

- Tracing sits below the primitives (their VJP rules are traced) and below `vecgrad.numpy`
  (written with tracers), yet a tracer applies a few of them itself: `x[i]` is a getitem, a
  write through a view is a setitem of its base, `x += v` casts back, a traced index is a
  gather (`PRIMITIVES`, `NUMPY`).
- The loop primitive's VJP differentiates its step with the AD driver (`AUTODIFF`).
- The odeint primitive compiles the user's right-hand side with `vg.jit`, and its adjoint
  system calls `vg.vjp` (`API`) and vecgrad.numpy (`NUMPY`).
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

    __slots__ = ("broadcast_to", "cast", "einsum", "getitem", "imag", "real", "reshape",
                 "setitem", "setitem_add", "strided", "transpose")


class Numpy(Filled):
    """The `vecgrad.numpy` functions called below it: by a tracer (NumPy's dispatch
    protocols, an array from a list, the cast of an in-place result, a masked write, a
    read, write or accumulation at a traced index) and by odeint's VJP (filled in by `vecgrad.numpy`)."""

    __slots__ = ("accumulate_at_read", "asarray", "astype", "c_", "concatenate", "dispatch_function",
                 "dispatch_ufunc", "poly1d", "r_", "ravel", "require", "reshape", "series", "stack", "sum",
                 "traced_getitem", "traced_row",
                 "vectorized_call",
                 "where", "write_at_index_array", "write_at_traced", "write_basic_first",
                 "write_masked", "wrote_at_read", "zeros")


class Autodiff(Filled):
    """The AD driver's `vjp_graph` (filled in by `vecgrad.autodiff`)."""

    __slots__ = ("vjp_graph",)


class Api(Filled):
    """`vg.jit` and `vg.vjp` (filled in by `vecgrad.api`)."""

    __slots__ = ("jit", "vjp")


PRIMITIVES = Primitives()
NUMPY = Numpy()
AUTODIFF = Autodiff()
API = Api()
