"""A cliff detector: natural loop programs whose compiled graph grows with the trip count.

A natural program that batches compiles to a final graph whose size does not depend on how
many times its loops run. This module draws random programs in the held-out families users
write (sliding windows with any start / step / width / dilation, 2-D patches, edge lists with
repeated destinations, read-modify-write into buffers, masked writes, mixed sums of several
term kinds, comprehensions / `map` / `sum` with kernel functions, CSR rows through `indptr`,
rows appended to a list then stacked), compiles `vg.grad` of each at two trip counts (n and
2n: the same source, inputs twice as long) and reports

- 'grows': the batched graph (after the scans pass rolled recurrences) or the final gradient
  graph has more equations at 2n than at n, and grows again as much from 2n to 4n (a cliff:
  the loop, or part of it, stayed unrolled; a slower growth is 'sublinear', counted);
- 'recurrence': the compile's notes (what `vg.explain` prints) call a line a recurrence, or a
  sequential chain, where the generator knows that no iteration reads another's result
  (only for 'strict' programs; an accumulation by max or product into a repeated position is
  'assoc': batching it as a scatter is allowed but not required);
- 'wrong': the value differs from NumPy's, or the gradient from central differences (a silent
  wrong answer, the worst kind);
- 'crash': an exception that is not a typed `VecgradError`;
- 'unexplained': it grows, and `vg.explain` lists nothing unbatched, sequential, repeated or
  rolled (a false "all repeated work was merged").

A typed refusal is counted, not flagged. Each program is a `Case`: the source of `f(x, X, w,
src, dst, edges, ptr, mask)` (x (n,), X (n, D), w (K,) float64; src, dst (E,) int64 with
repeated destinations; edges the same as a Python list of pairs; ptr a Python list of CSR row
starts; mask (n,) bool), drawn once per seed and run at both sizes.

CI (tests/test_fuzz_cliffs.py) runs VECGRAD_FUZZ_CLIFFS seeded programs (default a few:
seconds). Locally, every distinct cliff with its minimized source, and reproducers:

    nice .venv/bin/python tests/fuzz_cliffs.py 400 [start] [family] [--write DIR]
"""
from __future__ import annotations

import os
import re
import sys
import textwrap
import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.errors import VecgradError

ARGS = ("x", "X", "w", "src", "dst", "edges", "ptr", "mask")
ARGNUMS = (0, 1, 2)
D, K = 5, 4  # X's columns; w's length

PRELUDE = '''\
def kern(u):
    return np.tanh(u) * 1.5 + u

def kern2(a, b):
    return np.sin(a) * b + 0.5 * a

def score(r):
    return np.sum(r * r) + r[0]
'''

EW = ["np.sin({})", "np.tanh({})", "{} * 2.0", "{} ** 2", "kern({})", "np.exp(np.tanh({}))",
      "np.sqrt({} ** 2 + 1.0)"]
RED = ["np.sum({})", "{}.sum()", "np.mean({})", "np.max({})", "{}.min()", "score({})",
       "np.dot({0}, {0})", "np.sum(np.sin({}))"]


