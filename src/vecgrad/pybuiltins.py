"""Python's `max` and `min` of traced 0-d values, while a function is traced.

`max(buf[i], v)` and `min(d(x, c) for c in centres)` compare traced values, and Python asks
the comparison's truth (`bool()`), which a trace does not know. While vecgrad traces a user's
function, `builtins.max` / `builtins.min` are these wrappers: where every item is a number or
a traced 0-d value of one dtype, the result is Python's own fold written as selections,

    m = items[0];  for it in items[1:]:  m = where(it > m, it, m)     (min: it < m)

which is exactly what Python computes (the first of equal items wins, a NaN is kept only where
Python keeps it, since a comparison with NaN is False), and whose gradient goes to the item
picked. From FOLD_AT_ONCE items on, the same result is one selection: the item at an argmax
of the stacked items (a chain of n selections grew with the items of `max(... for i in
range(n))`). Any other call (no traced item, a `key=`, arrays that are not 0-d, mixed dtypes whose
winner's dtype would depend on the values) is Python's own function, unchanged: it raises the
ConcretizationError for traced values as before. Outside a trace the builtins are untouched."""
from __future__ import annotations

import builtins
import contextlib
import numbers
import operator
from collections.abc import Iterator
from typing import Any

import numpy as np

from . import mixedfold, pyarrays
from .hooks import NUMPY
from .tracing import Tracer
from .valuedtype import case_dtypes

_MAX, _MIN = builtins.max, builtins.min
_depth = 0


def _foldable(items: list) -> bool:
    """Some item traced, every traced one 0-d of one dtype, the others numbers that do not
    promote it (so the result's dtype does not depend on which item wins)."""
    traced = [x for x in items if isinstance(x, Tracer)]
    if not traced:
        return False
    dt = traced[0].dtype
    for x in items:
        if mixedfold.is_mixed(x):  # (max(n[i], 0.5) with an x64 item: int64 or float64)
            return False
        if isinstance(x, Tracer):  # (an array NumPy made of an either one: its own dtype)
            if x.shape != () or x.dtype != dt or x._depends and x._ndarray:
                return False
        elif isinstance(x, bool) or not isinstance(x, (numbers.Number, np.ndarray, np.generic)) or np.ndim(x) != 0 or np.result_type(dt, x) != dt or type(x) is int and dt.kind in "iu" and not \
                np.iinfo(dt).min <= x <= np.iinfo(dt).max:
            return False
    return True


# From this many items, the fold runs as one selection (below, a chain of selections, each
# reading the previous one, is cheaper): `max(f(x[i]) for i in range(n))` is then one stack,
# one argmax and one gather whatever n, not a chain of n steps.
FOLD_AT_ONCE = 8


def _fold(items: list, greater: bool) -> Any:
    if len(items) >= FOLD_AT_ONCE:
        return _select(items, greater)
    m = items[0]
    for it in items[1:]:
        c = it > m if greater else it < m
        if isinstance(c, Tracer):
            m = NUMPY.where(c, it, m)
        elif c:
            m = it
    return m


def _select(items: list, greater: bool) -> Any:
    """Python's fold as one selection, exactly: the item at the argmax (argmin) of the
    stacked items, which is the first of equal ones as Python's strict comparison keeps it;
    NaNs after the first place can never win (a comparison with NaN is False) and count as
    -inf (+inf), while a NaN in the first place is kept (argmax picks the first NaN)."""
    dt = next(x.dtype for x in items if isinstance(x, Tracer))
    return _select_array(NUMPY.stack([x if isinstance(x, Tracer) else np.asarray(x, dt)
                                      for x in items]), greater)


def _select_array(x: Tracer, greater: bool) -> Tracer:
    """`max(x)` of a 1-d traced array: Python's fold over its elements as one selection (see
    `_select`, which stacks its items into such an array): one argmax and one read."""
    key = x
    if x.dtype.kind == "f":
        later = np.arange(x.shape[0]) > 0
        key = NUMPY.where(np.isnan(x) & later, -np.inf if greater else np.inf, x)
    return x[key.argmax() if greater else key.argmin()]


