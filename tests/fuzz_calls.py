"""More styles for the loop fuzzer (tests/fuzz_loops.py): the NumPy calls natural ML and
scientific code makes, inside loops and on whole arrays.

Hand-written softmax / logsumexp; `np.linalg.norm` with axis / ord / keepdims; `np.einsum`
with repeated and ellipsis subscripts; `np.where` / `np.clip` / `np.maximum` with scalars;
`np.sort` / `argsort` / `argmax` whose results index; `cumsum` / `diff` / `roll`;
`concatenate` / `stack` / `split` / `pad`; `tril` / `triu` / `outer`; boolean masks and fancy
indices mixed with slices, `np.newaxis`, negative and clipped slices, `reshape(-1)`, `.T`,
`axis=-1`, keepdims; integer `//` and `%`; float32 throughout; 0-d arrays and Python
scalars mixed with arrays; empty slices and zero-trip loops.

Each style draws a *row template* (an expression of one row `r`, or of a small matrix `M`)
or a whole-array template, and one *form* that puts it where users put it: the whole array,
a comprehension stacked or summed over rows, a buffer written row by row, a list appended
to, `map` with a lambda, or an accumulator. As in fuzz_loops, a block NumPy rejects (or
whose values are not finite) is drawn again, so NumPy's result is the oracle.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np
from fuzz_loops import Gen

ORDS_VEC = ["None", "1", "2", "np.inf", "-np.inf", "3", "0.5"]
ORDS_MAT = ["None", "'fro'", "1", "-1", "np.inf", "-np.inf"]

# templates of one row `{r}` (a 1-D float array of length `{d}`)
ROW = {
    "softmax": [
        "np.exp({r} - np.max({r})) / np.sum(np.exp({r} - np.max({r})))",
        "np.exp({r}) / np.exp({r}).sum(axis=-1, keepdims=True)",
        "{r} - np.max({r}) - np.log(np.sum(np.exp({r} - np.max({r}))))",
        "np.max({r}) + np.log(np.sum(np.exp({r} - np.max({r}))))",
        "np.log(np.exp({r}).sum())",
        "np.sum(np.exp({r} - {r}.max()) / np.exp({r} - {r}.max()).sum() * {r})",
    ],
    "norms": [
        "np.linalg.norm({r})", "np.linalg.norm({r}, ord={ov})", "{r} / np.linalg.norm({r})",
        "np.linalg.norm({r}, axis=-1, keepdims=True)", "np.linalg.norm({r}, axis=0)",
        "np.linalg.norm({r}, {ov}, 0, True)", "np.linalg.norm({r} - {r2}, ord={ov})",
        "{r} / (np.linalg.norm({r}, ord={ov}) + 1.0)", "np.sqrt(np.sum({r} ** 2))",
    ],
    "einsum": [
        "np.einsum('i,i->', {r}, {r2})", "np.einsum('i,i', {r}, {r})", "np.einsum('i->', {r})",
        "np.einsum('i,j->ij', {r}, {r2})", "np.einsum('i,ij->j', {r}, W)",
        "np.einsum('ij,j->i', W, {r})", "np.einsum('ii->i', np.outer({r}, {r2}))",
        "np.einsum('ii', np.outer({r}, {r}))", "np.einsum('...i,...i->...', {r}, {r2})",
        "np.einsum('...i,ij->...j', {r}, W)", "np.einsum('i,i,i->i', {r}, {r2}, {r})",
        "np.einsum('ij,ij->i', W, W) * {r}", "np.einsum('ji', np.outer({r}, {r2}))",
        "np.einsum({r}, [0], {r2}, [0], [])", "np.einsum('...', {r}) * 2.0",
    ],
    "select": [
        "np.where({r} > 0, {r}, 0)", "np.where({r} > 0, 1.0, -1.0) * {r}",
        "np.where({r} > {r2}, {r}, {r2})", "np.where({r} < 0.3, {r} ** 2, 0.5)",
        "np.clip({r}, -0.5, 0.5)", "np.clip({r}, None, 0.2)", "np.clip({r}, {r2}, None)",
        "np.clip({r}, -1, 1.5) * c", "np.maximum({r}, 0)", "np.minimum({r}, {r2})",
        "np.maximum(0.0, {r}) - np.minimum({r}, c)", "np.abs({r}) * np.sign({r2})",
        "np.where({r} > 0, {r}, np.exp({r}) - 1.0)", "np.maximum({r}, 0.1 * {r})",
        "np.where(np.abs({r}) > 1.0, np.abs({r}) - 0.5, 0.5 * {r} ** 2)",
        "np.fmax({r}, {r2}) * np.fmin({r}, 0.5)", "{r}.clip(-0.7, 0.7)",
    ],
    "sorting": [
        "np.sort({r})", "np.sort({r})[::-1]", "{r}[np.argsort({r})]", "{r}[np.argsort(-{r})][:2]",
        "{r}[np.argmax({r})]", "{r}[np.argmin({r})] * {r2}", "{r2}[np.argmax({r})]",
        "{r}[{r}.argmax()] - {r}[{r}.argmin()]", "np.sort({r})[-1] + np.sort({r})[0]",
        "{r2}[np.argsort({r})]", "np.take({r}, np.argsort({r}))", "{r} * (np.argmax({r}) + 1)",
        "np.sort({r}, axis=-1)[{d} // 2]", "np.median({r})", "{r}[np.argsort({r})[::-1][0]]",
    ],
    "scans": [
        "np.cumsum({r})", "np.cumsum({r}[::-1])[::-1]", "np.cumprod(np.tanh({r}) + 1.5)",
        "np.diff({r})", "np.diff({r}, n=2)", "np.diff({r}, prepend={r}[:1])",
        "np.diff({r}, append=0.0)", "np.roll({r}, 1)", "np.roll({r}, -2)", "np.roll({r}, {d} + 1)",
        "np.cumsum({r}) / np.arange(1, {d} + 1)", "{r} - np.roll({r}, 1)",
        "np.maximum.accumulate({r})", "np.ediff1d({r})", "np.cumsum({r}, axis=0)[-1]",
    ],
    "joins": [
        "np.concatenate([{r}, {r2}])", "np.concatenate([{r}[:1], {r}, {r}[-1:]])",
        "np.stack([{r}, {r2}], axis=-1)", "np.stack([{r}, {r2}]).sum(0)",
        "np.hstack([{r}, [1.0]])", "np.vstack([{r}, {r2}])", "np.pad({r}, 1)",
        "np.pad({r}, (2, 0), mode='edge')", "np.pad({r}, (1, 1), mode='wrap')",
        "np.pad({r}, (0, 1), constant_values=0.5)", "np.split({r}, [1])[1]",
        "sum(np.split(np.concatenate([{r}, {r2}]), 2))", "np.array_split({r}, 2)[0]",
        "np.append({r}, {r2})", "np.column_stack([{r}, {r2}])", "np.r_[{r}, 0.0]",
        "np.pad({r}, 1, mode='reflect')",
    ],
    "matrices": [
        "np.tril(np.outer({r}, {r2}))", "np.triu(np.outer({r}, {r}), 1)",
        "np.tril(np.outer({r}, {r2}), -1).sum(0)", "np.outer({r}, {r2}) @ {r}",
        "np.outer({r}, {r2}).T", "np.outer({r}, {r}).reshape(-1)", "np.diag({r})",
        "np.diag(np.outer({r}, {r2}))", "np.trace(np.outer({r}, {r2}))",
        "np.triu(W) @ {r}", "np.tril(W, k=1).T @ {r}", "np.kron({r}, {r2}[:2])",
        "np.outer({r}, {r2}).reshape({d}, -1).sum(-1)", "np.outer({r}, {r2}).ravel()[::2]",
    ],
    "indexing": [
        "{r}[::-1]", "{r}[-100:100]", "{r}[1:-100]", "{r}[-2:]", "{r}[:-1] * {r}[1:]",
        "{r}[np.newaxis, :] * {r}[:, None]", "{r}[None].T[:, 0]", "{r}[..., None].sum(-1)",
        "{r}[{r} > 0].sum()", "{r}[[0, -1]]", "{r}[[0, 0, -1]] * 2.0",
        "{r}[np.array([{d} - 1, 0])]", "{r}[{r}.argsort()[:1]]", "{r}[np.abs({r}) < 1.0]",
        "{r}[1:][[0]]", "{r}.reshape(-1, 1)[:, 0]", "{r}.reshape(1, -1).T.ravel()",
        "{r}[::2] + {r}[::2][::-1]", "{r}[-1:-100:-1]", "{r}[{d}:]", "{r}[2:1]",
        "np.take({r}, [-1, 0, 1], mode='wrap')", "{r}[ix % {d}]", "{r}[jx % {d}][::-1]",
    ],
    "f32": [
        "{r}.astype(np.float32) * s[:{d}].sum()", "np.float32(0.5) * {r}.astype(np.float32)",
        "np.tanh({r}.astype(np.float32)) + 1", "np.exp({r}.astype(np.float32) - 1.0)",
        "({r}.astype(np.float32) ** 2).sum()", "{r}.astype(np.float32) @ W.astype(np.float32)",
        "np.maximum({r}.astype(np.float32), 0)", "{r}.astype(np.float32) / np.float32(3)",
        "np.linalg.norm({r}.astype(np.float32))", "np.cumsum({r}.astype(np.float32))",
        "np.float32(c) * {r}", "{r}.astype('float32').mean() * 2.5",
    ],
    "zerod": [
        "np.array(2.0) * {r}", "np.asarray(c) + {r}", "np.float64(c) * {r}", "{r} + {r}.sum()",
        "{r}[0] * {r}", "np.array({r}[0]) + 1", "{r}.sum() / np.float32(2)", "c + {r}[1:2]",
        "np.asarray({r}.max())", "np.add(c, {r}.mean())", "np.array(1) + {r}",
        "{r} * np.int64(2) + np.array(True)", "np.multiply({r}.sum(keepdims=True), {r})",
        "np.sum({r}, keepdims=True)[0] * 2", "{r}[()] * 1.5", "np.squeeze({r}[:1]) * {r}",
    ],
}
# templates of a matrix `{M}` (2-D float, shape (p, q)), in loops over a batch of them or whole
MAT = {
    "softmax": [
        ("np.exp({M} - {M}.max(axis=-1, keepdims=True)) / "
        "np.exp({M} - {M}.max(axis=-1, keepdims=True)).sum(axis=-1, keepdims=True)"),
        "np.log(np.sum(np.exp({M}), axis=1))",
        "{M}.max(0) + np.log(np.exp({M} - {M}.max(0)).sum(0))",
        "{M} - np.log(np.exp({M}).sum(axis=1, keepdims=True))",
    ],
    "norms": [
        "np.linalg.norm({M}, axis={ax})", "np.linalg.norm({M}, axis={ax}, keepdims=True)",
        "np.linalg.norm({M}, ord={ov}, axis=1)", "np.linalg.norm({M}, ord={om})",
        "np.linalg.norm({M}, ord={om}, keepdims=True)", "np.linalg.norm({M}, axis=(0, 1))",
        "{M} / np.linalg.norm({M}, axis=-1, keepdims=True)", "np.linalg.norm({M}, 'fro')",
        "np.linalg.norm({M}, axis=(1, 0), ord={om})",
    ],
    "einsum": [
        "np.einsum('ij->i', {M})", "np.einsum('ij->j', {M})", "np.einsum('ij->', {M})",
        "np.einsum('ij,ij->', {M}, {M})", "np.einsum('ij->ji', {M})",
        "np.einsum('...j->...', {M})", "np.einsum('ij,jk->ik', {M}, W)",
        "np.einsum('ij,kj->ik', {M}, {M})", "np.einsum('...ij,j->...i', {M}, W[0])",
        "np.einsum('ij,ik->jk', {M}, {M})", "np.einsum('ii->i', W @ W)",
        "np.einsum('ij,ij->j', {M}, np.tanh({M}))", "np.einsum('i...->...', {M})",
        "np.einsum('ab,cb,c->a', {M}, {M}, {M}[:, 0])",
    ],
    "select": [
        "np.where({M} > 0, {M}, 0.0)", "np.clip({M}, -0.4, 0.6).sum(axis=-1)",
        "np.maximum({M}, {M}.mean(axis=0))", "np.where({M} > {M}.mean(1, keepdims=True), 1, 0)",
        "np.minimum({M}, 0.5) + np.maximum({M}, -0.5)", "np.where({M} < 0, -{M}, 2 * {M})",
    ],
    "sorting": [
        "np.sort({M}, axis=0)", "np.sort({M})[:, -1]", "{M}[np.arange({p}), np.argmax({M}, axis=1)]",
        "np.take_along_axis({M}, np.argsort({M}, axis=-1), axis=-1)",
        "np.take_along_axis({M}, np.argmax({M}, axis=0)[None], axis=0)",
        "{M}[np.argsort({M}[:, 0])]", "{M}[:, np.argsort({M}[0])[::-1]]",
        "np.max({M}, axis=1) - np.min({M}, axis=1)", "{M}[np.argmax({M}.sum(1))]",
    ],
    "scans": [
        "np.cumsum({M}, axis=0)", "np.cumsum({M}, axis=-1)", "np.diff({M}, axis=0)",
        "np.diff({M}, axis=-1)", "np.roll({M}, 1, axis=0)", "np.roll({M}, (1, -1), axis=(0, 1))",
        "np.roll({M}, 3)", "np.cumprod(np.cos({M}), axis=1)", "np.cumsum({M})",
    ],
    "joins": [
        "np.concatenate([{M}, {M}[::-1]], axis=0)", "np.concatenate([{M}, {M}], axis=-1)",
        "np.stack([{M}, {M} * 2.0], axis=1)", "np.split({M}, {p}, axis=0)[0]",
        "np.pad({M}, ((1, 0), (0, 2)))", "np.pad({M}, 1, mode='edge')",
        "np.vstack([{M}, {M}.sum(0)])", "np.hstack([{M}, {M}[:, :1]])",
        "np.concatenate([{M}.T, {M}.T], axis=1)", "np.dstack([{M}, {M}])[..., 1]",
        "sum(np.array_split({M}, 2, axis=1)[0])",
    ],
    "matrices": [
        "np.tril({M})", "np.triu({M}, 1)", "np.tril({M}, -1) @ np.triu({M}).T",
        "{M}.T @ {M}", "{M} @ {M}.T", "np.outer({M}, {M}[0])", "np.triu({M}.T @ {M}).sum()",
        "np.diagonal({M})", "np.trace({M})", "np.diag({M})",
    ],
    "indexing": [
        "{M}[m[:{p}]]" , "{M}[m[:{p}], 1:]", "{M}[{M} > 0]", "{M}[:, [0, -1]]",
        "{M}[[0, -1]][:, None]", "{M}[np.newaxis, :, 0]", "{M}[..., None][:, :, 0]",
        "{M}[-100:100, ::-1]", "{M}[2:-100]", "{M}[1:, [0]]", "{M}.T[::-1]",
        "{M}.reshape(-1)", "{M}.reshape({p}, -1, 1)[:, :, 0]", "{M}.T.reshape(-1)[::2]",
        "{M}[ix % {p}]", "{M}[ix % {p}, jx % {q}]", "{M}[ix % {p}, :1]",
        "{M}[np.arange({p}) % 2 == 0]", "{M}[:, {M}[0] > 0]", "{M}[{M}[:, 0] > 0, -1]",
        "{M}[ix % {p}][:, ::-1]", "{M}[[[0], [-1]], [0, -1]]", "{M}[None, ..., None].squeeze()",
    ],
    "f32": [
        "{M}.astype(np.float32) @ W.astype(np.float32)", "{M}.astype(np.float32).sum(axis=-1)",
        "np.float32(2) * {M} + s[:{q}]", "np.exp({M}.astype(np.float32)).mean(0)",
    ],
    "zerod": [
        "{M} * np.array(0.5)", "{M} - {M}.mean()", "{M}[0, 0] * {M}", "np.float32(1.5) + {M}",
        "{M}.sum(keepdims=True) * {M}", "np.asarray(c) * {M}.T",
    ],
}
INTS = ["ix // 3", "ix % 3", "-ix // 2", "ix % -3", "jx // -2", "np.floor_divide(jx, 4)",
        "np.mod(jx, 5)", "np.remainder(ix, 2)", "np.fmod(jx, 3)", "divmod(jx, 3)[0]",
        "(ix * jx) % 7", "ix // (jx % 3 + 1)", "jx % (ix + 1)", "np.abs(jx) // 2 * 2",
        "(jx + {n}) % {n}", "ix // 2 + jx % 2"]


class CallGen(Gen):
    """fuzz_loops.Gen with the NumPy-call styles (each in loops and on whole arrays), integer
    arithmetic feeding indices, and empty / zero-trip loops."""

    def _mat_expr(self) -> tuple[str, tuple]:
        """A small matrix expression (of the inputs or earlier values) and its shape."""
        n, _d = self.n, self.d
        opts = ["x", "W", "x.T", f"x[:{min(n, 3)}]", "np.tanh(x) @ W", "x[::-1]"]
        opts += [o for o in self.outs if np.ndim(self.ns.get(o)) == 2
                 and np.asarray(self.ns[o]).dtype.kind == "f" and min(np.shape(self.ns[o])) >= 1]
        m = self.pick(opts)
        return m, self.shape_of(m)

    def _fill(self, t: str, **kw) -> str:
        kw.setdefault("ov", self.pick(ORDS_VEC))
        kw.setdefault("om", self.pick(ORDS_MAT))
        kw.setdefault("ax", self.pick(["0", "1", "-1", "(0, 1)", "(-1, -2)", "None"]))
        return t.format(**kw)

    def _calls(self, family: str) -> str:
        o = self.fresh()
        if self.i(0, 2) == 0:  # a matrix template: whole, or in a loop over rows / blocks
            M, (p, q) = self._mat_expr()
            t = self.pick(MAT[family])
            form = self.pick(["whole", "whole", "blocks", "batch"])
            if form == "whole":
                return f"{o} = " + self._fill(t, M=M, p=p, q=q)
            if form == "blocks":  # row blocks of x, loop over them
                h = self.i(1, min(3, self.n))
                cnt = self.n - h + 1
                e = self._fill(t, M=f"x[i:i + {h}]", p=h, q=self.d)
                return self._loop(o, e, cnt)
            e = self._fill(t, M=f"(x * (1.0 + 0.1 * i))[:{p}]" if M == "x" else f"({M} + 0.1 * i)",
                           p=p, q=q)
            return self._loop(o, e, self.i(0, 3))
        X, L = self._rows()
        r2 = self.pick([f"{X}[i - 1]", f"np.cos({X}[i])", f"{X}[-1 - i]", f"{X}[(i + 1) % {L}]"])
        if family == "norms":  # (x[i] - x[-1 - i] is 0 at the middle row: a norm's kink)
            r2 = f"np.cos({X}[i])"
        d = self.shape_of(f"{X}[0]")[0]
        e = self._fill(self.pick(ROW[family]), r=f"{X}[i]", r2=r2, d=d)
        return self._loop(o, e, L)

    def _rows(self) -> tuple[str, int]:
        X = self.pick(["x", "x", "W", "np.tanh(x)", "x[:, ::-1]"]
                      + [o for o in self.outs if np.ndim(self.ns.get(o)) == 2
                         and np.asarray(self.ns[o]).dtype.kind == "f"
                         and min(np.shape(self.ns[o])) >= 1])
        return X, self.shape_of(X)[0]

    def _loop(self, o: str, e: str, n: int) -> str:
        """The expression `e` of `i` for i in range(n), put where users put it."""
        row = np.shape(eval(e, {**self.ns, "i": 0}))  # (our own expression)
        lo = self.pick([0, 0, 0, 1, n])  # (n: a zero-trip loop)
        form = self.pick(["stack", "buf", "list", "map", "acc", "sum", "comp_array", "buf_t"])
        rng = f"range({lo}, {n})"
        if form == "stack" and lo < n:
            return f"{o} = np.stack([{e} for i in {rng}])"
        if form == "list" and lo < n:
            end = self.pick(["np.stack", "xp.array", "np.concatenate" if row else "xp.array",
                             "sum"])
            return f"l{o} = []\nfor i in {rng}:\n    l{o}.append({e})\n{o} = {end}(l{o})"
        if form == "map" and lo < n:
            return f"{o} = np.stack(list(map(lambda i: {e}, {rng})))"
        if form == "acc":
            init = self.pick(["0.0", f"xp.zeros({row})", "np.float64(0.5)", "0"])
            op = self.pick(["+=", "= " + o + " * 0.5 +", "-="])
            return f"{o} = {init}\nfor i in {rng}:\n    {o} {op} {e}"
        if form == "sum":
            return f"{o} = sum(({e} for i in {rng}), xp.zeros({row}))"
        if form == "comp_array" and lo < n and not row:
            return f"{o} = xp.array([{e} for i in {rng}])"
        if form == "buf_t" and len(row) == 1:
            return (f"{o} = xp.zeros(({row[0]}, {n}))\nfor i in {rng}:\n"
                    f"    {o}[:, i] {self.pick(['=', '+='])} {e}")
        dt = self.pick(["", "", ", dtype=np.float32"])
        return (f"{o} = xp.zeros(({n},) + {row}{dt})\nfor i in {rng}:\n"
                f"    {o}[i] {self.pick(['=', '=', '+=', '-='])} {e}")

    def softmax(self) -> str:
        return self._calls("softmax")

    def norms(self) -> str:
        return self._calls("norms")

    def einsum(self) -> str:
        return self._calls("einsum")

    def select(self) -> str:
        return self._calls("select")

    def sorting(self) -> str:
        return self._calls("sorting")

    def scans(self) -> str:
        return self._calls("scans")

    def joins(self) -> str:
        return self._calls("joins")

    def matrices(self) -> str:
        return self._calls("matrices")

    def indexing(self) -> str:
        return self._calls("indexing")

    def f32(self) -> str:
        return self._calls("f32")

    def zerod(self) -> str:
        return self._calls("zerod")

    def ints(self) -> str:
        """Integer // and % (negative operands too) as values and as indices."""
        o = self.fresh()
        e = self.pick(INTS).format(n=self.n)
        return self.pick([
            f"{o} = {e}",
            f"{o} = x[({e}) % {self.n}] * 2.0",
            f"{o} = v[np.clip({e}, -{self.n}, {self.n - 1})]",
            (f"{o} = xp.zeros({self.n})\nfor t, q in enumerate(({e}) % {self.n}):\n"
            f"    {o}[q] += v[t % {self.n}]"),
            (f"{o} = xp.zeros({self.n})\nfor e in range(len(ix)):\n"
            f"    {o}[({e.replace('ix', 'ix[e]').replace('jx', 'jx[e]')}) % {self.n}] += 1.0"),
            f"{o} = np.stack([x[q % {self.n}] for q in {e}])",
            f"{o} = sum(({e}) * 1.0) + v.sum() * ({e}).max()",
            f"{o} = ({e}).astype(np.float64) * np.float32(0.5)",
        ])

    def empty(self) -> str:
        """Empty slices and zero-trip loops (k, n, ranges that run 0 times)."""
        o, n, d = self.fresh(), self.n, self.d
        return self.pick([
            f"{o} = xp.zeros({d})\nfor i in range({n}, {n}):\n    {o} += x[i]",
            f"{o} = 0.0\nfor i in range(k, 0):\n    {o} = {o} + v[i]",
            f"{o} = x[{n}:].sum(0) + x[3:1].sum()",
            f"{o} = np.concatenate([x[:0], x, x[{n}:]])",
            f"{o} = sum((x[i] for i in range(0)), xp.zeros({d}))",
            f"{o} = np.stack([x[i] for i in range({n})] + [])[:0]",
            f"{o} = xp.zeros((0, {d})) + x[:0] * 2.0",
            f"{o} = v[v > 1e9].sum() + np.sum(x[:, :0])",
            f"{o} = x.copy()\n{o}[{n}:] = 5.0\n{o}[:, {d}:] += 1.0\n{o}[2:2] *= 0.0",
            f"{o} = xp.zeros({n})\nfor i in range({n}):\n    {o}[i] = v[i:i].sum() + v[i]",
            (f"{o} = xp.zeros({n})\nfor i in range({n}):\n    for j in range(i, i):\n"
            f"        {o}[i] += v[j]\n    {o}[i] -= v[i] * 0.5"),
            f"{o} = np.array([np.sum(v[i:k]) for i in range({n})])",
            f"{o} = np.linalg.norm(x[:0], axis=0) + x[0]",
            f"{o} = np.zeros((0,)).sum() + v",
            f"{o} = xp.array([v[i] for i in range({n}) if i < 0] + [1.0])",
        ])

    def views(self) -> str:
        """A loop writing into a buffer through `out=` and the views NumPy functions and
        methods return (reshape, ravel, .T, split, moveaxis, squeeze, flat), and masks."""
        o, n, d = self.fresh(), self.n, self.d
        X = self.pick(["x", "np.tanh(x)", "x[::-1]", "x * 0.5 + 1.0"])

        def stmt():
            return self.pick([
                f"np.cumsum({o}[i], out={o}[i])", f"np.sum({o}[:i + 1], axis=0, out={o}[i])",
                f"np.multiply({o}[i], 0.5, out={o}[i])", f"np.add({o}[i], {o}[i - 1], out={o}[i])",
                f"np.clip({o}[i], -1.0, 1.0, out={o}[i])", f"np.maximum({o}[i], 0.1, out={o}[i])",
                f"np.negative({o}[i], out={o}[(i + 1) % {n}])", f"np.dot(W, x[i], out={o}[i])",
                f"np.einsum('ij,j->i', W, {o}[i - 1], out={o}[i])", f"np.mean({o}, axis=0, out={o}[i])",
                f"np.cumsum({o}[:, i % {d}], out={o}[:, (i + 1) % {d}])", f"np.max({o}, 1, out={o}[:, 0])",
                f"{o}.reshape(-1)[i] += 1.0", f"{o}.ravel()[{d} * i] *= 2.0",
                f"{o}.reshape({n * d})[i:i + 2] = v[i]", f"{o}.T[i % {d}, i] = v[i]",
                f"{o}.T[:, i] *= 0.5", f"s{o}, t{o} = np.split({o}, [1])\nt{o} += s{o} * v[i]",
                f"np.moveaxis({o}, 0, -1)[:, i] += 1.0", f"np.squeeze({o}[i:i + 1])[0] = v[i]",
                f"{o}[i, ::-1] = {o}[i]", f"{o}[i:] += {o}[i]", f"{o}[{o} > 1.5] = 1.5",
                f"np.copyto({o}[i], x[i] * 2.0, where=x[i] > 0)", f"np.put({o}, [i, i + 1], v[i])",
                f"{o}.flat[i] = v[i]", f"np.fill_diagonal({o}, v[i])", f"{o}[i][:] = {o}[i - 1] * 0.5",
                f"{o}[..., i % {d}][i] -= 1.0", f"{o}[None][0, i] = np.sin({o}[i])",
                f"np.swapaxes({o}, 0, 1)[i % {d}] += v", f"{o}[i] = np.sort({o}[i])[::-1]",
                f"np.exp({o}[i], out={o}[i])", f"np.tanh({o}[i - 1], {o}[i])",
            ])
        body = "\n".join(stmt() for _ in range(self.i(1, 3)))
        lo = self.pick([0, 1])
        return (f"{o} = ({X}).copy()\nfor i in range({lo}, {n}):\n"
                + "\n".join("    " + ln for ln in body.splitlines()))

    NEW: ClassVar[dict[str, int]] = {
        "softmax": 2, "norms": 3, "einsum": 3, "select": 2, "sorting": 3, "scans": 2,
        "joins": 3, "matrices": 2, "indexing": 4, "f32": 2, "zerod": 2, "ints": 2, "empty": 2,
        "views": 4}
    STYLES: ClassVar[dict[str, int]] = {**Gen.STYLES, **NEW}
    FIRST: ClassVar[dict[str, int]] = NEW
    KEEP_FIRST: ClassVar[bool] = True
