"""More shapes for the cliff detector (tests/fuzz_cliffs.py), and a check of time, not only of
graph size.

The families here are the loop shapes users write that fuzz_cliffs.CliffGen does not draw:
loops with two or more carries (running statistics, momentum, Welford), nested loops with an
inner accumulator, `while` loops on a counter, a body calling a helper that loops itself,
lists of arrays stacked then reduced, dict and dataclass parameters, `functools.reduce`,
generator expressions in `sum` / `max`, `zip(a[:-1], a[1:])` pairs, `np.roll` stencils,
edge lists walked backwards, `continue` / `break` on Python ints, `np.outer` / `np.einsum`
per item, masks built in the loop, and Python's iteration tools (rows of an array,
itertools.pairwise / accumulate, dicts and lists of traced values). Programs have the signature of fuzz_cliffs (`f(x, X,
w, src, dst, edges, ptr, mask)`) and go through its `check` (graph growth from n to 2n to 4n,
false recurrences, values against NumPy, gradients against central differences).

`check_time` then runs the compiled `vg.value_and_grad` at trip counts T and 2T: a time ratio
above TIME_CLIFF (3; linear work gives 2) is a cliff in time ('slow2n'); where the family
wrote a hand-vectorized NumPy forward `ref` of the same function, the gradient's time over
the reference's (at 2T) above REF_CLIFF (3) is 'slowref' once REF_LEAST of per-call
overhead is taken off the gradient's time (a 10 us reference measures the overhead; a
Welford loop's 100 ms against it does not). A jump from T to 2T is confirmed at
4T (the edge of a cache makes one jump). Minimum of several runs, each measured in this
process; with one BLAS thread.

    nice .venv/bin/python tests/fuzz_shapes.py COUNT [START] [FAMILY] [--time [--T 4000]] [--write DIR]
"""
from __future__ import annotations

import os
import sys
import textwrap
import time
from collections import Counter
from typing import ClassVar

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # (run as a script: BLAS threads on a
import numpy as np  # busy machine make a tiny dot product take milliseconds)

sys.path.insert(0, os.path.dirname(__file__))
import fuzz_cliffs
from fuzz_cliffs import ARGNUMS, ARGS, Case, CliffGen, D, K, Result, check

import vecgrad as vg

PRELUDE2 = '''\
import functools
from dataclasses import dataclass

@dataclass
class Params:
    scale: object
    shift: object

def rowsq(r):
    s = 0.0
    for j in range(len(r)):
        s = s + r[j] * r[j]
    return s

def smooth(r):
    out = r * 0.5
    for j in range(1, len(r)):
        out = out + 0.25 * np.roll(r, j) / j
    return out

def wsum(seg, wt):
    acc = 0.0
    for j in range(len(wt)):
        acc = acc + seg[j] * wt[j]
    return acc
'''
TIME_CLIFF, REF_CLIFF = 3.0, 3.0
REF_LEAST = 50e-6  # (the most of a gradient's time that per-call overhead explains)