class EitherScalar(Tracer):
    """Python's max / min of traced values and Python numbers (`max(ix[i], 2)`): a NumPy
    scalar of `dtype` where a traced item wins, a Python number (weakly typed; of one of the
    types `_kinds`) where a number does. Combined with an array or a NumPy scalar its dtype
    is NumPy's only where every case gives one dtype (`+ x64`): where they differ
    (`np.float32(0) + max(ix[i], 2)` is float64 or float32 as the values say), and where it
    is returned as a dtype that depends on the values, it is refused (tracing.bind calls
    check_use, for every primitive: one that is not elementwise sees the number as the array
    NumPy makes of it, int64 / float64). A number that its dtype does not hold exactly
    (`max(x32[i], 0.1)`) is refused where it would be computed with in a wider dtype
    (`+ x64`: NumPy adds 0.1 itself). np.asarray of it is an either array (as_array), as
    is a list of it in np.array (pyarrays). Python arithmetic with numbers keeps it either,
    each case as Python computes it. (`_either` False: every item is a Python number or a traced Python-number
    argument, so the result is a Python number.)"""

    __slots__ = ("_case", "_either", "_exact", "_kind", "_kinds", "_what")
    _weak = True
    _depends = True

    def __init__(self, builder: Any, atom: Any, kinds: Any, either: bool = True,
                 what: str = "max(...)", exact: bool = True, case: Any = None):
        super().__init__(builder, atom)
        # the NumPy case's dtype: the value's, but for `max(ix[i], 0.5)` (int64, held in
        # float64: see mixedfold)
        self._case = self.dtype if case is None else np.dtype(case)
        self._kinds = tuple(sorted(set(kinds), key=_ORDER.index))
        self._kind = self._kinds[0](0)  # (what tracing.to_atom casts by, where all agree)
        self._either, self._what = either, what
        # whether a winning number's value is exactly its Python value in self.dtype (0.1 is
        # not in float32: where NumPy then holds it in float64, the values differ)
        self._exact = exact

    def outcomes(self, dtypes: Any, joins: bool = False) -> set:
        """The dtypes of this value combined with `dtypes`, in each case (`joins`: in an
        array NumPy makes of it, np.stack, where a Python number is int64 / float64)."""
        out = {np.result_type(*dtypes, np.asarray(k(0)).dtype if joins else k(0))
               for k in self._kinds}
        return out | {np.result_type(*dtypes, self._case)} if self._either else out

    def _lifted_as(self, b: Any, v: Any) -> EitherScalar:
        """This value in the inner trace `b` (tracing.lift), as `v`."""
        return EitherScalar(b, v, self._kinds, self._either, self._what, self._exact,
                            self._case)

    def as_array(self) -> Tracer:
        """np.asarray of this value: a 0-d array of its NumPy case or of the number (an
        int64 / float64 / complex128 one), as the values say (where both are one dtype, a
        plain traced array; else one whose every use weighs both, as an array's)."""
        if self.cases() == {self.dtype}:
            return Tracer(self._b, self.atom, ndarray=True)
        out = self._lifted_as(self._b, self.atom)
        out._ndarray = True
        return out

    def _copied(self) -> Tracer:
        """np.copy of it (numpy/_base.copy): the array NumPy makes of it."""
        return self.as_array()

    def cases(self, joins: bool = True) -> set:
        """This value's dtypes as NumPy sees them in each case (`joins`: made an array, as
        np.asarray makes a Python number int64 / float64 / complex128)."""
        return self.outcomes((), joins)

    def check_either(self, dtypes: Any, joins: bool = False) -> None:
        """Refuse an operation whose dtype depends on which item won (see tracing.bind;
        `dtypes` empty: a NumPy function of numbers alone, which makes a Python float a
        float64, `np.exp(max(x32[i], 0.0))` float32 or float64)."""
        got = self.outcomes(dtypes, joins or self._ndarray)
        if len(got) > 1:
            raise self.ambiguous(got, "this operation's")
        self.check_exact(next(iter(got)))

    def check_returned(self) -> None:
        """Refuse returning it where its dtype depends on the values (see `returned`; an
        array NumPy made of it, as_array: NumPy's dtype in every case)."""
        if self.dtype not in _PY_DTYPES or self._ndarray or self._case != self.dtype:
            dts = self.outcomes((), self._ndarray)
            if len(dts) > 1:
                raise self.ambiguous(dts, "the returned value's")

    def check_use(self, prim: Any, args: Any, params: dict, dtypes: Any, joins: bool) -> None:
        """Refuse `prim(*args)` where its dtype or value depends on which item won (tracing.bind;
        `dtypes`: those of the strongly typed arguments; `joins`: a stack or concatenate)."""
        if self._case != self.dtype:
            return mixedfold.check_use(self, prim, args, params, dtypes, joins)
        if (prim.elementwise or joins) and prim.name != "cast":
            self.check_either(dtypes, joins)
        else:  # (np.sum(max(x32[i], 0.0)): NumPy makes the number an array)
            self.check_prim(prim, args, params, dtypes)

    def check_prim(self, prim: Any, args: Any, params: dict, dtypes: Any) -> None:
        """A primitive that is not elementwise (a reduction, a reshape, a product): NumPy
        makes the number an array first; its shape rule says the result's dtype in each case
        (one for an index or a cast, which does not weigh this value's dtype)."""
        outs = case_dtypes(prim, args, params, self, self.cases(), dtypes)
        if len(outs) > 1:
            raise self.ambiguous(outs, "this operation's")
        for dt in outs:
            self.check_exact(dt)

    def check_exact(self, dt: np.dtype) -> None:
        """Refuse computing in `dt`, wider than this value's dtype, where a winning number is
        not exact in it (`max(x32[i], 0.1) + x64`: NumPy adds 0.1, vecgrad float32(0.1))."""
        if self._exact or dt.kind not in "fc" or np.result_type(self.dtype, dt) == self.dtype:
            return
        from .errors import TraceError
        np_fn = "maximum" if self._what.startswith("max") else "minimum"
        raise TraceError(
            f"`{self._what}` of {self.dtype} values and Python numbers is used in {dt}: where "
            f"a number wins NumPy computes with its exact value, which {self.dtype} does not "
            f"hold (so vecgrad's value would differ). Use np.{np_fn}(...) (a NumPy result), "
            f"or write the numbers as NumPy scalars (np.{self.dtype.name}(...) or "
            f"np.{dt.name}(...))")

    def ambiguous(self, dts: Any, whose: str) -> Exception:
        from .errors import TraceError
        dts = sorted(str(d) for d in dts)
        np_fn = "maximum" if self._what.startswith("max") else "minimum"
        return TraceError(
            f"{whose} dtype depends on the values: `{self._what}` of traced values and Python "
            "numbers is a NumPy scalar where a traced item wins and a (weakly typed) Python "
            "number where a number wins, and NumPy's dtype is then "
            f"{' or '.join(dts)} as the values say, which vecgrad cannot trace. Use "
            f"np.{np_fn}(...) (a NumPy result), write the numbers as NumPy scalars "
            f"(np.{np.dtype(self._case).name}(...)), or cast the result (.astype(...))")


