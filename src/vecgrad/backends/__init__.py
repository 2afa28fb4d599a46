"""Backends turn a final graph into something that runs.

`numpy` (the default) generates NumPy source (backends.numpy). `jax` and `torch` are each a
lowering table plus the shared code generator (backends.lowering), in their own subpackage,
imported only when asked for: `import vecgrad` imports neither jax nor torch. `numba` fuses
loop nests into numba kernels and runs the rest as NumPy does (backends/numba).
"""
from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..config import CHECKS
from ..errors import ArgumentError
from ..ir import Graph
from .numpy import Compiled, compile_graph

NAMES = ("numpy", "jax", "torch", "numba")


@dataclass(frozen=True)
class Backend:
    """A backend: how a final graph is compiled, which of the LOWER passes (pipeline.LOWER, by
    name) run before its codegen, how its arrays come back to NumPy (for tests), and its
    lowering table (backends.lowering; None for NumPy, whose codegen reads the primitives)."""

    name: str
    compile: Callable[[Graph, str], Compiled]
    lower_passes: tuple[str, ...]
    to_numpy: Callable[[Any], np.ndarray]
    lowerings: dict | None = None


class BackendError(ArgumentError):
    """An unknown backend name, or a backend whose package is not installed."""


NUMPY = Backend("numpy", compile_graph, ("relayout", "muladd"), np.asarray)
_LOADED: dict[str, Backend] = {"numpy": NUMPY}
_PACKAGE = {"jax": "jax", "torch": "torch", "numba": "numba"}


def available(name: str) -> bool:
    """Whether backend `name` can be used here (its package is installed)."""
    return name == "numpy" or (name in _PACKAGE
                               and importlib.util.find_spec(_PACKAGE[name]) is not None)


def get(name: str) -> Backend:
    """The backend called `name` ("numpy", "jax", "torch" or "numba"), importing it on first use."""
    b = _LOADED.get(name)
    if b is not None:
        return b
    if name not in NAMES:
        raise BackendError(f"unknown backend {name!r}: choose one of {', '.join(NAMES)}")
    if not available(name):
        raise BackendError(f"backend {name!r} needs the {_PACKAGE[name]} package, which is not "
                           f"installed: pip install 'vecgrad[{name}]'")
    b = _LOADED[name] = importlib.import_module(f"{__name__}.{name}").BACKEND
    return b


CHECKS["backend"] = get  # vg.config(backend=...) checks the name here (config sits below)

__all__ = ["NAMES", "Backend", "BackendError", "Compiled", "available", "compile_graph", "get"]
