"""Backends turn a final graph into something that runs. `numpy_backend` is the default."""
from .numpy_backend import Compiled, compile_graph

__all__ = ["Compiled", "compile_graph"]
