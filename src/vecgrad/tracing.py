"""Tracing: run the user's Python function on `Tracer` arrays and record a `Graph`.

A `Tracer` is a mutable Python handle on an immutable SSA value. In-place writes
(`x[idx] = v`) append a functional `setitem` and rebind the handle, so the Python object the
user holds always names the newest version. A view (`v = x[:, k]`) remembers its base and
index: writes through it reach the base, and reads re-derive it when the base has changed,
as NumPy's aliasing does.

What is a view and what a copy follows NumPy exactly: basic indexing that keeps an axis,
`.T`, `transpose`, `swapaxes`, `moveaxis`, `squeeze`, `expand_dims` and `broadcast_to`
(read-only) are views; `reshape` and `ravel` are views exactly when NumPy can make one (the
strides are simulated, see `_strided`); fancy indexing, `flatten`, `astype` and `copy` are
writable copies. A 0-d result of an operation, or an integer index that selects one element,
is a NumPy *scalar*: an immutable copy, so `t = b[0]; b[0] = b[1]` leaves `t` alone and
`t += 1` rebinds `t` only. A 0-d *array* (`vnp.zeros(())`, `x[0, ...]`) is written in place.
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
from .errors import (
    ConcretizationError,
    ReadOnlyError,
    TracedIntoNumpyError,
    TraceError,
    _where,
    numpy_caller,
    user_src,
)
from .ir import Atom, Aval, Const, Eqn, Graph, Params, Src, Var, new_eqn
from .primitives.structural import BasicIndex, _fast_basic

_current: contextvars.ContextVar[Builder | None] = contextvars.ContextVar("vecgrad_builder",
                                                                            default=None)


class Builder:
    """A graph under construction."""

    def __init__(self, inputs: Sequence[Var] = (), hash_cons: bool = True,
                 parent: Builder | None = None):
        self.inputs = list(inputs)
        self.hash_cons = hash_cons
        # A trace of a function called inside another trace (a nested transformation): values
        # of the enclosing traces that it uses become extra inputs, in `closure` order
        self.parent = parent
        self.closure: list[tuple[Tracer, Var]] = []  # (the enclosing trace's value, input)
        self._lifted: dict[Var, Tracer] = {}  # an enclosing trace's value -> its input here
        self.concrete: list[Atom] = []  # values whose concrete value the function asked for
        self.eqns: list[Eqn] = []
        self.src: Src | None = None  # set by transformations: the source line being derived
        self.limit = _limit()
        self._check = min(MEMO_WINDOW, self.limit)  # the next checkpoint (see _checkpoint)
        self._captured: dict[int, tuple] = {}  # id(array) -> (array, its constant)
        # hash-consing: (prim, params, inputs) -> result, for the last MEMO_WINDOW to
        # 2 * MEMO_WINDOW equations recorded (the newer ones in _memo)
        self._memo: dict[tuple, Var] = {}
        self._older: dict[tuple, Var] = {}
        # per trace, shared by its equations: params_key -> Params, and (prim, params_key,
        # operand avals) -> the result's aval (shape rules run once per distinct operation)
        self._params: dict[tuple, Params] = {}
        self._avals: dict[tuple, Aval] = {}
        self._pool: dict[Aval, Aval] = {}
        self.recorded = 0  # operations recorded, repeats included (what an eager tape runs)

    def emit(self, prim: P.Primitive, atoms: Sequence[Atom], params: dict) -> Var:
        """Record `prim(*atoms)`, or return the value of an identical earlier operation: the
        trace is built hash-consed, which is common-subexpression elimination as it goes (a
        loop-invariant computation repeated in every iteration is recorded once).

        This runs once per traced operation, so it allocates little: equal parameters, avals
        and source lines are shared between equations, and shape rules are memoized."""
        self.recorded += 1
        if params:  # (params_key, inline: this is the hottest path)
            pk = tuple(params.items())
            pk = pk[0] if len(pk) == 1 else tuple(sorted(pk))
        else:
            pk = ()
        ins = tuple(atoms)
        ikey = ins
        for a in ins:
            if a.__class__ is not Var:  # constants are keyed by their contents
                ikey = tuple([x if x.__class__ is Var else x.key() for x in ins])
                break
        key = (prim, pk, ikey)
        if self.hash_cons:
            hit = self._memo.get(key)
            if hit is None and self._older:
                hit = self._older.get(key)
            if hit is not None:
                return hit
        if len(self.eqns) >= self._check:
            self._checkpoint()
        avals = tuple([a.aval for a in ins])
        akey = (prim, pk, avals)
        aval = self._avals.get(akey)
        if aval is None:
            aval = prim.shape_rule(*avals, **params)
            aval = self._pool.setdefault(aval, aval)  # (equal avals: one object)
            if len(self._avals) >= 4096:  # (operations of distinct shapes or params: bounded)
                self._avals.clear()
            self._avals[akey] = aval
        ps = self._params.get(pk)
        if ps is None:
            ps = Params.of(params)
            if len(self._params) < 4096:
                self._params[pk] = ps
        out = Var(aval)
        self.eqns.append(new_eqn((prim, ins, ps, out, self.src or user_src(3))))
        if self.hash_cons:
            self._memo[key] = out
        return out

    def _checkpoint(self) -> None:
        """Every MEMO_WINDOW equations, forget the hash-consing table's older half; at the
        operation limit, fail (naming the lines that ran most)."""
        n = len(self.eqns)
        if n >= self.limit:
            raise _too_large(self)
        self._older, self._memo = self._memo, {}
        self._check = min(n + MEMO_WINDOW, self.limit)

    def capture(self, x: np.ndarray | np.generic) -> Const:
        """A NumPy array used by the traced code becomes a constant holding its value at
        trace time (a copy: later changes to the array do not reach compiled code). Copied
        once per trace, however many operations use it."""
        hit = self._captured.get(id(x))
        if hit is None or hit[0] is not x:
            hit = self._captured[id(x)] = (x, Const(np.array(x, copy=True)))
        return hit[1]

    def lift(self, t: Tracer) -> Tracer:
        """`t`, a value of an enclosing trace, as a value of this one: a constant as it is,
        anything else as an extra (read-only) input, one per value."""
        if t._b is self:
            return t
        if t._b.inside(self):
            raise TraceError("a function traced inside another one (a nested transformation) "
                             "wrote one of its values into an array of the enclosing function: "
                             "return the value instead")
        if self.parent is None or not self.parent.inside(t._b):
            raise _escaped()
        outer = self.parent.lift(t)
        atom = outer.atom
        if isinstance(atom, Const):
            return Tracer(self, atom)
        inner = self._lifted.get(atom)
        if inner is None:
            v = Var(atom.aval)
            self.inputs.append(v)
            self.closure.append((outer, v))
            inner = self._lifted[atom] = WeakScalar(self, v, outer._kind) if outer._weak \
                else Tracer(self, v, readonly=True)
        return inner

    def inside(self, b: Builder) -> bool:
        """Whether this trace is `b` or is nested inside it."""
        t: Builder | None = self
        while t is not None and t is not b:
            t = t.parent
        return t is b

    def build(self, outputs: Sequence[Atom], notes: tuple = ()) -> Graph:
        if self.recorded > len(self.eqns):
            notes = notes + ({"kind": "recorded", "count": self.recorded},)
        return Graph(tuple(self.inputs), tuple(self.eqns), tuple(outputs), notes)

    def __enter__(self) -> Self:
        self._token = _current.set(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _current.reset(self._token)


# Hash-consing looks back this many equations at least (twice as many at most): a repeated
# loop-invariant computation is found again within an iteration or a few, and the table of a
# long trace stays bounded.
MEMO_WINDOW = 1 << 17
MAX_EQNS = 1_000_000  # the default of VECGRAD_MAX_EQNS


def _limit() -> int:
    """The operation limit: the environment variable VECGRAD_MAX_EQNS, default MAX_EQNS."""
    try:
        return max(1, int(os.environ.get("VECGRAD_MAX_EQNS", MAX_EQNS)))
    except ValueError:
        return MAX_EQNS


def _too_large(b: Builder) -> TraceError:
    counts = Counter(e.src for e in b.eqns)
    lines = [f"{s}: {n:,}" if s else f"(no source line): {n:,}" for s, n in counts.most_common(5)]
    more = f", and {len(counts) - 5} more lines" if len(counts) > 5 else ""
    return TraceError(
        f"the trace exceeded {b.limit:,} operations: loops are unrolled while tracing, and "
        f"these lines ran most (operations recorded per line, so far): {'; '.join(lines)}{more}. "
        "Vectorize the innermost loop by hand (or pass its data as one array), trace a smaller "
        "problem, or raise the limit with the environment variable VECGRAD_MAX_EQNS (each "
        "operation takes about 0.5 kB while tracing)")


def current_builder() -> Builder | None:
    """The trace being recorded in this context, if any."""
    return _current.get()


def _is_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def bind(prim: P.Primitive, *args: Any, **params: Any) -> Any:
    """Apply `prim`: record an equation if any argument is traced, else compute it eagerly."""
    builder = None
    simple = True  # all arguments are (strongly typed) tracers of one trace
    for a in args:
        if isinstance(a, Tracer):
            if builder is None:
                builder = a._b
            elif a._b is not builder:
                builder = _inner(builder, a._b)
                simple = False
            simple = simple and not a._weak
        else:
            simple = False
    if simple and builder is not None:  # the common case, quickly
        return Tracer(builder, builder.emit(prim, [a.atom for a in args], params))
    dts = [a.dtype for a in args if isinstance(a, (np.ndarray, np.generic)) or
           isinstance(a, Tracer) and not a._weak]
    if builder is None:  # eager, with the same weak Python scalars as in a trace
        return prim.impl(*[to_atom(a, dts).value for a in args], **params)
    atoms = [to_atom(a, dts, builder) for a in args]
    return Tracer(builder, builder.emit(prim, atoms, params))


def _inner(a: Builder, b: Builder) -> Builder:
    """Of two traces, the one nested in the other (values of the outer one are lifted)."""
    if a.inside(b):
        return a
    if b.inside(a):
        return b
    raise _escaped()


def _escaped() -> TraceError:
    return TraceError("tracers from two different traces were mixed: a traced value was used "
                      "outside the trace that made it (for example stored in a global or an "
                      "outer list and read by another traced function); return it instead")


def to_atom(x: Any, dtypes: Sequence[np.dtype] = (), builder: Builder | None = None) -> Atom:
    """Python scalars are weakly typed (NumPy 2 rules): they take the dtype of the arrays. So
    do traced Python-scalar arguments (`_weak` tracers). A value of an enclosing trace used in
    `builder` is lifted into it."""
    if isinstance(x, Tracer):
        if builder is not None and x._b is not builder:
            x = builder.lift(x)
        if x._weak and dtypes:
            dt = np.result_type(*dtypes, x._kind)
            if dt != x.dtype:
                return x._b.emit(P.cast, [x.atom], {"dtype": dt})
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

    __slots__ = ("_atom", "_b", "_base_seen", "_ndarray", "_origin", "_readonly", "_view",
                 "_wrote")
    __array_priority__ = 1000
    __hash__ = object.__hash__
    _weak = False  # True for a Python number passed as an argument (WeakScalar, below)

    def __init__(self, builder: Builder, atom: Atom, view: tuple | None = None,
                 readonly: bool | str = False, ndarray: bool = False):
        self._b = builder
        self._atom = atom
        self._view = view  # (base Tracer, prim, params): a view, as NumPy's basic indexing,
        self._base_seen = view[0].atom if view else None  # .T and reshape make
        self._readonly = readonly  # True (an argument or its view), or what makes it so
        self._wrote = None  # the base version this view's `+=` produced (see __setitem__)
        self._ndarray = ndarray  # a 0-d value that is an ndarray, not a NumPy scalar
        # a scalar read as x[idx]: (x, idx, the version of x it equals x[idx] of, the version
        # of x it was read from), so that `x[idx] += v` is one setitem_add (see _scalar_update)
        self._origin: tuple | None = None

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
            version = self.atom
            out = self._b.emit(P.getitem, [version], {"idx": idx})
            yield Tracer(self._b, out, (self, P.getitem, {"idx": idx}), self._readonly) \
                if rest else self._element(out, idx, version)

    def __repr__(self) -> str:
        return f"Tracer({self.aval})"

    # -- things that need concrete values ------------------------------------------
    def _concrete(self) -> None:
        """Note that the function needed this value concretely (see api: such Python-scalar
        arguments are then made static)."""
        self._b.concrete.append(self._atom)

    def __bool__(self) -> bool:
        self._concrete()
        raise ConcretizationError("bool() (an `if`, `while`, `and`/`or` or comparison chain)")

    def __float__(self) -> float:
        self._concrete()
        raise _concretization("float()")

    def __int__(self) -> int:
        self._concrete()
        raise _concretization("int()")

    def __index__(self) -> int:
        self._concrete()
        raise _concretization("use as an index or size")

    def __complex__(self) -> complex:
        self._concrete()
        raise ConcretizationError("complex()")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        self._concrete()
        func = numpy_caller()
        raise TracedIntoNumpyError(numpy_func=func if func and not func.startswith("_")
                                   else None)

    # -- NumPy protocols --------------------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return _vnp().dispatch_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Callable, types: Any, args: Any, kwargs: Any) -> Any:
        return _vnp().dispatch_function(func, args, kwargs)

    # -- indexing -------------------------------------------------------------------
    def _is_scalar(self) -> bool:
        """Whether this is a NumPy scalar (immutable: in-place ops rebind the name only)."""
        return not self._atom.aval.shape and (self._origin is not None or
                                              self._view is None and not self._ndarray)

    def __getitem__(self, key: Any) -> Tracer:
        shape = self._atom.aval.shape
        idx = _fast_basic(key if key.__class__ is tuple else (key,), shape)
        if idx is None:
            try:
                idx = P.normalize_index(key, shape)
            except TraceError:  # a traced integer index: a gather (see numpy/_indexing.py)
                return _vnp()._indexing.traced_getitem(self, key)
        version = self._atom if self._view is None else self.atom
        out = self._b.emit(P.getitem, [version], {"idx": idx})
        if 0 in out.aval.shape:  # an empty selection holds no values: a constant (writes
            empty = Const(np.zeros(out.aval.shape, self.dtype))  # into it are no-ops)
            return Tracer(self._b, empty, ndarray=True)
        if idx.__class__ is not BasicIndex and not P.is_basic(idx):
            return Tracer(self._b, out, ndarray=True)  # fancy indexing copies (writable)
        if not out.aval.shape and not _keeps_array(key):
            return self._element(out, idx, version)
        if self._is_scalar():  # scalar[None], scalar[...]: a new array, not a view
            return Tracer(self._b, out, ndarray=True)
        return Tracer(self._b, out, (self, P.getitem, {"idx": idx}), self._readonly)

    def _element(self, out: Atom, idx: tuple, version: Atom) -> Tracer:
        """`self[idx]` selecting one element: a NumPy scalar, a copy."""
        t = Tracer(self._b, out)
        t._origin = (self, idx, version, version)
        return t

    def __setitem__(self, key: Any, value: Any) -> None:
        if not self._atom.aval.shape and self._is_scalar():
            raise TypeError(f"'numpy.{self.dtype}' object does not support item assignment: "
                            "a 0-d result of an operation is a NumPy scalar, not an array"
                            f"{_where(user_src(2))}")
        try:
            idx = P.normalize_index(key, self.shape)
        except TraceError:
            if self._write_masked(key, value):
                return
            raise TraceError(
                "writing at a traced (data-dependent) index is not supported: to accumulate "
                "at it (repeated indices adding up) use np.add.at(x, idx, v); to select "
                "values use vnp.where") from None
        if isinstance(value, Tracer):
            o = value._origin
            if o is not None and o[0] is self and o[3] is self.atom and o[1] == idx:
                if o[2] is not o[3]:  # `x[i] += v` on an element: its setitem_add is the write
                    self._replace(o[2])
                    return
            elif value._view is not None and value._view[0] is self \
                    and value._view[2].get("idx") == idx and value._wrote is self.atom:
                return  # `x[i] += v` already wrote through the view returned by x[i]
        self._write(idx, value, P.setitem)

    def _write_masked(self, mask: Any, value: Any) -> bool:
        """`x[mask] = v` for a traced boolean mask over x's leading axes and a v that
        broadcasts to one selected entry (a scalar, or a row): `where(mask, v, x)`, exactly
        NumPy's result. False if the write is not of that form."""
        if not (isinstance(mask, Tracer) and mask.dtype == bool and mask.ndim
                and self.shape[:mask.ndim] == mask.shape):
            return False
        rest = self.shape[mask.ndim:]
        try:
            ok = np.broadcast_shapes(np.shape(value), rest) == rest
        except ValueError:
            ok = False
        if not ok:
            return False
        m = _vnp().reshape(mask, mask.shape + (1,) * len(rest))
        new = _vnp().astype(_vnp().where(m, value, self), self.dtype)
        self._replace(new.atom)
        return True

    def _write(self, idx: tuple, value: Any, prim: P.Primitive) -> None:
        if self._readonly:
            raise _read_only(self)
        if prim is P.setitem and not P.is_basic(idx) and P.has_duplicates(idx, self.shape):
            raise TraceError("an in-place write with repeated integer-array indices is "
                             "ambiguous (x[idx] += v adds once per position, as in NumPy); "
                             "to accumulate at repeated indices use np.add.at(x, idx, v)")
        val = to_atom(value, [self.dtype], self._b)
        if 0 in P.index_shape(self.shape, idx):  # (an empty region: NumPy checks v's shape)
            prim.shape_rule(self.aval, val.aval, idx=idx)
            return
        self._replace(self._b.emit(prim, [self.atom, val], {"idx": idx}))

    def _replace(self, new: Atom) -> None:
        """Make `new` this array's value; a view passes the write on to its base."""
        if self._readonly:
            raise _read_only(self)
        if self._view is None:
            self._atom = new
            return
        base, prim, params = self._view
        if prim is P.getitem:
            base._write(params["idx"], Tracer(self._b, new), P.setitem)
        elif prim is P.reshape:
            base._replace(self._b.emit(P.reshape, [new], {"shape": base.shape}))
        elif prim is P.real or prim is P.imag:  # z.real[...] = v: z - Re z + v (exact)
            unit = 1.0 if prim is P.real else 1j
            z = Tracer(self._b, base.atom)
            base._replace((z - prim(z) * unit + Tracer(self._b, new) * unit).atom)
        else:
            inv = tuple(int(i) for i in np.argsort(params["perm"]))
            base._replace(self._b.emit(P.transpose, [new], {"perm": inv}))
        self._atom, self._base_seen = new, base.atom

    # -- in-place arithmetic: rebinds this handle (and writes through views) ---------
    def _inplace(self, other: Any, fn: Callable) -> Tracer:
        if self._readonly:
            raise _read_only(self)
        if self._is_scalar():
            return self._scalar_update(other, fn)
        self._check_same_kind(other, fn)
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

    def _check_same_kind(self, other: Any, fn: Callable) -> None:
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

    def _scalar_update(self, other: Any, fn: Callable) -> Tracer:
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

    def __iadd__(self, o: Any) -> Self:
        return self._inplace(o, _add)

    def __isub__(self, o: Any) -> Self:
        return self._inplace(o, _sub)

    def __imul__(self, o: Any) -> Self:
        return self._inplace(o, _mul)

    def __itruediv__(self, o: Any) -> Self:
        return self._inplace(o, _div)


