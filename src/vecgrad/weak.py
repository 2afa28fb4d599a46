"""Python numbers passed as arguments, traced as weakly typed 0-d values (`WeakScalar`), so a
new value does not compile again."""
from __future__ import annotations

import dis
import functools
import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from .builder import Builder
from .errors import ConcretizationError, _is_internal, user_src
from .ir import Atom
from .tracing import Tracer, _is_scalar


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

    def _lifted_as(self, b: Builder, v: Atom) -> WeakScalar:
        """This value in the inner trace `b` (tracing.lift), as `v`."""
        return WeakScalar(b, v, self._kind)

    def __hash__(self) -> int:  # (a dict key needs the value)
        self._concrete()
        raise ConcretizationError("hash() (a dict key or set member)", user_src(2))

    def __repr__(self) -> str:  # (str(n), print(n), f"{n}" in the user's code: the
        self._user_needs("repr()")  # number's digits, as NumPy's program prints them)
        return f"WeakScalar({type(self._kind).__name__}, {self.aval})"

    def __str__(self) -> str:
        self._user_needs("str()")
        return f"WeakScalar({type(self._kind).__name__}, {self.aval})"

    def __format__(self, spec: str) -> str:
        self._user_needs("format()")
        return f"WeakScalar({type(self._kind).__name__}, {self.aval})"

    def _user_needs(self, what: str) -> None:
        if not _is_internal(sys._getframe(2).f_code.co_filename):  # (vecgrad's own messages
            self._needed(what)  # get the description)

    def __getattr__(self, name: str) -> Any:
        """An attribute of Python's int / float / complex that arrays lack (n.is_integer(),
        n.bit_length(), n.numerator): the value is needed, as for isinstance."""
        if not name.startswith("__") and hasattr(type(self._kind), name):
            self._needed(f".{name}")
        raise AttributeError(f"'{type(self._kind).__name__}' object has no attribute {name!r}")

    def _needed(self, what: str) -> None:
        """The user's code needs the value of this Python number (what NumPy's program sees:
        its digits, its Python type): the function is traced again with it static."""
        self._concrete()
        raise ConcretizationError(f"{what} of a Python number argument", user_src(3))

    @property
    def __class__(self) -> type:
        """isinstance(n, int) in the user's code asks what a traced Python number is: only
        its value can say (a WeakScalar is no int), so the function is traced again with n
        static, where the answer is NumPy's (it took the other branch silently before).
        vecgrad's own code (and NumPy's) gets the class."""
        if not _is_internal(sys._getframe(1).f_code.co_filename):
            self._concrete()
            raise ConcretizationError("isinstance() (a check of the type of a Python number "
                                      "argument)", user_src(2))
        return WeakScalar


_PY_KIND = {"b": None, "i": 0, "u": 0, "f": 0.0, "c": 0j}


def _weak_op(name: str) -> Callable:
    """Python arithmetic of weak scalars (with each other or Python numbers) stays weak."""
    def op(self: WeakScalar, *other: Any) -> Any:
        if other and type(other[0]) is int and not -2 ** 63 <= other[0] < 2 ** 63:
            self._needed("arithmetic with a Python int beyond int64")  # (Python's exact ints)
        method = getattr(Tracer, name, None)
        if method is None:
            return NotImplemented
        out = method(self, *other)
        if not isinstance(out, Tracer) or other and not (
                isinstance(other[0], Tracer) and other[0]._weak or _is_scalar(other[0])):
            return out
        kind = _PY_KIND.get(out.dtype.kind)
        if kind is None or out.shape:
            return out
        if other and isinstance(other[0], Tracer) and other[0]._either:  # (weak or strong,
            return type(other[0])(out._b, out.atom, kind)  # as that value)
        return WeakScalar(out._b, out.atom, kind)
    op.__name__ = name
    return op


