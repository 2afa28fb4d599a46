"""The intermediate representation: a small immutable graph of single-output equations.

Every stage of the pipeline (trace, passes, AD, codegen) consumes and produces a `Graph`.
Equations keep their static parameters (hashable) and the user's source line, which is what
batching groups on and what `explain` reports.
"""
from __future__ import annotations

import functools
import itertools
import math
import operator
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np


class Aval(NamedTuple):
    """Abstract value: the shape and dtype of an array, without its data. (A NamedTuple:
    tracing creates one per operation, and tuples are the cheapest immutable records.)"""

    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __str__(self) -> str:
        return f"{_short_dtype(self.dtype)}[{','.join(map(str, self.shape))}]"


# Aval(shape, dtype) without the NamedTuple constructor's Python-level __new__ (a shape rule
# that runs once per operation, as getitem's at a new index: new_aval((shape, dtype)))
new_aval = functools.partial(tuple.__new__, Aval)


def _short_dtype(dt: np.dtype) -> str:
    return {"float32": "f32", "float64": "f64", "int64": "i64", "int32": "i32", "bool": "bool"}.get(
        dt.name, dt.name)


_next_num = itertools.count().__next__  # value numbers (see Var)


class Var:
    """A value defined by exactly one equation (or a graph input). Hashed by identity (a
    trace holds one per operation: it is kept small; printers name vars themselves).

    `num` is its value number, from one counter in creation order: the values of a trace are
    numbered densely in program order, so that a pass over a big graph can keep a table per
    value as a list indexed by `num - lo` (see `VarTable`), whose look-ups stay near each
    other in memory, where a dict keyed by vars hashes their addresses all over a big table."""

    __slots__ = ("aval", "num")

    def __init__(self, aval: Aval, _next: Callable[[], int] = _next_num):  # (a local: fast)
        self.aval = aval
        self.num = _next()

    def __repr__(self) -> str:
        return f"Var#{id(self):x}:{self.aval}"


def var_span(eqns: Sequence[Eqn]) -> tuple[int, int]:
    """(lo, size): the value numbers of the equations' results lie in lo .. lo + size - 1, a
    span at most about twice their count (a trace's numbering); (0, 0) when they do not."""
    if not eqns:  # (the first and last results: in program order, as traced)
        return 0, 0
    lo = eqns[0].out.num
    size = eqns[-1].out.num - lo + 1
    return (lo, size) if 0 < size <= 2 * len(eqns) + 1024 else (0, 0)


class VarTable:
    """A map from the results of a graph's equations to values (never None): a list indexed
    by value number over the span of those numbers (dense for a trace, see `Var`), and a dict
    for the vars outside it (made after the table, or a graph whose numbers lie far apart).
    Hot loops read `tab`, `lo`, `size` and `extra` inline:
    `j = v.num - lo; x = tab[j] if 0 <= j < size else extra.get(v)`."""

    __slots__ = ("extra", "lo", "size", "tab")

    def __init__(self, eqns: Sequence[Eqn]):
        self.lo, self.size = var_span(eqns)
        self.tab: list[Any] = [None] * self.size
        self.extra: dict[Var, Any] = {}

    def get(self, v: Var) -> Any:
        j = v.num - self.lo
        return self.tab[j] if 0 <= j < self.size else self.extra.get(v)

    def __setitem__(self, v: Var, x: Any) -> None:
        j = v.num - self.lo
        if 0 <= j < self.size:
            self.tab[j] = x
        else:
            self.extra[v] = x


class Const:
    """A constant array captured at trace time (literal, captured global, created buffer)."""

    __slots__ = ("_key", "aval", "value")

    def __init__(self, value: Any):
        self.value = np.asarray(value)
        self.aval = Aval(self.value.shape, self.value.dtype)

    def key(self) -> tuple:
        """A hashable identity of the constant's contents (small ones) or object (large ones)."""
        try:
            return self._key
        except AttributeError:
            v = self.value
            self._key = ("c", v.dtype.str, v.shape, v.tobytes()) if v.size <= 64 else \
                ("id", id(v))
            return self._key

    def __repr__(self) -> str:
        return f"Const({self.aval})"


Atom = Var | Const

NUMBER_TYPES = (float, int)  # (Python numbers taken by tracing's fast path)
_NUMBERS: dict[tuple, Const] = {}  # (type, number, the arrays' dtypes) -> its constant


