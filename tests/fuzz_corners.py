"""More styles for the semantics fuzzer (tests/fuzz_semantics.py): the corners of NumPy's
semantics where a silent wrong answer hides.

Complex values through the operations vecgrad accepts (compared with NumPy) and the ones it
refuses (max / min / clip / ordering: a typed refusal, never a crash); float16 and float32
through loops, reductions and NumPy 2's NEP 50 promotion with Python and NumPy scalars;
integer overflow (int8 / int16 / uint8 arrays wrap), `//`, `%`, `np.fmod` and `divmod` with
negative operands, ints and floats; empty arrays and zero-trip loops; sorting, argsort and
partition per row with ties and NaN; `np.unique` with its return_* flags (on values known
while tracing; on traced ones a typed refusal); boolean indexing, `x[True]`, `x[None, ...]`;
`out=` and `where=` in ufuncs and reductions (overlapping `out` too); views of views written
through, in loops and whole; `x[mask]` read (reduced after entrywise work, per row, by rows,
written back through the mask) and np.r_ / np.c_ of traced items.

Each block is run by NumPy as drawn, as in tests/fuzz_loops.py (a block NumPy rejects, or
whose values are not finite, is drawn again): NumPy's values and dtypes are the oracle.

    nice .venv/bin/python tests/test_fuzz_loops.py 2000 0 corners    # (or one style)
"""
from __future__ import annotations

from typing import ClassVar

from fuzz_semantics import SemGen

Z = ["(x[i] + 1j * np.cos(x[i]))", "np.exp(1j * x[i])", "(v[i] - 0.5j)", "(x[i] * (2 - 1j))",
     "(s[i] + 1j * s[i]).astype(np.complex64)", "(x[i] + 1j * np.round(x[i]))"]
CPLX = ["np.sort({z}).real", "np.argsort({z})", "np.sort_complex({z}).imag", "np.cumprod({z}).real",
        "np.mean({z}).imag", "np.var({z})", "np.std({z})", "np.linalg.norm({z}, 1)",
        "np.vdot({z}, {z}).real", "np.dot({z}, {z}).imag", "np.prod({z} * 0.5).real",
        "({z} ** 2.5).real", "np.power({z}, 3).imag", "np.sqrt({z}).imag", "np.log({z} + 3).imag",
        "np.tanh({z}).real", "np.reciprocal({z} + 2).real", "np.sign({z}).real",
        "({z} == {z}[::-1])", "np.isclose({z}, {z} * (1 + 1e-12))", "np.round({z}, 1).imag",
        "np.abs({z}) ** 2 - ({z} * {z}.conj()).real", "np.max({z}).real", "np.min({z}).imag",
        "np.clip({z}, 0, 1).real", "({z} < 1)", "np.maximum({z}, 0.5).real", "np.argmax({z})",
        "np.sum({z} > 0)", "np.real({z}).astype(np.float32)", "np.cumsum({z})[::-1].imag",
        "np.exp({z}).real * np.angle({z})", "({z} * 1j + {z}.conj()).real", "np.fft.fft({z}).real",
        "np.abs(np.outer({z}, {z}.conj())).sum(0)", "np.unwrap(np.angle({z}))", "np.nonzero({z} != 0)[0]",
        "np.iscomplex({z})", "np.real_if_close({z} * 0 + 1).real", "np.conj({z}).imag * 2"]
HALF = ["h[i] * 2.5", "h[i] + 1", "h[i] / 3", "h[i] + np.float16(1)", "h[i] * np.float32(2)",
        "h[i] + s[i]", "h[i] * x[i, 0]", "np.float64(0.5) * h[i]", "h[i] ** 2", "np.tanh(h[i])",
        "h[i] // 0.25", "h[i] % 0.5", "abs(h[i]) + True", "h[i].astype(np.float32) * 0.1",
        "np.maximum(h[i], 0.25)", "h[i] * np.int8(3)", "h[i] - np.int64(1)", "np.sqrt(h[i] ** 2 + 1)"]
HALF_WHOLE = ["np.sum(h)", "h.mean()", "np.cumsum(h)", "np.var(h)", "h.sum(dtype=np.float32)",
              "np.prod(h * 0.1 + 1)", "np.dot(h, h)", "h @ s", "np.linalg.norm(h)", "np.max(h) * 2",
              "np.mean(h, dtype=np.float64)", "np.sort(h)", "h.std()", "np.median(h)",
              "np.add.reduce(h)", "np.einsum('i,i->', h, h)", "np.average(h, weights=v * v)"]
