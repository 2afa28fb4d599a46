"""Function-shaped loop programs for the cliff detector and its time check (tests/fuzz_shapes.py):
the shapes users write with Python's functions rather than with loops alone.

Kernel functions passed as arguments (`def loss(params, kernel=rbf)`) and pairwise kernel
matrices; `map(lambda ...)` over zipped lists; a layer class called in a loop
(`Layer.__call__`, a stack of them per sample); closures capturing loop variables
(`lambda t, i=i: ...`, a factory `make(i)`); recursion over a Python list (a tree sum, a
divide-and-conquer max); elementwise Python helpers over the scalars of an array (Python's
`max` / `min` / `abs` / conditional expressions on Python numbers), and nested comprehensions
building 2-D lists that `np.array(...)` turns into an array. Each variant writes a
hand-vectorized NumPy forward (`ref`) where one exists, for `--time`.

    nice .venv/bin/python tests/fuzz_funcs.py COUNT [START] [FAMILY] [--time [--T 4000]] [--write DIR]
"""
from __future__ import annotations

import os
import sys
from typing import ClassVar

sys.path.insert(0, os.path.dirname(__file__))
import fuzz_shapes
from fuzz_shapes import ShapeGen

PRELUDE3 = '''\
def rbf(a, b, gamma=0.5):
    return np.exp(-gamma * np.sum((a - b) ** 2))

def lin(a, b):
    return np.dot(a, b)

def poly(a, b, c=1.0):
    return (np.dot(a, b) + c) ** 2

def lap(a, b):
    return np.exp(-np.sum(np.abs(a - b)))

class Layer:
    def __init__(self, scale, shift):
        self.scale = scale
        self.shift = shift

    def __call__(self, h):
        return np.tanh(h * self.scale + self.shift)

def relu(t):
    return max(t, 0.0)

def clip1(t):
    return min(max(t, -1.0), 1.0)

def sqabs(t):
    return abs(t) * t

def softplus(t):
    return np.log1p(np.exp(-abs(t))) + max(t, 0.0)

def tsum(vals):
    if len(vals) == 1:
        return vals[0]
    h = len(vals) // 2
    return tsum(vals[:h]) + tsum(vals[h:])

def tmax(vals):
    if len(vals) == 1:
        return vals[0]
    h = len(vals) // 2
    return np.maximum(tmax(vals[:h]), tmax(vals[h:]))
'''

# hand-vectorized forms of the kernels between the rows of X and one row c (or all of X)
_KREF = {"rbf": "np.exp(-0.5 * np.sum((X - {c}) ** 2, 1))", "lin": "X @ {c}",
         "poly": "(X @ {c} + 1.0) ** 2", "lap": "np.exp(-np.sum(np.abs(X - {c}), 1))"}
_KMAT = {"rbf": "np.exp(-0.5 * np.sum((X[:, None, :] - X[None, :{m}, :]) ** 2, -1))",
         "lin": "X @ X[:{m}].T", "poly": "(X @ X[:{m}].T + 1.0) ** 2",
         "lap": "np.exp(-np.sum(np.abs(X[:, None, :] - X[None, :{m}, :]), -1))"}
_HELP = {"relu": "np.maximum(x, 0.0)", "clip1": "np.clip(x, -1.0, 1.0)",
         "sqabs": "np.abs(x) * x", "softplus": "np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0.0)"}


