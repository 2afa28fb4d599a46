"""Tracing: run the user's Python function on `Tracer` arrays and record a `Graph`.

A `Tracer` is a mutable Python handle on an immutable SSA value. In-place writes
(`x[idx] = v`) append a functional `setitem` and rebind the handle, so the Python object the
user holds always names the newest version. A view (`v = x[:, k]`) remembers its base and
index: writes through it reach the base, and reads re-derive it when the base has changed,
as NumPy's aliasing does.
"""
from __future__ import annotations

import contextvars
import dis
import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Self

import numpy as np

from . import primitives as P
from .errors import ConcretizationError, ReadOnlyError, TracedIntoNumpyError, TraceError, user_src
from .ir import Atom, Aval, Const, Eqn, Graph, Params, Src, Var

_current: contextvars.ContextVar[Builder | None] = contextvars.ContextVar("vecgrad_builder",
                                                                            default=None)


class Builder:
    """A graph under construction."""

    def __init__(self, inputs: Sequence[Var] = (), hash_cons: bool = True):
        self.inputs = list(inputs)
        self.hash_cons = hash_cons
        self.eqns: list[Eqn] = []
        self.src: Src | None = None  # set by transformations: the source line being derived
        self.limit = int(os.environ.get("VECGRAD_MAX_EQNS", "4000000"))
        self._captured: dict[int, tuple] = {}  # id(array) -> (array, its constant)
        self._memo: dict[tuple, Var] = {}  # hash-consing: (prim, params, inputs) -> result
        self.recorded = 0  # operations recorded, repeats included (what an eager tape runs)

    def emit(self, prim: P.Primitive, atoms: Sequence[Atom], params: dict) -> Var:
        """Record `prim(*atoms)`, or return the value of an identical earlier operation: the
        trace is built hash-consed, which is common-subexpression elimination as it goes (a
        loop-invariant computation repeated in every iteration is recorded once)."""
        self.recorded += 1
        ps = Params(params)
        key = (prim, ps, tuple([a if a.__class__ is Var else a.key() for a in atoms]))
        hit = self._memo.get(key) if self.hash_cons else None
        if hit is not None:
            return hit
        if len(self.eqns) >= self.limit:
            raise _too_large(self)
        out = Var(prim.shape_rule(*[a.aval for a in atoms], **params))
        self.eqns.append(Eqn(prim, tuple(atoms), ps, out, self.src or user_src(3)))
        self._memo[key] = out
        return out

    def capture(self, x: np.ndarray | np.generic) -> Const:
        """A NumPy array used by the traced code becomes a constant holding its value at
        trace time (a copy: later changes to the array do not reach compiled code). Copied
        once per trace, however many operations use it."""
        hit = self._captured.get(id(x))
        if hit is None or hit[0] is not x:
            hit = self._captured[id(x)] = (x, Const(np.array(x, copy=True)))
        return hit[1]

    def build(self, outputs: Sequence[Atom], notes: tuple = ()) -> Graph:
        if self.recorded > len(self.eqns):
            notes = notes + ({"kind": "recorded", "count": self.recorded},)
        return Graph(tuple(self.inputs), tuple(self.eqns), tuple(outputs), notes)

    def __enter__(self) -> Self:
        self._token = _current.set(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _current.reset(self._token)


def _too_large(b: Builder) -> TraceError:
    counts = Counter(e.src for e in b.eqns[-200_000:])
    top = "; ".join(f"{n} operations at {s}" if s else f"{n} operations"
                    for s, n in counts.most_common(3))
    return TraceError(
        f"the trace exceeded {b.limit:,} operations (the loops are unrolled while tracing; "
        f"recent trip counts per line: {top}). Vectorize the innermost loop by hand, trace a "
        "smaller problem, or raise the limit with the environment variable VECGRAD_MAX_EQNS "
        "(each operation costs about 1 kB while compiling)")


def current_builder() -> Builder | None:
    """The trace being recorded in this context, if any."""
    return _current.get()


def _is_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def bind(prim: P.Primitive, *args: Any, **params: Any) -> Any:
    """Apply `prim`: record an equation if any argument is traced, else compute it eagerly."""
    builder = None
    all_traced = True
    for a in args:
        if isinstance(a, Tracer):
            if builder is not None and a._b is not builder:
                raise TraceError("tracers from two different traces were mixed (nested "
                                 "transformations are not supported)")
            builder = a._b
        else:
            all_traced = False
    if all_traced and builder is not None:  # the common case, quickly
        return Tracer(builder, builder.emit(prim, [a.atom for a in args], params))
    dts = [a.dtype for a in args if isinstance(a, (Tracer, np.ndarray, np.generic))]
    if builder is None:  # eager, with the same weak Python scalars as in a trace
        return prim.impl(*[to_atom(a, dts).value for a in args], **params)
    atoms = [to_atom(a, dts) for a in args]
    return Tracer(builder, builder.emit(prim, atoms, params))


def to_atom(x: Any, dtypes: Sequence[np.dtype] = ()) -> Atom:
    """Python scalars are weakly typed (NumPy 2 rules): they take the dtype of the arrays."""
    if isinstance(x, Tracer):
        return x.atom
    if _is_scalar(x):
        return Const(np.asarray(x, np.result_type(*dtypes, x) if dtypes else None))
    if isinstance(x, (np.ndarray, np.generic)):
        b = _current.get()
        return b.capture(x) if b is not None else Const(x)
    if isinstance(x, (list, tuple)):
        from . import numpy as vnp
        return to_atom(vnp.asarray(x), dtypes)
    raise TypeError(f"vecgrad cannot use a value of type {type(x).__name__} as an array")


class Tracer:
    """An array whose value is not known while tracing; only its shape and dtype are."""

    __slots__ = ("_atom", "_b", "_base_seen", "_readonly", "_view", "_wrote")
    __array_priority__ = 1000
    __hash__ = object.__hash__

    def __init__(self, builder: Builder, atom: Atom, view: tuple | None = None,
                 readonly: bool = False):
        self._b = builder
        self._atom = atom
        self._view = view  # (base Tracer, prim, params): a view, as NumPy's basic indexing,
        self._base_seen = view[0].atom if view else None  # .T and reshape make
        self._readonly = readonly
        self._wrote = None  # the base version this view's `+=` produced (see __setitem__)

    # -- value and metadata ---------------------------------------------------------
    @property
    def atom(self) -> Atom:
        if self._view is None:
            return self._atom
        base, prim, params = self._view
        if base.atom is not self._base_seen:  # the base was written: re-derive the view
            self._base_seen = base.atom
            self._atom = self._b.emit(prim, [base.atom], params)
        return self._atom

    @property
    def aval(self) -> Aval:
        return self._atom.aval

    shape = property(lambda self: self._atom.aval.shape)
    dtype = property(lambda self: self._atom.aval.dtype)
    ndim = property(lambda self: len(self._atom.aval.shape))
    size = property(lambda self: self._atom.aval.size)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d traced array")
        return self.shape[0]

    def __iter__(self):
        rest = tuple(P.Sl(0, d, 1) for d in self.shape[1:])
        for i in range(len(self)):  # self[i], without re-normalizing the index each time
            idx = P.BasicIndex((i,) + rest)
            out = self._b.emit(P.getitem, [self.atom], {"idx": idx})
            yield Tracer(self._b, out, (self, P.getitem, {"idx": idx}), self._readonly)

    def __repr__(self) -> str:
        return f"Tracer({self.aval})"

    # -- things that need concrete values ------------------------------------------
    def __bool__(self) -> bool:
        raise ConcretizationError("bool() (an `if`, `while`, `and`/`or` or comparison chain)")

    def __float__(self) -> float:
        raise _concretization("float()")

    def __int__(self) -> int:
        raise _concretization("int()")

    def __index__(self) -> int:
        raise _concretization("use as an index or size")

    def __complex__(self) -> complex:
        raise ConcretizationError("complex()")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TracedIntoNumpyError()

    # -- NumPy protocols --------------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        from .numpy import dispatch_ufunc
        return dispatch_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Callable, types: Any, args: Any, kwargs: Any) -> Any:
        from .numpy import dispatch_function
        return dispatch_function(func, args, kwargs)

    # -- indexing -------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Tracer:
        idx = P.normalize_index(key, self.shape)
        out = self._b.emit(P.getitem, [self.atom], {"idx": idx})
        view = (self, P.getitem, {"idx": idx}) if P.is_basic(idx) else None
        return Tracer(self._b, out, view, self._readonly)

    def __setitem__(self, key: Any, value: Any) -> None:
        idx = P.normalize_index(key, self.shape)
        if isinstance(value, Tracer) and value._view is not None and value._view[0] is self \
                and value._view[2].get("idx") == idx and value._wrote is self.atom:
            return  # `x[i] += v` already wrote through the view returned by x[i]
        self._write(idx, value, P.setitem)

    def _write(self, idx: tuple, value: Any, prim: P.Primitive) -> None:
        if self._readonly:
            raise ReadOnlyError()
        if not P.is_basic(idx) and P.has_duplicates(idx, self.shape):
            raise TraceError("an in-place write with repeated integer-array indices is "
                             "ambiguous; use vnp.add.at-style accumulation via a loop or "
                             "unique indices")
        val = to_atom(value, [self.dtype])
        self._replace(self._b.emit(prim, [self.atom, val], {"idx": idx}))

    def _replace(self, new: Atom) -> None:
        """Make `new` this array's value; a view passes the write on to its base."""
        if self._readonly:
            raise ReadOnlyError()
        if self._view is None:
            self._atom = new
            return
        base, prim, params = self._view
        if prim is P.getitem:
            base._write(params["idx"], Tracer(self._b, new), P.setitem)
        elif prim is P.reshape:
            base._replace(self._b.emit(P.reshape, [new], {"shape": base.shape}))
        else:
            inv = tuple(int(i) for i in np.argsort(params["perm"]))
            base._replace(self._b.emit(P.transpose, [new], {"perm": inv}))
        self._atom, self._base_seen = new, base.atom

    # -- in-place arithmetic: rebinds this handle (and writes through views) ---------
    def _inplace(self, other: Any, fn: Callable) -> Tracer:
        if self._readonly:
            raise ReadOnlyError()
        if self._view is not None and self._view[1] is P.getitem and fn is _add:
            base, _, params = self._view  # x[i] += v: one accumulation into the base
            base._write(params["idx"], other, P.setitem_add)
            self._wrote = base.atom
            return self
        new = fn(self, other)
        if new.shape != self.shape:
            from .errors import ShapeError
            raise ShapeError(f"in-place operation would change shape {self.shape} to {new.shape}")
        from . import numpy as vnp
        new = vnp.astype(new, self.dtype)
        self._replace(new.atom)
        return self

    def __iadd__(self, o: Any) -> Self:
        return self._inplace(o, _add)

    def __isub__(self, o: Any) -> Self:
        return self._inplace(o, lambda a, b: a - b)

    def __imul__(self, o: Any) -> Self:
        return self._inplace(o, lambda a, b: a * b)

    def __itruediv__(self, o: Any) -> Self:
        return self._inplace(o, lambda a, b: a / b)