class ShapeGen(CliffGen):
    """CliffGen's draw over the new families; a family returns (short, body, strict, ref),
    ref the body of a hand-vectorized NumPy forward of the same function, or None."""

    FAMILIES: ClassVar[tuple[str, ...]] = (
        "carries", "nested", "whiles", "helper", "stacked", "params", "reduce", "genexpr",
        "pairs", "roll", "revedges", "flow", "outer", "maskloop", "pyiter")

    def carries(self):
        kind = self.pick(["welford", "momentum", "ema2", "adam", "minsum", "vecstats", "count"])
        if kind == "welford":
            return kind, ("m = 0.0\ns = 0.0\nfor k in range(len(x)):\n    d = x[k] - m\n"
                          "    m = m + d / (k + 1)\n    s = s + d * (x[k] - m)\nreturn s / len(x) + m"
                          ), False, "return np.var(x) + np.mean(x)"
        if kind == "momentum":
            b = self.pick(["0.9", "0.5"])
            return kind, (f"v = 0.0\np = 0.0\nfor i in range(len(x)):\n    v = {b} * v + {self.ew('x[i]')}\n"
                          "    p = p + v\nreturn p * 0.1 + v"), False, None
        if kind == "ema2":  # two moving averages of rows, their gap summed
            return kind, (f"fast = xp.zeros({D})\nslow = xp.zeros({D})\ngap = 0.0\n"
                          "for i in range(len(X)):\n    fast = 0.5 * fast + 0.5 * X[i]\n"
                          "    slow = 0.9 * slow + 0.1 * X[i]\n    gap = gap + np.sum((fast - slow) ** 2)\n"
                          "return gap"), False, None
        if kind == "adam":
            return kind, ("m = 0.0\nv = 0.0\nth = 0.0\nfor i in range(len(x)):\n    g = x[i] * 2.0\n"
                          "    m = 0.9 * m + 0.1 * g\n    v = 0.99 * v + 0.01 * g * g\n"
                          "    th = th - 0.01 * m / (np.sqrt(v) + 1e-3)\nreturn th"), False, None
        if kind == "minsum":
            return kind, ("lo = x[0]\ntot = 0.0\nfor i in range(len(x)):\n    lo = np.minimum(lo, x[i])\n"
                          "    tot = tot + x[i] * lo\nreturn tot"), False, \
                "return np.sum(x * np.minimum.accumulate(x))"
        if kind == "count":  # a Python int counter next to a traced carry
            return kind, ("n = 0\ntot = 0.0\nfor i in range(len(x)):\n    n += 1\n"
                          f"    tot = tot + {self.ew('x[i]')} / n\nreturn tot"), False, None
        return kind, (f"mu = xp.zeros({D})\nsq = xp.zeros({D})\nfor i in range(len(X)):\n"
                      "    mu = mu + X[i]\n    sq = sq + X[i] ** 2\n"
                      "var = sq / len(X) - (mu / len(X)) ** 2\nreturn np.sum(var) + np.sum(mu)"
                      ), False, ("mu = X.sum(0)\nvar = (X ** 2).sum(0) / len(X) - (mu / len(X)) ** 2\n"
                                 "return np.sum(var) + np.sum(mu)")

    def nested(self):
        k = self.i(2, 4)
        kind = self.pick(["win", "cols", "max", "dot", "two", "tri"])
        if kind == "win":
            return f"win{k}", (f"out = xp.zeros(len(x) - {k})\nfor i in range(len(x) - {k}):\n"
                               f"    s = 0.0\n    for j in range({k}):\n        s = s + w[j] * x[i + j]\n"
                               "    out[i] = np.tanh(s)\nreturn np.sum(out ** 2)"), True, \
                (f"s = np.correlate(x, w[:{k}], 'valid')[:len(x) - {k}]\nreturn np.sum(np.tanh(s) ** 2)")
        if kind == "cols":
            return kind, (f"out = xp.zeros(len(X))\nfor i in range(len(X)):\n    s = 0.0\n"
                          f"    for j in range({D}):\n        s = s + X[i, j] * w[j % {K}]\n"
                          "    out[i] = s * x[i]\nreturn np.sum(out ** 2)"), True, \
                (f"s = X @ w[np.arange({D}) % {K}]\nreturn np.sum((s * x) ** 2)")
        if kind == "max":
            return kind, (f"out = xp.zeros(len(X))\nfor i in range(len(X)):\n    m = X[i, 0]\n"
                          f"    for j in range(1, {D}):\n        m = np.maximum(m, X[i, j])\n"
                          "    out[i] = m\nreturn np.sum(out ** 2)"), True, \
                "return np.sum(X.max(1) ** 2)"
        if kind == "dot":  # an inner loop over a window of rows
            return f"dot{k}", (f"acc = 0.0\nfor i in range(len(X) - {k}):\n    r = xp.zeros({D})\n"
                               f"    for j in range({k}):\n        r = r + X[i + j] * w[j]\n"
                               "    acc = acc + np.sum(np.tanh(r))\nreturn acc"), True, None
        if kind == "two":  # two inner accumulators
            return f"two{k}", (f"out = xp.zeros(len(x) - {k})\nfor i in range(len(x) - {k}):\n"
                               f"    s = 0.0\n    q = 0.0\n    for j in range({k}):\n"
                               "        s = s + x[i + j]\n        q = q + x[i + j] ** 2\n"
                               f"    out[i] = q / {k} - (s / {k}) ** 2\nreturn np.sum(out)"), True, None
        return kind, ("acc = 0.0\nfor i in range(len(x)):\n    for j in range(max(0, i - 2), i + 1):\n"
                      "        acc = acc + x[i] * x[j] * 0.5\nreturn acc"), True, None

    def whiles(self):
        kind = self.pick(["acc", "buf", "step2", "win", "pair"])
        if kind == "acc":
            return kind, (f"i = 0\nacc = 0.0\nwhile i < len(x):\n    acc = acc + {self.ew('x[i]')}\n"
                          "    i += 1\nreturn acc"), True, None
        if kind == "buf":
            return kind, ("out = xp.zeros(len(x))\ni = 0\nwhile i < len(x):\n"
                          f"    out[i] = {self.ew('x[i]')} * x[len(x) - 1 - i]\n    i = i + 1\n"
                          "return np.sum(out ** 2)"), True, None
        if kind == "step2":
            return kind, ("acc = 0.0\ni = 1\nwhile i < len(x):\n    acc = acc + x[i] * x[i - 1]\n"
                          "    i += 2\nreturn acc"), True, "return np.sum(x[1::2] * x[0:len(x) - 1:2])"
        if kind == "win":
            return kind, ("out = []\ni = 0\nwhile i + 3 <= len(x):\n    out.append(np.sum(x[i:i + 3] * w[:3]))\n"
                          "    i += 1\nreturn np.sum(np.stack(out) ** 2)"), True, None
        return kind, ("i, acc = 0, 0.0\nwhile i < len(X) - 1:\n    acc += np.sum((X[i + 1] - X[i]) ** 2)\n"
                      "    i += 1\nreturn acc"), True, "return np.sum(np.diff(X, axis=0) ** 2)"

    def helper(self):
        kind = self.pick(["rowsq", "smooth", "wsum", "map"])
        if kind == "rowsq":
            return kind, ("out = xp.array([rowsq(X[i]) for i in range(len(X))])\nreturn np.sum(out * x)"
                          ), True, "return np.sum((X ** 2).sum(1) * x)"
        if kind == "smooth":
            return kind, ("out = xp.zeros(X.shape)\nfor i in range(len(X)):\n    out[i] = smooth(X[i])\n"
                          "return np.sum(out ** 2)"), True, None
        if kind == "wsum":
            return kind, ("acc = 0.0\nfor i in range(len(x) - 4):\n    acc = acc + np.tanh(wsum(x[i:i + 4], w))\n"
                          "return acc"), True, None
        return kind, "return sum(map(rowsq, np.tanh(X)))", True, "return np.sum(np.tanh(X) ** 2)"

    def stacked(self):
        item = self.pick(["np.tanh(X[i] * w[i % 4])", "X[i] * x[i]", f"np.sin(X[i, :{K}]) * w"])
        red = self.pick(["np.sum(S.max(axis=0))", "np.sum(np.mean(S, axis=0) ** 2)",
                         "np.sum(S ** 2)", "np.sum(np.linalg.norm(S, axis=1))",
                         "np.sum(np.sort(S, axis=0)[-1])", "np.sum(np.cumsum(S, axis=0)[-1])"])
        build = self.pick(["comp", "append", "sum", "vstack"])
        if build == "sum":  # Python's sum of a list of arrays
            return "sum", (f"rows = [{item} for i in range(len(X))]\nreturn np.sum(sum(rows) ** 2)"), True, None
        mk = {"comp": "S = np.stack([{e} for i in range(len(X))])",
              "append": "rows = []\nfor i in range(len(X)):\n    rows.append({e})\nS = np.stack(rows)",
              "vstack": "S = np.vstack([{e} for i in range(len(X))])"}[build]
        if build == "vstack" and "K" not in item and "[i]" in item:
            mk = "S = np.vstack([({e})[None] for i in range(len(X))])"
        return f"{build}_{red.split('(')[1][:6].strip('.')}", mk.format(e=item) + f"\nreturn {red}", True, None

    def params(self):
        kind = self.pick(["dict", "dataclass", "tuple", "nested_dict"])
        if kind == "dict":
            return kind, ("p = {'a': w[0], 'b': w[1:3]}\nacc = 0.0\nfor i in range(len(x)):\n"
                          "    acc = acc + np.tanh(p['a'] * x[i] + p['b'][i % 2])\nreturn acc"), True, None
        if kind == "dataclass":
            return kind, ("p = Params(scale=w[0], shift=X[0])\nout = xp.zeros(X.shape)\n"
                          "for i in range(len(X)):\n    out[i] = np.sin(p.scale * X[i] + p.shift)\n"
                          "return np.sum(out ** 2)"), True, \
                "return np.sum(np.sin(w[0] * X + X[0]) ** 2)"
        if kind == "tuple":
            return kind, ("ps = [(w[j], w[(j + 1) % 4]) for j in range(4)]\nacc = 0.0\n"
                          "for i in range(len(x)):\n    a, b = ps[i % 4]\n    acc = acc + (a * x[i] - b) ** 2\n"
                          "return acc"), True, None
        return kind, ("p = {'lin': {'w': w, 'b': 0.5}, 'act': np.tanh}\n"
                      f"out = xp.array([p['act'](X[i, :{K}] @ p['lin']['w'] + p['lin']['b']) for i in range(len(X))])\n"
                      "return np.sum(out ** 2)"), True, f"return np.sum(np.tanh(X[:, :{K}] @ w + 0.5) ** 2)"

    def reduce(self):
        kind = self.pick(["rows", "max", "range", "prod"])
        if kind == "rows":
            return kind, (f"tot = functools.reduce(lambda a, r: a + np.tanh(r), X, xp.zeros({D}))\n"
                          "return np.sum(tot ** 2)"), True, "return np.sum(np.tanh(X).sum(0) ** 2)"
        if kind == "max":
            return kind, "m = functools.reduce(np.maximum, X)\nreturn np.sum(m ** 2)", False, \
                "return np.sum(X.max(0) ** 2)"
        if kind == "prod":
            return kind, ("p = functools.reduce(lambda a, v: a * (1.0 + 0.1 * np.tanh(v)), x, 1.0)\n"
                          "return p"), False, "return np.prod(1.0 + 0.1 * np.tanh(x))"
        return kind, ("return functools.reduce(lambda a, i: a + x[i] * x[i - 1], range(1, len(x)), 0.0)"
                      ), True, "return np.sum(x[1:] * x[:-1])"

    def genexpr(self):
        kind = self.pick(["sum", "max", "sum2", "npsum", "min_rows", "any"])
        if kind == "sum":
            return kind, f"return sum({self.ew('x[i]')} * x[i + 1] for i in range(len(x) - 1))", True, None
        if kind == "max":
            return kind, "return max(np.sum(X[i] * w[0]) for i in range(len(X)))", False, \
                "return np.max(X.sum(1) * w[0])"
        if kind == "sum2":
            return kind, ("return sum(np.sum(np.tanh(X[i]) * X[j]) for i in range(len(X)) "
                          "for j in (i - 1, i) if j >= 0)"), True, None
        if kind == "npsum":
            return kind, "return np.sum([np.sin(x[i]) * x[i] for i in range(len(x))])", True, \
                "return np.sum(np.sin(x) * x)"
        if kind == "min_rows":
            return kind, "return sum(min(np.sum(X[i]), 1.0) for i in range(len(X)))", True, \
                "return np.sum(np.minimum(X.sum(1), 1.0))"
        return kind, ("return sum(np.sum(X[i] ** 2) for i in range(len(X)) if i % 3 != 2)"), True, \
            "return np.sum(X[np.arange(len(X)) % 3 != 2] ** 2)"

    def pairs(self):
        kind = self.pick(["diff2", "rows", "ratio", "buf", "three"])
        if kind == "diff2":
            return kind, "return sum((b - a) ** 2 for a, b in zip(x[:-1], x[1:]))", True, \
                "return np.sum(np.diff(x) ** 2)"
        if kind == "rows":
            return kind, ("acc = 0.0\nfor a, b in zip(X, X[1:]):\n    acc = acc + np.sum(np.tanh(a) * b)\n"
                          "return acc"), True, "return np.sum(np.tanh(X[:-1]) * X[1:])"
        if kind == "ratio":
            return kind, ("return sum(np.log1p(a * a + b * b) for a, b in zip(x[:-1], x[1:]))"
                          ), True, "return np.sum(np.log1p(x[:-1] ** 2 + x[1:] ** 2))"
        if kind == "three":
            return kind, ("return sum(a * b * c for a, b, c in zip(x, x[1:], x[2:]))"), True, \
                "return np.sum(x[:-2] * x[1:-1] * x[2:])"
        return kind, ("out = xp.zeros(len(x) - 1)\nfor i, (a, b) in enumerate(zip(x[:-1], x[1:])):\n"
                      "    out[i] = np.maximum(a, b)\nreturn np.sum(out ** 2)"), True, \
            "return np.sum(np.maximum(x[:-1], x[1:]) ** 2)"

    def roll(self):
        kind = self.pick(["rows", "heat", "state", "buf"])
        if kind == "rows":
            return kind, ("out = xp.zeros(X.shape)\nfor i in range(len(X)):\n"
                          f"    out[i] = np.roll(X[i], {self.pick([1, -1, 2])}) - 2 * X[i] + np.roll(X[i], -1)\n"
                          "return np.sum(out ** 2)"), True, None
        if kind == "heat":  # a fixed number of steps on the whole array: the length grows
            return kind, ("u = x.copy()\nfor t in range(4):\n    u = u + 0.1 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))\n"
                          "return np.sum(u ** 2)"), True, None
        if kind == "buf":
            return kind, ("out = xp.zeros(len(x))\nfor i in range(len(x)):\n"
                          "    out[i] = np.roll(x, 1)[i] * x[i]\nreturn np.sum(out)"), True, \
                "return np.sum(np.roll(x, 1) * x)"
        return kind, (f"h = xp.zeros({D})\nfor i in range(len(X)):\n    h = np.tanh(np.roll(h, 1) * 0.5 + X[i])\n"
                      "return np.sum(h)"), False, None

    def revedges(self):
        loop = self.pick(["for a, b in reversed(edges):", "for a, b in edges[::-1]:",
                          "for e in range(len(src) - 1, -1, -1):\n    a, b = src[e], dst[e]",
                          "for a, b in zip(src[::-1], dst[::-1]):"])
        kind = self.pick(["scatter", "acc", "message"])
        tag = next(t for k, t in (("reversed", "rev"), ("[::-1]:", "slice"), ("range", "range"),
                                 ("zip", "zip")) if k in loop)
        if kind == "acc":
            return f"acc_{tag}", (f"acc = 0.0\n{loop}\n    acc = acc + np.sum((X[a] - X[b]) ** 2)\n"
                                  "return acc"), True, "return np.sum((X[src] - X[dst]) ** 2)"
        if kind == "message":
            return f"msg_{tag}", (f"out = xp.zeros(X.shape)\n{loop}\n    m = np.tanh(X[a] - X[b])\n"
                                  "    out[a] -= m\n    out[b] += m\nreturn np.sum(out ** 2)"), True, None
        return f"scatter_{tag}", (f"out = xp.zeros(X.shape)\n{loop}\n    out[b] += {self.ew('X[a]')}\n"
                                  "return np.sum(out ** 2)"), True, None

    def flow(self):
        kind = self.pick(["cont", "brk", "both", "acc_cont", "ptr"])
        if kind == "cont":
            return kind, ("out = xp.zeros(len(x))\nfor i in range(len(x)):\n    if i % 4 == 3:\n"
                          f"        continue\n    out[i] = {self.ew('x[i]')}\nreturn np.sum(out ** 2)"), True, None
        if kind == "brk":
            return kind, ("acc = 0.0\nfor i in range(len(x)):\n    if i >= len(x) - 5:\n        break\n"
                          "    acc = acc + x[i] * x[i + 1]\nreturn acc"), True, \
                "return np.sum(x[:len(x) - 5] * x[1:len(x) - 4])"
        if kind == "both":
            return kind, ("acc = 0.0\nfor i in range(len(X)):\n    if i % 2:\n        continue\n"
                          "    if i > len(X) - 3:\n        break\n    acc = acc + np.sum(X[i] * X[i + 1])\n"
                          "return acc"), True, None
        if kind == "ptr":  # rows of a CSR skipped when empty or short
            return kind, ("acc = 0.0\nfor r in range(len(ptr) - 1):\n    if ptr[r + 1] - ptr[r] < 2:\n"
                          "        continue\n    acc = acc + np.sum(x[ptr[r]:ptr[r + 1]] ** 2)\nreturn acc"), True, None
        return kind, ("acc = 0.0\nfor i, (a, b) in enumerate(edges):\n    if a == b:\n        continue\n"
                      "    acc = acc + np.sum(X[a] * X[b])\nreturn acc"), True, None

    def outer(self):
        kind = self.pick(["cov", "einsum", "einsum2", "bilin", "outbuf"])
        if kind == "cov":
            return kind, (f"C = xp.zeros(({D}, {D}))\nfor i in range(len(X)):\n    C += np.outer(X[i], X[i])\n"
                          "return np.sum(np.tanh(C))"), True, "return np.sum(np.tanh(X.T @ X))"
        if kind == "einsum":
            return kind, (f"C = xp.zeros(({D}, {K}))\nfor i in range(len(X)):\n"
                          "    C = C + np.einsum('i,j->ij', X[i], w) * x[i]\nreturn np.sum(C ** 2)"), True, \
                "return np.sum(np.einsum('ni,n,j->ij', X, x, w) ** 2)"
        if kind == "einsum2":
            return kind, ("return sum(np.einsum('i,ij,j->', X[i], np.outer(X[i], X[i]), X[i]) "
                          "for i in range(len(X)))"), True, "return np.sum(np.sum(X * X, 1) ** 2)"
        if kind == "bilin":
            return kind, ("M = np.outer(w, w)\nout = xp.zeros(len(X))\nfor i in range(len(X)):\n"
                          f"    out[i] = X[i, :{K}] @ M @ X[i, {D - K}:]\nreturn np.sum(out ** 2)"), True, \
                (f"return np.sum(np.einsum('ni,ij,nj->n', X[:, :{K}], np.outer(w, w), "
                 f"X[:, {D - K}:]) ** 2)")
        return kind, (f"out = xp.zeros((len(X), {D}, {K}))\nfor i in range(len(X)):\n"
                      "    out[i] = np.outer(np.tanh(X[i]), w)\nreturn np.sum(out ** 2)"), True, \
            "return np.sum((np.tanh(X)[:, :, None] * w) ** 2)"

    def maskloop(self):
        kind = self.pick(["gt", "and", "where", "bool_acc", "count"])
        if kind == "gt":
            return kind, ("out = xp.zeros(len(X))\nfor i in range(len(X)):\n    m = X[i] > x[i]\n"
                          "    out[i] = np.sum(X[i] * m)\nreturn np.sum(out ** 2)"), True, \
                "return np.sum(np.sum(X * (X > x[:, None]), 1) ** 2)"
        if kind == "and":
            return kind, ("acc = 0.0\nfor i in range(len(X)):\n    m = (X[i] > -0.5) & (X[i] < 0.5)\n"
                          "    acc = acc + np.sum(np.where(m, X[i] ** 2, np.abs(X[i])))\nreturn acc"), True, None
        if kind == "where":
            return kind, ("out = X.copy()\nfor i in range(len(X)):\n    m = out[i] < 0\n"
                          "    out[i] = np.where(m, 0.1 * out[i], out[i])\nreturn np.sum(out ** 2)"), True, \
                "return np.sum(np.where(X < 0, 0.1 * X, X) ** 2)"
        if kind == "count":
            return kind, ("acc = 0.0\nfor i in range(len(X)):\n    m = X[i] > 0\n"
                          "    acc = acc + np.sum(X[i] * m) / (np.sum(m) + 1)\nreturn acc"), True, None
        return kind, ("acc = 0.0\nfor i in range(len(x)):\n    m = mask[i] & (i % 2 == 0)\n"
                      "    acc = acc + x[i] * m\nreturn acc"), True, None

    def pyiter(self):
        """Python's iteration tools over arrays and Python containers of traced values."""
        kind = self.pick(["rows", "pairwise", "accumulate", "dict", "defaultdict", "list_rmw",
                          "zip_xX", "lse", "prod", "nested_list"])
        if kind == "rows":
            return kind, "acc = 0.0\nfor row in X:\n    acc = acc + np.sum(np.tanh(row) * row)\nreturn acc", \
                True, "return np.sum(np.tanh(X) * X)"
        if kind == "pairwise":
            return kind, ("import itertools\nreturn sum(np.sum(a * b) for a, b in itertools.pairwise(X))"), \
                True, "return np.sum(X[:-1] * X[1:])"
        if kind == "accumulate":  # a running sum: a true recurrence (a cumsum)
            return kind, ("import itertools\nparts = list(itertools.accumulate([x[i] * 2 for i in range(len(x))]))\n"
                          "return np.sum(xp.array(parts) ** 2)"), False, "return np.sum(np.cumsum(x * 2) ** 2)"
        if kind == "dict":
            return kind, ("d = {}\nfor a, b in edges:\n    d[b % 5] = d.get(b % 5, 0.0) + x[a]\n"
                          "return sum(v ** 2 for v in d.values())"), True, None
        if kind == "defaultdict":
            return kind, ("from collections import defaultdict\nd = defaultdict(float)\nfor i in range(len(x)):\n"
                          "    d[i % 3] += x[i] ** 2\nreturn d[0] + d[1] * 2 + d[2]"), True, None
        if kind == "list_rmw":
            return kind, ("vals = [0.0] * 5\nfor a, b in edges:\n    vals[b % 5] = vals[b % 5] + X[a, 0]\n"
                          "return sum(v * v for v in vals)"), True, None
        if kind == "zip_xX":
            return kind, "acc = 0.0\nfor xi, r in zip(x, X):\n    acc = acc + xi * np.sum(r)\nreturn acc", \
                True, "return np.sum(x * X.sum(1))"
        if kind == "lse":
            return kind, "acc = -np.inf\nfor i in range(len(x)):\n    acc = np.logaddexp(acc, x[i])\nreturn acc", \
                False, "return np.logaddexp.reduce(x)"
        if kind == "prod":
            return kind, ("acc = 1.0\nfor i in range(len(x)):\n    acc = acc * (1.0 + 0.01 * np.tanh(x[i]))\nreturn acc"), \
                False, "return np.prod(1.0 + 0.01 * np.tanh(x))"
        return kind, ("rows = [[X[i, j] * w[j % 4] for j in range(5)] for i in range(len(X))]\n"
                      "return np.sum(xp.array(rows) ** 2)"), True, \
            "return np.sum((X * w[np.arange(5) % 4]) ** 2)"

    def draw(self, family: str | None = None) -> Case:
        fam = family or self.pick(self.FAMILIES)
        short, body, strict, ref = getattr(self, fam)()
        head = f"\ndef f({', '.join(ARGS)}):\n"
        src = fuzz_cliffs.PRELUDE + PRELUDE2 + head + textwrap.indent(body, "    ") + "\n"
        vm = self.i(0, 5) == 0
        case = Case(fam, short, src, strict, vm)
        case.ref = None if ref is None or vm else head.replace("def f", "def ref") + textwrap.indent(ref, "    ")
        return case


