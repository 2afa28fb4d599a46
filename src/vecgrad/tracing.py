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
In-place arithmetic (`x += v`) is in inplace.py.
"""
from __future__ import annotations

import dis
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .builder import (  # noqa: F401 (re-exported)
    Builder,
    _current,
    current_builder,
    entry,
    noting,
)
from .errors import (
    ConcretizationError,
    ReadOnlyError,
    TracedIntoNumpyError,
    TraceError,
    _where,
    numpy_caller,
    user_src,
)
from .hooks import NUMPY
from .hooks import PRIMITIVES as P
from .index import (
    Adv,
    BasicIndex,
    Sl,
    Traced,
    _fast_basic,
    ellipsis_separated,
    gather_after_ints,
    has_duplicates,
    index_shape,
    is_basic,
    normalize_index,
    split_bool_scalars,
)
from .ir import NUMBER_TYPES, Atom, Aval, Const, Primitive, Var, number_const, set_bind
from .views import (  # noqa: F401 (re-exported)
    TRACED_ROW,
    c_contiguous,
    copy_layout,
    fancy_layout,
    reshaped_view,
    strided,
    ufunc_layout,
)

# NumPy's functions that call functions the user passes (whose operations are on the user's
# lines inside them: no entry, see builder.entry)
_CALLS_BACK = frozenset([np.apply_along_axis, np.apply_over_axes, np.piecewise,
                         np.fromfunction, np.frompyfunc, np.vectorize])


def _is_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def bind(prim: Primitive, *args: Any, **params: Any) -> Any:
    """Apply `prim`: record an equation if any argument is traced, else compute it eagerly."""
    n, carry = len(args), None  # (carry: wraps the result of an either one's use)
    if n == 2 and args[0].__class__ is Tracer and args[1].__class__ is Tracer and \
            args[0]._b is args[1]._b:  # (two plain tracers of one trace, the most common)
        a, b = args
        builder = a._b
        atoms = (a._atom if a._view is None else a.atom, b._atom if b._view is None else b.atom)
    elif n == 1 and args[0].__class__ is Tracer:  # (one plain tracer: a unary operation)
        a = args[0]
        builder = a._b
        atoms = (a._atom if a._view is None else a.atom,)
    elif n == 2 and (args[0].__class__ is Tracer and args[1].__class__ in NUMBER_TYPES or
                     args[1].__class__ is Tracer and args[0].__class__ in NUMBER_TYPES):
        a, b = args  # (a plain tracer and a Python number: `x[i] * 2.0`, as below)
        t = a if a.__class__ is Tracer else b
        builder = t._b
        dts = (t._atom.aval.dtype,)
        try:
            atoms = (t.atom, number_const(b, dts)) if t is a else (number_const(a, dts), t.atom)
        except OverflowError:
            return _out_of_range(prim, args, params, builder)
    else:
        builder = None
        simple = True  # all arguments are (strongly typed) tracers of one trace
        for a in args:
            if isinstance(a, Tracer):
                if builder is None:
                    builder = a._b
                elif a._b is not builder:
                    builder = _inner(builder, a._b)
                    simple = False
                simple = simple and not a._weak and not a._depends
            else:
                simple = False
        if simple and builder is not None:  # all tracers: no dtypes to weigh
            atoms = [a.atom for a in args]
        else:
            dts = [a.dtype for a in args if isinstance(a, (np.ndarray, np.generic)) or
                   isinstance(a, Tracer) and not a._weak]
            joins = prim.name in ("stack", "concatenate")  # (NumPy makes numbers arrays)
            for a in args:  # (max(ix[i], 2): a NumPy scalar or a Python int, as the values
                # say; np.linalg.eig(a): complex or real, valuedtype.EitherComplex)
                if isinstance(a, Tracer) and a._depends:
                    carry = a.check_use(prim, args, params, dts, joins) or carry
            try:
                if builder is None:  # eager, with the same weak Python scalars as in a trace
                    return prim.impl(*[to_atom(a, dts).value for a in args], **params)
                atoms = [to_atom(a, dts, builder) for a in args]
            except OverflowError:  # a Python int out of the arrays' dtype's range
                return _out_of_range(prim, args, params, builder)
    v = builder.emit(prim, atoms, params)
    out = Tracer(builder, v)
    if prim.elementwise and len(v.aval.shape) > 1:
        out._layout = ufunc_layout(v.aval.shape, v.aval.dtype, args)
    return out if carry is None else carry(out)


set_bind(bind)


def _out_of_range(prim: Primitive, args: tuple, params: dict, builder: Builder | None) -> Any:
    """`uint8_array < -1` or `np.divide(int8_array, 1000)`: NumPy 2 compares exactly and
    computes in its loop's dtype where it can, and raises OverflowError where the Python int
    would have to become the array's dtype (`uint8_array + 300`). NumPy answers for one
    element of each array: where it raises, so does this; where it does not, the int keeps
    its own (wide) dtype and the result is cast to NumPy's dtype."""
    probe = [np.ones((), a.dtype) if isinstance(a, (Tracer, np.ndarray, np.generic)) else a
             for a in args]
    with np.errstate(all="ignore"):
        want = np.asarray(prim.impl(*probe, **params)).dtype  # (NumPy's OverflowError)
    wide = [np.asarray(a) if _is_scalar(a) else a for a in args]
    if builder is None:
        return np.asarray(prim.impl(*[to_atom(a).value for a in wide], **params)).astype(want)
    out = Tracer(builder, builder.emit(prim, [to_atom(a, (), builder) for a in wide], params))
    return out if out.dtype == want else NUMPY.astype(out, want)


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
            x = lift(builder, x)
        if x._weak and dtypes and not x._ndarray:  # (an array NumPy made of an either
            dt = np.result_type(*dtypes, x._kind)  # value is strongly typed in each case)
            if dt != x.dtype:
                return x._b.emit(P.cast, [x.atom], {"dtype": dt})
        return x.atom
    if _is_scalar(x):
        return number_const(x, dtypes)
    if isinstance(x, (np.ndarray, np.generic)):
        b = _current.get()
        return b.capture(x) if b is not None else Const(x)
    if isinstance(x, (list, tuple)):
        return to_atom(NUMPY.asarray(x), dtypes)
    why = getattr(type(x), "not_an_array", None)  # (numpy/_masked.py's x[mask])
    if why is not None:
        raise why(x)
    raise TypeError(f"vecgrad cannot use a value of type {type(x).__name__} as an array")


