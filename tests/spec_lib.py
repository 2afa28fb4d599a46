"""The primitive spec library: input domains, the `Spec` record and helpers to write specs.

Specs live in `tests/specs_*.py`, one module per area (each defines `SPECS`); the test module
`test_primitives.py` collects them all into the one spec list that generates the impl,
gradient, broadcasting, batching and per-backend tests.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vecgrad import primitives as P


def normal(r: np.random.Generator, s: tuple) -> np.ndarray:
    return r.standard_normal(s)


def cnormal(r: np.random.Generator, s: tuple) -> np.ndarray:
    """Complex numbers with normal real and imaginary parts."""
    return r.standard_normal(s) + 1j * r.standard_normal(s)


def positive(r: np.random.Generator, s: tuple) -> np.ndarray:
    return r.uniform(0.5, 2.0, s)


def away0(r: np.random.Generator, s: tuple) -> np.ndarray:
    return r.choice([-1.0, 1.0], s) * r.uniform(0.5, 2.0, s)


def above_m1(r: np.random.Generator, s: tuple) -> np.ndarray:
    return r.uniform(-0.5, 2.0, s)


def boolean(r: np.random.Generator, s: tuple) -> np.ndarray:
    return r.random(s) > 0.5


def small_ints(r: np.random.Generator, s: tuple) -> np.ndarray:
    """Floats with many ties (for eq/ne and friends)."""
    return r.integers(0, 3, s).astype(np.float64)


def with_zeros(nz: int) -> Callable:
    """Normal values with `nz` zeros in every row of the last axis (prod's hard case)."""
    def gen(r: np.random.Generator, s: tuple) -> np.ndarray:
        x = away0(r, s)
        x[..., :nz] = 0.0
        return x
    return gen


# ------------------------------------------------------------------------------ the spec

@dataclass(frozen=True)
class Spec:
    name: str                      # the primitive's REGISTRY name
    shapes: tuple                  # one shape per input
    ref: Callable                  # NumPy reference: ref(*inputs) (params already bound)
    params: Any = field(default_factory=dict)  # dict, or shapes -> dict
    gens: Any = normal             # one domain for all inputs, or a tuple of them
    wrt: tuple | None = None       # differentiable inputs; None: all float inputs
    bcast: tuple = ()              # more shape tuples (broadcasting variants)
    tol: float = 1e-6              # rtol of the finite-difference check
    eps: float = 1e-6
    impl_tol: float = 1e-12        # rtol/atol of the impl against the reference
    batchable: bool = True         # False: the batching rule must refuse (NotBatchable)
    no_grad: bool = False          # True: asking a gradient raises NoGradientError
    phase: bool = False            # outputs hold vectors defined up to a phase: gradients are
    #                                checked through phase-invariant functions (test_linalg)
    gauge: bool = False            # results are vectors defined up to sign (eigh, svd, qr):
                                   # other backends may flip them (compared up to those signs)
    label: str = ""

    @property
    def prim(self) -> P.Primitive:
        return P.REGISTRY[self.name]

    def params_for(self, shapes: tuple) -> dict:
        return self.params(shapes) if callable(self.params) else self.params

    def make(self, r: np.random.Generator, shapes: tuple) -> list[np.ndarray]:
        gens = self.gens if isinstance(self.gens, tuple) else (self.gens,) * len(shapes)
        return [np.asarray(g(r, s)) for g, s in zip(gens, shapes)]

    def diff_inputs(self, args: list[np.ndarray]) -> tuple[int, ...]:
        if self.wrt is not None:
            return self.wrt
        if self.prim.vjp is None:
            return ()
        return tuple(i for i, a in enumerate(args) if a.dtype.kind in "fc")

    def variants(self) -> list[tuple]:
        return [self.shapes, *self.bcast]


def idx(key: Any) -> Callable[[tuple], dict]:
    """getitem/setitem params for a NumPy key, normalized against input 0's shape."""
    return lambda shapes: {"idx": P.normalize_index(key, shapes[0])}


def _set_ref(key: Any) -> Callable:
    def ref(x: np.ndarray, v: np.ndarray) -> np.ndarray:
        out = x.copy()
        out[key] = v
        return out
    return ref


def _add_ref(key: Any) -> Callable:
    def ref(x: np.ndarray, v: np.ndarray) -> np.ndarray:
        out = x.copy()
        np.add.at(out, key, v)
        return out
    return ref


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


BIN_BCAST = (((3, 4), (4,)), ((3, 1), (1, 4)), ((), (3, 4)), ((2, 1, 4), (3, 1)))
UN = ((3, 4),)
AX = lambda axes: {"axes": axes}
MASK = np.array([[True, False, True, False], [False, False, True, True], [True] * 4])


def unary(name: str, ref: Callable, gen: Callable = normal, **kw: Any) -> Spec:
    return Spec(name, UN, ref, gens=gen, bcast=(((),), ((2, 1, 3),)), **kw)


def binary(name: str, ref: Callable, gens: Any = normal, **kw: Any) -> Spec:
    return Spec(name, ((3, 4), (3, 4)), ref, gens=gens, bcast=BIN_BCAST, **kw)