class FuncGen(ShapeGen):
    """ShapeGen's checks over the function-shaped families."""

    FAMILIES: ClassVar[tuple[str, ...]] = (
        "kernelarg", "maplambda", "layers", "closures", "recursion", "pyhelpers", "grid2d")

    def kernelarg(self):
        k = self.pick(list(_KREF))
        kind = self.pick(["default", "passed", "matrix", "center"])
        if kind == "default":  # def score(params, kernel=rbf): the kernel as a default argument
            return f"{k}_default", (
                f"def score(p, kernel={k}):\n"
                "    return sum(kernel(X[i], X[0]) * p[0] * x[i] for i in range(len(X)))\n"
                "return score(w)"), True, f"return np.sum({_KREF[k].format(c='X[0]')} * x) * w[0]"
        if kind == "passed":  # a helper taking the kernel as an argument, mapped over rows
            return f"{k}_passed", (
                "def feats(kern, rows, c):\n    return [kern(r, c) for r in rows]\n"
                f"return np.sum(np.array(feats({k}, X, X[1])) * x)"), True, \
                f"return np.sum({_KREF[k].format(c='X[1]')} * x)"
        if kind == "matrix":  # a kernel matrix against the first m rows, by a comprehension
            m = self.i(2, 4)
            return f"{k}_matrix{m}", (
                f"G = np.array([[{k}(X[i], X[j]) for j in range({m})] for i in range(len(X))])\n"
                "return np.sum(G * x[:, None]) + np.sum(G ** 2) * w[0]"), True, \
                (f"G = {_KMAT[k].format(m=m)}\n"
                 "return np.sum(G * x[:, None]) + np.sum(G ** 2) * w[0]")
        return f"{k}_center", (  # a kernel from a dict, against a traced centre
            f"ks = {{'a': {k}, 'b': lin}}\nc = w[0] * X[2]\n"
            "acc = 0.0\nfor i in range(len(X)):\n    acc = acc + ks['a'](X[i], c) * x[i]\n"
            "return acc"), True, f"c = w[0] * X[2]\nreturn np.sum({_KREF[k].format(c='c')} * x)"

    def maplambda(self):
        kind = self.pick(["zip2", "zip3", "rows", "starmap", "shifted", "enumerate"])
        if kind == "zip2":
            return kind, ("return sum(map(lambda a, b: a * np.tanh(b), x, x[::-1]))"), True, \
                "return np.sum(x * np.tanh(x[::-1]))"
        if kind == "zip3":
            return kind, ("vals = list(map(lambda a, b, m: np.where(m, a * b, a - b), x, x[::-1], mask))\n"
                          "return np.sum(np.array(vals) ** 2)"), True, \
                "return np.sum(np.where(mask, x * x[::-1], x - x[::-1]) ** 2)"
        if kind == "rows":
            return kind, ("return sum(map(lambda r, s: np.sum(r * s) * w[0], X, X[::-1]))"), True, \
                "return np.sum(X * X[::-1]) * w[0]"
        if kind == "starmap":
            return kind, ("import itertools\npairs = list(zip(x[:-1], x[1:]))\n"
                          "return sum(itertools.starmap(lambda a, b: (a - b) ** 2, pairs))"), True, \
                "return np.sum((x[:-1] - x[1:]) ** 2)"
        if kind == "shifted":
            return kind, ("d = list(map(lambda p: p[1] - p[0] * w[1], zip(x, x[1:])))\n"
                          "return np.sum(np.stack(d) ** 2)"), True, \
                "return np.sum((x[1:] - x[:-1] * w[1]) ** 2)"
        return kind, ("out = list(map(lambda t: t[1] * (t[0] % 3 + 1), enumerate(x)))\n"
                      "return np.sum(np.array(out) ** 2)"), True, \
            "return np.sum((x * (np.arange(len(x)) % 3 + 1)) ** 2)"

    def layers(self):
        depth = self.i(1, 3)
        kind = self.pick(["stack", "comp", "method", "shared"])
        make = f"[Layer(w[j % 4], w[(j + 1) % 4] * 0.1) for j in range({depth})]"
        vec = "H = X\n" + "".join(f"H = np.tanh(H * w[{j % 4}] + w[{(j + 1) % 4}] * 0.1)\n"
                                  for j in range(depth))
        if kind == "stack":  # each sample through the stack of layers
            return f"stack{depth}", (f"layers = {make}\nacc = 0.0\nfor i in range(len(X)):\n"
                                     "    h = X[i]\n    for layer in layers:\n        h = layer(h)\n"
                                     "    acc = acc + np.sum(h ** 2)\nreturn acc"), True, \
                vec + "return np.sum(H ** 2)"
        if kind == "comp":
            return f"comp{depth}", (f"layers = {make}\n"
                                    "def net(h):\n    for layer in layers:\n        h = layer(h)\n"
                                    "    return h\nreturn np.sum(np.stack([net(r) for r in X]) * X)"), True, \
                vec + "return np.sum(H * X)"
        if kind == "method":  # a bound method passed to map
            return kind, ("layer = Layer(w[0], w[1])\n"
                          "return np.sum(np.array(list(map(layer.__call__, X))) ** 2)"), True, \
                "return np.sum(np.tanh(X * w[0] + w[1]) ** 2)"
        return kind, ("layer = Layer(w[0], w[1])\nout = xp.zeros((len(X), 5))\n"  # a buffer
                      "for i in range(len(X)):\n    out[i] = layer(layer(X[i]))\n"
                      "return np.sum(out * X)"), True, \
            "return np.sum(np.tanh(np.tanh(X * w[0] + w[1]) * w[0] + w[1]) * X)"

    def closures(self):
        kind = self.pick(["default", "factory", "late", "partial", "nested"])
        if kind == "default":  # lambda t, i=i: the loop variable bound per closure
            return kind, ("fs = [lambda t, i=i: t * x[i] ** 2 for i in range(len(x))]\n"
                          "return sum(f(w[0]) for f in fs)"), True, "return w[0] * np.sum(x ** 2)"
        if kind == "factory":
            return kind, ("def make(i):\n    return lambda t: np.tanh(t * x[i])\n"
                          "fs = [make(i) for i in range(len(x))]\n"
                          "return sum(f(w[1]) for f in fs)"), True, "return np.sum(np.tanh(w[1] * x))"
        if kind == "late":  # Python's late binding: every lambda reads the last i
            return kind, ("fs = [lambda t: t * x[i] for i in range(len(x))]\n"
                          "return sum(f(x[0]) for f in fs)"), True, "return len(x) * x[0] * x[-1]"
        if kind == "partial":
            return kind, ("import functools\ndef term(a, b, s):\n    return s * np.sin(a) * b\n"
                          "fs = [functools.partial(term, x[i], X[i, 0]) for i in range(len(x))]\n"
                          "return sum(f(w[2]) for f in fs)"), True, "return w[2] * np.sum(np.sin(x) * X[:, 0])"
        return kind, ("acc = 0.0\nfor i in range(len(X)):\n    r = X[i]\n"
                      "    def inner(j, r=r):\n        return r[j] * r[(j + 1) % 5]\n"
                      "    acc = acc + sum(inner(j) for j in range(5))\nreturn acc"), True, \
            "return np.sum(X * np.roll(X, -1, 1))"

    def recursion(self):
        kind = self.pick(["tsum", "tmax", "tsumrows", "fold"])
        if kind == "tsum":  # a tree sum of the items: one sum
            return kind, ("return tsum([x[i] ** 2 for i in range(len(x))])"), False, \
                "return np.sum(x ** 2)"
        if kind == "tmax":
            return kind, ("return tmax([np.sin(x[i]) for i in range(len(x))])"), False, \
                "return np.max(np.sin(x))"
        if kind == "tsumrows":
            return kind, ("return np.sum(tsum([np.tanh(X[i]) * w[0] for i in range(len(X))]))"), False, \
                "return np.sum(np.tanh(X)) * w[0]"
        return kind, ("def fold(vals, acc):\n    return acc if not vals else fold(vals[1:], acc + vals[0])\n"
                      "return fold([x[i] * w[0] for i in range(min(len(x), 400))], 0.0)"), False, \
            "return np.sum(x[:400]) * w[0]"

    def pyhelpers(self):
        h = self.pick(list(_HELP))
        kind = self.pick(["comp", "buf", "sum", "map"])
        ref = f"return np.sum(({_HELP[h]}) * x)"
        if kind == "comp":
            return f"{h}_comp", (f"v = np.array([{h}(x[i]) for i in range(len(x))])\n"
                                 "return np.sum(v * x)"), True, ref
        if kind == "buf":
            return f"{h}_buf", (f"out = xp.zeros(len(x))\nfor i in range(len(x)):\n    out[i] = {h}(x[i])\n"
                                "return np.sum(out * x)"), True, ref
        if kind == "sum":
            return f"{h}_sum", (f"return sum({h}(x[i]) * x[i] for i in range(len(x)))"), True, ref
        return f"{h}_map", (f"return sum(map(lambda t: {h}(t) * t, x))"), True, ref

    def grid2d(self):
        kind = self.pick(["scaled", "gram", "band", "outer", "tolist"])
        if kind == "scaled":
            return kind, ("G = np.array([[X[i, j] * w[j % 4] for j in range(5)] for i in range(len(X))])\n"
                          "return np.sum(G ** 2)"), True, "return np.sum((X * w[np.arange(5) % 4]) ** 2)"
        if kind == "gram":
            return kind, ("G = np.array([[np.dot(X[i], X[j]) for j in range(3)] for i in range(len(X))])\n"
                          "return np.sum(np.tanh(G))"), True, "return np.sum(np.tanh(X @ X[:3].T))"
        if kind == "band":
            return kind, ("B = np.array([[x[i] * x[i + j] for j in range(3)] for i in range(len(x) - 2)])\n"
                          "return np.sum(B * w[:3])"), True, \
                ("B = np.stack([x[:-2] * x[j:len(x) - 2 + j] for j in range(3)], 1)\n"
                 "return np.sum(B * w[:3])")
        if kind == "outer":
            return kind, ("rows = []\nfor i in range(len(X)):\n    rows.append([X[i, 0] * w[k] for k in range(4)])\n"
                          "return np.sum(np.asarray(rows) ** 2)"), True, "return np.sum((X[:, :1] * w) ** 2)"
        return kind, ("G = np.array([[np.sin(X[i, j]) for j in range(5)] for i in range(len(X))],"
                      " dtype=np.float64)\nreturn np.sum(G * X)"), True, "return np.sum(np.sin(X) * X)"

    def draw(self, family: str | None = None):
        case = super().draw(family)
        case.src = case.src.replace("def f(", PRELUDE3 + "\ndef f(", 1)
        return case


if __name__ == "__main__":
    opts = {k: sys.argv[sys.argv.index(k) + 1] for k in ("--write", "--T") if k in sys.argv}
    taken = {sys.argv.index(k) + 1 for k in opts}
    argv = [a for j, a in enumerate(sys.argv[1:], 1) if not a.startswith("--") and j not in taken]
    fuzz_shapes.run(int(argv[0]) if argv else 100, int(argv[1]) if len(argv) > 1 else 0,
                    argv[2] if len(argv) > 2 else None, timed="--time" in sys.argv,
                    write=opts.get("--write"), T=int(opts.get("--T", 4000)), gen=FuncGen)