# Who answers bool() of a one-element traced value: while np.vectorize runs its kernel
# (numpy/_branches.py) a plan that picks an outcome and notes the condition, so that every
# path of a kernel's Python `if`s is traced; otherwise nobody (ConcretizationError).
BRANCHES: list[Callable[[Any], bool]] = []


class Tracer(Traced):
    """An array whose value is not known while tracing; only its shape and dtype are."""

    __slots__ = ("_atom", "_b", "_base_seen", "_layout", "_ndarray", "_origin", "_readonly",
                 "_view", "_wrote")
    __array_priority__ = 1000
    __hash__ = object.__hash__
    _weak = False  # True for a Python number passed as an argument (weak.WeakScalar)
    _either = False  # True where that depends on the values (pybuiltins.EitherScalar)
    _depends = False  # True where the dtype or value may depend on which item won (the same)

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
        # a fresh value NumPy does not lay out C-contiguously (a fancy index's result): its
        # strided stand-in, so that reshape/ravel copy where NumPy copies (see `strided`)
        self._layout: np.ndarray | None = None

    # -- value and metadata ---------------------------------------------------------
    @property
    def atom(self) -> Atom:
        if self._view is None:
            return self._atom
        base, prim, params = self._view
        if base.atom is not self._base_seen:  # the base was written: re-derive the view
            self._base_seen = base.atom
            self._atom = NUMPY.traced_row(base, params["key"]).atom if prim is TRACED_ROW \
                else self._b.emit(prim, [base.atom], params)
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
        rest = tuple(Sl(0, d, 1) for d in self.shape[1:])
        row = self.shape[1:]  # (getitem's shape rule, known)
        for i in range(len(self)):  # self[i], without re-normalizing the index each time
            idx = BasicIndex((i,) + rest)
            version = self.atom
            out = self._b.emit(P.getitem, [version], {"idx": idx}, row)
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
        if BRANCHES and self.size == 1:
            return BRANCHES[-1](self)
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
                                   else None, dtype=dtype)

    # -- NumPy protocols --------------------------------------------------------------
    @entry
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return NUMPY.dispatch_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Callable, types: Any, args: Any, kwargs: Any) -> Any:
        if func in _CALLS_BACK:  # (no entry, see builder.entry)
            return NUMPY.dispatch_function(func, args, kwargs)
        return noting(self._b, sys._getframe(1), NUMPY.dispatch_function, func, args, kwargs)

    # -- indexing -------------------------------------------------------------------
    def _is_scalar(self) -> bool:
        """Whether this is a NumPy scalar (immutable: in-place ops rebind the name only)."""
        return not self._atom.aval.shape and (self._origin is not None or
                                              self._view is None and not self._ndarray)

    @entry
    def __getitem__(self, key: Any) -> Tracer:
        shape = self._atom.aval.shape
        if key.__class__ is int and len(shape) == 1 and -shape[0] <= key < shape[0]:
            # x[i] of a vector, a scalar loop's read: an element (as below, without the
            # general index's parsing: this runs once per iteration of such a loop)
            idx = BasicIndex((key + shape[0] if key < 0 else key,))
            version = self._atom if self._view is None else self.atom
            return self._element(self._b.emit(P.getitem, [version], {"idx": idx}, ()), idx,
                                 version)
        dims: list = []  # (the result's shape, _fast_basic's)
        idx = _fast_basic(key if key.__class__ is tuple else (key,), shape, dims)
        if idx is None:
            dims = None
            if key.__class__ is Tracer:  # x[i] at a traced int (x[dst[e]]): a gather, as
                key._concrete()  # below, without normalize_index's error
                return NUMPY.traced_getitem(self, key)
            parts = split_bool_scalars(key)
            if parts is not None:  # x[True], x[i, False]: a new axis, indexed
                return self[parts[0]][parts[1]]
            sep = ellipsis_separated(key, len(shape))
            if sep is not None:  # x[:, 0, ..., j]: NumPy's result axes in NumPy's order
                out = self[sep[0]]
                p, k = sep[1], sep[2]
                return out.transpose([*range(p, p + k), *range(p), *range(p + k, out.ndim)])
            try:
                idx = normalize_index(key, shape)
            except TraceError:  # a traced integer index: a gather (see numpy/_indexing.py)
                return NUMPY.traced_getitem(self, key)
            parts = None if idx.__class__ is BasicIndex else gather_after_ints(idx, shape)
            if parts is not None:  # A[t, idx]: a view that moves with t, gathered (batches)
                return self[parts[0]][parts[1]]
        version = self._atom if self._view is None else self.atom
        out = self._b.emit(P.getitem, [version], {"idx": idx}, dims)
        if 0 in out.aval.shape:  # an empty selection holds no values: a constant (writes
            empty = Const(np.zeros(out.aval.shape, self.dtype))  # into it are no-ops)
            return Tracer(self._b, empty, ndarray=True)
        if idx.__class__ is not BasicIndex and not is_basic(idx):
            t = Tracer(self._b, out, ndarray=True)  # fancy indexing copies (writable)
            if len(out.aval.shape) > 1 and not isinstance(idx[0], Adv):
                t._layout = fancy_layout(self.shape, idx, self.dtype)
            return t
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

    @entry
    def __setitem__(self, key: Any, value: Any) -> None:
        if not self._atom.aval.shape and self._is_scalar():
            raise TypeError(f"'numpy.{self.dtype}' object does not support item assignment: "
                            "a 0-d result of an operation is a NumPy scalar, not an array"
                            f"{_where(user_src(2))}")
        if value.__class__ is Tracer and value._view is not None and value._view[0] is self \
                and value._view[1] is TRACED_ROW and value._view[2]["key"] is key \
                and value._base_seen is self.atom:
            return  # (`x[i] *= c` at a traced i: x[i]'s view wrote it through; x holds it)
        idx = _fast_basic(key if key.__class__ is tuple else (key,), self._atom.aval.shape)
        if idx is None:  # (not only ints and slices, the common case)
            slow = self._slow_key(key, value)
            if slow is None:
                return
            key, value, idx = slow
        if isinstance(value, Tracer):
            o = value._origin
            if o is not None and o[0] is self and o[3] is self.atom and o[1] == idx:
                if o[2] is not o[3]:  # `x[i] += v` on an element: its setitem_add is the write
                    self._replace(o[2])
                    return
            elif value._view is not None and value._view[0] is self \
                    and value._view[2].get("idx") == idx and value._wrote is self.atom:
                return  # `x[i] += v` already wrote through the view returned by x[i]
        if idx.__class__ is not BasicIndex and not is_basic(idx) \
                and has_duplicates(idx, self.shape) \
                and NUMPY.write_at_index_array(self, key, value):
            return  # repeated positions: NumPy's last write wins
        self._write(idx, value, P.setitem)

    def _slow_key(self, key: Any, value: Any) -> tuple | None:
        """`self[key] = value` for a key that is not only ints and slices: (the key, the
        value, the normalized index) to write as usual, or None where the write is done."""
        if key.__class__ is Tracer:  # x[i] = v at a traced int: as below, without
            key._concrete()  # normalize_index's error
            return self._write_traced(key, value)
        parts = split_bool_scalars(key)
        if parts is not None:  # x[True] = v: through the view with the new axis
            self[parts[0]][parts[1]] = value
            return None
        sep = ellipsis_separated(key, self.ndim)
        if sep is not None:  # (see __getitem__): the value's axes in the key's order
            key, p, k = sep
            v = NUMPY.asarray(value)
            rank = k + sum(e is None or isinstance(e, slice) for e in key)
            v = v.reshape((1,) * (rank - v.ndim) + v.shape) if v.ndim else v
            value = v.transpose([*range(k, k + p), *range(k), *range(k + p, v.ndim)]) \
                if v.ndim else v
        try:
            return key, value, normalize_index(key, self.shape)
        except TraceError:
            return self._write_traced(key, value)

    def _write_traced(self, key: Any, value: Any) -> None:
        """`self[key] = value` for a key holding traced values (done, or a TraceError)."""
        if (key.__class__ is Tracer and not key._atom.aval.shape and key.dtype.kind in "iu"
                and not hasattr(type(value), "write_into")):  # (x[i] = v at one traced int:
            masked = False  # no mask, and no masked selection to write back)
        else:
            masked = NUMPY.write_masked(self, key, value)
        if masked or NUMPY.wrote_at_read(self, key, value) \
                or NUMPY.write_at_traced(self, key, value) \
                or NUMPY.write_basic_first(self, key, value) \
                or NUMPY.write_at_index_array(self, key, value):
            return
        raise TraceError(
            "writing at a traced (data-dependent) index is supported for traced integer "
            "scalars among basic indices (x[i] = v, x[i, 1:] = v, x[i, j] = v) and for "
            "integer arrays with full slices (x[idx] = v, x[:, idx] = v, x[i, j] = v with "
            "arrays i, j: the last write to a repeated position wins, as in NumPy); for "
            "other forms write the whole region (x[idx] = v for the rows), accumulate with "
            "np.add.at(x, idx, v), or select values with vnp.where") from None

    def _write(self, idx: tuple, value: Any, prim: Primitive) -> None:
        if self._readonly:
            raise _read_only(self)
        if prim is P.setitem and not is_basic(idx) and has_duplicates(idx, self.shape):
            raise TraceError("an in-place write with repeated integer-array indices is "
                             "ambiguous (x[idx] += v adds once per position, as in NumPy); "
                             "to accumulate at repeated indices use np.add.at(x, idx, v)")
        if isinstance(value, complex) and self.dtype.kind in "biuf":  # (as NumPy's setitem)
            raise TypeError(f"{'float' if self.dtype.kind == 'f' else 'int'}() argument must "
                            f"be a string or a real number, not 'complex'{_where(user_src(3))}")
        val = value.atom if value.__class__ is Tracer and value._b is self._b else \
            to_atom(value, [self.dtype], self._b)  # (a plain tracer of this trace: its value)
        region = index_shape(self._atom.aval.shape, idx)
        extra = len(val.aval.shape) - len(region)
        if prim is P.setitem and extra > 0 and all(d == 1 for d in val.aval.shape[:extra]):
            # NumPy's assignment drops a value's leading unit axes beyond the region's rank
            # (`a[1] = y[:1]`; not `a[1] += y[:1]`, an in-place add into the view)
            val = self._b.emit(P.reshape, [val], {"shape": val.aval.shape[extra:]})
        if 0 in region:  # (an empty region: NumPy checks v's shape)
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
        elif prim is TRACED_ROW:
            NUMPY.write_at_traced(base, params["key"], Tracer(self._b, new))
        elif prim is P.real or prim is P.imag:  # z.real[...] = v: z - Re z + v (exact)
            unit = 1.0 if prim is P.real else 1j
            z = Tracer(self._b, base.atom)
            base._replace((z - prim(z) * unit + Tracer(self._b, new) * unit).atom)
        else:
            inv = tuple(int(i) for i in np.argsort(params["perm"]))
            base._replace(self._b.emit(P.transpose, [new], {"perm": inv}))
        self._atom, self._base_seen = new, base.atom


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


