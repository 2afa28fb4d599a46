"""Typed errors. Each one names the user's own file and line when it is known."""
from __future__ import annotations

import functools
import itertools
import linecache
import os
import re
import sys

import numpy as np

from .ir import Src

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_EXAMPLES_DIR = os.path.join(_PKG_DIR, "examples")
_NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__))


@functools.lru_cache(maxsize=4096)
def _is_internal(fname: str) -> bool:
    if fname.startswith("<"):
        return fname.startswith("<frozen")
    fname = os.path.abspath(fname)
    if fname.startswith(_PKG_DIR) and not fname.startswith(_EXAMPLES_DIR):
        return True
    return fname.startswith(_NUMPY_DIR)


def _public_numpy_name(parts: list[str]) -> str:
    """The name users call a NumPy function by: numpy.lib._function_base_impl's
    asarray_chkfinite is np.asarray_chkfinite, while linalg's norm stays linalg.norm."""
    for cand in (parts, parts[-1:]):
        obj = np
        for part in cand:
            obj = getattr(obj, part, None)
        if obj is not None:
            return ".".join(cand)
    return ".".join(parts)


def numpy_caller(depth: int = 1) -> str | None:
    """The NumPy function the user's code called, if the stack from the user's frame down
    to `depth` runs inside NumPy's Python code (e.g. np.mean converting its argument)."""
    f, name = sys._getframe(depth + 1), None
    while f is not None:
        fname = f.f_code.co_filename
        if not _is_internal(fname):
            return name
        if os.path.abspath(fname).startswith(_NUMPY_DIR):  # e.g. numpy.linalg._linalg.norm
            mod = f.f_globals.get("__name__", "numpy").split(".")
            public = list(itertools.takewhile(lambda m: not m.startswith("_"), mod[1:]))
            qual = f.f_code.co_qualname.split(".")  # (a method: np.vectorize's __call__
            qual = [q for q in qual if not q.startswith("_")] or qual[-1:]  # is vectorize)
            name = _public_numpy_name(public + qual)
        f = f.f_back
    return None


_SRCS: dict[tuple, Src] = {}  # (file, line, function) -> its Src: one Src per line
_AT: dict[tuple, tuple] = {}  # (id(code), instruction offset) -> (code, its Src)
_INTERNAL_FILES: dict[str, bool] = {}  # a code object's file name -> _is_internal(it)


def user_src(depth: int = 1) -> Src | None:
    """The innermost stack frame that belongs to user code (not vecgrad or numpy), as a Src
    shared by every call from that line (see `src_from`)."""
    return src_from(sys._getframe(depth))


def src_from(f) -> Src | None:
    """The first frame from `f` outwards that belongs to user code, as a Src shared by every
    call from that line (tracing asks once per operation: a frame is told internal by its
    file name, whose hash a string keeps; the user's frame is looked up by its code object
    and instruction offset, cheaper than its line number, which is computed once per
    instruction; one Src per line keeps a long trace small)."""
    internal = _INTERNAL_FILES
    while f is not None:
        code = f.f_code
        fname = code.co_filename
        inside = internal.get(fname)
        if inside is None:
            inside = internal_file(fname)
        if not inside:
            at = (id(code), f.f_lasti)
            hit = _AT.get(at)
            if hit is not None and hit[0] is code:  # (the entry keeps its code alive: an id
                return hit[1]  # is not reused while it is cached)
            key = (fname, f.f_lineno, code.co_name)
            src = _SRCS.get(key)
            if src is None:
                if len(_SRCS) >= 100_000:  # (bounded)
                    _SRCS.clear()
                src = _SRCS[key] = Src(*key)
            if len(_AT) >= 100_000:
                _AT.clear()
            _AT[at] = (code, src)
            return src
        f = f.f_back
    return None


def internal_file(fname: str) -> bool:
    """Whether code of this file is vecgrad's or NumPy's (memoized in _INTERNAL_FILES, which
    hot paths read first)."""
    inside = _INTERNAL_FILES.get(fname)
    if inside is None:
        if len(_INTERNAL_FILES) >= 100_000:
            _INTERNAL_FILES.clear()
        inside = _INTERNAL_FILES[fname] = _is_internal(fname)
    return inside