INTW = ["b * 3", "b + 120", "-b", "np.abs(b)", "b * b", "np.cumsum(b, dtype=b.dtype)", "b.sum()",
        "np.sum(b, dtype=b.dtype)", "np.prod(b[:3])", "b // -3", "b % -3", "-b // 4", "np.fmod(b, -3)",
        "np.divmod(b, -4)[1]", "np.left_shift(b, 4)", "(b * b).astype(np.int16)", "b - np.uint8(1)",
        "b + np.int8(100)", "b * 2.5", "b / -3", "b ** 2", "np.negative(b) // 2", "b >> 1", "~b",
        "np.square(b)", "np.add.accumulate(b)", "b.astype(np.uint8) + 200", "np.sign(b) * b",
        "np.maximum(b, -128)", "np.clip(b, -100, 100)", "b.max() - b.min()", "np.ptp(b)"]
INTB = ["(ix % 100 + 60).astype(np.int8)", "(jx * 40).astype(np.int8)", "(ix * 77).astype(np.uint8)",
        "(jx * 9000).astype(np.int16)", "(jx * 2 ** 30).astype(np.int32)", "(ix - 3).astype(np.uint16)"]
DIVS = ["jx // -3", "jx % -3", "-jx // 4", "np.fmod(jx, -3)", "np.divmod(jx, -4)[0]", "np.remainder(jx, -5)",
        "x // -0.3", "x % -0.7", "np.fmod(x, -0.7)", "(-x) // 0.5", "np.remainder(v, -1.5)",
        "np.floor_divide(v, -0.25)", "np.divmod(v, -0.4)[1]", "v % 2", "jx // 2.5", "jx % -2.5",
        "np.floor_divide(jx, np.int8(-3))", "jx % np.uint8(3)", "np.mod(v, v[::-1] + 2.0)", "s // -0.5",
        "s % np.float32(-0.3)", "np.fmod(s, 0.25)", "-7 // jx[jx != 0] if (jx != 0).all() else jx // -7"]
SORTR = ["np.argsort({r})", "np.argsort({r}, kind='stable')", "np.argsort(-{r})", "np.argmax({r})",
         "np.argmin({r})", "np.nanargmax(np.where(np.isnan({r}), -np.inf, {r}))", "np.isnan(np.sort({r}))",
         "np.nan_to_num(np.sort({r}), nan=9.0)", "np.nan_to_num(np.partition({r}, 1), nan=9.0)[:2]",
         "np.nan_to_num(np.sort({r})[::-1], nan=-9.0)", "np.searchsorted(np.sort({r}), 0.0)",
         "np.nanmax({r})", "np.nanmin({r})", "np.nanmedian({r})", "np.nanpercentile({r}, 30)",
         "np.nansum({r})", "np.nanmean({r})", "np.argsort(np.nan_to_num({r}), stable=True)",
         "np.nan_to_num(np.maximum.accumulate({r}), nan=5.0)", "np.fmax.reduce({r})", "np.sum(np.isnan({r}))",
         "np.lexsort((np.nan_to_num({r}), np.round(np.nan_to_num({r}))))", "np.count_nonzero({r} > 0)",
         "np.nan_to_num(np.sort(np.stack([{r}, {r} * 0.5]), axis=0), nan=3.0)"]
ROWS = ["np.where(x[i] > 1.0, np.nan, np.round(x[i]))", "np.round(x[i] * 2) / 2",
        "np.where(m[i], np.nan, x[i])", "np.where(x[i] < -1.0, np.nan, np.floor(x[i]))"]
# x[mask] read (numpy/_selected.py): selections, the entrywise work on them, their reductions
SEL = ["x[i][x[i] > 0]", "x[i][np.abs(x[i]) < 1]", "x[i][x[i] > 9]", "(x[i] - v[i])[x[i] > v[i]]",
       "x[i][(x[i] > -0.5) & (x[i] < 1.5)]", "x[i][~(x[i] > 0.3)]", "W[i % len(W)][W[i % len(W)] < 0]"]
SEL_WHOLE = ["v[v > 0]", "s[s > 0]", "x[x > 0.5]", "(v * 2)[m]", "ix[ix > 1]", "v[v > 9]",
             "x[:, 0][m]", "s[m]", "(x - v[:, None])[x > v[:, None]]"]