def as_view(out: Any, base: Any, prim: Primitive, params: dict, readonly: bool | str = False
            ) -> Any:
    """Mark `out = prim(base)` as a view of `base` (writes through it reach the base, unless
    it is `readonly`, as NumPy's broadcast_to)."""
    if isinstance(out, Tracer) and isinstance(base, Tracer) and out is not base:
        out._view, out._base_seen = (base, prim, params), base.atom
        out._readonly = readonly or base._readonly
    return out


def lift(b: Builder, t: Tracer) -> Tracer:
    """`t`, a value of an enclosing trace, as a value of this one: a constant as it is,
    anything else as an extra (read-only) input, one per value."""
    if t._b is b:
        return t
    if t._b.inside(b):
        raise TraceError("a function traced inside another one (a nested transformation) "
                         "wrote one of its values into an array of the enclosing function: "
                         "return the value instead")
    if b.parent is None or not b.parent.inside(t._b):
        raise _escaped()
    outer = lift(b.parent, t)
    atom = outer.atom
    if isinstance(atom, Const):
        return Tracer(b, atom)
    inner = b._lifted.get(atom)
    if inner is None:
        v = Var(atom.aval)
        b.inputs.append(v)
        b.closure.append((outer, v))
        # (a weak scalar stays one: weak.WeakScalar, and so does an either one)
        inner = b._lifted[atom] = outer._lifted_as(b, v) if outer._weak or outer._depends \
            else Tracer(b, v, readonly=True)
    return inner


def _copy(self: Tracer, order: str = "C") -> Tracer:
    """A copy (free: SSA values are immutable). A copy of a scalar is a scalar. It is laid
    out in `order` as NumPy's (which a later ravel(order='K') or reshape(order='A') reads)."""
    out = Tracer(self._b, self.atom, ndarray=not self._is_scalar())
    out._layout = copy_layout(self, order)
    return out


Tracer.copy = _copy
Tracer.__class_getitem__ = classmethod(lambda cls, item: __import__("types").GenericAlias(
    cls, item))


def _delitem(self: Tracer, key: Any) -> None:
    raise ValueError("cannot delete array elements")


Tracer.__delitem__ = _delitem