def _add(a: Any, b: Any) -> Any:
    return a + b


def _sub(a: Any, b: Any) -> Any:
    return a - b


def _mul(a: Any, b: Any) -> Any:
    return a * b


def _div(a: Any, b: Any) -> Any:
    return a / b


_INPLACE_NAMES = {_add: "add", _sub: "subtract", _mul: "multiply", _div: "divide"}


def _read_only(x: Tracer) -> ReadOnlyError:
    """`_readonly` is True for arguments (and their views), or names the read-only view."""
    return ReadOnlyError(what=None if x._readonly is True else x._readonly)


def _keeps_array(key: Any) -> bool:
    """Whether an all-integer index still gives a 0-d array view (it holds an ellipsis)."""
    return key is Ellipsis or type(key) is tuple and any(k is Ellipsis for k in key)


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


def as_view(out: Any, base: Any, prim: P.Primitive, params: dict, readonly: bool | str = False
            ) -> Any:
    """Mark `out = prim(base)` as a view of `base` (writes through it reach the base, unless
    it is `readonly`, as NumPy's broadcast_to)."""
    if isinstance(out, Tracer) and isinstance(base, Tracer) and out is not base:
        out._view, out._base_seen = (base, prim, params), base.atom
        out._readonly = readonly or base._readonly
    return out


