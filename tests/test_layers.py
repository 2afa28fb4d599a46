"""The package's modules import each other without cycles: the import graph of src/vecgrad (the
top-level imports of each module, read with ast; imports under TYPE_CHECKING are annotations
only) is acyclic, so the layers read bottom-up."""
from __future__ import annotations

import ast
import pathlib

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"


def modules(root: pathlib.Path = SRC) -> dict[str, tuple[pathlib.Path, bool]]:
    """Module name -> (file, is a package's __init__)."""
    out = {}
    for p in (root / "vecgrad").rglob("*.py"):
        parts = list(p.relative_to(root).with_suffix("").parts)
        pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if pkg else parts)] = (p, pkg)
    return out


def _target(mod: str, pkg: bool, level: int, name: str | None) -> str:
    if not level:
        return name or ""
    base = mod.split(".") if pkg else mod.split(".")[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _top_level(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """The imports a module runs when it is imported (not those inside functions or classes,
    nor under `if TYPE_CHECKING:`)."""
    out: list = []
    for n in body:
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            out.append(n)
        elif isinstance(n, ast.If):
            if "TYPE_CHECKING" not in ast.unparse(n.test):
                out += _top_level(n.body) + _top_level(n.orelse)
        elif isinstance(n, ast.Try):
            out += _top_level(n.body) + _top_level(n.orelse) + _top_level(n.finalbody)
            for h in n.handlers:
                out += _top_level(h.body)
    return out


def import_graph(mods: dict[str, tuple[pathlib.Path, bool]]) -> dict[str, set[str]]:
    """Module -> the package modules it imports at top level (`from pkg import sub` counts as
    importing pkg.sub where that is a module, else pkg)."""
    graph = {}
    for m, (path, pkg) in mods.items():
        deps = set()
        for n in _top_level(ast.parse(path.read_text()).body):
            if isinstance(n, ast.Import):
                deps |= {a.name for a in n.names if a.name in mods}
                continue
            t = _target(m, pkg, n.level, n.module)
            for a in n.names:
                sub = f"{t}.{a.name}"
                deps |= {sub} if sub in mods else {t} if t in mods else set()
        graph[m] = deps - {m}
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph (as a path that ends where it starts), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(v: str) -> list[str] | None:
        state[v] = 1
        path.append(v)
        for w in sorted(graph[v]):
            if state.get(w) == 1:
                return path[path.index(w):] + [w]
            if w not in state and (found := visit(w)):
                return found
        path.pop()
        state[v] = 2
        return None
    for v in sorted(graph):
        if v not in state and (found := visit(v)):
            return found
    return None


def test_no_import_cycle_in_the_package():
    c = cycle(import_graph(modules()))
    assert c is None, "import cycle: " + " -> ".join(c)


@pytest.mark.parametrize("src, expect", [
    ({"a": "from . import b\n", "b": "x = 1\n"}, None),
    ({"a": "from .b import x\n", "b": "from .a import y\n"}, ["a", "b", "a"]),
    ({"a": "import vecgrad.b\n", "b": "def f():\n    from . import a\n"}, None),
    ({"a": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import x\n",
      "b": "from .a import y\n"}, None),
])
def test_the_check_finds_cycles(tmp_path, src, expect):
    pkg = tmp_path / "vecgrad"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, text in src.items():
        (pkg / f"{name}.py").write_text(text)
    c = cycle(import_graph(modules(tmp_path)))
    assert c == (None if expect is None else [f"vecgrad.{m}" for m in expect])