def _add(a: Any, b: Any) -> Any:
    return a + b


def _concretization(what: str) -> Exception:
    """The error for float()/int() of a tracer. NumPy calls these itself for `buf[i] = x`
    into a plain NumPy array, straight from the user's STORE_SUBSCR: say so in that case."""
    try:  # (a best-effort look at the caller's current instruction; never an error itself)
        f = sys._getframe(2)  # the user's frame (0 is here, 1 the dunder method)
        storing = dis.opname[f.f_code.co_code[f.f_lasti]] == "STORE_SUBSCR"
    except (IndexError, ValueError, AttributeError):
        storing = False
    if storing:
        return TracedIntoNumpyError(user_src(2))
    return ConcretizationError(what, user_src(2))


def as_view(out: Any, base: Any, prim: P.Primitive, params: dict) -> Any:
    """Mark `out = prim(base)` as a view of `base` (writes through it reach the base)."""
    if isinstance(out, Tracer) and isinstance(base, Tracer) and out is not base:
        out._view, out._base_seen, out._readonly = (base, prim, params), base.atom, base._readonly
    return out


def new_input(aval: Aval, builder: Builder, readonly: bool = True) -> Tracer:
    """A traced argument of the function (read-only unless asked otherwise)."""
    v = Var(aval)
    builder.inputs.append(v)
    return Tracer(builder, v, readonly=readonly)