def traceback_user_src(tb) -> Src | None:
    """The innermost frame of a traceback that belongs to user code."""
    src = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if not _is_internal(code.co_filename):
            src = Src(code.co_filename, tb.tb_lineno, code.co_name)
        tb = tb.tb_next
    return src


def _where(src: Src | None) -> str:
    return f" (at {src.file}:{src.line}, in {src.func})" if src else ""


def locate_numpy_error(ex: BaseException) -> None:
    """NumPy's own IndexError and AxisError, raised while tracing (`x[5]` of 3 rows, `axis=2`
    of a matrix), again with the same type and message plus the user's line, as vecgrad's
    own errors say it: the line is otherwise a frame deep among vecgrad's."""
    if not isinstance(ex, IndexError) or isinstance(ex, VecgradError) or "(at " in str(ex):
        return  # (np.exceptions.AxisError is an IndexError too)
    src = traceback_user_src(ex.__traceback__)
    if src is None:
        return
    try:
        located = type(ex)(str(ex) + _where(src))
    except Exception:  # noqa: BLE001 (a subclass with another constructor: leave it as it is)
        return
    raise located.with_traceback(ex.__traceback__) from None


class VecgradError(Exception):
    """Base class of all vecgrad errors."""


class RewriteCycleError(VecgradError, RuntimeError):
    """Internal: simplification rules undid each other (a rewrite re-created an earlier form)
    or kept rewriting one equation past the engine's bound. Raised only where rewrites are
    checked strictly (VECGRAD_TYPECHECK=1, as in vecgrad's tests); otherwise the engine keeps
    the form reached, which is exact, and compiles on. A bug in vecgrad: please report it."""


class ArgumentError(VecgradError, TypeError, ValueError):
    """A vecgrad function was called with invalid arguments (argnums out of range, a
    non-callable function, a cotangent of the wrong structure, ...)."""


class ConcretizationError(VecgradError, TypeError):
    """A traced value was needed as a concrete Python value (bool, int, float, index)."""

    def __init__(self, what: str, src: Src | None = None):
        src = src or user_src(2)
        super().__init__(
            f"{what} of a traced array{_where(src)}: values are not known while vecgrad traces "
            "the function, only shapes and dtypes are. Python control flow on array values "
            "cannot be traced. Use vnp.where(cond, x, y) to select values, or pass the value "
            "as a static (non-array) argument." + _line_hints(src))


_BUILTIN_COMPARE = re.compile(r"(?<![\w.])(max|min|sorted)\s*\(")


def _line_hints(src: Src | None) -> str:
    """What the user's line says of the C code that asked for a value (no frame does)."""
    line = linecache.getline(src.file, src.line) if src else ""
    return _builtin_hint(line) + _math_hint(line)


def _builtin_hint(line: str) -> str:
    """Python's max/min/sorted compare with `<` and call bool() from C: point at the array
    function they meant."""
    found = sorted(set(_BUILTIN_COMPARE.findall(line)))
    if not found:
        return ""
    verb = "compares" if len(found) == 1 else "compare"
    return (f" Python's {'/'.join(f + '()' for f in found)} {verb} values with < and >: use "
            "vnp.maximum(a, b) / vnp.minimum(a, b) for two values, vnp.max(x) / vnp.min(x) "
            "over an array, vnp.sort(x) to sort.")


_MATH_CALL = re.compile(r"(?<![\w.])math\.(\w+)\s*\(")
# math's functions whose NumPy counterpart has another name (the rest share theirs)
_MATH_TO_NUMPY = {"fabs": "np.abs", "pow": "np.power (or **)", "atan2": "np.arctan2",
                  "asin": "np.arcsin", "acos": "np.arccos", "atan": "np.arctan",
                  "asinh": "np.arcsinh", "acosh": "np.arccosh", "atanh": "np.arctanh",
                  "erf": "vecgrad.scipy.special.erf", "erfc": "vecgrad.scipy.special.erfc",
                  "gamma": "vecgrad.scipy.special.gamma", "lgamma": "vecgrad.scipy.special.gammaln",
                  "fsum": "np.sum", "prod": "np.prod", "dist": "np.linalg.norm(a - b)"}


def _math_hint(line: str) -> str:
    """`math.exp(x)` asks float() of x from C: name the NumPy counterparts of the math
    functions the line calls."""
    found = sorted(set(_MATH_CALL.findall(line)))
    if not found:
        return ""
    use = ", ".join(f"{_MATH_TO_NUMPY.get(f, 'np.' + f)}(...) for math.{f}(...)" for f in found)
    return (f" The math module computes on Python floats, which a trace does not have: use "
            f"{use}, which vecgrad traces (NumPy's values; inf or nan with a warning where "
            "math raises).")


