"""A generator of random natural *loop* programs, for the differential fuzzer of
tests/test_fuzz_loops.py (tests/fuzz_programs.py draws straight-line NumPy statements; this
module draws the styles users write loops in).

A program is Python source defining `f(x, v, W, s, ix, jx, E2, m, edges, c, k)`:

    x (n, d) float64   v (n,) float64   W (d, d) float64   s (n,) float32
    ix, jx (E,) int64 (an edge list as two arrays; traced integers)   E2 (E, 2) int64
    m (n,) bool        edges: a Python list of (src, dst) tuples      c: a Python scalar
    k: a Python int (a window length; jit's static argument in the `static` transform)

Its body is 1-3 blocks, each drawn from one STYLE (sliding windows with affine bounds and any
step, 2-D patches, read-modify-write into buffers and their views, edge lists in three
forms, comprehensions with sum / np.stack / np.array, `map` with kernel functions,
Python-int branches, accumulators mixing kinds of terms, linear and nonlinear recurrences,
dtype mixes, plain NumPy calls). A block reads the inputs and the values earlier blocks made,
so blocks chain. Buffers are made with `xp.zeros` etc. (`xp` is NumPy for the oracle and
vecgrad.numpy under vecgrad), everything else is plain `np.` as users write it.

Each program is run by NumPy as it is drawn (arguments read-only, floating errors raised):
a block NumPy rejects, or whose values are not finite and moderate, is drawn again, so the
source is always a valid NumPy program and NumPy's result is the oracle.
"""
from __future__ import annotations

import textwrap
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

import vecgrad as vg  # (programs may call vecgrad's transforms inside: run eagerly by NumPy's)

ARGS = ("x", "v", "W", "s", "ix", "jx", "E2", "m", "edges", "c", "k")
FLOAT_ARGS = ("x", "v", "W")  # the float64 arrays a gradient is taken with respect to

PRELUDE = '''\
def kern(u):
    return np.tanh(u) * 1.5 + u

def kern2(a, b):
    return np.sin(a) * b + 0.5 * a

def sq(u):
    return np.sum(u * u)

def apply(fn, u):
    return fn(u)

def rows(fn, a):
    return np.stack([fn(r) for r in a])

def pairwise(fn, a, b):
    return xp.array([[fn(p, q) for q in b] for p in a])

def smooth(fn, a, k=2):
    out = xp.zeros(len(a) - k + 1)
    for i in range(len(out)):
        out[i] = fn(a[i:i + k])
    return out
'''

# elementwise bodies applied to an expression (all smooth, so central differences hold)
EW = ["np.sin({})", "np.tanh({})", "{} * 2.0", "{} ** 2", "kern({})", "np.exp(np.tanh({}))",
      "apply(np.cos, {})", "({} + 1.5)", "np.sqrt({} ** 2 + 1.0)", "np.log1p({} ** 2)"]
# reductions of a window / row to a scalar
RED = ["np.sum({})", "{}.sum()", "np.mean({})", "np.max({})", "{}.min()", "sq({})",
       "np.dot({0}, {0})", "np.sum(np.sin({}))", "np.prod(np.tanh({}) + 2.0)"]
TRANSFORMS = ["jit"] * 6 + ["static", "vag", "aux", "vmap", "vmap:", "tree:"]
# (fuzz_structure's generator adds 'jgv': vg.jit(vg.grad(...)) of a vg.vmap, and 'sgrad':
# vg.jit(vg.grad(f), static_argnums=...))
VMAPS = ["1:-:0", "-1:-:-1", "0:0:-1", "2:-1:1", "1:0:0", "-2:-:-1"]  # x's axis:v's:out_axes
TREES = ["dict", "tuple", "nested"]


def make_inputs(r: np.random.Generator, like: dict | None = None) -> dict[str, Any]:
    """Random inputs; `like`: of the same shapes, dtypes and kinds of Python values (a
    second call of a compiled function)."""
    if like is None:
        n = int(r.integers(2, [8, 8, 13, 13, 13, 31][int(r.integers(6))]))  # (long loops
        d, e = int(r.integers(1, 5)), int(r.integers(1, [10, 40][n > 12]))  # roll)
    else:
        (n, d), e = like["x"].shape, len(like["ix"])
    src, dst = r.integers(0, n, e), r.integers(-n, n, e)  # negative positions too
    return {"x": r.standard_normal((n, d)), "v": r.standard_normal(n),
            "W": r.standard_normal((d, d)) * 0.5, "s": r.standard_normal(n).astype(np.float32),
            "ix": src, "jx": dst, "E2": np.stack([src, dst], axis=1),
            "m": r.standard_normal(n) > 0,
            "edges": [(int(a), int(b)) for a, b in zip(src, dst)],
            "c": [0.5, -1.5, 2, 3, True, -1][int(r.integers(6))] if like is None else
            type(like["c"])(r.integers(-3, 4) if type(like["c"]) is not float else
                            r.standard_normal()),
            "k": int(r.integers(1, 4)) if like is None else like["k"]}


@dataclass
class Program:
    style: str  # the styles of its blocks, joined by '+'
    transform: str  # jit | static | vag | aux | vmap | vmap:XA:VA:OA (axes) | tree:KIND
    src: str
    inputs: dict
    blocks: list = field(default_factory=list)

    def load(self, xp) -> Callable:
        return load(self.src, xp)


def load(src: str, xp) -> Callable:
    """The program's `f`, with `xp` bound to NumPy or vecgrad.numpy (file name '<fuzz>',
    so that vecgrad's errors name the program's own lines)."""
    ns: dict[str, Any] = {"np": np, "xp": xp, "vg": vg}
    exec(compile(src, "<fuzz>", "exec"), ns)  # noqa: S102 - the generated program is the point
    return ns["f"]