def _best(fn, args, reps: int = 5) -> float:
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best


def check_time(case: Case, seed: int, T: int = 4000) -> Result:
    """The compiled gradient's time at trip counts T and 2T ('slow2n' when the ratio passes
    TIME_CLIFF), and against the hand-vectorized forward `case.ref` at 2T ('slowref' past
    REF_CLIFF); 'ok' with the ratios in detail otherwise."""
    times = []
    for size in (T, 2 * T, 4 * T):
        if size == 4 * T and times[1] <= TIME_CLIFF * times[0]:
            break  # (a jump from T to 2T counts when 2T to 4T jumps too: not a cache's edge)
        args = fuzz_cliffs._args(size, seed)
        if case.vmapped:
            args[0] = fuzz_cliffs.batch_of(args[0])
        g = vg.value_and_grad(fuzz_cliffs.vg_loss(case), argnums=ARGNUMS)
        try:
            g(*args)
        except Exception as e:  # noqa: BLE001 - the graph check reports errors
            return Result("skip", f"{type(e).__name__}")
        times.append(_best(g, args))
    r2 = times[1] / times[0]
    detail = f"t(2T)/t(T) = {r2:.2f} ({times[0] * 1e3:.2f} -> {times[1] * 1e3:.2f} ms, T={T})"
    if len(times) == 3:
        detail += f", t(4T) = {times[2] * 1e3:.2f} ms"
        if times[2] > TIME_CLIFF * times[1]:
            return Result("slow2n", detail)
    args = fuzz_cliffs._args(2 * T, seed)
    ref = getattr(case, "ref", None)
    if ref:
        ns = {"np": np, "xp": np}
        exec(compile(ref, "<ref>", "exec"), ns)  # noqa: S102 - our own reference
        want = fuzz_cliffs.numpy_value(case.src, args)
        got = float(ns["ref"](*args))
        if want is not None and not np.isclose(got, want, rtol=1e-6, atol=1e-8):
            return Result("badref", f"reference {got} != program {want}")
        tr = _best(ns["ref"], args, 9)
        rr = times[1] / tr
        detail += f"; grad / ref forward = {rr:.2f} (ref {tr * 1e3:.3f} ms)"
        if times[1] - REF_LEAST > REF_CLIFF * tr:  # (what per-call overhead cannot explain)
            return Result("slowref", detail)
    return Result("ok", detail)