_ORDER = [int, float, complex]
_PY_DTYPES = (np.dtype(np.int64), np.dtype(np.float64), np.dtype(np.complex128))
_PY_TYPE = {"b": int, "i": int, "u": int, "f": float, "c": complex}


def _kinds_of(x: Any) -> tuple:
    """The Python number types `x` may be (none for a NumPy value)."""
    if isinstance(x, EitherScalar):
        return x._kinds
    if isinstance(x, Tracer):
        return (type(x._kind),) if x._weak else ()
    if isinstance(x, (int, float, complex)) and not isinstance(x, np.generic):
        return (int,) if isinstance(x, bool) else (type(x),)
    return ()


def _py(op: Any, kinds: tuple, other: list, swap: bool) -> set:
    """The Python types of `op` on numbers of the types `kinds` and the numbers `other` (1
    stands for a number of a type: 1 / 1 is a float, abs(1j) too; `2 ** -1` is a float)."""
    out = set()
    for k in kinds:
        for o in other or [None]:
            try:
                r = op(k(1)) if o is None else op(o, k(1)) if swap else op(k(1), o)
            except (ArithmeticError, TypeError, ValueError):
                continue
            if type(r) in _ORDER:
                out.add(type(r))
    return out


def _either_op(name: str) -> Any:
    """Python arithmetic of an EitherScalar: with a Python number (or a traced one) the number
    takes the NumPy case's dtype as NumPy's weak promotion does, and the result is either
    again; with another EitherScalar both cases' dtypes must agree; with arrays and NumPy
    scalars it is NumPy's (tracing.bind checks the dtypes)."""
    method = getattr(Tracer, name)
    base = name.strip("_")
    swap = base.startswith("r") and base not in ("round",)
    op = getattr(operator, base[1:] if swap else base, None) or getattr(operator, base)

    def fn(self: EitherScalar, *other: Any) -> Any:
        o = other[0] if other else None
        ok = _kinds_of(o)
        if other and not ok or self._ndarray or getattr(o, "_ndarray", False):
            return method(self, *other)  # (an array or a NumPy scalar: NumPy's, bind checks)
        if self._case != self.dtype or isinstance(o, EitherScalar) and o._case != o.dtype:
            mixedfold.check_arithmetic(self, o, base, swap, bool(other))
        # (a float result in the NumPy case too, `min(u8[i], 0) * 2.0` or `/ 3`: no wrap)
        floats = other and not isinstance(o, EitherScalar) and (
            base in ("truediv", "rtruediv") or all(k in (float, complex) for k in ok))
        if self._either and self.dtype.kind in "iu" and self.dtype != np.int64 and not floats:
            from .errors import TraceError  # (min(u8[i], 2) - 3: 255 or -1)
            raise TraceError(
                f"Python arithmetic on `{self._what}` of {self.dtype} values and Python ints "
                f"depends on the values: where a traced item wins it is {self.dtype} "
                "arithmetic (which wraps around), where a Python int wins it is Python's "
                f"(exact). Use np.{'maximum' if self._what.startswith('max') else 'minimum'}"
                "(...) (a NumPy result), or write the numbers as NumPy scalars "
                f"(np.{self.dtype.name}(...))")
        if isinstance(o, EitherScalar):  # the four cases' NumPy dtypes must agree
            dts = {np.result_type(self.dtype, o.dtype)} if self._either and o._either else set()
            dts |= {np.result_type(self.dtype, k(0)) for k in ok} if self._either else set()
            dts |= {np.result_type(k(0), o.dtype) for k in self._kinds} if o._either else set()
            if len(dts) > 1:
                raise self.ambiguous(dts, "this operation's")
        elif other:  # a number takes the NumPy case's dtype (weakly), as NumPy computes it
            try:
                dt = np.result_type(self.dtype, *(k(0) for k in ok))
                o = NUMPY.astype(o, dt) if isinstance(o, Tracer) else np.asarray(o, dt)
            except (OverflowError, TypeError, ValueError):
                return method(self, *other)
        reps = [] if not other else [other[0]] if not isinstance(other[0], Tracer) else \
            [k(1) for k in ok]
        # (on the plain values: the cases' dtypes are settled above, bind checks no more)
        out = method(_plain(self), *((_plain(o),) if other else ()))
        kinds = _py(op, self._kinds, reps, swap)
        if not isinstance(out, Tracer) or out.shape or not kinds:
            return out
        either = self._either or getattr(other[0] if other else None, "_either", False)
        # (Python computes a winning number in int / float / complex: exact where out.dtype
        # is that dtype, or an int one, whose range tracing checks)
        exact = self._exact and getattr(o, "_exact", True) and (
            out.dtype in _PY_DTYPES or out.dtype.kind in "biu")
        return EitherScalar(out._b, out.atom, kinds, either, self._what, exact)
    fn.__name__ = name
    return fn