def number_const(x: Any, dtypes: Sequence[np.dtype]) -> Const:
    """A Python number as a constant in the arrays' dtypes, as NumPy 2 weighs a weak scalar
    (`x * 2.0` in a loop: its value and content key made once, read-only, shared by a new
    Const per use: batching tells operands apart by identity). Zeros are made afresh (-0.0
    == 0.0), as are NaNs (not equal to themselves) and complex numbers."""
    key = (x.__class__, x, *dtypes)
    c = _NUMBERS.get(key)
    if c is None:
        c = Const(np.asarray(x, np.result_type(*dtypes, x) if dtypes else None))
        if x and x.__class__ is not complex and not (x.__class__ is float and math.isnan(x)):
            c.value.flags.writeable = False
            if len(_NUMBERS) >= 4096:  # (bounded)
                _NUMBERS.clear()
            _NUMBERS[key] = c
        return c
    out = _new_const(Const)
    out.value, out.aval, out._key = c.value, c.aval, c.key()
    return out


_new_const = object.__new__


class Params(dict):
    """Immutable, hashable equation parameters (all values must be hashable)."""

    __slots__ = ("_hash",)

    def __init__(self, *args: Any, **kwargs: Any):
        dict.__init__(self, *args, **kwargs)
        self._hash: int | None = None

    def __hash__(self) -> int:  # type: ignore[override]
        h = self._hash
        if h is None:
            h = self._hash = hash(params_key(self))
        return h

    @classmethod
    def of(cls, params: dict) -> Params:
        """Params holding `params` (without the Python-level __init__: tracing makes one per
        operation whose parameters are new)."""
        p = dict.__new__(cls)
        dict.update(p, params)
        p._hash = None
        return p

    def _immutable(self, *a: Any, **k: Any) -> None:
        raise TypeError("Params are immutable")

    __setitem__ = __delitem__ = update = pop = clear = setdefault = _immutable  # type: ignore


def params_key(params: dict) -> tuple:
    """A hashable key of a parameter dict, equal for equal dicts: its one (name, value) item,
    or its items in name order (a tuple of pairs, never equal to a pair: its first element
    is not a name)."""
    if not params:
        return ()
    items = tuple(params.items())
    return items[0] if len(items) == 1 else tuple(sorted(items))


@dataclass(frozen=True, eq=False)
class Primitive:
    """One record per primitive: impl, shape rule, VJP and batching rule side by side (the
    conventions are in primitives/core.py's docstring). How a backend runs it is that backend's
    lowering table (backends/numpy/table.py, backends/jax, backends/torch)."""

    name: str
    impl: Callable[..., np.ndarray]
    shape_rule: Callable[..., Aval]
    vjp: Callable[..., tuple] | None = None
    batch: Callable[..., Any] | None = None
    elementwise: bool = False  # out[i] depends on in[i] only (with NumPy broadcasting)

    def __call__(self, *args: Any, **params: Any) -> Any:
        return _bind(self, *args, **params)

    def __repr__(self) -> str:
        return self.name


def _bind(prim: Primitive, *args: Any, **params: Any) -> Any:
    raise RuntimeError("vecgrad.tracing is not imported: it installs how primitives apply")


def set_bind(bind: Callable[..., Any]) -> None:
    """Install how a primitive applies to its arguments: tracing's `bind` (record an equation
    when an argument is traced, else compute). Tracing sits above ir and registers it when
    imported."""
    global _bind
    _bind = bind
    # (and a primitive's call is `bind` itself: one Python frame less per traced operation)
    Primitive.__call__ = bind  # type: ignore[method-assign]


class Src(NamedTuple):
    """Where the user wrote the operation: file, line and enclosing function."""

    file: str
    line: int
    func: str

    def __str__(self) -> str:
        import os
        return f"{os.path.basename(self.file)}:{self.line}"


class Eqn(NamedTuple):
    """`out = prim[params](*inputs)`, with the user's source line."""

    prim: Primitive
    inputs: tuple[Atom, ...]
    params: Params
    out: Var
    src: Src | None = None


# Eqn(...) without the NamedTuple constructor's keyword handling (tracing makes one per
# operation): new_eqn((prim, inputs, params, out, src)).
new_eqn = functools.partial(tuple.__new__, Eqn)


@dataclass(frozen=True, eq=False)
class Graph:
    """A straight-line program. `notes` carries pass diagnostics (e.g. why work did not batch)."""

    inputs: tuple[Var, ...]
    eqns: tuple[Eqn, ...]
    outputs: tuple[Atom, ...]
    notes: tuple[Any, ...] = field(default=())

    def replace(self, **kw: Any) -> Graph:
        d = {"inputs": self.inputs, "eqns": self.eqns, "outputs": self.outputs, "notes": self.notes}
        d.update(kw)
        return Graph(**d)

    def __str__(self) -> str:
        return pretty(self)


class TypeCheckError(Exception):
    """The graph is malformed: a pass has a bug."""