def run(count: int, start: int = 0, family: str | None = None, n: int = 80,
        timed: bool = False, write: str | None = None, T: int = 4000,
        gen: type = ShapeGen) -> dict:
    """Checks programs start..start+count of `gen` (graph, values, gradients; with
    `timed`, check_time on the ones whose graph is flat) and prints the findings."""
    stats: dict[str, Counter] = {}
    found: dict[tuple, tuple] = {}
    for seed in range(start, start + count):
        case = gen(seed).draw(family)
        res = check(case, seed, n)
        if res.status == "ok" and timed:
            res = check_time(case, seed, T)
            if res.status == "ok" and res.detail:
                print(f"seed {seed}: {case.family}/{case.short}: {res.detail}", flush=True)
        stats.setdefault(case.family, Counter())[res.status] += 1
        if res.status in ("ok", "skip", "sublinear"):
            continue
        key = (case.family, case.short if res.status not in ("crash", "refused") else res.detail[:60],
               res.status)
        if key not in found:
            print(f"seed {seed}: {case.family}/{case.short}: {res.status}: {res.detail}", flush=True)
            found[key] = (seed, case, res)
    for fam, c in sorted(stats.items()):
        print(f"{fam}: {dict(c)}")
    if write:
        _write(found, n, write)
    return {"stats": stats, "found": found}