def c_contiguous(x: Tracer) -> bool:
    """Whether NumPy would make `x` C-contiguous, for the common views quickly: a fresh
    value, or a basic index of one that keeps a single run of memory (leading integers,
    then one slice of step 1, then whole axes: x[i], x[i, j:k], x[2:5]); else from its
    strided stand-in."""
    if x._view is None:
        return True
    base, prim, params = x._view
    if prim is not P.getitem or base._view is not None:
        return bool(strided(x).flags.c_contiguous)
    kept = False  # an axis of length > 1 has been kept: every later one must be whole
    for k, d in zip((k for k in params["idx"] if k is not None), base.shape):
        n = 1 if k.__class__ is int else len(k)
        if kept and d > 1 and (n != d or k.step != 1):
            return False
        if n > 1:
            if k.step != 1:
                return False
            kept = True
    return True


def strided(x: Tracer) -> np.ndarray:
    """A data-less stand-in with the strides NumPy would give `x` (never read: it aliases a
    one-element buffer), to ask NumPy whether a reshape or ravel of `x` can be a view. A
    fresh value is C-contiguous; a view applies its own indexing, transpose, reshape or
    broadcast to its base's stand-in."""
    if x._view is None:
        shape, item = x.shape, x.dtype.itemsize
        strides = tuple(int(np.prod(shape[i + 1:], dtype=np.int64)) * item
                        for i in range(len(shape)))
        return np.lib.stride_tricks.as_strided(np.empty(1, x.dtype), shape, strides)
    base, prim, params = x._view
    d = strided(base)
    if prim is P.getitem:
        return d[P.to_key(params["idx"])]
    if prim is P.transpose:
        return d.transpose(params["perm"])
    if prim is P.broadcast_to:
        return np.broadcast_to(d, params["shape"])
    out = reshaped_view(d, params["shape"])
    assert out is not None, "a reshape view was recorded that NumPy cannot make"
    return out


