"""Buffers made by plain NumPy and written with traced values (`buf = np.zeros(n); for i in
range(n): buf[i] = f(x[i])`). NumPy's np.zeros takes no array argument, so it cannot hand the
call to vecgrad: it makes a NumPy array, and NumPy cannot store a traced value in it. When a
trace fails that way, staging traces the function once more with the creation functions that
its module reads (np.zeros, np.empty, np.ones, np.full and their *_like, through the numpy
module or imported by name) bound to vecgrad.numpy's buffers, which take traced writes. The
module's globals are restored when that trace ends. What already traced never runs this way.
"""
from __future__ import annotations

import contextlib
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as _np

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


class _NumPy(types.ModuleType):
    """numpy as the traced function sees it: its own attributes, the buffers replaced."""

    def __getattr__(self, name: str) -> Any:
        return getattr(_np, name)


_BY_ID = {id(f): g for f, g in BUFFERS.items()}  # (by identity: any object may be a global)
_PROXY = _NumPy("numpy", _np.__doc__)
for _f, _g in BUFFERS.items():
    setattr(_PROXY, _f.__name__, _g)


def _globals_of(fun: Any) -> dict | None:
    fun = getattr(fun, "__wrapped__", fun)
    fun = getattr(fun, "__func__", fun)
    g = getattr(fun, "__globals__", None)
    if g is None and not isinstance(fun, type):  # (an object with a __call__ method)
        g = getattr(vars(type(fun)).get("__call__"), "__globals__", None)
    return g


@contextlib.contextmanager
def numpy_buffers(fun: Callable) -> Iterator[bool]:
    """While it lasts, the module of `fun` reads vecgrad's buffers for NumPy's creation
    functions; yields whether it reads any of them (else there is nothing to try again)."""
    g = _globals_of(fun)
    swap = {}
    for k, v in list((g or {}).items()):
        if v is _np:
            swap[k] = _PROXY
        elif id(v) in _BY_ID:
            swap[k] = _BY_ID[id(v)]
    old = {k: g[k] for k in swap}  # type: ignore[index]
    try:
        if swap:
            g.update(swap)  # type: ignore[union-attr]
        yield bool(swap)
    finally:
        for k, v in old.items():
            if g.get(k) is swap[k]:  # type: ignore[union-attr]
                g[k] = v  # type: ignore[index]