def _plain(x: Any) -> Any:
    """An EitherScalar's value as a plain traced NumPy scalar (anything else as it is)."""
    return Tracer(x._b, x.atom) if isinstance(x, EitherScalar) else x


for _n in ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow"]:
    for _m in (f"__{_n}__", f"__r{_n}__"):
        setattr(EitherScalar, _m, _either_op(_m))
for _m in ("__neg__", "__pos__", "__abs__"):
    setattr(EitherScalar, _m, _either_op(_m))


def returned(leaves: list) -> None:
    """A traced function's results: an EitherScalar returned as it is is its NumPy case or
    its Python number, which vecgrad returns as an array of int64 / float64. Where the NumPy
    case is int64, float64 or complex128 the Python number's value is that dtype's exactly
    (`max(loss, 0)` is a float64 0.0 where NumPy's program returns the int 0); in a narrower
    dtype (`max(x32[i], 0.1)`: float32, or the float 0.1) it is refused."""
    for x in leaves:  # (and valuedtype.EitherComplex's: np.linalg.eig's, refused)
        if isinstance(x, Tracer) and x._depends:
            x.check_returned()


def _typed(items: list, m: Any, greater: bool) -> Any:
    """The fold's result `m` as Python's: a NumPy scalar if every item is a traced (strongly
    typed) value, an EitherScalar if some item is a Python number."""
    kinds = {k for x in items for k in _kinds_of(x)}
    if not kinds or not isinstance(m, Tracer):
        return m
    strong = builtins.any(isinstance(x, Tracer) and (not x._weak or x._either) for x in items)
    exact = builtins.all(getattr(x, "_exact", True) if isinstance(x, Tracer) else
                         _holds(m.dtype, x) for x in items)
    return EitherScalar(m._b, m.atom, kinds, strong, f"{'max' if greater else 'min'}(...)",
                        exact)


