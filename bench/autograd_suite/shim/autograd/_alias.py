"""An import hook that makes `autograd.numpy.<sub>` and `autograd.scipy[.<sub>[.<name>]]` name
vecgrad's modules (or objects, wrapped as modules). Where vecgrad has no counterpart the module
still imports, and using any of its names raises AttributeError: each test that needs it fails
on its own instead of its whole file failing to collect. (AttributeError, not another error, so
that `from autograd.scipy import integrate` goes on to import the submodule.)"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
from typing import Any

TARGETS = {"autograd.numpy.random": "numpy.random", "autograd.numpy": "vecgrad.numpy",
           "autograd.scipy": "vecgrad.scipy"}


def _target(name: str) -> str | None:
    for prefix, to in TARGETS.items():
        if name == prefix or name.startswith(prefix + "."):
            return to + name[len(prefix):]
    return None


def _resolve(path: str) -> Any:
    """The module or object at a dotted path, or None."""
    parts = path.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for p in parts[k:]:
            obj = getattr(obj, p, None)
            if obj is None:
                return None
        return obj
    return None


class _Missing(types.ModuleType):
    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise AttributeError(f"vecgrad has no counterpart of {self.__name__}.{attr}")


class _Loader(importlib.abc.Loader):
    def create_module(self, spec: Any) -> types.ModuleType:
        obj = _resolve(_target(spec.name))
        mod = _Missing(spec.name)
        if obj is not None:
            names = getattr(obj, "__all__", None) or [n for n in dir(obj) if not n.startswith("_")]
            mod.__dict__.update({n: getattr(obj, n) for n in names if hasattr(obj, n)})
        mod.__path__ = []  # a package: its own submodules resolve through this hook too
        return mod

    def exec_module(self, module: types.ModuleType) -> None:
        pass


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name in ("autograd.numpy",) or _target(name) is None:
            return None
        return importlib.util.spec_from_loader(name, _Loader(), is_package=True)


def install() -> None:
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