def reshaped_view(d: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """`d.reshape(shape)` if NumPy makes it a view, else None (NumPy would copy)."""
    try:
        return np.reshape(d, shape, copy=False)
    except ValueError:
        return None
    except TypeError:  # NumPy < 2.1 has no copy=: setting the shape fails where it would copy
        v = d.view()
        try:
            v.shape = shape
        except AttributeError:
            return None
        return v


def new_input(aval: Aval, builder: Builder, readonly: bool = True) -> Tracer:
    """A traced argument of the function (read-only unless asked otherwise)."""
    v = Var(aval)
    builder.inputs.append(v)
    return Tracer(builder, v, readonly=readonly, ndarray=True)


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
    return value if b is None else Tracer(b, Const(value), ndarray=True)


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
for _n, _p in [("floordiv", P.floor_divide), ("mod", P.remainder), ("and", P.bitwise_and),
               ("or", P.bitwise_or), ("xor", P.bitwise_xor), ("lshift", P.left_shift),
               ("rshift", P.right_shift)]:
    setattr(Tracer, f"__{_n}__", _prim_op(_p))
    setattr(Tracer, f"__r{_n}__", _prim_op(_p, swap=True))
    setattr(Tracer, f"__i{_n}__", lambda self, o, p=_p: self._inplace(o, p))
for _n, _f in [("pow", "power"), ("matmul", "matmul")]:
    setattr(Tracer, f"__i{_n}__", lambda self, o, f=_f: self._inplace(o, getattr(_vnp(), f)))
Tracer.__invert__ = lambda self: bind(P.invert, self)
Tracer.__divmod__ = lambda self, o: (bind(P.floor_divide, self, o), bind(P.remainder, self, o))
Tracer.__rdivmod__ = lambda self, o: (bind(P.floor_divide, o, self), bind(P.remainder, o, self))

# ndarray methods and attributes (each name of dir(numpy.ndarray) is decided in
# numpy/_ndarray.py): x.f(...) is vecgrad.numpy.f(x, ...) for these
for _n in ["sum", "mean", "max", "min", "prod", "reshape", "transpose", "ravel", "flatten",
           "squeeze", "dot", "clip", "swapaxes", "all", "any", "argmax", "argmin",
           "argpartition", "argsort", "choose", "conj", "conjugate", "cumprod", "cumsum",
           "diagonal", "nonzero", "repeat", "round", "searchsorted", "std", "take", "trace",
           "var"]:
    setattr(Tracer, _n, _method(_n))


def _nd_method(name: str) -> Callable:
    def m(self: Tracer, *args: Any, **kwargs: Any) -> Any:
        return getattr(_vnp()._ndarray, name)(self, *args, **kwargs)
    m.__name__ = name
    return m


for _n in ["fill", "item", "partition", "put", "sort", "tolist", "view", "setflags",
           "to_device", "compress", "tobytes", "tofile", "dump", "dumps", "byteswap",
           "getfield", "setfield", "resize", "__copy__", "__deepcopy__", "__array_namespace__",
           "__contains__", "__format__", "__round__", "__setstate__", "__reduce__", "__reduce_ex__",
           "__dlpack__", "__dlpack_device__"]:
    setattr(Tracer, _n, _nd_method(_n))
Tracer.astype = _nd_method("astype_")
for _n in ["strides", "data", "itemsize", "nbytes", "mT", "base", "device", "flags", "flat",
           "real", "imag"]:
    setattr(Tracer, _n, property(_nd_method("get_" + _n)))
Tracer.ctypes = Tracer.data
Tracer.T = property(lambda self: _vnp().transpose(self))
Tracer.real = property(lambda self: _vnp().real(self))
Tracer.imag = property(lambda self: _vnp().imag(self))
Tracer.conj = Tracer.conjugate = _method("conj")


def _copy(self: Tracer, order: str = "C") -> Tracer:
    """A copy (free: SSA values are immutable). A copy of a scalar is a scalar."""
    return Tracer(self._b, self.atom, ndarray=not self._is_scalar())


Tracer.copy = _copy
Tracer.__class_getitem__ = classmethod(lambda cls, item: __import__("types").GenericAlias(
    cls, item))


def _delitem(self: Tracer, key: Any) -> None:
    raise ValueError("cannot delete array elements")


Tracer.__delitem__ = _delitem


def _shape_args(args: tuple) -> Any:
    """`x.reshape(2, 3)`, `x.reshape((2, 3))` and `x.transpose(np.argsort(p))` alike."""
    if len(args) == 1 and isinstance(args[0], (tuple, list, np.ndarray, type(None))):
        return args[0]
    return args if args else None


Tracer.reshape = lambda self, *shape, order="C", copy=None: _vnp().reshape(
    self, _shape_args(shape), order, copy=copy)
Tracer.transpose = lambda self, *axes: _vnp().transpose(self, _shape_args(axes))


class WeakScalar(Tracer):
    """A Python int, float or complex passed as an argument, traced as a 0-d value instead of
    being static. Like a literal Python scalar it is weakly typed (NumPy 2 rules): combined
    with arrays it takes their dtype (`x32 * lr` stays float32), and Python arithmetic among
    such values stays weak (`lr * 2`), while a NumPy function of it is strongly typed, as
    `np.sqrt(0.1)` is a float64."""

    __slots__ = ("_kind",)
    _weak = True

    def __init__(self, builder: Builder, atom: Atom, kind: complex):
        super().__init__(builder, atom, readonly=True)
        self._kind = kind  # 0, 0.0 or 0j: stands for the Python type in np.result_type

    def __hash__(self) -> int:  # (a dict key needs the value)
        self._concrete()
        raise ConcretizationError("hash() (a dict key or set member)", user_src(2))

    def __repr__(self) -> str:
        return f"WeakScalar({type(self._kind).__name__}, {self.aval})"


_PY_KIND = {"b": None, "i": 0, "u": 0, "f": 0.0, "c": 0j}


def _weak_op(name: str) -> Callable:
    """Python arithmetic of weak scalars (with each other or Python numbers) stays weak."""
    def op(self: WeakScalar, *other: Any) -> Any:
        method = getattr(Tracer, name, None)
        if method is None:
            return NotImplemented
        out = method(self, *other)
        if not isinstance(out, Tracer) or other and not (
                isinstance(other[0], Tracer) and other[0]._weak or _is_scalar(other[0])):
            return out
        kind = _PY_KIND.get(out.dtype.kind)
        return out if kind is None or out.shape else WeakScalar(out._b, out.atom, kind)
    op.__name__ = name
    return op


for _n in ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow"]:
    for _m in (f"__{_n}__", f"__r{_n}__"):
        setattr(WeakScalar, _m, _weak_op(_m))
for _m in ("__neg__", "__pos__", "__abs__"):
    setattr(WeakScalar, _m, _weak_op(_m))