def _holds(dt: np.dtype, x: Any) -> bool:
    """Whether the number `x` is exactly itself in `dt` (a NaN counts as held)."""
    v = np.asarray(x, dt).item()
    return v == x or bool(np.isnan(v) and np.isnan(x))


def _mixed_fold(items: list, greater: bool, call: Any) -> Any:
    """`max(ix[i], 0.5)`: traced ints and Python numbers, a float among them (see mixedfold).
    The numbers fold in Python (no NaN: the fold's value does not depend on the order), the
    ints in their dtype (exactly); where an int number wins it is the fold of ints alone, else
    the two are compared as NumPy compares them (in float64) and the value is held in float64,
    an EitherScalar whose NumPy case is the ints' dtype."""
    ints = [x for x in items if isinstance(x, Tracer)]
    nums = [x for x in items if not isinstance(x, Tracer)]
    num = (_MAX if greater else _MIN)(nums)
    if type(num) is int:  # (max(ix[i], 2, 0.5): 0.5 never wins)
        if not _foldable([*ints, num]):
            return call()
        return _typed([*ints, num], _fold([*ints, num], greater), greater)
    m = _fold(ints, greater)
    wins = m > num if greater else m < num
    out = NUMPY.where(wins, NUMPY.astype(m, np.float64), np.float64(num))
    return EitherScalar(out._b, out.atom, (float,), True, f"{'max' if greater else 'min'}(...)",
                        True, m.dtype)


def _fold_of_folds(items: list, greater: bool) -> EitherScalar:
    """`min(max(n[i], 0.5), 2.5)`: mixed folds (float64 values) and numbers, compared in
    float64 as NumPy compares their int or float cases; its cases are all theirs."""
    folds = [x for x in items if isinstance(x, Tracer)]
    nums = [x for x in items if not isinstance(x, Tracer)]
    m = _fold([_plain(x) for x in folds], greater)
    num = (_MAX if greater else _MIN)(nums)
    out = NUMPY.where(m > num if greater else m < num, m, np.float64(num))
    kinds = {k for x in folds for k in x._kinds} | {type(num)}
    return EitherScalar(out._b, out.atom, kinds, True, f"{'max' if greater else 'min'}(...)",
                        True, folds[0]._case)


def _wrap(orig: Any, greater: bool) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not args or kwargs.get("key") is not None:
            return orig(*args, **kwargs)
        if len(args) == 1:
            x = args[0]
            if isinstance(x, Tracer) and x.ndim == 1 and x.shape[0] >= 2 and \
                    x.dtype.kind in "fiu":  # (a traced array's items: its elements, 0-d)
                return _select_array(x, greater)
            items = list(x)  # (an iterator is consumed once, as Python's own does)
            call = lambda: orig(items, **kwargs)
        elif kwargs:
            return orig(*args, **kwargs)
        else:
            items = list(args)
            call = lambda: orig(*args)
        how = items and mixedfold.mixed(items)
        if how == "folds":
            return _fold_of_folds(items, greater)
        if how:
            return _mixed_fold(items, greater, call)
        if not items or not _foldable(items):
            return call()
        return _typed(items, _fold([_plain(x) for x in items], greater), greater)
    wrapper.__name__, wrapper.__doc__ = orig.__name__, orig.__doc__
    return wrapper


_TRACED_MAX, _TRACED_MIN = _wrap(_MAX, True), _wrap(_MIN, False)


@contextlib.contextmanager
def traced_builtins() -> Iterator[None]:
    """`builtins.max` / `builtins.min` fold traced 0-d values inside, and `np.array` /
    `np.asarray` & co. of traced values called from the user's code make traced arrays (see
    pyarrays; nested uses share one patch, removed when the outermost ends)."""
    global _depth
    if _depth == 0:
        builtins.max, builtins.min = _TRACED_MAX, _TRACED_MIN
        pyarrays.patch()
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            builtins.max, builtins.min = _MAX, _MIN
            pyarrays.unpatch()


__all__ = ["traced_builtins"]