def make_inputs(n: int, seed: int) -> dict[str, Any]:
    """Inputs with trip count n (x, X, mask: n rows; src, dst, edges: n edges into
    max(2, n // 3) nodes, so destinations repeat; ptr: rows of 1-3 items covering x)."""
    r = np.random.default_rng(seed)
    nodes = max(2, n // 3)
    src, dst = r.integers(0, n, n), r.integers(0, nodes, n)
    lens = r.integers(1, 4, n)
    ptr = [0] + [int(v) for v in np.cumsum(lens)]
    ptr = [p for p in ptr if p <= n]
    return {"x": r.standard_normal(n), "X": r.standard_normal((n, D)),
            "w": r.standard_normal(K) * 0.5, "src": src, "dst": dst,
            "edges": [(int(a), int(b)) for a, b in zip(src, dst)], "ptr": ptr,
            "mask": r.standard_normal(n) > 0}


@dataclass
class Case:
    family: str
    short: str  # the variant, for a reproducer's file name
    src: str
    strict: bool = True  # no iteration reads another's result (else 'assoc': max / product)
    vmapped: bool = False  # run as vg.vmap over a batch of 3 x's (the loss sums the batch)


class CliffGen:
    """Draws one program per seed; a family's method returns (short, body[, strict])."""

    FAMILIES: ClassVar[tuple[str, ...]] = (
        "window", "patch2d", "edges", "rmw", "masked", "mixed", "kernels", "csr", "append",
        "calls")

    def __init__(self, seed: int):
        self.r = np.random.default_rng(seed)

    def pick(self, opts):
        return opts[int(self.r.integers(len(opts)))]

    def i(self, lo: int, hi: int) -> int:
        return int(self.r.integers(lo, hi + 1))

    def ew(self, e: str) -> str:
        return self.pick(EW).format(e)

    def red(self, e: str) -> str:
        return self.pick(RED).format(e)

    # ------------------------------------------------------------------ families
    def window(self):
        a, s, k, dl = self.i(0, 2), self.pick([1, 1, 2, 3]), self.i(1, 4), self.pick([1, 1, 2])
        span = (k - 1) * dl + 1
        rng = f"range({a}, len(x) - {span - 1}, {s})"
        win = f"x[i:i + {span}:{dl}]" if dl > 1 else f"x[i:i + {k}]"
        wv = self.pick([f"w[:{k}]", "1.0", f"np.linspace(0.5, 1.5, {k})"])
        body = self.red(f"({win} * {wv})")
        form = self.pick(["buf", "comp", "acc", "stack", "rev", "inner", "rows", "back", "affine",
                          "clamped", "cols"])
        short = f"a{a}s{s}k{k}d{dl}_{form}"
        if form == "clamped":  # windows cut at the ends: a few lengths near the boundaries
            lo = self.pick([f"max(i - {k}, 0)", f"max(0, i - {k} + 1)"])
            hi = self.pick(["i + 1", f"min(i + {k}, len(x))", f"i + {k}"])
            return short, (f"out = xp.zeros(len(x))\nfor i in range(len(x)):\n"
                           f"    out[i] = {self.pick(['np.mean', 'np.sum', 'np.max', 'sq'])}(x[{lo}:{hi}])\n"
                           "return np.sum(out ** 2)").replace("sq(", "score(")
        if form == "cols":  # windows along X's rows, each a (span, D) block against w
            return short, (f"out = xp.zeros(len({rng}))\nfor t, i in enumerate({rng}):\n"
                           f"    out[t] = np.sum(X[i:i + {span}:{dl}, :{K}] * w)\n"
                           "return np.sum(out ** 2)")
        if form == "inner":  # the window as an inner loop over its taps
            return short, (f"out = xp.zeros(len({rng}))\nfor t, i in enumerate({rng}):\n"
                           f"    for j in range({k}):\n        out[t] += w[j] * x[i + {dl} * j]\n"
                           "return np.sum(np.tanh(out))")
        if form == "rows":  # windows of rows of X
            return short, (f"out = xp.zeros((len({rng}), {D}))\nfor t, i in enumerate({rng}):\n"
                           f"    out[t] = {self.pick(['np.sum', 'np.max', 'np.mean'])}(X[i:i + {span}:{dl}], axis=0)\n"
                           "return np.sum(out ** 2)")
        if form == "back":  # a descending range
            return short, (f"out = xp.zeros(len(x))\nfor i in range(len(x) - {span}, {a - 1}, -{s}):\n"
                           f"    out[i] = {body}\nreturn np.sum(out ** 2)")
        if form == "affine":  # positions s * t + a, the window written at t
            cnt = f"(len(x) - {span} - {a}) // {s} + 1"
            return short, (f"out = xp.zeros({cnt})\nfor t in range({cnt}):\n"
                           f"    out[t] = {self.red(f'(x[{s} * t + {a}:{s} * t + {a} + {span}:{dl}] * {wv})')}\n"
                           "return np.sum(out ** 2)")
        if form == "buf":
            return short, (f"out = xp.zeros(len({rng}))\nfor t, i in enumerate({rng}):\n"
                           f"    out[t] = {body}\nreturn np.sum(out ** 2)")
        if form == "comp":
            return short, f"out = xp.array([{body} for i in {rng}])\nreturn np.sum(np.sin(out))"
        if form == "acc":
            return short, (f"acc = 0.0\nfor i in {rng}:\n    acc = acc + {body} * "
                           f"{self.pick(['0.5', 'x[i]', 'i'])}\nreturn acc")
        if form == "stack":
            return short, (f"out = np.stack([{self.ew(win)} for i in {rng}])\n"
                           f"return np.sum(out * out)")
        return short, (f"out = xp.zeros(len(x))\nfor i in {rng}:\n"
                       f"    out[i] = {body}\nreturn np.sum(out ** 2)")

    def patch2d(self):
        kh, kw = self.i(1, 3), self.i(1, 3)
        sh, sw = self.pick([1, 1, 2]), self.pick([1, 2])
        rows, cols = f"(len(X) - {kh}) // {sh} + 1", f"({D} - {kw}) // {sw} + 1"
        patch = f"X[i * {sh}:i * {sh} + {kh}, j * {sw}:j * {sw} + {kw}]"
        ker = self.pick([f"W2[:{kh}, :{kw}]", "0.5", f"np.arange({kh * kw}).reshape({kh}, {kw}) * 0.1"])
        pre = f"W2 = np.outer(w, w)[:{kh}, :{kw}]\n" if ker.startswith("W2") else ""
        form = self.pick(["buf", "comp", "max", "acc", "dilated", "im2col", "pool", "scatter"])
        short = f"k{kh}x{kw}s{sh}x{sw}_{form}"
        if form == "dilated":  # taps 2 apart along the rows
            dr = f"(len(X) - {2 * kh - 1}) // {sh} + 1"
            return short, (f"out = xp.zeros(({dr}, {cols}))\nfor i in range({dr}):\n"
                           f"    for j in range({cols}):\n"
                           f"        out[i, j] = np.sum(X[i * {sh}:i * {sh} + {2 * kh - 1}:2, "
                           f"j * {sw}:j * {sw} + {kw}] * {ker})\nreturn np.sum(out ** 2)")
        if form == "im2col":  # patches flattened into a list, stacked, one matmul
            return short, (f"cols = []\nfor i in range({rows}):\n    for j in range({cols}):\n"
                           f"        cols.append({patch}.ravel())\n"
                           f"out = np.stack(cols) @ np.linspace(0.5, 1.5, {kh * kw})\n"
                           "return np.sum(np.tanh(out))")
        if form == "pool":  # non-overlapping max pooling (stride = size)
            pr, pc = f"len(X) // {kh}", f"{D} // {kw}"
            return short, (f"out = xp.zeros(({pr}, {pc}))\nfor i in range({pr}):\n"
                           f"    for j in range({pc}):\n"
                           f"        out[i, j] = X[i * {kh}:(i + 1) * {kh}, j * {kw}:(j + 1) * {kw}].max()\n"
                           "return np.sum(out ** 2)")
        if form == "scatter":  # the transpose: each output pixel spread over a patch
            return short, (f"{pre}img = xp.zeros(X.shape)\nfor i in range({rows}):\n"
                           f"    for j in range({cols}):\n"
                           f"        img[i * {sh}:i * {sh} + {kh}, j * {sw}:j * {sw} + {kw}] += "
                           f"np.tanh(X[i, j]) * {ker}\nreturn np.sum(img ** 2)")
        if form == "buf":
            return short, (f"{pre}out = xp.zeros(({rows}, {cols}))\nfor i in range({rows}):\n"
                           f"    for j in range({cols}):\n        out[i, j] = np.sum({patch} * {ker})\n"
                           f"return np.sum(out ** 2)")
        if form == "max":
            return short, (f"out = xp.zeros(({rows}, {cols}))\nfor i in range({rows}):\n"
                           f"    for j in range({cols}):\n        out[i, j] = {patch}.max()\n"
                           f"return np.sum(out * X[:{rows}, :{cols}])")
        if form == "acc":
            return short, (f"{pre}acc = 0.0\nfor i in range({rows}):\n    for j in range({cols}):\n"
                           f"        acc = acc + np.sum(np.tanh({patch} * {ker}))\nreturn acc")
        return short, (f"{pre}out = xp.array([[np.sum({self.ew(patch)} * {ker}) for j in range({cols})]"
                       f" for i in range({rows})])\nreturn np.sum(out ** 2)")

    def edges(self):
        loop = self.pick(["for e in range(len(src)):\n    a, b = src[e], dst[e]",
                          "for a, b in zip(src, dst):", "for a, b in edges:",
                          "for e, (a, b) in enumerate(edges):"])
        X = self.pick(["X", "np.tanh(X)"])
        kind = self.pick(["scatter", "message", "max", "weighted", "deg", "acc", "gather",
                          "ewt", "selfloop", "attn"])
        if kind == "ewt":  # a traced weight per edge
            return ("ewt", f"out = xp.zeros(X.shape)\n{loop}\n" + textwrap.indent(
                "out[b] += np.tanh(x[a] - x[b]) * X[a]", "    ") + "\nreturn np.sum(out ** 2)", True)
        if kind == "selfloop":  # self loops appended in Python
            return ("selfloop", ("pairs = list(edges) + [(i, i) for i in range(len(X))]\n"
                    "out = xp.zeros(X.shape)\nfor a, b in pairs:\n    out[b] += np.sin(X[a])\n"
                    "return np.sum(out ** 2)"), True)
        if kind == "attn":  # scores per edge, normalized per destination
            return ("attn", ("den = xp.zeros(len(X))\nfor a, b in zip(src, dst):\n"
                    "    den[b] += np.exp(np.tanh(X[a] @ X[b]))\nout = xp.zeros(X.shape)\n"
                    "for a, b in zip(src, dst):\n"
                    "    out[b] += np.exp(np.tanh(X[a] @ X[b])) / den[b] * X[a]\n"
                    "return np.sum(out ** 2)"), True)
        strict = kind != "max"
        if kind == "scatter":
            body = f"out[b] += {self.ew(f'{X}[a]')}"
        elif kind == "message":
            body = f"msg = np.tanh({X}[a] - {X}[b])\nout[a] -= msg * 0.5\nout[b] += msg"
        elif kind == "max":
            body = f"out[b] = np.maximum(out[b], {X}[a])"
        elif kind == "weighted":
            body = f"out[b] += x[a] * {X}[a]"
        elif kind == "deg":
            body = "deg[b] += 1.0\nout[b] += x[a] * X[a]"
        elif kind == "acc":
            return ("acc", f"acc = 0.0\n{loop}\n" + textwrap.indent(
                f"acc = acc + np.sum(({X}[a] - {X}[b]) ** 2) + 0.5 * x[a]", "    ")
                + "\nreturn acc", True)
        else:
            body = f"out[b] += {X}[a, :{min(K, D)}] @ w[:{min(K, D)}] * X[b, :{min(K, D)}]"
            return ("gather", f"out = xp.zeros((len(X), {min(K, D)}))\n{loop}\n"
                    + textwrap.indent(body, "    ") + "\nreturn np.sum(out ** 2)", True)
        pre = "deg = xp.zeros(len(X))\n" if kind == "deg" else ""
        init = "xp.zeros(X.shape)" if kind != "max" else "xp.full(X.shape, -3.0)"
        post = "np.sum(out ** 2) + np.sum(deg ** 2)" if kind == "deg" else "np.sum(out ** 2)"
        short = f"{kind}_{loop.split()[1].strip('(,')}"
        return short, (f"{pre}out = {init}\n{loop}\n" + textwrap.indent(body, "    ")
                       + f"\nreturn {post}"), strict

    def rmw(self):
        kind = self.pick(["f_own", "idx_add", "idx_max", "mul_rep", "two_writes", "view",
                          "sub_own", "dup_fancy", "own_max", "spread", "col", "cell", "add_at",
                          "idx_sub"])
        if kind == "own_max":
            return kind, ("buf = np.cos(x).copy()\nfor i in range(len(x)):\n"
                          "    buf[i] = np.maximum(buf[i], x[i] * 0.5)\nreturn np.sum(buf ** 2)")
        if kind == "spread":  # each i adds to its neighbours (positions overlap across i)
            return kind, ("buf = xp.zeros(len(x) + 2)\nfor i in range(len(x)):\n"
                          f"    buf[i] += {self.ew('x[i]')}\n    buf[i + 2] += x[i] * 0.5\n"
                          "return np.sum(buf ** 2)")
        if kind == "col":
            return kind, ("buf = xp.zeros((3, len(x)))\nfor i in range(len(x)):\n"
                          f"    buf[:, i] += {self.ew('X[i, :3]')}\nreturn np.sum(buf ** 2)")
        if kind == "cell":
            return kind, ("buf = X.copy()\nfor i in range(len(X)):\n    for j in range(2):\n"
                          f"        buf[i, j] = buf[i, j + 1] * {self.ew('X[i, j]')}\nreturn np.sum(buf ** 2)")
        if kind == "add_at":
            return kind, ("buf = xp.zeros(len(X) // 3 + 2)\nfor i in range(len(x)):\n"
                          "    np.add.at(buf, dst[i], x[i] * 2.0)\nreturn np.sum(buf ** 2)")
        if kind == "idx_sub":
            return kind, ("buf = xp.ones((len(X) // 3 + 2, 2))\nfor i in range(len(x)):\n"
                          "    buf[dst[i]] -= X[i, :2] * x[i]\nreturn np.sum(buf ** 2)")
        if kind == "f_own":
            return kind, (f"buf = np.cos(x).copy()\nfor i in range(len(x)):\n"
                          f"    buf[i] = {self.ew('buf[i]')} * x[i]\nreturn np.sum(buf ** 2)")
        if kind == "sub_own":
            return kind, ("buf = X.copy()\nfor i in range(len(X)):\n"
                          f"    buf[i, 1:] = buf[i, 1:] * {self.ew('buf[i, :-1]')}\n"
                          "return np.sum(buf ** 2)")
        if kind == "idx_add":
            return kind, ("buf = xp.zeros(len(X) // 3 + 2)\nfor i in range(len(x)):\n"
                          f"    buf[dst[i]] += {self.ew('x[i]')}\nreturn np.sum(buf ** 2)")
        if kind == "idx_max":
            return kind, ("buf = xp.full(len(X) // 3 + 2, -2.0)\nfor i in range(len(x)):\n"
                          "    buf[dst[i]] = np.maximum(buf[dst[i]], x[i] * 2.0)\n"
                          "return np.sum(buf ** 2)"), False
        if kind == "mul_rep":
            return kind, ("buf = xp.ones(3)\nfor i in range(len(x)):\n"
                          f"    buf[i % 3] *= {self.pick(['np.tanh(x[i]) + 1.5', '1.0 + 0.1 * x[i]'])}\n"
                          "return np.sum(buf)"), False
        if kind == "two_writes":
            return kind, ("buf = xp.zeros((len(X), 2))\nfor i in range(len(X)):\n"
                          f"    buf[i, 0] = {self.red('X[i]')}\n    buf[i, 1] = buf[i, 0] * x[i]\n"
                          "return np.sum(buf ** 2)")
        if kind == "view":
            view = self.pick(["[1:]", "[::-1]", "[::2]", "[1:-1]"])
            name = {"[1:]": "tail", "[::-1]": "rev", "[::2]": "even", "[1:-1]": "inner"}[view]
            return f"view_{name}", (f"buf = xp.zeros(len(x) + 2)\nvw = buf{view}\n"
                                   f"for i in range(len(vw)):\n    vw[i] += {self.ew('x[i % len(x)]')}\n"
                                   "return np.sum(buf ** 2)")
        return kind, ("buf = xp.zeros(len(x))\nfor i in range(len(x)):\n"
                      "    buf[[i, i]] += x[i] * 2.0\nreturn np.sum(buf ** 2)")

    def masked(self):
        kind = self.pick(["where", "mul", "pyif", "select", "clip", "maskrow", "rowmask",
                          "maskacc"])
        if kind == "rowmask":  # a masked write into each row
            return kind, ("out = X.copy()\nfor i in range(len(X)):\n"
                          "    out[i][X[i] < 0] *= 0.1\nreturn np.sum(out ** 2)")
        if kind == "maskacc":
            return kind, ("acc = 0.0\nfor i in range(len(x)):\n"
                          "    acc = acc + np.sum(np.where(X[i] > x[i], X[i] - x[i], 0.0))\nreturn acc")
        if kind == "where":
            body = f"out[i] = np.where(mask[i], {self.ew('x[i]')}, x[i] * 0.5)"
        elif kind == "mul":
            body = "out[i] = x[i] * mask[i] + np.sin(x[i])"
        elif kind == "pyif":
            body = f"if i % 3 == 0:\n    out[i] = {self.ew('x[i]')}\nelse:\n    out[i] = x[i] * 0.5"
        elif kind == "select":
            body = "out[i] = np.select([x[i] > 0.5, x[i] < -0.5], [x[i] ** 2, -x[i]], x[i])"
        elif kind == "clip":
            body = "out[i] = np.clip(x[i] * 2.0, -1.0, 1.0) + x[i] * 0.1"
        else:
            return kind, ("out = xp.zeros(X.shape)\nfor i in range(len(X)):\n"
                          "    r = X[i]\n    out[i] = np.where(r > 0, r, 0.1 * r)\n"
                          "return np.sum(out ** 2)")
        return kind, ("out = xp.zeros(len(x))\nfor i in range(len(x)):\n"
                      + textwrap.indent(body, "    ") + "\nreturn np.sum(out ** 2)")

    def mixed(self):
        terms = [("lin", "x[i] * 0.5"), ("row", f"{self.red('X[i]')}"),
                 ("dot", f"X[i, :{K}] @ w"), ("pair", "x[i] * x[i - 1]"),
                 ("ew", f"{self.ew('x[i]')}"), ("idx", "X[i, i % 2]"),
                 ("const", "i * 0.01"), ("nonl", "np.sum(np.tanh(X[i] * x[i]))"),
                 ("next", "x[i] * x[(i + 1) % len(x)]"), ("rowdot", "X[i] @ X[i - 1]"),
                 ("win", "np.sum(x[max(i - 2, 0):i + 1])"), ("mask", "x[i] * mask[i]")]
        n = self.i(2, 4)
        pick = [terms[j] for j in self.r.choice(len(terms), n, replace=False)]
        expr = " + ".join(t for _, t in pick)
        short = "_".join(k for k, _ in pick)
        form = self.pick(["acc", "aug", "sum"])
        if form == "sum":
            return f"sum_{short}", f"return sum({expr} for i in range(1, len(x)))"
        op = "acc = acc + ({})" if form == "acc" else "acc += {}"
        return f"{form}_{short}", ("acc = 0.0\nfor i in range(1, len(x)):\n    "
                                   + op.format(expr) + "\nreturn acc")

    def kernels(self):
        kind = self.pick(["map", "sum_gen", "comp", "map2", "lambda", "sum_map", "pairs",
                          "static_if"])
        if kind == "pairs":  # a triangular double loop over pairs
            return kind, ("return sum(score(kern2(X[i], X[j])) for i in range(len(X) // 4) "
                          "for j in range(i))")
        if kind == "static_if":
            return kind, ("out = np.stack([kern(X[i]) if i % 2 == 0 else np.sin(X[i]) "
                          "for i in range(len(X))])\nreturn np.sum(out ** 2)")
        if kind == "map":
            return kind, "out = np.stack(list(map(kern, X)))\nreturn np.sum(out ** 2)"
        if kind == "sum_gen":
            return kind, "return sum(score(kern(r)) for r in X)"
        if kind == "comp":
            return kind, "out = xp.array([score(X[i] * x[i]) for i in range(len(X))])\nreturn np.sum(out ** 2)"
        if kind == "map2":
            return kind, "out = np.stack(list(map(kern2, X, X[::-1])))\nreturn np.sum(out ** 2)"
        if kind == "lambda":
            return kind, (f"out = xp.array(list(map(lambda r: np.tanh(r[:{K}] @ w), X)))\n"
                          "return np.sum(out ** 2)")
        return kind, "return sum(map(score, np.tanh(X)))"

    def csr(self):
        kind = self.pick(["dot", "sum", "max", "mean", "spmv"])
        seg = "x[ptr[r]:ptr[r + 1]]"
        if kind == "spmv":  # values times x at traced column indices
            return kind, ("out = xp.zeros(len(ptr) - 1)\nfor r in range(len(ptr) - 1):\n"
                          "    lo, hi = ptr[r], ptr[r + 1]\n    out[r] = x[lo:hi] @ X[src[lo:hi], 0]\n"
                          "return np.sum(out ** 2)")
        body = {"dot": f"{seg} @ np.tanh({seg})", "sum": f"np.sum(np.sin({seg}))",
                "max": f"np.max({seg})", "mean": f"np.mean({seg} ** 2)"}[kind]
        return kind, (f"out = xp.zeros(len(ptr) - 1)\nfor r in range(len(ptr) - 1):\n"
                      f"    out[r] = {body}\nreturn np.sum(out ** 2)")

    def append(self):
        kind = self.pick(["stack", "concat", "array", "vstack", "pairs", "cond"])
        if kind == "pairs":  # tuples appended, then unzipped
            return kind, ("rows = []\nfor i in range(len(X)):\n    rows.append((X[i] * x[i], np.sum(X[i])))\n"
                          "a, b = zip(*rows)\nreturn np.sum(np.stack(a) ** 2) + np.sum(xp.array(b) ** 2)")
        if kind == "cond":  # appended on a Python condition
            return kind, ("rows = []\nfor i in range(len(X)):\n    if i % 3 != 1:\n"
                          "        rows.append(np.tanh(X[i]))\nreturn np.sum(np.stack(rows) ** 2)")
        fn = {"stack": "np.stack(rows)", "concat": "np.concatenate(rows)",
              "array": "xp.array(rows)", "vstack": "np.vstack(rows)"}[kind]
        item = self.pick([self.ew("X[i]"), "X[i] * x[i]", f"np.tanh(X[i, :{K}] * w)"])
        return kind, ("rows = []\nfor i in range(len(X)):\n"
                      f"    rows.append({item})\nout = {fn}\nreturn np.sum(out ** 2)")

    def calls(self):
        """Plain NumPy calls on each row, in the forms rows are collected."""
        kind = self.pick(["convolve", "cumsum", "diff", "outer", "norm", "einsum", "sort",
                          "softmax", "polyval", "roll", "interp_lin", "clip"])
        e = {"convolve": "np.convolve(X[i], w[:3], 'valid')", "cumsum": "np.cumsum(X[i])",
             "diff": "np.diff(X[i]) * x[i]", "outer": "np.outer(X[i], w).sum(0)",
             "norm": "np.linalg.norm(X[i] - w[0], ord=3)", "einsum": "np.einsum('j,j->', X[i], X[i])",
             "sort": "np.sort(X[i] * x[i])", "softmax": "np.exp(X[i]) / np.exp(X[i]).sum()",
             "polyval": "np.polyval(w, X[i])", "roll": "np.roll(X[i], 1) - X[i]",
             "interp_lin": "X[i, :-1] + 0.5 * np.diff(X[i])", "clip": "np.clip(X[i], -0.5, x[i])"}[kind]
        form = self.pick(["stack", "buf", "acc", "map"])
        if form == "stack":
            body = f"out = np.stack([{e} for i in range(len(X))])\nreturn np.sum(out ** 2)"
        elif form == "buf":
            shape = {"convolve": (D - 2,), "diff": (D - 1,), "outer": (K,), "norm": (),
                     "einsum": (), "interp_lin": (D - 1,)}.get(kind, (D,))
            body = (f"out = xp.zeros((len(X),) + {shape})\n"
                    f"for i in range(len(X)):\n    out[i] = {e}\nreturn np.sum(out ** 2)")
        elif form == "acc":
            body = f"acc = 0.0\nfor i in range(len(X)):\n    acc = acc + np.sum({e} ** 2)\nreturn acc"
        else:
            body = (f"out = np.stack(list(map(lambda i: {e}, range(len(X)))))\n"
                    "return np.sum(out ** 2)")
        return f"{kind}_{form}", body

    def draw(self, family: str | None = None) -> Case:
        fam = family or self.pick(self.FAMILIES)
        got = getattr(self, fam)()
        short, body = got[0], got[1]
        strict = got[2] if len(got) > 2 else True
        src = PRELUDE + f"\ndef f({', '.join(ARGS)}):\n" + textwrap.indent(body, "    ") + "\n"
        vm = self.i(0, 3) == 0
        return Case(fam, re.sub(r"[^\w]+", "_", short).strip("_") + ("_vmap" if vm else ""),
                    src, strict, vm)


def load(src: str, xp):
    ns: dict[str, Any] = {"np": np, "xp": xp}
    exec(compile(src, "<cliff>", "exec"), ns)  # noqa: S102 - the drawn program is the point
    return ns["f"]


def _args(n: int, seed: int) -> list:
    d = make_inputs(n, seed)
    return [d[a] for a in ARGS]


def numpy_value(src: str, args: list, vmapped: bool = False) -> float:
    """NumPy's loss (vmapped: summed over the batch of x's in args[0])."""
    f = load(src, np)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xs = args[0] if vmapped else [args[0]]
        return float(sum(f(xb.copy(), *[a.copy() if isinstance(a, np.ndarray) else a
                                        for a in args[1:]]) for xb in xs))


def batch_of(x: np.ndarray) -> np.ndarray:
    return np.stack([x, np.cos(x) * 1.3, x[::-1] * 0.7])


def vg_loss(case: Case):
    """The function vecgrad compiles: f, or the sum of vg.vmap(f) over a batch of x's."""
    f = load(case.src, vnp)
    if not case.vmapped:
        return f
    fv = vg.vmap(f, in_axes=(0,) + (None,) * (len(ARGS) - 1))
    return lambda *a: vnp.sum(fv(*a))


def _fd(src: str, args: list, seed: int, eps: float = 1e-6, vmapped: bool = False
        ) -> tuple[float, list]:
    """A central difference of NumPy's program in one random direction, and the direction."""
    r = np.random.default_rng(seed + 7)
    dirs = [r.standard_normal(np.shape(args[a])) for a in ARGNUMS]

    def at(t):
        b = list(args)
        for a, dv in zip(ARGNUMS, dirs):
            b[a] = args[a] + t * dv
        return numpy_value(src, b, vmapped)
    return (at(eps) - at(-eps)) / (2 * eps), dirs


RECUR = re.compile(r"recurrence|one feeds the other|previous")


def false_recurrences(entry) -> dict:
    """What the compile's notes (the ones `vg.explain` reads) call a recurrence or a
    sequential chain, by line: {line: (steps, text)}, steps the rolled steps or the groups
    the operations ran as (a chain inside one iteration, Horner's rule in np.polyval, keeps
    its steps at any trip count; a chain across iterations grows with it)."""
    out = {}
    for note in entry.notes:
        kind = getattr(note, "kind", "")
        reason = getattr(note, "reason", "") or ""
        if kind == "recurrence" or (kind == "sequential" and RECUR.search(reason)):
            line = getattr(getattr(note, "src", None), "line", "?")
            steps = getattr(note, "groups", 0) or getattr(note, "count", 0)
            out[line] = (max(steps, out.get(line, (0, ""))[0]),
                         f"line {line}: {kind} {reason}".strip())
    return out


@dataclass
class Result:
    status: str  # ok | grows | unexplained | recurrence | wrong | crash | refused | skip
    detail: str = ""
    counts: tuple = ()


STAGES = ("scans", "final")  # (after the recurrence roller; the gradient graph compiled)


def _compile(case: Case, size: int, seed: int, grad_check: bool) -> Result | tuple:
    """(counts, notes' recurrences) of vg.value_and_grad at trip count `size`, or a Result
    when the program is skipped, refused, crashes or is wrong."""
    args = _args(size, seed)
    if case.vmapped:
        args[0] = batch_of(args[0])
    try:
        want = numpy_value(case.src, args, case.vmapped)
    except Exception:  # noqa: BLE001 - a program NumPy rejects is not ours to judge
        return Result("skip")
    if not np.isfinite(want) or abs(want) > 1e8:
        return Result("skip")
    g = vg.value_and_grad(vg_loss(case), argnums=ARGNUMS)
    try:
        entry, _ = g.entry(*args)
        val, grads = g(*args)
    except VecgradError as e:
        return Result("refused", str(e).splitlines()[0][:120])
    except Exception as e:  # noqa: BLE001 - anything else from vecgrad is a bug
        return Result("crash", f"{type(e).__name__}: {str(e)[:200]}")
    if not np.isclose(float(val), want, rtol=1e-7, atol=1e-8):
        return Result("wrong", f"value {float(val)!r} != NumPy's {want!r} at n={size}")
    if grad_check:
        fd, dirs = _fd(case.src, args, seed, vmapped=case.vmapped)
        an = sum(float(np.vdot(np.asarray(gr), dv)) for gr, dv in zip(grads, dirs))
        if abs(an - fd) > 1e-4 * max(1.0, abs(fd)):
            return Result("wrong", f"gradient {an!r} != central difference {fd!r}")
    counts = tuple(entry.counts.get(s, 0) for s in STAGES)
    return counts, false_recurrences(entry) if case.strict else {}


def check(case: Case, seed: int, n: int = 80, grad_check: bool = True) -> Result:
    """Compiles vg.value_and_grad of `case` at trip counts n and 2n (and 4n when a count grew)
    and compares (see the module doc). A count that grows by more than 2 from n to 2n and
    grows at least 1.5 times as much again from 2n to 4n grows with the trip count ('grows');
    a slower growth (the rounds of a scatter into repeated positions follow the largest
    multiplicity in the data, not n) is 'sublinear'."""
    got = []
    for size in (n, 2 * n):
        r = _compile(case, size, seed, grad_check and size == n)
        if isinstance(r, Result):
            return r
        got.append(r)
    (c1, _), (c2, recur) = got
    grew = [j for j in range(len(STAGES)) if c2[j] > c1[j] + 2]
    if grew:
        r = _compile(case, 4 * n, seed, False)
        if isinstance(r, Result):
            return r
        c4 = r[0]
        what = ", ".join(f"{s} {a} -> {b} -> {c}" for s, a, b, c in zip(STAGES, c1, c2, c4))
        linear = any(c4[j] - c2[j] >= 1.5 * (c2[j] - c1[j]) for j in grew)
        if linear and explain_line(case, seed, 2 * n) == "all batched":
            return Result("unexplained", f"{what}, and vg.explain lists nothing left "
                          "unbatched or rolled", (c1, c2, c4))
        return Result("grows" if linear else "sublinear",
                      f"{what} (n={n} -> {2 * n} -> {4 * n})", (c1, c2, c4))
    grown = [t for line, (k, t) in recur.items() if k > got[0][1].get(line, (0, ""))[0]]
    if grown:
        return Result("recurrence", "; ".join(grown)[:300], (c1, c2))
    return Result("ok", counts=(c1, c2))


def explain_line(case: Case, seed: int, n: int) -> str:
    """`vg.explain`'s account of what did not batch and what it rolled, at trip count n."""
    args = _args(n, seed)
    if case.vmapped:
        args[0] = batch_of(args[0])
    rep = vg.explain(vg_loss(case), *args, argnums=ARGNUMS, budget=0.005)
    parts = [f"unbatched line {f.src.line} x{f.count} ({f.kind}): {f.reason}"
             for f in rep.unbatched]
    parts += [f"recurrence line {f.src.line} x{f.count} -> {'; '.join(f.became[:2])}"
              for f in rep.recurrences]
    return "; ".join(parts) or "all batched"


def shrink_case(case: Case, seed: int, n: int, status: str) -> Case:
    """Deletes body lines (with their blocks) while the program keeps `status`."""
    from fuzz_programs import shrink

    def keeps(src: str) -> bool:
        try:
            return check(Case(case.family, case.short, src, case.strict, case.vmapped), seed,
                         n, grad_check=False).status == status
        except Exception:  # noqa: BLE001
            return False
    start = case.src.splitlines().index(next(ln for ln in case.src.splitlines()
                                             if ln.startswith("def f(")))
    return Case(case.family, case.short, shrink(case.src, keeps, start + 1), case.strict,
                case.vmapped)


def reproducer(case: Case, seed: int, n: int, res: Result) -> str:
    """The text of a reproducer file for /work/notes/cliffs21/."""
    body = case.src.split("def f(", 1)[1]
    return f'''"""Cliff ({case.family}, {case.short}), from tests/fuzz_cliffs.py seed {seed}.

What grows: {res.detail}
Equation counts (scans, final) at n={n}, {2 * n}, {4 * n}: {res.counts}
vg.explain at n={2 * n}: {explain_line(case, seed, 2 * n)}
Strict (no iteration reads another's result): {case.strict}

Run: .venv/bin/python {{this file}}   (prints the counts at both sizes)
"""
import sys
sys.path.insert(0, "/work/wt/fuzz/tests")
import numpy as np
import vecgrad as vg
import vecgrad.numpy as xp
from fuzz_cliffs import ARGNUMS, ARGS, _args, batch_of

{PRELUDE}
def f({body}

VMAPPED = {case.vmapped}  # (vg.vmap of f over a batch of 3 x's, summed)

if __name__ == "__main__":
    fv = vg.vmap(f, in_axes=(0,) + (None,) * (len(ARGS) - 1))
    loss = (lambda *a: xp.sum(fv(*a))) if VMAPPED else f
    for size in ({n}, {2 * n}, {4 * n}):
        args = _args(size, {seed})
        if VMAPPED:
            args[0] = batch_of(args[0])
        entry, _ = vg.value_and_grad(loss, argnums=ARGNUMS).entry(*args)
        print(size, {{s: entry.counts.get(s) for s in ("traced", "batch", "final")}})
'''


def run(count: int, start: int = 0, family: str | None = None, n: int = 80,
        write: str | None = None, quiet: bool = False) -> dict:
    """Checks programs start..start+count; prints per-family counts and each distinct
    finding (minimized), and writes reproducers of cliffs to `write`."""
    stats: dict[str, Counter] = {}
    found: dict[tuple, tuple] = {}
    refusals: Counter = Counter()
    for seed in range(start, start + count):
        case = CliffGen(seed).draw(family)
        res = check(case, seed, n)
        stats.setdefault(case.family, Counter())[res.status] += 1
        if res.status == "refused":
            refusals[res.detail[:90]] += 1
        if res.status in ("ok", "skip", "refused", "sublinear"):
            continue
        key = (case.family, case.short if res.status != "crash" else res.detail[:60], res.status)
        if key not in found:
            if not quiet:
                print(f"seed {seed}: {case.family}/{case.short}: {res.status}: {res.detail}",
                      flush=True)
            found[key] = (seed, case, res)
    if not quiet:
        for fam, c in sorted(stats.items()):
            print(f"{fam}: {dict(c)}")
        for msg, k in refusals.most_common(10):
            print(f"refused {k}x: {msg}")
    if write:
        os.makedirs(write, exist_ok=True)
        for (fam, short, status), (seed, case, res) in found.items():
            if status not in ("grows", "unexplained", "recurrence"):
                continue
            path = os.path.join(write, f"{fam}_{case.short}.py")
            if os.path.exists(path):
                continue
            small = shrink_case(case, seed, n, status)
            res2 = check(small, seed, n, grad_check=False)
            if res2.status != status:
                small, res2 = case, res
            with open(path, "w") as fh:
                fh.write(reproducer(small, seed, n, res2))
            print("wrote", path, flush=True)
    return {"stats": stats, "found": found}


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    argv = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = sys.argv[sys.argv.index("--write") + 1] if "--write" in sys.argv else None
    if out in argv:
        argv.remove(out)
    run(int(argv[0]) if argv else 200, int(argv[1]) if len(argv) > 1 else 0,
        argv[2] if len(argv) > 2 else None, write=out)
