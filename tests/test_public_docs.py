"""Every public function has a docstring, and the API's top level has type hints: the guide's
"docs for every public function", checked over what users import (vecgrad, vecgrad.numpy and
its linalg / fft, vecgrad.nn, vecgrad.scipy's modules and each distribution of its stats), so
a new function cannot land bare."""
from __future__ import annotations

import importlib
import inspect

import pytest

import vecgrad as vg

_STATS = importlib.import_module("vecgrad.scipy.stats")
MODULES = ["vecgrad", "vecgrad.numpy", "vecgrad.numpy.linalg", "vecgrad.numpy.fft", "vecgrad.nn",
           "vecgrad.scipy.special", "vecgrad.scipy.linalg", "vecgrad.scipy.signal",
           "vecgrad.scipy.integrate"] + [f"vecgrad.scipy.stats.{d}" for d in _STATS.__all__]


def _public(modname: str) -> list[tuple[str, object]]:
    mod = importlib.import_module(modname)
    names = getattr(mod, "__all__", [n for n in dir(mod) if not n.startswith("_")])
    return [(n, getattr(mod, n)) for n in names
            if not inspect.ismodule(getattr(mod, n)) and callable(getattr(mod, n))]


@pytest.mark.parametrize("modname", MODULES)
def test_every_public_callable_has_a_docstring(modname):
    items = _public(modname)
    assert items, f"{modname} exports nothing callable"
    bare = [n for n, o in items if len((inspect.getdoc(o) or "").strip()) < 10]
    assert not bare, f"{modname}: no docstring on {bare}"


def test_top_level_functions_have_type_hints():
    bare = []
    for n in vg.__all__:
        o = getattr(vg, n)
        if not inspect.isfunction(o):
            continue
        sig = inspect.signature(o)
        if sig.return_annotation is inspect.Signature.empty or any(
                p.annotation is inspect.Parameter.empty for p in sig.parameters.values()
                if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)):
            bare.append(n)
    assert not bare, f"vecgrad: public functions without type hints: {bare}"