def run_numpy(lines: list[str], inputs: dict) -> dict[str, Any]:
    """Runs a body eagerly in NumPy (read-only arguments, floating errors raised)."""
    ns: dict[str, Any] = {"np": np, "xp": np, "vg": vg}
    exec(PRELUDE, ns)  # noqa: S102
    for name in ARGS:
        a = inputs[name]
        if isinstance(a, np.ndarray):
            a = a.copy()
            a.setflags(write=False)
        ns[name] = a
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        exec("\n".join(lines), ns)  # noqa: S102
    return ns


def _fine(val: Any) -> bool:
    a = np.asarray(val)
    if a.dtype.kind not in "biuf" or a.size > 200 or a.ndim > 3:
        return False
    return a.dtype.kind != "f" or bool(np.isfinite(a).all() and np.abs(a).max(initial=0) < 1e5)


class Gen:
    """Draws one program from a seeded NumPy generator."""

    def __init__(self, r: np.random.Generator, inputs: dict):
        self.r = r
        self.inputs = inputs
        self.n, self.d = inputs["x"].shape
        self.count = 0
        self.lines: list[str] = []
        self.outs: list[str] = []
        self.ns = run_numpy([], inputs)

    # ------------------------------------------------------------------ choices
    def pick(self, opts):
        return opts[int(self.r.integers(len(opts)))]

    def i(self, lo: int, hi: int) -> int:  # inclusive
        return int(self.r.integers(lo, hi + 1)) if hi >= lo else lo

    def fresh(self, p: str = "o") -> str:
        self.count += 1
        return f"{p}{self.count}"

    def vec(self, kinds: str = "f") -> str:
        """A 1-D array expression: v, s, a column or row of x, or an earlier 1-D value."""
        opts = ["v", "v", f"x[:, {self.i(0, self.d - 1)}]", "x[0]", "s" if "s" in kinds else "v"]
        opts += [o for o in self.outs if np.ndim(self.ns.get(o)) == 1
                 and np.asarray(self.ns[o]).dtype.kind == "f" and np.size(self.ns[o]) >= 2]
        return self.pick(opts)

    def mat(self) -> str:
        opts = ["x", "x", "(x * 0.5 + 1.0)"]
        opts += [o for o in self.outs if np.ndim(self.ns.get(o)) == 2
                 and np.asarray(self.ns[o]).dtype.kind == "f" and min(np.shape(self.ns[o])) >= 1]
        return self.pick(opts)

    def shape_of(self, expr: str) -> tuple:
        return np.shape(eval(expr, dict(self.ns)))  # (our own expression)

    # ------------------------------------------------------------------ styles
    def window(self) -> str:
        a = self.vec("fs")
        L = self.shape_of(a)[0]
        k = self.pick([self.i(1, min(4, L)), "k"])
        kk = self.inputs["k"] if k == "k" else k
        step = self.pick([1, 1, 2, 3, -1, -2])
        o = self.fresh()
        red = self.pick(RED + ["{} @ np.linspace(0.5, 1.5, {k})", "np.max(np.abs({}))"])
        red = red.replace("{k}", str(k))
        if step > 0:
            lo = self.i(0, 2)
            rng = f"range({lo}, {L} - {k} + 1, {step})"
        else:
            rng = f"range({L} - {k}, {self.i(-1, 0)}, {step})"
        win = self.pick([f"{a}[i:i + {k}]", f"{a}[i:i + {k}][::-1]",
                         f"{a}[i + {k} - 1:i - 1:-1]" if kk > 0 else f"{a}[i:i + {k}]"])
        form = self.pick(["buf", "comp", "stack", "acc", "affine", "map"])
        body = red.format(win)
        if form == "buf":
            return (f"{o} = xp.zeros(len({rng}))\nfor t, i in enumerate({rng}):\n"
                    f"    {o}[t] = {body}")
        if form == "comp":
            return f"{o} = np.array([{body} for i in {rng}])"
        if form == "stack":
            return f"{o} = np.stack([{self.pick(EW).format(win)} for i in {rng}])"
        if form == "map":
            return (f"{o} = np.stack(list(map(lambda i: {self.pick(EW).format(win)}, "
                    f"{rng})))")
        if form == "acc":
            return f"{o} = 0.0\nfor i in {rng}:\n    {o} = {o} + {body} * {self.pick(['i', '0.5', 'c'])}"
        A, B = self.pick([1, 2, 3]), self.i(0, 2)
        cnt = (L - kk - B) // A + 1
        if cnt < 1:
            return None
        return (f"{o} = xp.zeros(({cnt}, 1))\nfor t in range({cnt}):\n"
                f"    {o}[t, 0] = {red.format(f'{a}[{A} * t + {B}:{A} * t + {B} + {k}]')}")

    def patch2d(self) -> str:
        a = self.mat()
        H, Wd = self.shape_of(a)
        kh, kw = self.i(1, min(3, H)), self.i(1, min(3, Wd))
        sh, sw = self.pick([1, 1, 2]), self.pick([1, 2])
        oh, ow = (H - kh) // sh + 1, (Wd - kw) // sw + 1
        o = self.fresh()
        ker = self.pick([f"W[:{kh}, :{kw}]" if kh <= self.d and kw <= self.d else "1.0",
                         f"np.arange({kh * kw}).reshape({kh}, {kw}) * 0.1", "0.5"])
        patch = f"{a}[i * {sh}:i * {sh} + {kh}, j * {sw}:j * {sw} + {kw}]"
        form = self.pick(["buf", "comp", "max", "pool_t"])
        if form == "buf":
            return (f"{o} = xp.zeros(({oh}, {ow}))\nfor i in range({oh}):\n"
                    f"    for j in range({ow}):\n        {o}[i, j] = np.sum({patch} * {ker})")
        if form == "max":
            return (f"{o} = xp.zeros(({oh}, {ow}))\nfor i in range({oh}):\n"
                    f"    for j in range({ow}):\n        {o}[i][j] = {patch}.max()")
        if form == "pool_t":
            return (f"{o} = xp.zeros(({ow}, {oh}))\nfor i in range({oh}):\n"
                    f"    for j in range({ow}):\n        {o}.T[i, j] += np.mean({patch})")
        return (f"{o} = np.array([[np.sum({self.pick(EW).format(patch)}) for j in range({ow})]"
                f" for i in range({oh})])")

    def rmw(self) -> str:
        a = self.vec()
        L = self.shape_of(a)[0]
        o = self.fresh()
        init = self.pick([f"xp.zeros({L + 2})", f"xp.ones({L + 2}) * 0.5",
                          f"np.concatenate([{a}, {a}[:2]]).copy()" if L >= 2 else f"xp.zeros({L + 2})"])
        lo, hi = self.i(0, 1), L
        kind = self.pick(["overlap", "repeat", "traced", "view", "raw", "rw", "ops", "mul",
                          "swap", "slice_view"])
        op = self.pick(["+=", "-=", "="])
        body = self.pick(EW).format(f"{a}[i]")
        if kind == "overlap":
            kk = self.i(1, 3)
            return (f"{o} = {init}\nfor i in range({lo}, {hi}):\n"
                    f"    {o}[i:i + {kk}] {op} {body}")
        if kind == "repeat":
            pos = [self.i(-L - 2, L + 1) for _ in range(self.i(1, 6))]
            return (f"{o} = {init}\nfor t, p in enumerate({pos}):\n"
                    f"    {o}[p] {op} {a}[t % {L}] * {self.pick(['2.0', 't', 'c'])}")
        if kind == "traced":
            return (f"{o} = {init}\nfor e in range(len(ix)):\n"
                    f"    {o}[{self.pick(['ix[e]', 'jx[e]', 'ix[e] + 1'])}] {op} "
                    f"{self.pick(EW).format(f'{a}[ix[e]]')}")
        if kind == "view":
            view = self.pick(["[1:]", "[::-1]", "[::2]", "[:]", "[1:-1][::-1]"])
            return (f"{o} = {init}\nw{o} = {o}{view}\nfor i in range(len(w{o})):\n"
                    f"    w{o}[i] {op} {self.pick(EW).format(f'{a}[i % {L}]')}")
        if kind == "raw":  # read after write in the same iteration
            return (f"{o} = {init}\nacc{o} = 0.0\nfor i in range(1, {hi}):\n"
                    f"    {o}[i] = {o}[i - 1] * 0.5 + {body}\n"
                    f"    acc{o} = acc{o} + {o}[i] * {o}[i - 1]\n{o} = {o} + acc{o}")
        if kind == "rw":
            return (f"{o} = {init}\nfor i in range({lo}, {hi}):\n"
                    f"    {o}[i + 1] = {o}[i] + {self.pick(['np.sin(', 'kern('])}{o}[i + 2]) * {a}[i]")
        if kind == "ops":
            return (f"{o} = {init}\nfor i in range({lo}, {hi}):\n"
                    f"    {o}[i] = np.maximum({o}[i], {a}[i])\n    {o}[i + 1] *= 0.5")
        if kind == "mul":
            return (f"{o} = {init}\nfor i in range({lo}, {hi}):\n"
                    f"    {o}[i % 3] *= {self.pick(EW).format(f'{a}[i]')}")
        if kind == "swap":
            return (f"{o} = {init}\nfor i in range(0, {L}, 2):\n"
                    f"    t{o} = {o}[i]{self.pick(['', '.copy()'])}\n    {o}[i] = {o}[i + 1]\n"
                    f"    {o}[i + 1] = t{o} * 2.0")
        # 2-D buffer, rows written through views
        X = self.mat()
        n, d = self.shape_of(X)
        return (f"{o} = xp.zeros(({n + 1}, {d}))\nfor i in range({n}):\n"
                f"    r{o} = {o}[i + 1]\n    r{o} += {self.pick(EW).format(f'{X}[i]')}\n"
                f"    {o}[i] {self.pick(['+=', '-='])} r{o} * 0.5")

    def edge(self) -> str:
        X = self.pick(["x", "x", "np.tanh(x)"] + [o for o in self.outs if self.shape_of(o)[:1] == (self.n,)
                                                  and np.asarray(self.ns[o]).dtype.kind == "f"])
        form = self.pick(["tuples", "arrays", "e2", "e2_unpack", "zip"])
        loop = {"tuples": "for (a, b) in edges:", "arrays": "for e in range(len(ix)):\n    a, b = ix[e], jx[e]",
                "e2": "for e in range(E2.shape[0]):\n    a, b = E2[e, 0], E2[e, 1]",
                "e2_unpack": "for a, b in E2:", "zip": "for a, b in zip(ix, jx):"}[form]
        rest = self.shape_of(X)[1:]
        o = self.fresh()
        kind = self.pick(["scatter", "message", "max", "acc", "weighted", "deg"])
        if kind == "scatter":
            body = f"{o}[b] += {self.pick(EW).format(f'{X}[a]')}"
        elif kind == "message":
            body = (f"msg = np.tanh({X}[a] - {X}[b])\n{o}[a] -= msg * 0.5\n{o}[b] += msg")
        elif kind == "max":
            body = f"{o}[b] = np.maximum({o}[b], {X}[a])"
        elif kind == "acc":
            return (f"{o} = 0.0\n{loop}\n" + textwrap.indent(
                f"{o} = {o} + np.sum(({X}[a] - {X}[b]) ** 2) + 0.5 * {X}[a].sum()", "    "))
        elif kind == "weighted":
            body = f"{o}[b] += v[a] * {X}[a]"
        else:
            body = f"{o}[a] += 1.0\n{o}[b] += v[b]"
            rest = ()
        return (f"{o} = xp.zeros({(self.n,) + rest})\n{loop}\n" + textwrap.indent(body, "    "))

    def comprehension(self) -> str:
        X = self.mat()
        n = self.shape_of(X)[0]
        o = self.fresh()
        a = self.vec()
        L = self.shape_of(a)[0]
        return f"{o} = " + self.pick([
            f"np.stack([{self.pick(EW).format(f'{X}[i]')} for i in range({n})])",
            f"sum({self.pick(EW).format(f'{X}[i]')} * {a}[i % {L}] for i in range({n}))",
            f"sum([{X}[i] * {X}[j] for i in range({n}) for j in range(i)], xp.zeros({self.shape_of(X)[1:]}))",
            f"np.array([np.dot({X}[i], {X}[j]) for i in range({n}) for j in range({n}) if i != j])",
            f"np.array([{self.pick(RED).format(f'{X}[i]')} for i in range({n})])",
            f"xp.array([[{a}[i] * {a}[j] for j in range({L})] for i in range({L})])",
            f"np.stack([{X}[i] - np.mean({X}, axis=0) for i in range({n})], axis=1)",
            f"sum(np.outer({X}[i], {X}[i]) for i in range({n})) / {n}",
            f"np.stack([np.sum({X}[:i + 1], axis=0) for i in range({n})])",
            f"xp.asarray([{X}[i].sum() for i in range({n})])",
        ])

    def mapping(self) -> str:
        X = self.mat()
        o = self.fresh()
        a = self.vec()
        n, L = self.shape_of(X)[0], self.shape_of(a)[0]
        return f"{o} = " + self.pick([
            f"np.stack(list(map(kern, {X})))",
            f"sum(map(kern2, {X}[:{min(n, L)}], {a}[:{min(n, L)}]))",
            f"np.array(list(map(sq, {X})))",
            f"np.stack(list(map(lambda r: r @ W if r.shape[-1] == W.shape[0] else r * 2, {X})))",
            f"np.array(list(map(lambda t: kern(t) * t, {a})))",
            f"sum(map(sq, [{X}[i] for i in range({n})]))",
            f"np.stack([apply(kern, r) for r in {X}])",
        ])

    def branch(self) -> str:
        a = self.vec()
        L = self.shape_of(a)[0]
        o = self.fresh()
        cond = self.pick(["i % 2 == 0", "i < 2", "i == 0 or i == 3", "c > 0 and i > 0",
                          "i % 3 == 1"])
        b1, b2 = self.pick(EW).format(f"{a}[i]"), self.pick(EW).format(f"{a}[i]")
        if self.i(0, 1):
            return (f"{o} = xp.zeros({L})\nfor i in range({L}):\n    if {cond}:\n"
                    f"        {o}[i] = {b1}\n    else:\n        {o}[i] = {b2} * c")
        return (f"{o} = 0.0\nfor i in range({L}):\n    if {cond}:\n        {o} += {b1}\n"
                f"    elif i > 1:\n        {o} -= {b2}")

    def mixed(self) -> str:
        X = self.mat()
        n = self.shape_of(X)[0]
        o = self.fresh()
        terms = [f"{o} += {X}[i] @ {X}[i]", f"{o} = {o} + 0.5 * np.sum({X}[i] ** 2)",
                 f"{o} -= c * v[i % {self.n}]", f"{o} += np.sum({X}[i] * {X}[(i + 1) % {n}])",
                 f"{o} = {o} + sq(np.tanh({X}[i]))", f"{o} += {X}[i, 0] * {X}[i, -1]",
                 f"{o} += float(i) * np.mean({X}[i])", f"{o} += s[i % {self.n}] * {X}[i].sum()",
                 f"{o} = {o} + np.sum({X}[i] * m[i % {self.n}])"]
        idx = self.r.choice(len(terms), self.i(2, 3), replace=False)
        init = self.pick(["0.0", "0", "xp.zeros(())", "np.float64(1.0)"])
        body = "\n".join("    " + terms[j] for j in idx)
        return f"{o} = {init}\nfor i in range({n}):\n{body}"

    def recurrence(self) -> str:
        X = self.mat()
        n, dd = self.shape_of(X)
        o = self.fresh()
        kind = self.pick(["lin_vec", "lin_mat", "rnn", "scalar", "buf", "buf2", "prod", "ema"])
        if kind == "lin_vec":
            return f"{o} = xp.zeros({dd})\nfor i in range({n}):\n    {o} = {o} * 0.9 + {X}[i]"
        if kind == "lin_mat" and dd == self.d:
            return f"{o} = {X}[0]\nfor i in range(1, {n}):\n    {o} = {o} @ W + {X}[i]"
        if kind == "rnn" and dd == self.d:
            return f"{o} = xp.zeros({dd})\nfor i in range({n}):\n    {o} = np.tanh(W @ {o} + {X}[i])"
        if kind == "scalar":
            return f"{o} = 1.0\nfor i in range({self.n}):\n    {o} = {o} * np.tanh(v[i]) + 1.0"
        if kind == "buf":
            return (f"{o} = xp.zeros(({n}, {dd}))\n{o}[0] = {X}[0]\nfor i in range(1, {n}):\n"
                    f"    {o}[i] = {o}[i - 1] * 0.5 + np.sin({X}[i])")
        if kind == "buf2" and n >= 3:
            return (f"{o} = xp.zeros({n})\n{o}[:2] = {X}[:2, 0]\nfor i in range(2, {n}):\n"
                    f"    {o}[i] = {o}[i - 1] - 0.5 * {o}[i - 2] + {X}[i, 0]")
        if kind == "prod":
            return f"{o} = np.ones({dd})\nfor i in range({n}):\n    {o} = {o} * np.cos({X}[i])"
        return (f"{o} = {X}[0].copy()\nfor i in range(1, {n}):\n"
                f"    {o} = np.where({X}[i] > {o}, {X}[i], 0.5 * {o} + 0.5 * {X}[i])")

    def dtypes(self) -> str:
        o = self.fresh()
        n = self.n
        return self.pick([
            f"{o} = xp.zeros({n}, dtype=np.float32)\nfor i in range({n}):\n    {o}[i] = s[i] * 2 + m[i]",
            f"{o} = 0\nfor e in range(len(ix)):\n    {o} += ix[e] * 2",
            f"{o} = xp.zeros({n})\nfor i in range({n}):\n    {o}[i] = np.where(m[i], x[i, 0], s[i])",
            f"{o} = xp.zeros({n}, dtype=int)\nfor e in range(len(ix)):\n    {o}[ix[e]] += 1",
            f"{o} = xp.zeros({n}, dtype=bool)\nfor i in range({n}):\n    {o}[i] = v[i] > 0",
            f"{o} = sum(x[i] * s[i] for i in range({n}))",
            f"{o} = xp.zeros(({n}, {self.d}))\nfor i in range({n}):\n    {o}[i] = x[i] * m[i] + c",
            f"{o} = np.array([v[i] * i for i in range({n})])",
            f"{o} = xp.zeros({n})\nfor i in range({n}):\n    {o}[i] = v[i] // 1.0 + v[i] * c",
            f"{o} = 0.0\nfor i in range({n}):\n    {o} += np.float32(0.5) * v[i] + (i > 2)",
            f"{o} = xp.zeros({n}, dtype=np.float32)\nfor i in range({n}):\n    {o}[i] += v[i]",
            f"{o} = xp.ones({n})\nfor i in range({n}):\n    {o}[i] *= ix[i % len(ix)]",
        ])

    def numpy_calls(self) -> str:
        X = self.mat()
        n, dd = self.shape_of(X)
        o = self.fresh()
        f = self.pick([f"np.cumsum({X}[i])", f"np.linalg.norm(np.append({X}[i], 1.0))", f"np.outer({X}[i], {X}[i]).sum(0)",
                       f"np.clip({X}[i], -0.5, 0.5)", f"np.sort({X}[i])", f"np.diff({X}[i], prepend=0.0)",
                       f"np.roll({X}[i], 1)", f"np.flip({X}[i])", f"np.concatenate([{X}[i], {X}[i][:1]])[1:]",
                       f"np.convolve({X}[i], [0.5, 1.0, 0.5], mode='same')",
                       f"np.interp(0.5, np.arange({dd}), {X}[i]) + {X}[i]",
                       f"np.einsum('j,j->', {X}[i], {X}[i]) * {X}[i]",
                       f"np.maximum.accumulate({X}[i])", f"np.var({X}[i]) + {X}[i]"])
        row = self.shape_of(f.replace("[i]", "[0]"))
        return self.pick([(f"{o} = xp.zeros(({n}, {row[0] if row else 1}))\n"
                           f"for i in range({n}):\n    {o}[i] = {f}"),
                          f"{o} = np.stack([{f} for i in range({n})])"])

    def propagate(self) -> str:
        """Reads of a buffer at traced / static positions after writes to it (sequential)."""
        o = self.fresh()
        loop = self.pick(["for (a, b) in edges:", "for e in range(len(ix)):\n    a, b = ix[e], jx[e]",
                          "for a, b in E2:", "for a, b in zip(ix, jx):"])
        body = self.pick([f"{o}[b] += {o}[a] * 0.5", f"{o}[b] = {o}[a] * 0.5 + {o}[b]",
                          f"{o}[b] += np.tanh({o}[a])", f"t{o} = {o}[b]\nt{o} += {o}[a]",
                          f"np.add.at({o}, b, {o}[a] * 0.5)", f"{o}[b] -= {o}[a] * {o}[b]",
                          f"{o}[b, 0] += {o}[a, -1]", f"{o}[a] = np.sin({o}[b]) + {o}[a]",
                          f"{o}[b] = np.maximum({o}[b], {o}[a])",
                          f"{o}[b] *= 0.5\n{o}[a] += x[b]"])
        init = self.pick(["x.copy()", "xp.zeros(x.shape) + x", "np.tanh(x)", "x * 1.0"])
        return f"{o} = {init}\n{loop}\n" + textwrap.indent(body, "    ")

    def lists(self) -> str:
        """Python lists built in loops, then stacked / concatenated / summed."""
        X = self.mat()
        n = self.shape_of(X)[0]
        o = self.fresh()
        item = self.pick([f"{X}[i] * v[i % {self.n}]", f"np.sin({X}[i])", f"{X}[i].sum()",
                          f"{X}[i:i + 2].mean(0)", f"{X}[i] - {X}[i - 1]"])
        lo = 1 if "i - 1" in item else 0
        end = self.pick([f"np.stack(l{o})", f"np.concatenate(l{o})" if "sum()" not in item
                         else f"np.stack(l{o})", f"sum(l{o})", f"xp.array(l{o})",
                         f"np.stack(l{o}[::-1], axis=-1)"])
        return (f"l{o} = []\nfor i in range({lo}, {n}):\n    l{o}.append({item})\n"
                f"{o} = {end}")

    def nested(self) -> str:
        """Triangular and double loops (pairwise terms, prefix sums, ragged windows)."""
        X = self.mat()
        n, dd = self.shape_of(X)
        o = self.fresh()
        return self.pick([
            (f"{o} = xp.zeros({n})\nfor i in range({n}):\n    for j in range(i):\n"
             f"        {o}[i] += np.dot({X}[i], {X}[j])"),
            (f"{o} = 0.0\nfor i in range({n}):\n    for j in range(i + 1, {n}):\n"
             f"        {o} = {o} + np.sum(({X}[i] - {X}[j]) ** 2)"),
            f"{o} = np.stack([{X}[:i + 1].sum(0) for i in range({n})])",
            f"{o} = xp.array([np.mean({X}[i:]) for i in range({n})])",
            (f"{o} = xp.zeros(({n}, {n}))\nfor i in range({n}):\n    for j in range({n}):\n"
             f"        {o}[i, j] = np.exp(-np.sum(({X}[i] - {X}[j]) ** 2))"),
            (f"{o} = xp.zeros(({n}, {dd}))\nfor i in range({n}):\n"
             f"    {o}[i] = {X}[max(0, i - 2):i + 1].max(axis=0)"),
            (f"{o} = xp.zeros({dd})\nfor i in range({n}):\n    for j in range({dd}):\n"
             f"        {o}[j] += {X}[i, j] * {X}[i, {dd - 1} - j]"),
        ])

    def iterate(self) -> str:
        """Loops over the rows of arrays: for r in x, zip, enumerate, break / continue."""
        X = self.mat()
        n = self.shape_of(X)[0]
        o = self.fresh()
        return self.pick([
            f"{o} = 0.0\nfor r in {X}:\n    {o} = {o} + sq(r) * 0.5",
            f"{o} = xp.zeros({self.shape_of(X)[1:]})\nfor r, w in zip({X}, v):\n    {o} += r * w",
            (f"{o} = xp.zeros({n})\nfor i, r in enumerate({X}):\n"
             f"    if i == {self.i(1, 3)}:\n        continue\n    {o}[i] = np.tanh(r).sum()"),
            (f"{o} = 0.0\nfor i, r in enumerate({X}):\n    if i > {self.i(1, 4)}:\n"
             f"        break\n    {o} += r @ r"),
            f"{o} = np.stack([kern(r) for r in {X}[::-1]])",
            f"{o} = sum(kern2(r, q) for r, q in zip({X}, {X}[1:]))",
        ])

    def decay(self) -> str:
        """Whole-buffer in-place updates mixed with element writes and aliasing views."""
        X = self.mat()
        n, dd = self.shape_of(X)
        o = self.fresh()
        return self.pick([
            (f"{o} = xp.zeros({dd})\nfor i in range({n}):\n    {o} *= 0.9\n"
             f"    {o} += {X}[i]"),
            (f"{o} = xp.zeros(({n}, {dd}))\nfor i in range({n}):\n    {o} *= 0.5\n"
             f"    {o}[i] = {X}[i]"),
            (f"{o} = {X}.copy()\nfor i in range(1, {n}):\n    a{o} = {o}[i]\n"
             f"    a{o} += {o}[i - 1] * 0.5"),
            (f"{o} = {X}.copy()\nfor i in range({n}):\n    {o}[i] -= {o}.mean(axis=0)"),
            (f"{o} = xp.ones(({n}, {dd}))\nfor i in range({n}):\n    {o}[:, i % {dd}] *= {X}[i, 0]\n"
             f"    {o}[i] /= 1.0 + {o}[i - 1] ** 2"),
            (f"{o} = {X}.copy()\nfor i in range({n}):\n    {o}[i:] += np.sin({o}[i])"),
            (f"{o} = {X}.copy()\nfor i in range({n} - 1, 0, -1):\n"
             f"    {o}[i - 1] += {o}[i] * 0.5"),
        ])

    def stencil(self) -> str:
        """Stencils, strided and ragged windows, affine slice writes, 2-D row windows."""
        a = self.vec()
        L = self.shape_of(a)[0]
        X = self.mat()
        n, dd = self.shape_of(X)
        o = self.fresh()
        q = self.i(1, 3)
        return self.pick([
            (f"{o} = xp.zeros({L})\nfor i in range(1, {L} - 1):\n"
             f"    {o}[i] = {a}[i - 1] - 2.0 * {a}[i] + {a}[i + 1]"),
            f"{o} = xp.array([np.sum({a}[i::{q}]) for i in range({L})])",
            f"{o} = xp.array([{a}[i + {q}:i:-{self.pick([1, 2])}].sum() for i in range({L})])",
            f"{o} = np.stack([np.sum({X}[i:i + k], axis=0) for i in range({n} - k + 1)])",
            (f"{o} = xp.zeros({2 * n + 1})\nfor i in range({n}):\n"
             f"    {o}[2 * i:2 * i + 2] {self.pick(['=', '+='])} {X}[i, :2] * 0.5"),
            (f"{o} = xp.zeros(({n}, {dd + 2}))\nfor i in range({n}):\n"
             f"    {o}[i, i % 3:i % 3 + {dd}] += np.cos({X}[i])"),
            (f"{o} = xp.zeros({L})\nfor i in range({L}):\n"
             f"    {o}[{L - 1} - i] = {a}[max(0, {L - 1} - i - k):{L} - i].mean()"),
            f"{o} = sum({a}[i:{L} - {q} + i + 1] * {a}[:{L} - {q} + 1] for i in range({q}))",
            (f"{o} = xp.zeros({L})\nfor i in range({L}):\n    if i >= k:\n"
             f"        {o}[i] = {o}[i - k] + {a}[i]\n    else:\n        {o}[i] = {a}[i]"),
            (f"{o} = {X}.copy()\nfor i in range(1, {n}):\n"
             f"    {o}[i, 1:] = {o}[i - 1, :-1] * 0.5 + {o}[i, 1:]"),
        ])

    def scalars(self) -> str:
        """Scalar accumulators of several dtypes (float32, ints, bools, Python numbers)."""
        o = self.fresh()
        n = self.n
        return self.pick([
            f"{o} = np.float32(0)\nfor i in range({n}):\n    {o} += s[i] * s[i]",
            f"{o} = 0\nfor i in range({n}):\n    {o} += (v[i] > 0)",
            f"{o} = 0\nfor i in range({n}):\n    {o} = {o} + m[i]",
            f"{o} = 1.0\nfor i in range({n}):\n    {o} = {o} * c + v[i] / (1 + i)",
            f"{o} = c\nfor i in range({n}):\n    {o} = {o} + x[i].sum() ** 2 / {n}",
            f"{o} = np.float32(1)\nfor i in range({n}):\n    {o} = {o} * np.float32(0.5) + s[i]",
            f"{o} = 0.0\nfor i in range({n}):\n    {o} = max({o}, float(i)) + v[i]",
            f"{o} = sum(int(i % 2 == 0) * v[i] for i in range({n}))",
            f"{o} = xp.zeros((), dtype=np.float32)\nfor i in range({n}):\n    {o} += v[i]",
        ])

    def loopmix(self) -> str:
        """One loop whose body mixes 2-5 random statements: writes (=, +=, -=, *=, max) into
        a buffer at affine, modular and traced positions, reads of the buffer (this
        iteration's writes or earlier ones), a recurrence, an accumulator, Python branches."""
        n, d = self.n, self.d
        L = n + 4
        o = self.fresh()
        b, acc, h = f"{o}", f"acc{o}", f"h{o}"
        step = self.pick([1, 1, 2, -1, 3])
        lo, hi = (self.i(0, 2), n) if step > 0 else (n - 1, self.i(-1, 1))
        A, B = self.pick([1, 1, 2, -1]), self.i(0, 3)

        def idx():
            return self.pick([f"{A} * i + {B}" if A > 0 else f"{L - 1} - i", "i", "i + 1",
                              f"(i * {self.i(2, 3)} + 1) % {L}", "ix[i % len(ix)]",
                              "jx[i % len(jx)]", str(self.i(0, L - 1)), "-i - 1"])

        def expr():
            return self.pick([f"x[i % {n}]", f"np.sin({b}[{idx()}])", h, f"x[i % {n}] * {acc}",
                              f"v[i % {n}] * {b}[{idx()}]", f"np.tanh({b}[{idx()}] + {h})",
                              "c * x[0]", f"{b}[{idx()}] * 0.5"])

        def stmt():
            k = self.i(1, 2)
            return self.pick([
                f"{b}[{idx()}] = {expr()}", f"{b}[{idx()}] += {expr()}",
                f"{b}[{idx()}] -= {expr()}", f"{b}[{idx()}] *= 0.5",
                f"{b}[{B} + i:{B} + i + {k}] += {expr()}",
                f"{b}[{idx()}] = np.maximum({b}[{idx()}], {expr()})",
                f"{acc} = {acc} + np.sum({expr()})", f"{acc} += {b}[{idx()}, 0]",
                f"{h} = {h} * 0.5 + {expr()}", f"{h} = np.tanh({h} @ W) + x[i % {n}]",
                f"if i % 2 == 0:\n    {b}[{idx()}] *= 0.5\nelse:\n    {acc} -= v[i % {n}]",
                f"w{o} = {b}[{idx()}]\nw{o} *= 0.9\nw{o} += {expr()}",
                f"t{o} = {b}[{idx()}] * 2.0\n{b}[{idx()}] = t{o} + {h}",
                f"np.add.at({b}, ix[i % len(ix)], {expr()})",
                f"{b}[{idx()}, ix[i % len(ix)] % {d}] = np.sum({expr()})",
                f"{b}[{idx()}, jx[i % len(jx)] % {d}] += {b}[{idx()}, {d - 1}] * 0.5",
                f"c{o} = {b}[:, jx[i % len(jx)] % {d}]\nc{o} *= 0.5\nc{o}[{idx()}] += v[i % {n}]",
            ])
        body = "\n".join(stmt() for _ in range(self.i(2, 5)))
        init = self.pick([f"xp.zeros(({L}, {d}))", f"np.concatenate([x, np.ones((4, {d}))])",
                          f"xp.ones(({L}, {d})) * 0.5"])
        out = self.pick([b, f"{b} + {acc}", f"{b} * {h}", f"{b}.sum(0) + {h} + {acc}"])
        return (f"{b} = {init}\n{acc} = 0.0\n{h} = xp.zeros({d})\n"
                f"for i in range({lo}, {hi}, {step}):\n" + textwrap.indent(body, "    ")
                + f"\n{o} = {out}")

    def higher(self) -> str:
        """User functions that take a kernel function (and loop inside)."""
        X, a = self.mat(), self.vec()
        o = self.fresh()
        return f"{o} = " + self.pick([
            f"rows(kern, {X})", f"rows(sq, {X})", f"rows(lambda r: r * r.sum(), {X})",
            f"pairwise(lambda p, q: np.exp(-np.sum((p - q) ** 2)), {X}, {X})",
            f"pairwise(np.dot, {X}, {X}[::2])", f"pairwise(kern2, {a}, {a}[:3])",
            f"smooth(np.sum, {a})", f"smooth(sq, {a}, k=k)", f"smooth(np.max, {a}, 3)",
            f"smooth(lambda w: w @ np.arange(1.0, 3.0), {a})",
        ])

    def post(self) -> str:
        """Whole-array operations on an earlier value (softmax, normalization, ...)."""
        X = self.pick([o for o in self.outs if np.ndim(self.ns.get(o)) >= 1
                       and np.asarray(self.ns[o]).dtype == np.float64] or ["x"])
        o = self.fresh()
        return f"{o} = " + self.pick([
            f"np.exp({X} - {X}.max()) / np.sum(np.exp({X} - {X}.max()))",
            f"({X} - {X}.mean(axis=0)) / ({X}.std(axis=0) + 1.0)",
            f"np.log(np.sum(np.exp({X}), axis=-1))", f"np.cumsum({X}, axis=0)",
            f"np.sort({X}, axis=-1)", f"{X} / np.linalg.norm({X})",
            f"np.tanh({X}) @ np.tanh({X}).T" if np.ndim(self.ns.get(X, self.inputs['x'])) == 2
            else f"np.outer({X}, {X})",
            f"np.where({X} > 0, {X}, 0.1 * {X})", f"np.clip({X}, -1.0, 1.0) ** 2",
        ])

    def intmix(self) -> str:
        """Integer and bool arithmetic in loops: //, %, **, bitwise ops, bool + bool (logical
        in NumPy), counts, casts, int buffers written with floats, NumPy scalar types."""
        n = self.n
        o = self.fresh()
        e = self.pick(["m[i] + m[i - 1]", "m[i] * 3", "m[i] ** 2", "m[i] ** 2.0", "~m[i]",
                       "m[i] & (v[i] > 0)", "m[i] ^ m[i - 1]", "ix[i % len(ix)] // 2",
                       "ix[i % len(ix)] % 3", "ix[i % len(ix)] ** 2", "-ix[i % len(ix)] // 3",
                       "abs(ix[i % len(ix)])", "ix[i % len(ix)] / 2", "np.sign(ix[i % len(ix)])",
                       "ix[i % len(ix)] >> 1", "ix[i % len(ix)] | 1", "np.int8(ix[i % len(ix)])",
                       "v[i] // 0.5", "v[i] % 0.7", "np.float32(v[i]) * 2", "s[i] + 1",
                       "s[i] * np.float64(0.5)", "s[i] ** 2", "np.maximum(ix[i % len(ix)], v[i])",
                       "np.where(m[i], ix[i % len(ix)], v[i])", "(v[i] > 0) + (v[i] > 1)",
                       "int(i) * v[i]", "True + m[i]", "m[i].astype(np.float32) + s[i]"])
        dt = self.pick(["", ", dtype=int", ", dtype=np.float32", ", dtype=bool", ", dtype=np.int8"])
        return self.pick([
            f"{o} = xp.zeros({n}{dt})\nfor i in range(1, {n}):\n    {o}[i] = {e}",
            f"{o} = xp.zeros({n}{dt})\nfor i in range(1, {n}):\n    {o}[i] += {e}",
            f"{o} = np.stack([{e} for i in range(1, {n})])",
            f"{o} = 0\nfor i in range(1, {n}):\n    {o} = {o} + {e}",
            f"{o} = sum({e} for i in range(1, {n}))",
        ])

    STYLES: ClassVar[dict[str, int]] = {"window": 3, "patch2d": 2, "rmw": 4, "edge": 3, "comprehension": 2,
              "mapping": 2, "branch": 1, "mixed": 2, "recurrence": 2, "dtypes": 2,
              "numpy_calls": 1, "propagate": 2, "lists": 2, "nested": 2, "iterate": 2,
              "decay": 2, "stencil": 3, "scalars": 2, "loopmix": 6,
              "higher": 2, "post": 2, "intmix": 3}
    FIRST: ClassVar[dict[str, int]] = STYLES  # (the first block's style)
    KEEP_FIRST: ClassVar[bool] = False  # (the first block's value is always an output)
    TRANSFORMS: ClassVar[list[str]] = TRANSFORMS

    # ------------------------------------------------------------------ assembly
    def block(self, style: str) -> bool:
        for _ in range(8):
            try:
                code = getattr(self, style)()
            except (ValueError, IndexError, TypeError, ZeroDivisionError):
                continue
            if code is None:
                continue
            if self.i(0, 4):  # (np.array of traced values cannot be traced: a typed refusal)
                code = code.replace("np.array(", "xp.array(")
            lines = self.lines + code.splitlines()
            try:
                ns = run_numpy(lines, self.inputs)
            except Exception:  # noqa: BLE001, S112 - NumPy rejects it: draw again
                continue
            out = f"o{self.count}"
            if out not in ns or not _fine(ns[out]):
                continue
            self.lines, self.ns = lines, ns
            self.outs.append(out)
            return True
        return False

    def program(self, styles: list[str]) -> str:
        done = [st for st in styles if self.block(st)]
        if not self.outs:
            return None, done
        outs = self.outs[-self.i(1, 2):]
        if self.KEEP_FIRST and self.outs[0] not in outs:
            outs = [self.outs[0]] + outs
        body = "\n".join(self.lines + [f"return ({', '.join(outs)},)"])
        src = PRELUDE + f"\ndef f({', '.join(ARGS)}):\n" + textwrap.indent(body, "    ") + "\n"
        return src, done


def draw(seed: int, style: str | None = None, gen: type[Gen] = Gen) -> Program | None:
    """Program number `seed` of generator `gen` (its first block of `style` when given, else
    one of `gen.FIRST`; then random ones of `gen.STYLES`)."""
    r = np.random.default_rng(seed)
    inputs = make_inputs(r)
    g = gen(r, inputs)
    names = [s for s, w in gen.STYLES.items() for _ in range(w)]
    first = style or g.pick([s for s, w in gen.FIRST.items() for _ in range(w)])
    styles = [first] + [g.pick(names) for _ in range(g.i(0, 2))]
    src, done = g.program(styles)
    if src is None:
        return None
    t = g.pick(gen.TRANSFORMS)
    if t == "vmap:":  # (out_axes=1 only where every output has an axis)
        outs = src.rstrip().rsplit("return (", 1)[1].rstrip(",)").split(", ")
        low = min(np.ndim(g.ns[o]) for o in outs)
        t += g.pick([a for a in VMAPS if low > 0 or not a.endswith(":1")])
    t += g.pick(TREES) if t == "tree:" else ""
    return Program("+".join(done), t, src, inputs)