def _write(found: dict, n: int, write: str) -> None:
    os.makedirs(write, exist_ok=True)
    for (fam, _, status), (seed, case, res) in found.items():
        if status not in ("grows", "unexplained", "recurrence", "slow2n", "slowref"):
            continue
        path = os.path.join(write, f"{fam}_{case.short}.py")
        if os.path.exists(path):
            continue
        expl = fuzz_cliffs.explain_line(case, seed, 2 * n)
        with open(path, "w") as fh:
            fh.write(f'"""Cliff ({fam}, {case.short}, {status}), from tests/fuzz_shapes.py seed '
                     f'{seed}.\n\nWhat grows: {res.detail}\nvg.explain at n={2 * n}: {expl}\n'
                     f'Strict (no iteration reads another\'s result): {case.strict}\n\n'
                     'Run: .venv/bin/python {this file}\n"""\nimport sys\n'
                     'sys.path.insert(0, "/work/wt/fuzz/tests")\nimport numpy as np\n'
                     'import vecgrad as vg\nimport vecgrad.numpy as xp\n'
                     'from fuzz_cliffs import ARGNUMS, _args\n\n' + case.src.split("\n", 0)[0]
                     + f'\n\nif __name__ == "__main__":\n    for size in ({n}, {2 * n}, {4 * n}):\n'
                     f'        entry, _ = vg.value_and_grad(f, argnums=ARGNUMS).entry(*_args(size, {seed}))\n'
                     '        print(size, {s: entry.counts.get(s) for s in ("traced", "scans", "final")})\n')
        print("wrote", path, flush=True)


if __name__ == "__main__":
    opts = {k: sys.argv[sys.argv.index(k) + 1] for k in ("--write", "--T") if k in sys.argv}
    taken = {sys.argv.index(k) + 1 for k in opts}
    argv = [a for j, a in enumerate(sys.argv[1:], 1) if not a.startswith("--") and j not in taken]
    out, T = opts.get("--write"), int(opts.get("--T", 4000))
    run(int(argv[0]) if argv else 100, int(argv[1]) if len(argv) > 1 else 0,
        argv[2] if len(argv) > 2 else None, timed="--time" in sys.argv, write=out, T=T)
