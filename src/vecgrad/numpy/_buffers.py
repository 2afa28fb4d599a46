"""Buffers made by plain NumPy and written with traced values (`buf = np.zeros(n); for i in
range(n): buf[i] = f(x[i])`). NumPy's np.zeros takes no array argument, so it cannot hand the
call to vecgrad: it makes a NumPy array, and NumPy cannot store a traced value in it. When a
trace fails that way, staging traces the function once more with the creation functions that
its module reads (np.zeros, np.empty, np.ones, np.full and their *_like, through the numpy
module or imported by name) bound to vecgrad.numpy's buffers, which take traced writes, and
the constant arrays of np.arange, np.linspace, np.eye, np.identity, np.tri (and of
vecgrad.numpy's, which are NumPy arrays) made buffers. The module's globals are restored when
that trace ends. What already traced never runs this way.
"""
from __future__ import annotations

import contextlib
import os
import sys
import sysconfig
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as _np

from ..errors import internal_file
from ..inputs import const_tracer
from . import _creation as C
from ._base import _has_tracer

_ORDERS = (None, "C", "F", "A", "K")  # (a layout: vecgrad's buffers have none, values agree)


def _plain(kw: dict, *names: str) -> bool:
    """Keywords that NumPy's creation functions take and a buffer can ignore."""
    return kw.get("order") in _ORDERS and kw.get("like") is None and \
        kw.get("device") in (None, "cpu") and kw.get("subok", True) and \
        set(kw) <= {"order", "like", "device", "subok", *names}


def _made(np_fn: Callable, make: Callable, *names: str) -> Callable:
    def fn(*args: Any, **kw: Any) -> Any:
        if not _plain(kw, *names):
            return np_fn(*args, **kw)
        return make(*args, **{k: kw[k] for k in names if k in kw})
    fn.__name__, fn.__doc__ = np_fn.__name__, np_fn.__doc__
    return fn


def _like(np_fn: Callable, make: Callable) -> Callable:
    """A *_like function of a constant: its shape (or shape=) and dtype (or dtype=). A traced
    `a` is NumPy's call, which vecgrad.numpy answers already."""
    def fn(a: Any, *args: Any, **kw: Any) -> Any:
        if _has_tracer(a) or not _plain(kw, "dtype", "shape"):
            return np_fn(a, *args, **kw)
        ref = _np.asarray(a)
        dtype, shape = kw.get("dtype"), kw.get("shape")
        return make(ref.shape if shape is None else shape, *args,
                    dtype=ref.dtype if dtype is None else dtype)
    fn.__name__, fn.__doc__ = np_fn.__name__, np_fn.__doc__
    return fn


BUFFERS: dict[Callable, Callable] = {
    _np.zeros: _made(_np.zeros, C.zeros, "shape", "dtype"),
    _np.empty: _made(_np.empty, C.empty, "shape", "dtype"),
    _np.ones: _made(_np.ones, C.ones, "shape", "dtype"),
    _np.full: _made(_np.full, C.full, "shape", "fill_value", "dtype"),
    _np.zeros_like: _like(_np.zeros_like, C.zeros),
    _np.empty_like: _like(_np.empty_like, C.empty),
    _np.ones_like: _like(_np.ones_like, C.ones),
    _np.full_like: _like(_np.full_like, C.full),
}


def _constant(fn: Callable) -> Callable:
    """A function that makes a constant array (np.arange, np.linspace, np.eye, and
    vecgrad.numpy's, which give NumPy arrays): that array as a buffer."""
    def made(*args: Any, **kw: Any) -> Any:
        out = fn(*args, **kw)
        return const_tracer(out) if type(out) is _np.ndarray else out
    made.__name__, made.__doc__ = fn.__name__, fn.__doc__
    return made


_CONSTANTS = ("arange", "linspace", "eye", "identity", "tri")
BUFFERS.update({getattr(_np, n): _constant(getattr(_np, n)) for n in _CONSTANTS})


class _Module(types.ModuleType):
    """numpy (or vecgrad.numpy) as the traced function sees it: its own attributes, the
    buffers replaced."""

    def __init__(self, of: Any, swapped: dict):
        super().__init__(of.__name__, of.__doc__)
        self._of = of
        self.__dict__.update(swapped)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._of, name)


_BY_ID = {id(f): g for f, g in BUFFERS.items()}  # (by identity: any object may be a global)
_PROXY = _Module(_np, {f.__name__: g for f, g in BUFFERS.items()})
_VNP: list = []  # (vecgrad.numpy and its proxy, made at the first retry: this package)


