"""Arrays whose dtype NumPy picks by their values, traced as values whose every use is checked.

`np.linalg.eig` / `eigvals` of a real matrix return real arrays where every eigenvalue is
real and complex ones otherwise (numpy.linalg: `if all(w.imag == 0): w = w.real`). A trace
knows no values, so vecgrad traces them complex (the primitive's result; in the real case
its imaginary parts are exactly 0) as an `EitherComplex`: a use whose dtype is one in both
cases (`.real`, `.imag`, `np.abs`, `.astype(complex)`, `.astype(float)`) is NumPy's; moving
its elements (indexing, slicing, reshapes, transposes, stacks: `MOVES`) keeps it either;
any other use (arithmetic with it, np.sort, a product, a cast inside a NumPy function, np.array
with a dtype, returning it) is refused with a TraceError that says what to write instead. Before, the result was complex silently.

The probe (`case_dtypes`) runs a primitive's shape rule on each case's dtype, as
pybuiltins.EitherScalar's check_prim does for `max(x32[i], 0.0)`."""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .errors import TraceError, _is_internal
from .ir import Aval
from .tracing import Tracer

# primitives that move elements without computing with them: the result is complex where
# the input is and real where it is, with the same values
MOVES = frozenset({"getitem", "strided", "take", "reshape", "transpose", "relayout",
                   "broadcast_to", "concatenate", "stack", "copy"})
# primitives whose result is one dtype in both cases with the same values (a shape rule's
# single dtype is not enough: np.matmul casts its operands to one dtype first)
PARTS = frozenset({"real", "imag", "abs", "angle"})


def arg_aval(x: Any, dtypes: Any) -> Aval:
    """The aval a primitive sees for an argument: a Python number, or a traced one, weighs as
    tracing's to_atom casts it (by the strongly typed arguments' `dtypes`)."""
    if isinstance(x, Tracer) and x._weak and dtypes:
        return Aval(x.shape, np.result_type(*dtypes, x._kind))
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, (int, float, complex)) and not isinstance(x, np.generic) and dtypes:
        return Aval((), np.result_type(*dtypes, x))
    a = np.asarray(x)
    return Aval(a.shape, a.dtype)


def case_dtypes(prim: Any, args: Any, params: dict, this: Tracer, cases: Any,
                dtypes: Any) -> set:
    """The dtypes of `prim(*args)` where `this` has each dtype of `cases` (a case in which
    the shape rule raises is one where NumPy raises too: not counted)."""
    outs = set()
    for dt in cases:
        strong = [*dtypes, dt]
        avals = [Aval(this.shape, dt) if a is this else arg_aval(a, strong) for a in args]
        try:
            r = prim.shape_rule(*avals, **params)
        except Exception:  # noqa: BLE001, S112 - NumPy raises in this case: not compared
            continue
        outs |= {r.dtype} if isinstance(r, Aval) else {o.dtype for o in r}
    return outs


def _real(dt: np.dtype) -> np.dtype:
    return np.empty(0, dt).real.dtype


class EitherComplex(Tracer):
    """A traced array that NumPy's program has as a complex array or as the real one of its
    real parts, as the values say (np.linalg.eig of a real matrix); see the module."""

    __slots__ = ("_what",)
    _depends = True

    def __init__(self, builder: Any, atom: Any, what: str):
        super().__init__(builder, atom, readonly=False)
        self._what = what

    @classmethod
    def of(cls, x: Tracer, what: str) -> EitherComplex:
        return cls(x._b, x.atom, what)

    @property
    def dtype(self) -> np.dtype:
        """The traced (complex) dtype inside vecgrad; read by the user's code (`w.dtype`), a
        TraceError: NumPy's is complex or real as the values say."""
        if not _is_internal(sys._getframe(1).f_code.co_filename):
            raise self.ambiguous(self.cases(), ".dtype: its")
        return self._atom.aval.dtype

    def _lifted_as(self, b: Any, v: Any) -> EitherComplex:
        """This value in the inner trace `b` (tracing.lift), as `v`."""
        return EitherComplex(b, v, self._what)

    def as_array(self) -> EitherComplex:
        return self

    def cases(self, joins: bool = True) -> set:
        return {self.dtype, _real(self.dtype)}

    def check_either(self, dtypes: Any, joins: bool = False) -> None:
        got = {np.result_type(*dtypes, c) for c in self.cases()}
        if len(got) > 1:
            raise self.ambiguous(got, "this operation's")

    def check_use(self, prim: Any, args: Any, params: dict, dtypes: Any, joins: bool) -> Any:
        """Refuse `prim(*args)` unless it reads the real / imaginary parts or magnitudes
        (PARTS: one dtype in both cases) or only moves elements (MOVES: its result is then
        either too, which the function returned wraps)."""
        if prim.name == "cast" or any(a is not self and isinstance(a, Tracer) and a._depends
                                      for a in args):  # (a cast not asked for: a promotion
            raise self.ambiguous(self.cases(), "this operation's")  # inside np.matmul & co.)
        others = [a.dtype for a in args if a is not self and isinstance(a, Tracer) and not
                  a._weak or isinstance(a, (np.ndarray, np.generic))]
        outs = case_dtypes(prim, args, params, self, self.cases(), others)
        if len(outs) <= 1 and prim.name in PARTS:
            return None
        if prim.name in MOVES and len(outs) == 2:
            return lambda out: EitherComplex.of(out, self._what)
        raise self.ambiguous(outs | self.cases(), "this operation's")

    def _kept(self, out: Any) -> Any:
        """A result that holds this value's elements unchanged: either too."""
        return EitherComplex.of(out, self._what) if isinstance(out, Tracer) else out

    def __getitem__(self, key: Any) -> Any:  # (Tracer's own reads x[i] without bind)
        return self._kept(Tracer.__getitem__(self, key))

    def copy(self, *args: Any, **kwargs: Any) -> Any:
        return self._kept(Tracer.copy(self, *args, **kwargs))

    def __copy__(self) -> Any:
        return self.copy()

    def __pos__(self) -> Any:
        return self.copy()

    def _copied(self) -> EitherComplex:
        """np.copy of it (numpy/_base.copy)."""
        return self.copy()

    def astype(self, dtype: Any, *args: Any, **kwargs: Any) -> Tracer:
        """The user's own cast: one dtype in both cases, with NumPy's values (the real case
        holds its values with imaginary parts 0)."""
        return Tracer(self._b, self.atom).astype(dtype, *args, **kwargs)

    def check_returned(self) -> None:
        raise self.ambiguous(self.cases(), "the returned value's")

    def ambiguous(self, dts: Any, whose: str) -> TraceError:
        dts = " or ".join(sorted(str(d) for d in dts))
        return TraceError(
            f"{whose} dtype depends on the values: {self._what} of a real matrix is real where "
            "every eigenvalue is real and complex otherwise (NumPy returns the real parts "
            f"then), so this is {dts} as the values say, which vecgrad cannot trace. Take "
            ".real, .imag or np.abs of it, or make it complex first (.astype(complex)), as "
            "a program that works for every matrix must; or use np.linalg.eigh / eigvalsh "
            "for a symmetric matrix")


__all__ = ["MOVES", "PARTS", "EitherComplex", "arg_aval", "case_dtypes"]