def trace(fun: Callable, avals: Sequence[Aval], hash_cons: bool = True) -> tuple[Builder, Any]:
    """Trace `fun` on fresh inputs; returns the builder and the (traced) output object.
    `hash_cons=False` records repeated operations as written (to test CSE on them)."""
    with Builder(hash_cons=hash_cons) as b:
        args = [new_input(a, b) for a in avals]
        out = fun(*args)
    return b, out


def const_tracer(value: np.ndarray) -> Any:
    """A traced handle on a fresh constant buffer (so it can be written into), or the array
    itself outside of a trace."""
    b = current_builder()
    return value if b is None else Tracer(b, Const(value))


_VNP: list = []  # vecgrad.numpy, imported on first use (it imports this module)


def _vnp() -> Any:
    if not _VNP:
        from . import numpy as vnp
        _VNP.append(vnp)
    return _VNP[0]


def _binop(name: str, swap: bool = False) -> Callable:
    if swap:
        return lambda self, other: getattr(_vnp(), name)(other, self)
    return lambda self, other: getattr(_vnp(), name)(self, other)


def _method(name: str) -> Callable:
    def m(self: Tracer, *args: Any, **kwargs: Any) -> Any:
        return getattr(_vnp(), name)(self, *args, **kwargs)
    m.__name__ = name
    m.__doc__ = f"Same as vecgrad.numpy.{name}(self, ...)."
    return m


