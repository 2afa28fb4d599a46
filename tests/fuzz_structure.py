"""More styles for the loop fuzzer (tests/fuzz_loops.py): writes through views and aliases,
and the *structure* of natural programs.

Writes and views: `a = b[1:]; a += b[:-1]` (overlapping operands: NumPy computes as if the
input were copied first), writes through `.T`, `reshape` / `ravel` views, `x[::2]`,
`np.swapaxes`, chained writes read back in the same iteration, writes under a Python `if`
per iteration, one buffer reused by two loops, `.copy()` against a view, `out=`, and fancy
writes at repeated positions (`o[[i, i]] += v`: NumPy adds once; `o[ix] = ...`: the last
write wins).

Structure: parameters in a class or a dict, closures and lambdas passed as kernels,
`functools.reduce`, `itertools` (accumulate, product, combinations, pairwise, starmap,
chain, islice), generator functions, `while` loops, `continue` / `break` on Python
conditions, recursion on Python ints, `*args` and keyword defaults, nested lists stacked.

Its transforms add `vg.jit(vg.grad(...))` of a `vg.vmap` ('jgv') and `vg.jit(vg.grad(f),
static_argnums=...)` ('sgrad') to fuzz_loops' ones. As in fuzz_loops, a block NumPy
rejects (or whose values are not finite) is drawn again, so NumPy's result is the oracle.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np
from fuzz_loops import EW, TRANSFORMS, Gen


class StructGen(Gen):
    """fuzz_loops.Gen with aliasing writes and program-structure styles."""

    def _ew(self, e: str) -> str:
        return self.pick(EW).format(e)

    # ------------------------------------------------------------------ writes and views
    def aliasing(self) -> str:
        """Overlapping operands of one in-place operation (NumPy: as if copied first)."""
        X = self.pick([self.mat(), self.vec()])
        o = self.fresh()
        sh = self.shape_of(X)
        L = sh[0]
        q = self.i(1, max(1, min(3, L - 1)))
        return f"{o} = ({X}).copy()\n" + self.pick([
            f"a{o} = {o}[{q}:]\na{o} += {o}[:-{q}]",
            f"{o}[{q}:] += {o}[:-{q}] * 0.5",
            f"{o}[:-{q}] -= {o}[{q}:]",
            f"{o}[:-{q}] = {o}[{q}:]",
            f"{o}[{q}:] = {o}[:-{q}]",
            f"{o}[::-1] += {o}",
            f"{o}[::2] = {o}[1::2] if {L} % 2 == 0 else {o}[::2] * 2.0",
            f"for t in range(k):\n    {o}[1:] += {o}[:-1] * 0.5",
            f"{o} += {o}[::-1]",
            f"{o}[1:] *= {o}[:-1]",
            f"np.add({o}[1:], {o}[:-1], out={o}[:-1])",
            f"np.multiply({o}[::-1], 0.5, out={o})",
            f"{o}.T[...] = {o}.T[..., ::-1]" if len(sh) == 2 else f"{o}[...] = {o}[::-1]",
            (f"{o}[:, 1:] += {o}[:, :-1]" if len(sh) == 2 and sh[1] > 1 else
             f"{o}[1:] += {o}[:1]"),
            (f"{o}[:{min(sh)}, :{min(sh)}] += {o}[:{min(sh)}, :{min(sh)}].T" if len(sh) == 2
             else f"{o}[:2] = {o}[-2:]"),
        ])

    def viewwrites(self) -> str:
        """Writes through views that NumPy functions and attributes return, in loops."""
        X = self.mat()
        n, d = self.shape_of(X)
        o = self.fresh()
        return self.pick([
            (f"{o} = xp.zeros({n * d})\nr{o} = {o}.reshape({n}, {d})\nfor i in range({n}):\n"
             f"    r{o}[i] = {self._ew(f'{X}[i]')}"),
            (f"{o} = ({X}).copy()\nt{o} = {o}.T\nfor j in range({d}):\n"
             f"    t{o}[j] *= {self.pick(['0.5', 'v[j % len(v)]', '(j + 1)'])}"),
            (f"{o} = xp.zeros(({d}, {n}))\nfor i in range({n}):\n"
             f"    {o}.T[i] = {self._ew(f'{X}[i]')}"),
            (f"{o} = ({X}).copy()\ne{o} = {o}[::2]\ne{o} *= 0.5\n"
             f"for i in range(len(e{o})):\n    e{o}[i] += {o}[1::2].sum()"),
            (f"{o} = ({X}).copy()\nfor j in range({d}):\n"
             f"    np.swapaxes({o}, 0, 1)[j] += v * {self.pick(['0.5', 'c'])}"),
            (f"{o} = xp.zeros(({n}, {d}))\nfor i in range({n}):\n"
             f"    {o}.ravel()[i * {d}:(i + 1) * {d}] = {self._ew(f'{X}[i]')}"),
            (f"{o} = ({X}).copy()\nfor i in range(1, {n}):\n"
             f"    np.add({o}[i - 1], {o}[i], out={o}[i])"),
            (f"{o} = ({X}).copy()\nfor i in range({n}):\n"
             f"    np.multiply({o}[i], 0.5, out={o}[i])\n    np.tanh({o}[i], out={o}[i])"),
            (f"{o} = ({X}).copy()\nfor i in range({n}):\n"
             f"    {o}.reshape(-1)[i] = np.sum({o}[i])"),
            (f"{o} = xp.zeros(({n}, {d}))\nb{o} = {o}[:, ::-1]\nfor i in range({n}):\n"
             f"    b{o}[i] = {X}[i] * (i + 1)"),
            (f"{o} = ({X}).copy()\nfor i in range({n}):\n    r{o} = {o}[i]\n"
             f"    r{o}[:] = np.sort(r{o})"),
        ])

    def chains(self) -> str:
        """Chained writes read back in one iteration, writes under a Python `if`, one buffer
        reused by two loops, a copy against a view."""
        X = self.mat()
        n, d = self.shape_of(X)
        o = self.fresh()
        cond = self.pick(["i % 2 == 0", "i < 2", "i % 3 == 1", "i == 0 or i == 3"])
        return self.pick([
            (f"{o} = xp.zeros(({n + 1}, {d}))\nacc{o} = 0.0\nfor i in range({n}):\n"
             f"    {o}[i] = {self._ew(f'{X}[i]')}\n    {o}[i + 1] = {o}[i] * 2.0\n"
             f"    acc{o} = acc{o} + {o}[i + 1].sum()\n{o} = {o} * acc{o}"),
            (f"{o} = xp.zeros(({n}, {d}))\nfor i in range({n}):\n    if {cond}:\n"
             f"        {o}[i] = {self._ew(f'{X}[i]')}\n    else:\n"
             f"        {o}[i - 1] += {X}[i] * 0.5"),
            (f"{o} = xp.zeros(({n}, {d}))\nfor i in range({n}):\n    {o}[i] = {X}[i] * 2.0\n"
             f"for i in range(1, {n}):\n    {o}[i] += {o}[i - 1] * 0.5"),
            (f"{o} = xp.zeros({d})\nfor i in range({n}):\n    {o} += {X}[i]\n"
             f"for i in range({n}):\n    {o} = {o} * 0.5 + {self._ew(f'{X}[i]')}"),
            (f"{o} = ({X}).copy()\nfor i in range({n} - 1):\n"
             f"    r{o} = {o}[i]{self.pick(['.copy()', ''])}\n    r{o} += 1.0\n"
             f"    {o}[i + 1] = {o}[i + 1] * 0.5 + r{o}"),
            (f"{o} = ({X}).copy()\nfor i in range({n}):\n    r{o} = {o}[i]\n"
             f"    {o}[i] = r{o} * 2.0\n    {o}[i] += r{o}"),
            (f"{o} = xp.zeros({n})\nfor i in range({n}):\n    {o}[i] = np.sum({X}[i])\n"
             f"    if {o}.shape[0] > 2 and i > 0:\n        {o}[i] -= {o}[i - 1] * 0.5"),
            (f"{o} = xp.ones(({n}, {d}))\nfor it in range(2):\n    for i in range({n}):\n"
             f"        {o}[i] = np.tanh({o}[i - 1] + {X}[i])"),
        ])

    def dupidx(self) -> str:
        """Fancy writes at repeated positions: `+=` adds once per distinct position (NumPy
        buffers), `=` keeps the last value; np.add.at adds every time."""
        o = self.fresh()
        n = self.n
        p = [self.i(-n, n - 1) for _ in range(self.i(2, 5))]
        if len({q % n for q in p}) == len(p):
            p[-1] = p[0]
        return self.pick([
            f"{o} = v.copy()\n{o}[{p}] += 1.0",
            f"{o} = v.copy()\n{o}[{p}] += v[:{len(p)}] if {n} >= {len(p)} else 1.0",
            f"{o} = v.copy()\n{o}[{p}] = np.arange({len(p)}) * 1.5",
            f"{o} = v.copy()\n{o}[{p}] *= 2.0",
            f"{o} = x.copy()\n{o}[{p}] -= x[0]",
            f"{o} = v.copy()\nnp.add.at({o}, {p}, 1.0)",
            f"{o} = v.copy()\n{o}[ix] += 1.0",
            f"{o} = v.copy()\n{o}[jx] = v[ix] * 2.0",
            f"{o} = x.copy()\n{o}[ix] += x[jx]",
            f"{o} = v.copy()\n{o}[ix] *= 0.5",
            f"{o} = v.copy()\nfor i in range({n}):\n    {o}[[i, i]] += v[i]",
            f"{o} = v.copy()\n{o}[np.array({p})] += np.sin(v[:1])",
            f"{o} = xp.zeros(({n}, {self.d}))\n{o}[ix, jx % {self.d}] += 1.0",
            f"{o} = v.copy()\n{o}[m] += 1.0\n{o}[ix] -= {o}[jx]",
        ])

    def viewsoup(self) -> str:
        """A buffer, 2-3 views of it bound to names (slices, reversed, strided, .T, reshape,
        ravel, swapaxes, a row, a column), then 2-5 random in-place statements on the views
        (+=, -=, *=, [...] =, [j] =, out=) whose operands are other views of the same buffer,
        reads of the views in between, in a loop of 1-3 iterations: NumPy's aliasing
        semantics throughout (every view sees every write)."""
        X = self.mat()
        R, C = self.shape_of(X)
        o = self.fresh()
        cand = [f"{o}[1:]", f"{o}[:-1]", f"{o}[::2]", f"{o}[::-1]", f"{o}.T", f"{o}[:, 1:]",
                f"{o}.reshape(-1)", f"np.swapaxes({o}, 0, 1)", f"{o}[1]", f"{o}[:, 0]",
                f"{o}[..., ::-1]", f"{o}[1:, ::-1]", f"{o}.ravel()", f"{o}[:, ::2]",
                f"{o}.reshape({C}, {R})", f"{o}[-1:0:-1]", o]
        names = [f"{a}{o}" for a in "abc"[:self.i(2, 3)]]
        exprs = [self.pick(cand) for _ in names]
        dummy = {"np": np, o: np.zeros((R, C))}
        try:
            shapes = {nm: np.shape(eval(e, dummy)) for nm, e in zip(names, exprs)}
        except (IndexError, ValueError):
            return None
        shapes[o] = (R, C)
        views = [*names, o]

        def rhs(V):
            same = [W for W in views if shapes[W] == shapes[V]]
            opts = ["0.5", "c", f"np.sin({V})", f"{self.pick(same)} * 0.5",
                    f"{self.pick(views)}.sum() * 0.1", f"x[i % {self.n}, 0]",
                    f"np.tanh({self.pick(views)}).mean()"]
            if shapes[V]:
                opts.append(f"{self.pick(same)}[::-1]")
            return self.pick(opts)

        def stmt():
            V = self.pick(views)
            sh = shapes[V]
            same = [W for W in views if shapes[W] == sh]
            opts = [f"{V} {self.pick(['+=', '-=', '*='])} {rhs(V)}", f"{V}[...] = {rhs(V)}",
                    f"acc{o} = acc{o} + np.sum({V} ** 2) * 0.1",
                    f"np.multiply({V}, 0.5, out={V})",
                    f"np.add({V}, {self.pick(same)}, out={V})"]
            if sh:
                opts.append(f"{V}[{self.i(-sh[0], sh[0] - 1)}] = {rhs(V)}"
                            if len(sh) == 1 else f"{V}[i % {sh[0]}] += {rhs(V)}")
            return self.pick(opts)
        body = "\n".join(stmt() for _ in range(self.i(2, 5)))
        lines = [f"{o} = ({X}).copy()", f"acc{o} = 0.0"]
        lines += [f"{nm} = {e}" for nm, e in zip(names, exprs)]
        lines += [f"for i in range({self.i(1, 3)}):"] + ["    " + ln for ln in body.splitlines()]
        lines.append(f"{o} = " + self.pick([o, f"{o} * (1.0 + acc{o})", f"{o} + {names[0]}.sum()"]))
        return "\n".join(lines)

    # ------------------------------------------------------------------ structure
    def params(self) -> str:
        """Parameters held by a class or a dict (and iterated), layers as objects."""
        X = self.mat()
        n, d = self.shape_of(X)
        o = self.fresh()
        if d != self.d:
            return None
        return self.pick([
            (f"class Lin{o}:\n    def __init__(self, w, b):\n        self.w, self.b = w, b\n"
             f"    def __call__(self, u):\n        return np.tanh(u @ self.w + self.b)\n"
             f"lin{o} = Lin{o}(W, v[:{d}] if {self.n} >= {d} else 0.5)\n"
             f"{o} = np.stack([lin{o}(r) for r in {X}])"),
            (f"P{o} = {{'w': W, 'b': x[0], 'scale': c}}\n{o} = 0.0\nfor i in range({n}):\n"
             f"    {o} = {o} + np.sum(np.tanh({X}[i] @ P{o}['w'] + P{o}['b'])) * P{o}['scale']"),
            (f"P{o} = {{'a': W, 'b': x[:2]}}\n{o} = 0.0\nfor name, val in P{o}.items():\n"
             f"    {o} = {o} + np.sum(val ** 2) * (2.0 if name == 'a' else 1.0)"),
            (f"layers{o} = [(W, x[0]), (W * 0.5, x[-1])]\n{o} = {X}\n"
             f"for w, b in layers{o}:\n    {o} = np.tanh({o} @ w + b)"),
            (f"class Acc{o}:\n    def __init__(self):\n        self.total = 0.0\n"
             f"    def add(self, u):\n        self.total = self.total + np.sum(u ** 2)\n"
             f"        return self\nacc{o} = Acc{o}()\nfor r in {X}:\n    acc{o}.add(r)\n"
             f"{o} = acc{o}.total"),
            (f"class Buf{o}:\n    def __init__(self, n, d):\n        self.data = xp.zeros((n, d))\n"
             f"    def __setitem__(self, i, u):\n        self.data[i] = u\n"
             f"    def __getitem__(self, i):\n        return self.data[i]\n"
             f"b{o} = Buf{o}({n}, {d})\nfor i in range({n}):\n"
             f"    b{o}[i] = {self._ew(f'{X}[i]')} + b{o}[i - 1] * 0.5\n{o} = b{o}.data"),
        ])

    def closures(self) -> str:
        """Kernels made by closures and lambdas, passed to user functions."""
        X = self.mat()
        n = self.shape_of(X)[0]
        o = self.fresh()
        return self.pick([
            (f"def make{o}(scale):\n    def kern_(u):\n        return np.sin(u) * scale\n"
             f"    return kern_\nk{o} = make{o}(c)\n{o} = sum(k{o}(r) for r in {X})"),
            (f"def apply_all{o}(fs, u):\n    return [f(u) for f in fs]\n"
             f"{o} = np.stack(apply_all{o}([np.sin, lambda t: t * 2.0, kern], {X}[0]))"),
            (f"fs{o} = [lambda u, p=p: u ** p for p in range(1, 4)]\n"
             f"{o} = sum(f({X}) for f in fs{o})"),
            (f"def compose{o}(f, g):\n    return lambda u: f(g(u))\n"
             f"h{o} = compose{o}(np.tanh, lambda u: u * 1.5 + 0.5)\n"
             f"{o} = np.stack([h{o}(r) for r in {X}])"),
            (f"def kern_{o}(u, scale=2.0, *, shift=0.5):\n    return np.tanh(u * scale) + shift\n"
             f"{o} = np.stack([kern_{o}(r, shift=c) if i % 2 else kern_{o}(r, 0.5) "
             f"for i, r in enumerate({X})])"),
            (f"def cat{o}(*parts):\n    return np.concatenate(parts)\n"
             f"{o} = cat{o}(*[{self._ew(f'{X}[i]')} for i in range({n})])"),
            (f"w{o} = {X}.sum(0)\ndef score{o}(r):\n    return np.dot(r, w{o})\n"
             f"{o} = xp.array([score{o}(r) for r in {X}])"),
            (f"def grid{o}(f, a):\n    out = xp.zeros((len(a), len(a)))\n"
             f"    for i in range(len(a)):\n        for j in range(len(a)):\n"
             f"            out[i, j] = f(a[i], a[j])\n    return out\n"
             f"{o} = grid{o}(lambda p, q: np.exp(-np.sum((p - q) ** 2)), {X})"),
        ])

    def reduces(self) -> str:
        """functools.reduce and itertools in loops."""
        X = self.mat()
        n, d = self.shape_of(X)
        o = self.fresh()
        return self.pick([
            f"import functools\n{o} = functools.reduce(lambda a, r: a * 0.5 + r, {X}, xp.zeros({d}))",
            f"import functools\n{o} = functools.reduce(np.add, [{self._ew(f'{X}[i]')} for i in range({n})])",
            (f"import functools\n{o} = functools.reduce(lambda a, r: np.tanh(a @ W + r), {X})"
             if d == self.d else f"import functools\n{o} = functools.reduce(np.maximum, {X})"),
            f"import functools\nimport operator\n{o} = functools.reduce(operator.mul, np.tanh({X}) + 1.5)",
            (f"import itertools\n{o} = np.stack(list(itertools.accumulate({X}, "
             f"lambda a, b: a * 0.5 + b)))"),
            (f"import itertools\n{o} = xp.zeros(({n}, {d}))\n"
             f"for i, j in itertools.product(range({n}), range({d})):\n"
             f"    {o}[i, j] = {X}[i, j] ** 2 + {X}[i, (j + 1) % {d}]"),
            (f"import itertools\n{o} = 0.0\nfor i, j in itertools.combinations(range({n}), 2):\n"
             f"    {o} = {o} + np.sum(({X}[i] - {X}[j]) ** 2)"),
            (f"import itertools\n{o} = sum(np.dot(a, b) for a, b in itertools.pairwise({X}))"
             if n >= 2 else f"{o} = {X}.sum()"),
            f"import itertools\n{o} = sum(itertools.starmap(kern2, zip({X}, {X}[::-1])))",
            (f"import itertools\n{o} = np.stack(list(itertools.chain({X}[:2], {X}[-1:], "
             f"[{X}[0] * 2.0])))"),
            f"import itertools\n{o} = sum(itertools.islice({X}, 1, None, 2), xp.zeros({d}))",
            (f"import itertools\n{o} = xp.zeros({d})\n"
             f"for r, t in zip({X}, itertools.count(1)):\n    {o} = {o} + r / t"),
            f"import itertools\n{o} = np.stack([np.sum(r) * i for i, r in zip(itertools.cycle([1.0, -1.0]), {X})])",
        ])

    def generators(self) -> str:
        """Generator functions (yield, yield from) consumed by sum, np.stack, loops."""
        X = self.mat()
        n, d = self.shape_of(X)
        o = self.fresh()
        return self.pick([
            (f"def rows{o}(a):\n    for i in range(len(a)):\n        yield a[i] * (i + 1)\n"
             f"{o} = sum(rows{o}({X}))"),
            (f"def wins{o}(a, k):\n    for i in range(len(a) - k + 1):\n        yield a[i:i + k]\n"
             f"{o} = np.stack([np.sum(w, axis=0) for w in wins{o}({X}, k)])" if n >= 3 else
             f"{o} = {X} * 2.0"),
            (f"def pairs{o}(a):\n    yield from zip(a[:-1], a[1:])\n"
             f"{o} = np.stack([np.tanh(p - q) for p, q in pairs{o}({X})])" if n >= 2 else
             f"{o} = {X} + 1.0"),
            (f"def evens{o}(a):\n    for i, r in enumerate(a):\n        if i % 2 == 0:\n"
             f"            yield r\n{o} = np.stack(list(evens{o}({X})))"),
            (f"def ema{o}(a, alpha):\n    h = a[0] * 0.0\n    for r in a:\n"
             f"        h = alpha * h + (1 - alpha) * r\n        yield h\n"
             f"{o} = np.stack(list(ema{o}({X}, 0.7)))"),
            (f"g{o} = ({self._ew('r')} for r in {X})\n{o} = xp.zeros({d})\n"
             f"for t in g{o}:\n    {o} += t"),
        ])

    def control(self) -> str:
        """while loops; continue / break on Python conditions; loops over reversed / sorted
        Python ranges."""
        X = self.mat()
        n, d = self.shape_of(X)
        o = self.fresh()
        a, b = self.i(1, 3), self.i(2, 5)
        return self.pick([
            (f"{o} = xp.zeros({d})\ni = 0\nwhile i < {n}:\n    {o} = {o} + {self._ew(f'{X}[i]')}\n"
             f"    i += {a}"),
            (f"{o} = 0.0\ni, t = {n} - 1, 0\nwhile i >= 0 and t < {b}:\n"
             f"    {o} = {o} + np.sum({X}[i] ** 2)\n    i -= 1\n    t += 1"),
            (f"{o} = xp.zeros(({n}, {d}))\nfor i in range({n}):\n    if i % {a + 1} == 1:\n"
             f"        continue\n    if i > {b}:\n        break\n    {o}[i] = {self._ew(f'{X}[i]')}"),
            (f"{o} = xp.zeros({d})\nfor i in reversed(range({n})):\n    {o} = {o} * 0.5 + {X}[i]"),
            (f"{o} = xp.zeros({n})\nfor i in sorted(range({n}), key=lambda t: (t * 7) % {n}):\n"
             f"    {o}[i] = np.sum({X}[i]) + {o}[i - 1] * 0.5"),
            (f"{o} = 0.0\nfor i in range({n}):\n    for j in range({d}):\n"
             f"        if j > i:\n            break\n        {o} = {o} + {X}[i, j] * (j + 1)"),
            (f"{o} = xp.zeros({d})\nfor i in range({n}):\n    {o} += {X}[i]\nelse:\n"
             f"    {o} = {o} * 2.0"),
            (f"{o} = xp.zeros({d})\nn{o} = 0\nwhile True:\n    {o} = np.tanh({o} + {X}[n{o}])\n"
             f"    n{o} += 1\n    if n{o} == {n}:\n        break"),
        ])

    def recursion(self) -> str:
        """Recursion on Python ints (depth at most the row count)."""
        X = self.mat()
        n, d = self.shape_of(X)
        o = self.fresh()
        return self.pick([
            (f"def rec{o}(a, i):\n    return a[0] if i == 0 else rec{o}(a, i - 1) * 0.5 + a[i]\n"
             f"{o} = rec{o}({X}, {n - 1})"),
            (f"def tsum{o}(a, lo, hi):\n    if hi - lo == 1:\n        return a[lo]\n"
             f"    mid = (lo + hi) // 2\n    return tsum{o}(a, lo, mid) + tsum{o}(a, mid, hi)\n"
             f"{o} = tsum{o}({X}, 0, {n})"),
            (f"def pw{o}(u, p):\n    if p == 0:\n        return np.ones_like(u)\n"
             f"    h = pw{o}(u, p // 2)\n    return h * h * (u if p % 2 else 1.0)\n"
             f"{o} = pw{o}(np.tanh({X}), {self.i(1, 6)})"),
            (f"def fill{o}(buf, a, i):\n    if i == len(a):\n        return buf\n"
             f"    buf[i] = a[i] * 2.0 + (buf[i - 1] if i > 0 else 0.0)\n"
             f"    return fill{o}(buf, a, i + 1)\n{o} = fill{o}(xp.zeros(({n}, {d})), {X}, 0)"),
            (f"def depth{o}(u, k):\n    return u if k == 0 else depth{o}(np.sin(u) + u, k - 1)\n"
             f"{o} = depth{o}({X}, k)"),
        ])

    def inner(self) -> str:
        """vecgrad's own transforms called inside the program, on rows, in loops (inlined
        into the enclosing trace; the NumPy program runs them eagerly)."""
        X = self.mat()
        n = self.shape_of(X)[0]
        o = self.fresh()
        return self.pick([
            f"kj{o} = vg.jit(kern)\n{o} = np.stack([kj{o}(r) for r in {X}])",
            f"gs{o} = vg.grad(sq)\n{o} = np.stack([gs{o}(r) * 0.5 for r in {X}])",
            f"{o} = vg.vmap(kern)({X})",
            f"{o} = vg.vmap(lambda r: vg.grad(lambda u: np.sum(np.sin(u) * u))(r))({X})",
            f"{o} = sum(vg.value_and_grad(sq)(r)[1] for r in {X})",
            f"{o} = vg.hvp(lambda u: np.sum(np.sin(u) ** 2), ({X}[0],), ({X}[-1],))",
            (f"sm{o} = vg.jit(lambda a, j: np.sum(a[:j] ** 2), static_argnums=1)\n"
             f"{o} = xp.array([sm{o}({X}[i], k) for i in range({n})])"),
            f"{o} = vg.jacrev(kern)({X}[0])",
            f"{o} = vg.jvp(kern, ({X}[0],), ({X}[1 % {n}],))[1]",
            (f"{o} = xp.zeros({self.shape_of(X)})\nfor i in range({n}):\n"
             f"    {o}[i] = vg.grad(lambda u: np.sum(np.tanh(u * {o}[i - 1])))({X}[i])"),
        ])

    NEW: ClassVar[dict[str, int]] = {
        "aliasing": 4, "viewwrites": 4, "viewsoup": 6, "chains": 3, "dupidx": 3, "params": 2, "closures": 3,
        "reduces": 3, "generators": 2, "control": 3, "recursion": 2, "inner": 3}
    STYLES: ClassVar[dict[str, int]] = {**Gen.STYLES, **NEW}
    FIRST: ClassVar[dict[str, int]] = NEW
    KEEP_FIRST: ClassVar[bool] = True
    TRANSFORMS: ClassVar[list[str]] = TRANSFORMS + ["jgv", "jgv", "sgrad", "sgrad"]