class NotWritable(str):
    """Names a view that NumPy can write through but vecgrad cannot (a ReadOnlyError then
    says so rather than "as in NumPy")."""


class ReadOnlyError(VecgradError, ValueError, TypeError):
    """An in-place write into a function argument (or a view of one), or into a read-only
    view such as `broadcast_to`'s (`what` names it). A ValueError as NumPy's read-only
    arrays raise, and a TypeError as JAX's and autograd's immutable arrays do."""

    def __init__(self, src: Src | None = None, what: str | None = None):
        src = src or user_src(2)
        if what:
            why = "vecgrad cannot write through it (NumPy can)" if \
                isinstance(what, NotWritable) else "it is read-only, as in NumPy"
            super().__init__(f"in-place write into {what}{_where(src)}: {why}. Make a copy "
                             "first (y = y.copy()), or write into the array it views.")
            return
        super().__init__(
            f"in-place write into a function argument{_where(src)}: arguments are read-only "
            "inside vecgrad-traced functions. Make a copy first (x = x.copy()) or build the "
            "result in a new buffer made with vnp.zeros/vnp.empty.")


def _in_vnp(name: str) -> bool:
    """Whether vecgrad.numpy has the function `name` (dotted, e.g. "linalg.norm"). Read from
    sys.modules: it is loaded whenever something is being traced, and errors sit below it."""
    obj = sys.modules.get("vecgrad.numpy")
    for part in name.split("."):
        obj = getattr(obj, part, None)
    return callable(obj)


_SCALAR_TYPE_CALL = re.compile(
    r"(?<![\w.])((?:np|numpy)\.(?:float(?:16|32|64)|u?int(?:8|16|32|64)|complex(?:64|128)|"
    r"bool_?|intp|uintp|half|single|double|longdouble|byte|ubyte|short|ushort|intc|uintc|"
    r"long|ulong|longlong|ulonglong|csingle|cdouble))\s*\(")


def _scalar_type_call(src: Src | None, dtype: object) -> str | None:
    """The NumPy scalar type of `dtype` that the user's line calls (np.float32(x) asks x for
    a plain array of its dtype from C, so no frame says so), or None."""
    if dtype is None:
        return None
    found = set(_SCALAR_TYPE_CALL.findall(linecache.getline(src.file, src.line) if src else ""))
    return next((f for f in sorted(found)
                 if hasattr(np, f[3:] if f.startswith("np.") else f[6:]) and
                 np.dtype(getattr(np, f.split(".")[1])) == np.dtype(dtype)), None)


class TracedIntoNumpyError(VecgradError, TypeError):
    """A traced value was converted to a plain NumPy array (e.g. written into np.empty)."""

    def __init__(self, src: Src | None = None, numpy_func: str | None = None,
                 dtype: object = None):
        src = src or user_src(2)
        if numpy_func:
            instead = ("np.r_[...] and np.c_[...] do not hand traced arrays to vecgrad: write "
                       "vnp.r_[...] or vnp.c_[...] (import vecgrad.numpy as vnp)"
                       if numpy_func.endswith("AxisConcatenator") else
                       f"call vnp.{numpy_func}(...) instead (import vecgrad.numpy as vnp)"
                       if _in_vnp(numpy_func) else
                       f"vecgrad.numpy has no {numpy_func}: compute it outside the traced "
                       "function, or from the vnp functions it is made of")
            super().__init__(
                f"numpy.{numpy_func} tried to make a plain NumPy array of a traced value"
                f"{_where(src)}. NumPy hands a call to vecgrad only when the function "
                "dispatches on its arguments and they are arrays, not lists or tuples of "
                f"them: {instead}. If you passed a list of traced arrays, vnp.stack(the_list) "
                "makes it one array.")
            return
        cast = _scalar_type_call(src, dtype)
        if cast:
            super().__init__(
                f"{cast}(x) of a traced value{_where(src)} asks for x's value, which a trace does "
                f"not have (NumPy's scalar types make plain NumPy values): write "
                f"x.astype({cast}) (or vnp.asarray(x, dtype={cast})), which vecgrad traces with "
                "NumPy's values and dtype.")
            return
        super().__init__(
            f"a traced array cannot become a plain NumPy array{_where(src)}. If you are writing "
            "into a buffer, create it with vnp.zeros/vnp.empty (import vecgrad.numpy as vnp) "
            "instead of np.zeros/np.empty so that the write can be traced (vnp.arange, "
            "vnp.linspace, vnp.eye and vnp.array of constants give constant NumPy arrays: "
            "start from vnp.zeros(n) + vnp.arange(n) to write into one). If you are making "
            "an array from a list of traced values, use vnp.array(...) or vnp.stack(...) "
            "instead of np.array/np.asarray. If you are converting a traced value with a "
            "NumPy type (np.float32(x), np.int64(x)), use x.astype(np.float32). If you are indexing a NumPy array with a traced "
            "index (c[i] with c a constant array: NumPy's indexing cannot hand the work to "
            "vecgrad), use vnp.take(c, i, axis=k), or for several index arrays "
            "vnp.take(c, vnp.ravel_multi_index((i, j), c.shape)).")


