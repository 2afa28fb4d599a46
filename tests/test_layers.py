"""The package's layers read bottom-up.

- Every import, at top level, inside a function or under TYPE_CHECKING, points down the layers
  that pyproject.toml declares ([tool.vecgrad] layers): ir, tracing, primitives, numpy, the
  transforms, the backends, the API, then the tools (explain, cli). No exceptions.
- Within a layer, the top-level imports (those a module runs when imported) have no cycle.
"""
from __future__ import annotations

import ast
import pathlib
import tomllib
from typing import NamedTuple

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
LAYERS = [(d["name"], d["modules"]) for d in
          tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["vecgrad"]["layers"]]


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


def _imported(mods: dict[str, tuple[pathlib.Path, bool]], m: str, n: ast.Import | ast.ImportFrom
              ) -> set[str]:
    """The package modules an import statement of module `m` imports (`from pkg import sub`
    counts as importing pkg.sub where that is a module, else pkg)."""
    if isinstance(n, ast.Import):
        return {a.name for a in n.names if a.name in mods}
    pkg = mods[m][1]
    t = _target(m, pkg, n.level, n.module)
    deps = set()
    for a in n.names:
        sub = f"{t}.{a.name}"
        deps |= {sub} if sub in mods else {t} if t in mods else set()
    return deps


def import_graph(mods: dict[str, tuple[pathlib.Path, bool]]) -> dict[str, set[str]]:
    """Module -> the package modules it imports at top level."""
    graph = {}
    for m, (path, _) in mods.items():
        deps: set[str] = set()
        for n in _top_level(ast.parse(path.read_text()).body):
            deps |= _imported(mods, m, n)
        graph[m] = deps - {m}
    return graph


class Edge(NamedTuple):
    """`src` imports `dst` at line `line` of its file: at top level, in a function (run when
    the function is called) or under TYPE_CHECKING (for annotations)."""

    src: str
    dst: str
    line: int
    where: str  # "top", "function" or "type-checking"