POS = ["x[i][x[i] > 0.1]", "v[v > 0.1]", "s[s > 0.1]", "(x[i] ** 2)[x[i] != 0]"]
ENTRY = ["{s}", "{s} ** 2", "np.exp(-{s})", "2.0 * {s} - 1", "np.abs({s})", "-{s}", "({s} > 0.5)",
         "{s}.astype(np.float32)", "np.clip({s}, -0.5, 0.5)", "np.where({s} > 0.2, {s}, 0.1)",
         "np.maximum({s}, 0.2)", "{s} * np.float32(2)", "({s} + 1) // 1", "np.tanh({s})"]
ENTRY_POS = ["np.log({s})", "np.sqrt({s})", "1.0 / {s}", "{s} ** 0.5", "np.log1p({s}) / {s}"]
MRED = ["np.sum({e})", "({e}).sum()", "np.mean({e})", "np.var({e})", "np.std({e}, ddof=0)",
        "np.prod({e} * 0.5 + 1)", "np.linalg.norm({e})", "np.count_nonzero({e} > 0.2)",
        "np.any({e} > 1)", "np.all({e} < 2)", "np.max({e}, initial=-3.0)", "np.min({e}, initial=5)",
        "({e}).mean()", "np.nansum({e})", "np.average({e})", "({e}) @ ({e})", "np.sum({e}, dtype=np.float64)"]
MROWS = ["np.sum(x[x[:, 0] > 0], axis=0)", "x[v > 0].mean(axis=0)", "np.sum(x[m] ** 2, axis=1).sum()",
         "np.linalg.norm(x[v < 0.5])", "np.max(x[m], axis=0, initial=0.0)", "x[x[:, -1] < 0][:, 0].sum()",
         "np.sum(x[v > 0] @ W)", "np.sum(x[m] * v[0], axis=0, keepdims=True)",
         "np.sum(x[:, x[0] > 0], axis=1).sum()", "np.nansum(x[:, x[1] < 0.5].mean(axis=1))",
         "np.sum(x[m, 1:])", "np.sum(x[m, :] * 2.0)", "np.sum(x[1, x[0] > 0] ** 2)",
         "np.var(x[:, x[-1] > -0.5])", "np.sum(x[:, x[0] > 0] * v[:, None], axis=1).sum()",
         "np.sum(np.exp(x[:, x[0] < 0]), axis=-1, keepdims=True)"]
RCAT = ["np.r_[v, 0.0]", "np.r_[v[:2], x[0], 1]", "np.c_[v, v ** 2]", "np.r_[s, 0.1]", "np.r_[s, np.float64(1)]",
        "np.r_[ix, 2]", "np.r_[ix.astype(np.int8), -1]", "np.r_[0:3, v]", "np.r_['0,2', v, v]", "np.c_[x, v]",
        "np.r_[m, True]", "np.r_[v[0], v[1], 2.5]"]