class ShapeError(VecgradError, ValueError):
    """Operand shapes do not fit the operation."""

    def __init__(self, msg: str, src: Src | None = None):
        src = src or user_src(2)
        super().__init__(msg + _where(src))


class TraceError(VecgradError, ValueError):
    """The function cannot be traced as written (e.g. a data-dependent index)."""

    def __init__(self, msg: str, src: Src | None = None):
        src = src or user_src(2)
        super().__init__(msg + _where(src))


class NoGradientError(VecgradError, NotImplementedError):
    """A gradient was asked of a function with respect to an argument it has no derivative
    rule for (e.g. scipy.special.gammainc with respect to its shape parameter)."""

    def __init__(self, what: str, src: Src | None = None):
        src = src or user_src(2)
        super().__init__(
            f"vecgrad has no gradient of {what}{_where(src)}. Keep that argument constant "
            "(wrap it in vnp.stop_gradient, or do not differentiate with respect to it).")


class ComplexError(VecgradError, TypeError):
    """An operation that needs an ordering (or is otherwise real-only) got complex input."""

    def __init__(self, name: str, src: Src | None = None, why: str = "complex numbers have "
                 "no order"):
        src = src or user_src(2)
        super().__init__(
            f"{name} is not defined for complex input{_where(src)}: {why}. Apply it to a real "
            "quantity such as abs(z), z.real or z.imag.")


class RandomStateError(TraceError):
    """Random numbers were drawn while tracing (they would be frozen into compiled code)."""

    def __init__(self, msg: str, src: Src | None = None):
        ValueError.__init__(self, msg)  # (the message places the user's line itself)
        self.src = src


class UnsupportedError(VecgradError, NotImplementedError):
    """A NumPy feature that vecgrad cannot trace (see `unsupported`)."""


class CastingError(VecgradError, TypeError):
    """An in-place operation whose result NumPy refuses to cast back into the array
    (casting='same_kind', e.g. `int_buffer += 0.5`): a TypeError, as NumPy's UFuncTypeError."""

    def __init__(self, op: str, frm: object, to: object, src: Src | None = None,
                 casting: str = "same_kind"):
        src = src or user_src(2)
        what = f"numpy.{op}'s values" if op in _NOT_UFUNCS else f"ufunc '{op}' output"
        super().__init__(
            f"Cannot cast {what} from dtype('{frm}') to dtype('{to}') with casting rule "
            f"'{casting}'{_where(src)} (NumPy refuses this in-place operation too). Make the "
            f"array {frm} first (b = b.astype(np.{frm})), or "
            + (f"make a new array (b = b {_SYMBOLS[op]} v)." if op in _SYMBOLS else
               f"cast the values (v.astype(np.{to}))."))


_SYMBOLS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/"}
# (the in-place operations not ufuncs: their values are cast, not a ufunc's output)
_NOT_UFUNCS = frozenset({"copyto", "putmask"})


def unsupported(name: str) -> UnsupportedError:
    """The error for a NumPy feature vecgrad cannot trace, naming the caller's line."""
    src = user_src(2)
    return UnsupportedError(
        f"{name} has no traced implementation in vecgrad{_where(src)}. Use an equivalent "
        "from vecgrad.numpy (see `dir(vecgrad.numpy)`), or compute it outside the traced function.")