def _where(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> str:
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return "function"
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return "type-checking"
    return "top"


def all_imports(mods: dict[str, tuple[pathlib.Path, bool]]) -> list[Edge]:
    """Every import of a package module by another, wherever the statement is."""
    edges = []
    for m, (path, _) in sorted(mods.items()):
        tree = ast.parse(path.read_text())
        parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
        for n in ast.walk(tree):
            if isinstance(n, (ast.Import, ast.ImportFrom)):
                edges += [Edge(m, d, n.lineno, _where(n, parents))
                          for d in sorted(_imported(mods, m, n) - {m})]
    return edges


def layer_of(module: str, layers: list[tuple[str, list[str]]] = LAYERS) -> int | None:
    """The index of the module's layer: the layer of the longest name listed that is the
    module or a package holding it (names relative to the package; "vecgrad" is its own
    __init__). None if no layer lists it."""
    best: tuple[int, int] | None = None  # (length of the name, layer)
    for i, (_, names) in enumerate(layers):
        for name in names:
            full = "vecgrad" if name == "vecgrad" else f"vecgrad.{name}"
            if (module == full or module.startswith(full + ".") and name != "vecgrad") and \
                    (best is None or len(full) > best[0]):
                best = (len(full), i)
    return None if best is None else best[1]


def upward(edges: list[Edge], layers: list[tuple[str, list[str]]] = LAYERS) -> list[str]:
    """The imports that point up the layers, one line each."""
    out = []
    for e in edges:
        lo, hi = layer_of(e.src, layers), layer_of(e.dst, layers)
        if lo is not None and hi is not None and hi > lo:
            out.append(f"{e.src}:{e.line} ({layers[lo][0]}) imports {e.dst} ({layers[hi][0]})"
                       f" [{e.where}]")
    return out


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


def test_every_module_has_a_layer():
    missing = [m for m in modules() if layer_of(m) is None]
    assert not missing, f"modules in no layer of pyproject.toml [tool.vecgrad]: {missing}"


def test_no_import_points_up_the_layers():
    up = upward(all_imports(modules()))
    assert not up, "imports pointing up the layers:\n" + "\n".join(up)


def test_no_import_cycle_in_the_package():
    c = cycle(import_graph(modules()))
    assert c is None, "import cycle: " + " -> ".join(c)


def run_time_graph(mods: dict[str, tuple[pathlib.Path, bool]]) -> dict[str, set[str]]:
    """Module -> the package modules it imports anywhere, at top level or in a function
    (run when called), but not under TYPE_CHECKING (annotations only)."""
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for e in all_imports(mods):
        if e.where != "type-checking":
            graph[e.src].add(e.dst)
    return graph


def test_no_import_cycle_through_imports_inside_functions():
    """An import inside a function hides a cycle from Python but not from the design: the
    two modules still need each other. (A lower layer reaches a higher one through
    vecgrad.hooks, a table the higher one fills in, or an installed namespace.)"""
    c = cycle(run_time_graph(modules()))
    assert c is None, "import cycle (through an import inside a function): " + " -> ".join(c)


def _package(tmp_path: pathlib.Path, src: dict[str, str]) -> dict:
    """The modules of a synthetic package `vecgrad` with one module per `src` entry."""
    pkg = tmp_path / "vecgrad"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, text in src.items():
        (pkg / f"{name}.py").write_text(text)
    return modules(tmp_path)


@pytest.mark.parametrize("src, expect", [
    ({"a": "from . import b\n", "b": "x = 1\n"}, None),
    ({"a": "from .b import x\n", "b": "from .a import y\n"}, ["a", "b", "a"]),
    ({"a": "import vecgrad.b\n", "b": "def f():\n    from . import a\n"}, None),
    ({"a": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import x\n",
      "b": "from .a import y\n"}, None),
])
def test_the_check_finds_cycles(tmp_path, src, expect):
    c = cycle(import_graph(_package(tmp_path, src)))
    assert c == (None if expect is None else [f"vecgrad.{m}" for m in expect])


@pytest.mark.parametrize("src, expect", [
    ({"a": "import vecgrad.b\n", "b": "def f():\n    from . import a\n"}, ["a", "b", "a"]),
    ({"a": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import x\n",
      "b": "def f():\n    from .a import y\n"}, None),
    ({"a": "def f():\n    from . import b\n", "b": "x = 1\n"}, None),
])
def test_the_run_time_check_finds_cycles_through_functions(tmp_path, src, expect):
    c = cycle(run_time_graph(_package(tmp_path, src)))
    assert c == (None if expect is None else [f"vecgrad.{m}" for m in expect])


_SYNTHETIC_LAYERS = [("low", ["a", "b"]), ("high", ["c"])]


@pytest.mark.parametrize("src, expect", [
    ({"a": "from . import b\n", "c": "from . import a\n"}, []),  # down and sideways
    ({"a": "from .c import x\n"}, ["vecgrad.a:1 (low) imports vecgrad.c (high) [top]"]),
    ({"a": "def f():\n    import vecgrad.c\n"},
     ["vecgrad.a:2 (low) imports vecgrad.c (high) [function]"]),
    ({"b": "x = 1\n\n\nclass K:\n    def m(self):\n        from . import c\n"},
     ["vecgrad.b:6 (low) imports vecgrad.c (high) [function]"]),
    ({"a": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import T\n"},
     ["vecgrad.a:3 (low) imports vecgrad.c (high) [type-checking]"]),
])
def test_the_check_finds_upward_imports(tmp_path, src, expect):
    mods = _package(tmp_path, {name: src.get(name, "") for name in ("a", "b", "c")})
    assert upward(all_imports(mods), _SYNTHETIC_LAYERS) == expect


def test_a_module_is_in_the_layer_of_its_longest_listed_name():
    layers = [("low", ["pkg.core"]), ("high", ["pkg", "vecgrad"])]
    assert layer_of("vecgrad.pkg.core", layers) == 0
    assert layer_of("vecgrad.pkg.core.sub", layers) == 0
    assert layer_of("vecgrad.pkg.other", layers) == 1
    assert layer_of("vecgrad", layers) == 1
    assert layer_of("vecgrad.other", layers) is None  # ("vecgrad" names the __init__ only)