def typecheck(g: Graph) -> Graph:
    """Check that every var is defined once before use and every aval matches its shape rule;
    the body of a higher-order primitive (a Graph among its params) is checked too."""
    defined: set[Var] = set()
    for v in g.inputs:
        _define(defined, v)
    for i, e in enumerate(g.eqns):
        for a in e.inputs:
            if isinstance(a, Var) and a not in defined:
                raise TypeCheckError(f"eqn {i} ({e.prim.name}) uses undefined {a!r}")
        try:
            expect = e.prim.shape_rule(*[a.aval for a in e.inputs], **e.params)
        except Exception as ex:
            raise TypeCheckError(f"eqn {i} ({e.prim.name}) fails its shape rule: {ex}") from ex
        if expect != e.out.aval:
            raise TypeCheckError(f"eqn {i} ({e.prim.name}) declares {e.out.aval}, rule gives {expect}")
        for k, v in e.params.items():
            if isinstance(v, Graph):
                try:
                    typecheck(v)
                except TypeCheckError as ex:
                    raise TypeCheckError(f"eqn {i} ({e.prim.name}), {k}: {ex}") from ex
        _define(defined, e.out)
    for a in g.outputs:
        if isinstance(a, Var) and a not in defined:
            raise TypeCheckError(f"output {a!r} is undefined")
    return g


def _define(defined: set[Var], v: Var) -> None:
    if v in defined:
        raise TypeCheckError(f"{v!r} is defined twice")
    defined.add(v)


_INPUTS = operator.itemgetter(1)  # an equation's inputs


def uses(g: Graph) -> dict[Var, int]:
    """How many times each var is read (by equations and outputs). (Constants are counted
    too, as keys of their own: counting every atom runs in C, once per trace in batching.)"""
    n: Counter = Counter(itertools.chain.from_iterable(map(_INPUTS, g.eqns)))
    n.update(g.outputs)
    return n


def dce(g: Graph) -> Graph:
    """Dead-code elimination: keep only the equations that an output depends on."""
    live = {a for a in g.outputs if isinstance(a, Var)}
    keep = []
    for e in reversed(g.eqns):
        if e.out in live:
            keep.append(e)
            live.update(e.inputs)  # (constants too: they are never an equation's output)
    if len(keep) == len(g.eqns):
        return g
    return g.replace(eqns=tuple(reversed(keep)))


def eval_graph(g: Graph, *args: Any) -> list[Any]:
    """Evaluate `g` on arrays, one primitive `impl` per equation (the reference interpreter;
    generated code is what runs in practice)."""
    env: dict[Var, Any] = dict(zip(g.inputs, args))

    def read(a: Atom) -> Any:
        return a.value if isinstance(a, Const) else env[a]
    for e in g.eqns:
        env[e.out] = e.prim.impl(*[read(a) for a in e.inputs], **e.params)
    return [read(a) for a in g.outputs]


# ----------------------------------------------------------------------------- printing

def _name(i: int) -> str:
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(97 + r) + s
    return s


def fmt_param(v: Any) -> str:
    """A parameter as the pretty-printer shows it."""
    if type(v) is tuple:  # not NamedTuples such as slices (Sl), which print themselves
        return "(" + ", ".join(fmt_param(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    return str(v)


def pretty(g: Graph, max_eqns: int | None = None) -> str:
    """Readable listing, one equation per line, with the source line of each."""
    names: dict[Var, str] = {}

    def nm(a: Atom) -> str:
        if isinstance(a, Const):
            v = a.value
            return repr(v.item()) if v.ndim == 0 else f"const{a.aval}"
        if a not in names:
            names[a] = _name(len(names))
        return names[a]

    ins = " ".join(f"{nm(v)}:{v.aval}" for v in g.inputs)
    lines = [f"{{ lambda {ins} ."]
    eqns = g.eqns if max_eqns is None or len(g.eqns) <= max_eqns else g.eqns[:max_eqns]
    for e in eqns:
        ps = ", ".join(f"{k}=" + ("{...}" if isinstance(v, Graph) else fmt_param(v))
                       for k, v in e.params.items())
        head = f"  {nm(e.out)}:{e.out.aval} = {e.prim.name}"
        head += f"[{ps}]" if ps else ""
        head += " " + " ".join(nm(a) for a in e.inputs)
        lines.append(head + (f"    # {e.src}" if e.src else ""))
        for k, v in e.params.items():  # a body prints below its equation, indented
            if isinstance(v, Graph):
                lines += [f"      {k} = " + ln if j == 0 else "      " + ln
                          for j, ln in enumerate(pretty(v, max_eqns).splitlines())]
    if len(eqns) < len(g.eqns):
        lines.append(f"  ... {len(g.eqns) - len(eqns)} more equations")
    lines.append(f"  in ({', '.join(nm(a) for a in g.outputs)}) }}")
    return "\n".join(lines)