class CornerGen(SemGen):
    """fuzz_semantics.SemGen with the corner styles (module doc)."""

    def cplx(self) -> str:
        o, n = self.fresh(), self.n
        e = self.pick(CPLX).format(z=self.pick(Z).replace("[i]", ""))
        ez = self.pick(CPLX).format(z=self.pick(Z))
        return self.pick([f"{o} = {e}", self._loop_of(o, ez, n),
                          (f"z{o} = xp.zeros({n}, dtype=np.complex128)\nfor i in range({n}):\n"
                           f"    z{o}[i] = x[i, 0] + 1j * v[i]\n    z{o}[i] *= 1 - 0.5j\n{o} = np.abs(z{o}) + z{o}.imag"),
                          (f"z{o} = x[:, 0] + 1j * v\nfor i in range(1, {n}):\n    z{o}[i] = z{o}[i] * z{o}[i - 1] * 0.5\n"
                           f"{o} = z{o}.real")])

    def halfs(self) -> str:
        o, n = self.fresh(), self.n
        h = self.pick(["s.astype(np.float16)", "(v * 3).astype(np.float16)"])
        self.ns = {**self.ns, "h": eval(h, dict(self.ns))}  # (for _loop_of's look at the dtype)
        pre = f"h = {h}\n"
        return pre + self.pick([self._loop_of(o, self.pick(HALF), n), f"{o} = {self.pick(HALF_WHOLE)}",
                                (f"{o} = xp.zeros({n}, dtype=np.float16)\nfor i in range({n}):\n"
                                 f"    {o}[i] = {self.pick(HALF)}"),
                                f"{o} = h.copy()\nfor i in range(1, {n}):\n    {o}[i] += {o}[i - 1] * 0.5"])

    def overflow(self) -> str:
        o, n = self.fresh(), self.n
        b = self.pick(INTB)
        L = len(self.inputs["ix"])
        return f"b = {b}\n" + self.pick([
            f"{o} = {self.pick(INTW)}",
            f"{o} = xp.zeros({L}, dtype=b.dtype)\nfor i in range({L}):\n    {o}[i:i + 1] = {self.pick(INTW).replace('b', 'b[i:i + 1]')}",
            f"{o} = b.copy()\nfor i in range({L}):\n    {o}[i:i + 1] *= 3",
            f"{o} = b.copy()\n{o} += 100\n{o} -= b[::-1]",
            f"{o} = np.zeros(3, dtype=b.dtype)\nfor i in range({L}):\n    {o} = {o} + b[i:i + 1]",
            f"{o} = {self.pick(DIVS)}", self._loop_of(o, self.pick(DIVS).replace("jx", "jx[i]").replace("x //", "x[i] //")
                                                      .replace("x %", "x[i] %") if self.i(0, 1) else "jx[i] // -3 + jx[i] % -4", min(n, L)),
        ])

    def empties(self) -> str:
        o, n, d = self.fresh(), self.n, self.d
        return self.pick([
            f"{o} = 0.0\nfor i in range(k, k):\n    {o} = {o} + v[i]",
            f"{o} = xp.zeros(3)\nfor i in range(len(v) - len(v)):\n    {o} = {o} + x[i, :1]",
            f"{o} = sum(v[i] for i in range(0))", f"{o} = np.sum(x[:0], axis=0)",
            f"{o} = np.max(x[:0], axis=0, initial=-1.0)", f"{o} = x[:0].T @ x[:0]",
            f"{o} = np.concatenate([x[:0], x[:1]])", f"{o} = xp.zeros((0, {d})).sum(0)",
            f"{o} = np.cumsum(v[:0])", f"{o} = np.linalg.norm(v[:0])", f"{o} = xp.array([v[i] for i in range(0)])",
            f"{o} = np.prod(v[:0])", f"{o} = np.sort(v[2:2])", f"{o} = v[:0] * 2 + 1",
            f"{o} = np.any(v[:0] > 0), np.all(v[:0] > 0)\n{o} = xp.array({o})",
            f"{o} = xp.zeros({n})\nfor i in range({n}):\n    {o}[i] = np.sum(v[i:i])",
            f"{o} = xp.zeros({n})\nfor i in range({n}):\n    {o}[i] = np.max(v[:i], initial=0.0)",
            f"{o} = xp.zeros({n})\nfor i in range({n}):\n    {o}[i] = np.sum(x[i, {d}:] ** 2) + v[i]",
            f"{o} = np.einsum('ij->j', x[:0])", f"{o} = np.outer(v[:0], v).sum(0)", f"{o} = x[:0].reshape(0, -1)",
            f"{o} = [v[i] for i in range({n}) if i > {n}]\n{o} = xp.array({o} + [0.0])",
        ])

    def sorts(self) -> str:
        o, n = self.fresh(), self.n
        r = self.pick(ROWS)
        e = self.pick(SORTR).format(r=r)
        whole = self.pick(SORTR).format(r=self.pick(["np.where(v > 1.0, np.nan, np.round(v))",
                                                    "np.round(v * 2) / 2", "np.where(m, np.nan, v)"]))
        return self.pick([self._loop_of(o, e, n), f"{o} = {whole}"])

    def uniques(self) -> str:
        o, n = self.fresh(), self.n
        return self.pick([
            f"{o} = np.unique(np.array(edges)[:, 0], return_counts=True)[1]",
            (f"u{o}, inv{o} = np.unique(np.array(edges)[:, 1] % {n}, return_inverse=True)\n"
             f"{o} = xp.zeros(len(u{o}))\nfor i, j in enumerate(inv{o}):\n    {o}[j] += v[i % {n}]"),
            (f"u{o}, first{o} = np.unique([a % {n} for a, b in edges], return_index=True)\n{o} = v[u{o}] * first{o}"),
            f"{o} = np.unique(np.round(v))", f"{o} = np.unique(ix, return_counts=True)[1]",
            (f"u{o}, i{o}, inv{o}, c{o} = np.unique(np.array([b % {n} for a, b in edges]), return_index=True, "
             f"return_inverse=True, return_counts=True)\n{o} = v[u{o}] * c{o} + v[i{o}] + inv{o}.sum()"),
            f"{o} = np.unique(x.round(), axis=0).sum(0)",
            f"{o} = xp.array([np.sum(v[np.array(edges)[:, 0] % {n} == u]) for u in np.unique(np.array(edges)[:, 0] % {n})])",
        ])

    def boolidx(self) -> str:
        o, n = self.fresh(), self.n
        sel = f"np.array([i % 3 != 1 for i in range({n})])"
        return self.pick([
            f"{o} = x[True]", f"{o} = x[False]", f"{o} = x[None, ...]", f"{o} = v[None, :, None]",
            f"{o} = x[..., None][:, 0]", f"{o} = x[np.array(True)]", f"{o} = x[True, 0]",
            f"{o} = x.copy()\n{o}[m] *= 2", f"{o} = v.copy()\n{o}[v > 0] = 0.0", f"{o} = v.copy()\n{o}[m] += v[m]",
            f"t{o} = v[{sel}]\n{o} = np.sum(t{o} * t{o}[::-1])", f"{o} = x[{sel}].sum(0)",
            f"{o} = x[m]", f"{o} = np.sum(v[v > 0])", f"{o} = v.copy()\n{o}[True] = 1.5",
            f"{o} = x.copy()\n{o}[{sel}] = x[0]", f"{o} = x.copy()\n{o}[:, x[0] > 0] = 0.5",
            f"{o} = xp.zeros({n})\nfor i in range({n}):\n    {o}[i, None] = v[i] * 2",
            f"{o} = xp.zeros(({n}, 1))\nfor i in range({n}):\n    {o}[i, True] = v[i] + 1",
            f"{o} = np.where(m[:, None], x, 0.0)[{sel}]",
        ])

    def outwhere(self) -> str:
        o, n, d = self.fresh(), self.n, self.d
        return self.pick([
            f"{o} = xp.zeros_like(v)\nnp.multiply(v, 2, out={o}, where=m)",
            f"{o} = v.copy()\nnp.add({o}, 1, out={o}, where={o} > 0)",
            f"{o} = xp.ones({n})\nnp.exp(v, out={o}, where=v < 0)",
            f"{o} = xp.zeros(({n}, {d}))\nnp.maximum(x, 0.5, out={o})",
            f"{o} = xp.zeros({n}, dtype=np.float32)\nnp.add(s, 1, out={o})",
            f"{o} = np.sum(x, axis=1, where=x > 0)", f"{o} = np.max(x, axis=0, where=x < 1, initial=-5.0)",
            f"{o} = np.mean(x, axis=1, where=x > -9)", f"{o} = xp.zeros({d})\nnp.sum(x, axis=0, out={o})",
            f"{o} = x.copy()\nnp.negative({o}[:, 0], out={o}[:, 0])", f"{o} = v.copy()\nnp.sin({o}[1:], out={o}[1:])",
            f"{o} = v.copy()\nnp.add({o}[1:], {o}[:-1], out={o}[1:])", f"{o} = v.copy()\nnp.add({o}[:-1], {o}[1:], out={o}[:-1])",
            f"{o} = np.add(v, 1, where=m, out=v.copy())",
            f"{o} = xp.zeros({n})\nfor i in range({n}):\n    np.add({o}[i:i + 1], v[i], out={o}[i:i + 1])",
            f"{o} = xp.zeros({n})\nfor i in range(1, {n}):\n    np.add({o}[i - 1:i], v[i], out={o}[i:i + 1])",
            f"{o} = v.copy()\nnp.multiply({o}, {o}[::-1], out={o})", f"{o} = xp.zeros(({n}, {d}))\nnp.add.reduce(x[None], axis=0, out={o})",
            f"{o} = x.copy()\nnp.copyto({o}, 0.25, where=x < 0)", f"{o} = np.clip(v, -0.5, 0.5, out=v.copy())",
            f"{o} = xp.zeros({n}, dtype=np.int64)\nnp.floor_divide(ix[:{n}] if len(ix) >= {n} else ix[:1], 2, out={o}[:min(len(ix), {n})] if len(ix) >= {n} else {o}[:1])",
            f"{o} = xp.empty({d})\nnp.max(x, axis=0, out={o})", f"{o} = np.add.reduce(x, axis=1, where=m[:, None], initial=0.5)",
        ])

    def viewviews(self) -> str:
        o, n, d = self.fresh(), self.n, self.d
        return self.pick([
            f"{o} = x.copy()\nw1 = {o}[1:]\nw2 = w1[:, ::-1]\nw2[0] = 9.0",
            f"{o} = x.copy()\n{o}.T[0] += 1", f"{o} = v.copy()\nw1 = {o}[::-1]\nw2 = w1[1:3]\nw2 *= 2",
            f"{o} = x.copy()\nw1 = {o}.reshape(-1)\nw1[::3] = 0", f"{o} = x.copy()\nw1 = {o}[:, 1:]\nw1[w1 > 0] = 0",
            f"{o} = x.copy()\nw1 = {o}[1:]\nw1 += {o}[:-1]",
            f"{o} = v.copy()\nw1 = {o}[1:]\nfor i in range({n} - 1):\n    w1[i] = w1[i] * 0.5 + {o}[i]",
            f"{o} = x.copy()\nw1 = {o}.T\nfor j in range({d}):\n    w1[j] *= (j + 1)",
            f"{o} = x.copy()\nw1 = {o}[::2]\nw2 = w1[:, :1]\nfor i in range(len(w2)):\n    w2[i] += v[i]",
            f"{o} = v.copy()\nw1 = {o}[1:]\n{o}[2:] += 1\n{o} = w1 * 1",
            f"{o} = x.copy()\nw1 = {o}[None]\nw2 = w1[0, ::-1, :]\nw2[:1] = -1.0",
            f"{o} = v.copy()\nw1 = {o}[::2]\nw2 = w1[::-1]\nfor i in range(len(w2)):\n    w2[i] = w2[i] + i",
            f"{o} = x.copy()\nw1 = {o}[:, 0]\nw2 = {o}[0]\nw1 += 1\nw2 *= 2",
            f"{o} = xp.zeros(({n}, {d}))\nfor i in range({n}):\n    row = {o}[i]\n    row[:] = x[i] * 2\n    row[::-1] += v[i]",
            f"{o} = x.copy()\nw1 = {o}.ravel()\nw1[{d}:] = w1[:-{d}]",
            f"{o} = v.copy()\nw1 = {o}[:]\nw1[...] = w1[::-1]",
        ])

    def maskreads(self) -> str:
        """x[mask] reduced, after entrywise work, per row in a loop, whole, by rows, and
        written back through the same mask."""
        o, n = self.fresh(), self.n
        pos = self.i(0, 2) == 0
        sel = self.pick(POS if pos else SEL)
        e = self.pick(ENTRY_POS if pos else ENTRY).format(s=sel)
        whole = self.pick(POS[1:] if pos else SEL_WHOLE)
        ew = self.pick(ENTRY_POS if pos else ENTRY).format(s=whole)
        return self.pick([
            self._loop_of(o, self.pick(MRED).format(e=e), n), f"{o} = {self.pick(MRED).format(e=ew)}",
            f"{o} = {self.pick(MROWS)}",
            f"{o} = x.copy()\nfor i in range({n}):\n    r = {o}[i]\n    r[r > 0] = {self.pick(ENTRY).format(s='r[r > 0]')}",
            f"{o} = v.copy()\n{o}[m] = {self.pick(ENTRY).format(s='v[m]')}",
            f"t{o} = v[v < 0.5]\nt{o} *= 2\nt{o} = t{o} + 1\n{o} = np.sum(t{o} ** 2)",
            f"{o} = x.copy()\n{o}[:, x[0] > 0] *= 2", f"{o} = x.copy()\n{o}[:, x[0] < 0] = v[:, None]",
            f"{o} = x.copy()\n{o}[m, :] = 1.0",
        ])

    def rconcat(self) -> str:
        """np.r_ / np.c_ of traced items, scalars of several kinds and ranges."""
        o, n = self.fresh(), self.n
        return self.pick([f"{o} = {self.pick(RCAT)}",
                          self._loop_of(o, "np.max(np.r_[0.0, x[i]])", n),
                          self._loop_of(o, "np.sum(np.r_[x[i], v[i]] ** 2)", n),
                          self._loop_of(o, "np.c_[x[i], x[i]].sum(1)", n)])

    NEW: ClassVar[dict[str, int]] = {
        "cplx": 3, "halfs": 3, "overflow": 3, "empties": 2, "sorts": 3, "uniques": 2, "boolidx": 3,
        "outwhere": 3, "viewviews": 3, "maskreads": 4, "rconcat": 2}
    STYLES: ClassVar[dict[str, int]] = {**SemGen.STYLES, **NEW}
    FIRST: ClassVar[dict[str, int]] = NEW
    KEEP_FIRST: ClassVar[bool] = True