def _vnp_proxy() -> tuple[Any, Any]:
    if not _VNP:
        vnp = sys.modules[__package__]
        _VNP.extend((vnp, _Module(vnp, {n: _constant(getattr(vnp, n)) for n in _CONSTANTS})))
    return _VNP[0], _VNP[1]


def _code_of(fun: Any) -> Any:
    fun = getattr(fun, "__wrapped__", fun)
    fun = getattr(fun, "__func__", fun)
    if not hasattr(fun, "__globals__") and not isinstance(fun, type):  # (a callable object)
        fun = vars(type(fun)).get("__call__", fun)
    return fun


def _modules_of(fun: Any, depth: int = 3) -> list[dict]:
    """The globals of `fun`'s module, and of the functions it calls by a global name, closes
    over or takes as defaults (a loss calling a model defined in another module), `depth`
    deep."""
    out: list[dict] = []
    todo, seen = [(fun, 0)], set()
    while todo:
        f, d = todo.pop()
        f = _code_of(f)
        if id(f) in seen:
            continue
        seen.add(id(f))
        g = getattr(f, "__globals__", None)
        if g is None:
            continue
        if all(g is not h for h in out) and (not d or not _installed(g)):
            out.append(g)  # (a library's module, reached from the user's: left alone)
        if d < depth:
            cells = [c.cell_contents for c in getattr(f, "__closure__", None) or ()
                     if _filled(c)]
            named = [g.get(n) for n in _names(getattr(f, "__code__", None))]
            todo += [(v, d + 1) for v in cells + named + list(getattr(f, "__defaults__", None)
                                                             or ())
                     if callable(v) and not isinstance(v, type)]
    return out


_LIBS = tuple(os.path.abspath(p) + os.sep for p in {sysconfig.get_paths()[k] for k in
                                                    ("stdlib", "purelib", "platlib")})


def _installed(g: dict) -> bool:
    f = g.get("__file__")
    return isinstance(f, str) and os.path.abspath(f).startswith(_LIBS)  # (exec, notebooks: no file)


def _names(code: Any) -> set:
    """The global names a code object (and the functions and comprehensions in it) reads."""
    out: set = set()
    todo = [code] if code is not None else []
    while todo:
        c = todo.pop()
        out.update(c.co_names)
        todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    return out


def _filled(cell: Any) -> bool:
    try:
        return cell.cell_contents is not None or True
    except ValueError:  # (an empty cell)
        return False


def raising_modules(ex: BaseException) -> list[dict]:
    """The globals of the user's frames on the way to `ex` (and to the errors it was raised
    from): the modules that made the NumPy array, however the traced function reached them (a
    lambda calling `obj.method`, functools.partial, a function from a dict), which the static
    walk of `_modules_of` cannot see. vecgrad's, NumPy's and installed modules are left out."""
    out: list[dict] = []
    seen: set = set()
    while ex is not None and id(ex) not in seen:
        seen.add(id(ex))
        tb = ex.__traceback__
        while tb is not None:
            f = tb.tb_frame
            g = f.f_globals
            if not internal_file(f.f_code.co_filename) and not _installed(g) and \
                    all(g is not h for h in out):
                out.append(g)
            tb = tb.tb_next
        ex = ex.__cause__ or ex.__context__
    return out


@contextlib.contextmanager
def numpy_buffers(fun: Callable, also: list[dict] = ()) -> Iterator[bool]:
    """While it lasts, the modules of `fun` (and of the functions it closes over), and the
    module globals `also` (`raising_modules`), read vecgrad's buffers for NumPy's creation
    functions; yields whether they read any of them (else there is nothing to try again)."""
    swaps = []
    found = _modules_of(fun)
    for g in [*found, *(h for h in also if all(h is not k for k in found))]:
        if str(g.get("__name__", "")).partition(".")[0] in ("vecgrad", "numpy"):
            continue  # (vecgrad's own wrappers: only the user's modules change)
        swap = {}
        vnp, vnp_proxy = _vnp_proxy()
        for k, v in list(g.items()):
            if v is _np:
                swap[k] = _PROXY
            elif v is vnp:
                swap[k] = vnp_proxy
            elif id(v) in _BY_ID:
                swap[k] = _BY_ID[id(v)]
        if swap:
            swaps.append((g, swap, {k: g[k] for k in swap}))
    try:
        for g, swap, _ in swaps:
            g.update(swap)
        yield bool(swaps)
    finally:
        for g, swap, old in swaps:
            for k, v in old.items():
                if g.get(k) is swap[k]:
                    g[k] = v