def _pow(self: WeakScalar, other: Any, reflected: bool) -> Any:
    """Python's int ** int is a float when the exponent is negative (NumPy's integer power
    refuses it): a known negative exponent makes the power a float one, an int exponent of
    unknown sign needs its value."""
    base, exp = (other, self) if reflected else (self, other)
    ints = [type(getattr(a, "_kind", a)) is int for a in (base, exp)]
    if all(ints):
        if isinstance(exp, WeakScalar):
            exp._needed("** (a power of Python ints, whose type depends on its sign)")
        if exp < 0:
            return _weak_op("__pow__")(WeakScalar(base._b, base.astype(np.float64).atom, 0.0),
                                       exp)
    return _weak_op("__rpow__" if reflected else "__pow__")(self, other)


WeakScalar.__pow__ = lambda self, other, mod=None: _pow(self, other, False)
WeakScalar.__rpow__ = lambda self, other, mod=None: _pow(self, other, True)

for _n in ["add", "sub", "mul", "truediv", "floordiv", "mod"]:
    for _m in (f"__{_n}__", f"__r{_n}__"):
        setattr(WeakScalar, _m, _weak_op(_m))
for _m in ("__neg__", "__pos__", "__abs__"):
    setattr(WeakScalar, _m, _weak_op(_m))


# ------------------------------------------------------------------ type() in the user's code

def asks_type(fun: Callable, args: tuple = (), kwargs: dict | None = None) -> bool:
    """Whether the user's code that `fun` runs can call `type(...)`: its own code, the
    functions and lambdas defined in it, the functions its closures hold and its module-level
    names refer to (transitively), and functions passed as arguments. Of a traced Python
    number, `type(n)` answers WeakScalar where NumPy's program sees int or float, so
    `type(n) is float` would silently take the other branch: a function that asks is traced
    with its Python numbers static (unlike isinstance, `type` cannot be intercepted)."""
    todo: list[Any] = [fun, *args, *(kwargs or {}).values()]
    seen: set[int] = set()
    while todo:
        obj = todo.pop()
        if id(obj) in seen or len(seen) > 512:  # (a bound on what a huge program reaches)
            continue
        seen.add(id(obj))
        if isinstance(obj, (list, tuple)):
            todo += [o for o in obj if callable(o) or isinstance(o, (list, tuple))]
            continue
        if isinstance(obj, functools.partial):
            todo += [obj.func, *obj.args, *obj.keywords.values()]
            continue
        obj = getattr(obj, "__func__", obj)  # (a bound method)
        wrapped = getattr(obj, "__wrapped__", None)  # (a transformed function)
        if wrapped is not None and wrapped is not obj:
            todo.append(wrapped)
        if not isinstance(obj, types.FunctionType):
            call = vars(type(obj)).get("__call__")  # (an object called as a kernel)
            if isinstance(call, types.FunctionType):
                todo.append(call)
            continue
        todo += [c.cell_contents for c in obj.__closure__ or () if _holds(c)]
        todo += [d for d in (*(obj.__defaults__ or ()), *(obj.__kwdefaults__ or {}).values())
                 if callable(d)]  # (a kernel as a default argument)
        if _is_internal(obj.__code__.co_filename) or obj.__code__.co_filename.startswith(
                _LIBS):
            continue
        calls, names = _scan(obj.__code__)
        if calls:
            return True
        g = obj.__globals__
        todo += [g[n] for n in names if n in g and callable(g[n])]
    return False


_LIBS = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix})  # (the library's own code)


def _holds(cell: Any) -> bool:
    try:
        c = cell.cell_contents
    except ValueError:  # (an empty cell)
        return False
    return callable(c) or isinstance(c, (list, tuple))


@functools.lru_cache(maxsize=4096)
def _scan(code: types.CodeType) -> tuple[bool, tuple[str, ...]]:
    """(whether `code` or code nested in it loads the name `type`, the global names it
    loads)."""
    names: set[str] = set()
    for c in _nested(code):
        for ins in dis.get_instructions(c):
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF"):
                if ins.argval == "type":
                    return True, ()
                names.add(ins.argval)
    return False, tuple(names)


def _nested(code: types.CodeType) -> list[types.CodeType]:
    out, todo = [], [code]
    while todo:
        c = todo.pop()
        out.append(c)
        todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    return out