def _prim_op(prim: P.Primitive, swap: bool = False) -> Callable:
    """An operator that binds its primitive directly (the hottest path of tracing)."""
    if swap:
        return lambda self, other: bind(prim, other, self)
    return lambda self, other: bind(prim, self, other)


for _n, _p in [("add", P.add), ("sub", P.sub), ("mul", P.mul), ("truediv", P.div)]:
    setattr(Tracer, f"__{_n}__", _prim_op(_p))
    setattr(Tracer, f"__r{_n}__", _prim_op(_p, swap=True))
for _n, _f in [("pow", "power"), ("matmul", "matmul")]:
    setattr(Tracer, f"__{_n}__", _binop(_f))
    setattr(Tracer, f"__r{_n}__", _binop(_f, swap=True))
for _n, _p in [("lt", P.lt), ("le", P.le), ("gt", P.gt), ("ge", P.ge), ("eq", P.eq),
               ("ne", P.ne)]:
    setattr(Tracer, f"__{_n}__", _prim_op(_p))
for _n, _f in [("neg", "negative"), ("pos", "positive"), ("abs", "abs")]:
    setattr(Tracer, f"__{_n}__", _method(_f))
for _n in ["sum", "mean", "max", "min", "prod", "reshape", "transpose", "astype", "ravel",
           "flatten", "squeeze", "dot", "clip", "swapaxes"]:
    setattr(Tracer, _n, _method(_n))
Tracer.T = property(lambda self: _vnp().transpose(self))
Tracer.copy = lambda self: Tracer(self._b, self.atom)  # SSA values are immutable: copying is free


def _shape_args(args: tuple) -> Any:
    return args[0] if len(args) == 1 and isinstance(args[0], (tuple, list, type(None))) else args


Tracer.reshape = lambda self, *shape: _vnp().reshape(self, _shape_args(shape))
Tracer.transpose = lambda self, *axes: _vnp().transpose(self, _shape_args(axes) or None)
