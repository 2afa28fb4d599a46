"""More styles for the loop fuzzer (tests/fuzz_loops.py): NumPy's semantics where users go
beyond float64, inside loops and programs.

Integer and bool buffers written in loops (floats written into int buffers truncate, as
NumPy's casting on assignment does; `//`, `%` and `**` with negative ints; counts and flags
accumulated), dtype promotion through loops as NumPy 2's NEP 50 rules say (float32 arrays
and their scalars with Python floats stay float32, with NumPy float64 scalars become float64;
int arrays with Python floats become float64; an accumulator that starts as a Python number
takes the dtype of what is added to it), reductions with `keepdims`, axis tuples and negative
axes on 3-D values in loops, `np.linalg` per item (solve, inv, det, slogdet, norm with ord,
cholesky, eigvalsh, matrix_power, pinv), sorting / argmax / argsort / take_along_axis per row
(ties in integer keys too), `np.where` / `np.select` / `np.clip` chains with mixed dtypes,
and complex values (made from the float inputs, read back as real ones).

Each block is run by NumPy as drawn (a block NumPy rejects, or whose values are not finite, is
drawn again), so NumPy's values and dtypes are the oracle; vecgrad must match them or raise a
typed error naming the program's line.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np
from fuzz_calls import CallGen

# integer expressions of the int inputs (ix in [0, n), jx in [-n, n)) and of a loop's i
INT_E = ["ix[i] // 3", "jx[i] % 4", "-jx[i] // 2", "jx[i] % -3", "ix[i] ** 2", "2 ** (ix[i] % 4)",
         "(jx[i] * ix[i]) % 5", "np.abs(jx[i]) // 2", "ix[i] * 3 - jx[i]", "jx[i] // (ix[i] % 3 + 1)",
         "np.floor_divide(jx[i], -2)", "np.fmod(jx[i], 3)", "max(ix[i], 2)", "-(jx[i] ** 3)",
         "np.right_shift(ix[i], 1)", "ix[i] & 3", "jx[i] ^ 1", "np.sign(jx[i])"]
# float32-typed expressions of s (float32) mixed with Python / NumPy scalars, by NEP 50
F32_E = ["s[i] * 2.5", "s[i] + 1", "s[i] / 3", "s[i] ** 2", "np.float32(0.5) * s[i]",
         "s[i] - c", "np.tanh(s[i]) * 1.5", "abs(s[i]) + 0.25", "s[i] * True",
         "np.float64(0.5) * s[i]", "s[i] * x[i, 0]", "np.sqrt(s[i] ** 2 + 1)", "s[i] // 0.5",
         "s[i] % 0.7", "-s[i]", "np.maximum(s[i], 0.1)", "np.float16(2) * s[i]",
         "s[i].astype(np.float64) * 0.5", "np.round(s[i], 2)", "s[i] * np.int64(3)",
         "s[i] * np.int8(3)", "np.clip(s[i], -0.5, 0.5)"]
# reductions of a 3-D value T (n, d, d) or its items T[i] (d, d)
AXES = ["(0, -1)", "-1", "-2", "(-2, -1)", "(1, 0)", "None", "0", "(0, 1, 2)", "(-3, -1)"]
RED3 = ["np.sum({T}, axis={ax}, keepdims={kd})", "np.mean({T}, axis={ax}, keepdims={kd})",
        "np.max({T}, axis={ax}, keepdims={kd})", "np.min({T}, axis={ax}, keepdims={kd})",
        "np.prod(np.tanh({T}) + 1.5, axis={ax}, keepdims={kd})", "{T}.std(axis={ax}, keepdims={kd})",
        "np.var({T}, axis={ax}, ddof=0, keepdims={kd})", "np.linalg.norm({T}, axis={ax2}, keepdims={kd})",
        "np.sum({T} ** 2, {ax}, keepdims={kd})", "{T}.sum(axis={ax}, keepdims={kd}) * 0.5",
        "np.logaddexp.reduce({T}, axis={ax1}, keepdims={kd})", "np.add.reduce({T}, axis={ax}, keepdims={kd})",
        "np.amax({T}, {ax}, keepdims={kd})", "np.nansum({T}, axis={ax}, keepdims={kd})",
        "np.any({T} > 0.5, axis={ax}, keepdims={kd})", "np.count_nonzero({T} > 0, axis={ax1})",
        "np.sum({T}, axis={ax}, where={T} > 0, keepdims={kd})", "np.max({T}, axis={ax}, initial=-1.0, keepdims={kd})"]
# matrices: A[i] is SPD (d, d), B[i] a general one, b a vector of length d
LINALG = ["np.linalg.solve({A}, {b})", "np.linalg.inv({A}) @ {b}", "np.linalg.det({A})",
          "np.linalg.slogdet({A})[1]", "np.linalg.slogdet({B})[0] * np.linalg.slogdet({B})[1]",
          "np.linalg.norm({B}, ord={om})", "np.linalg.norm({b}, ord={ov})",
          "np.linalg.cholesky({A}).sum()", "np.linalg.eigvalsh({A})", "np.linalg.matrix_power({B}, 3)",
          "np.linalg.matrix_power({A}, -1) @ {b}", "np.linalg.pinv({B}) @ {b}", "np.trace({A})",
          "np.linalg.solve({A}, np.stack([{b}, {b} * 2.0], axis=-1))", "np.linalg.det({B})",
          "np.linalg.inv({B}).sum(0)", "np.linalg.norm({B}, axis=0, ord={ov})",
          "np.linalg.norm({B}, ord={om}, keepdims=True)", "np.linalg.eigh({A})[0]",
          "np.linalg.svd({B}, compute_uv=False)", "np.linalg.lstsq({A}, {b}, rcond=None)[0]",
          "np.linalg.multi_dot([{A}, {B}, {b}])", "np.vdot({b}, {A} @ {b})"]
ORDS_V = ["None", "1", "2", "np.inf", "-np.inf", "3", "0.5", "0", "-1"]
ORDS_M = ["None", "'fro'", "'nuc'", "1", "-1", "2", "-2", "np.inf", "-np.inf"]
SORTS = ["np.sort({r})", "np.argsort({r})", "np.argsort({r}, kind='stable')", "np.argmax({r})",
         "np.argmin({r})", "{r}[np.argsort({r})]", "np.sort({r})[::-1][:2]",
         "np.take_along_axis({R}, np.argsort({R}, axis=-1), axis=-1)", "np.argsort({R}, axis=0)",
         "np.argmax({R}, axis=-1)", "np.argmin({R}, axis=0, keepdims=True)", "np.sort({R}, axis=-2)",
         "np.argsort({K}, kind='stable')", "np.sort({K})", "np.argmax({K})", "np.argmin({K})",
         "np.argsort(-{r})", "np.searchsorted(np.sort({r}), {r2})", "np.partition({r}, 1)[1]",
         "np.max({R}, axis=-1) - np.take_along_axis({R}, np.argmin({R}, axis=-1)[:, None], axis=-1)[:, 0]",
         "np.lexsort(({r}, {K}))", "np.sort({K}, kind='stable')[::-1]", "np.median({R}, axis=-1)",
         "np.percentile({r}, 30)", "np.quantile({R}, [0.25, 0.75], axis=0)"]
SELECTS = ["np.where({r} > 0, {r}, 0.1 * {r})", "np.where(m[i], {r}, -{r})",
           "np.where({r} > 0.5, 1, 0.5)", "np.where({r} > 0, ix[i], 0)", "np.where(m[i], s[i], 0.5)",
           "np.where({r} > 0, s[i], x[i, 0])", "np.select([{r} > 1, {r} < -1], [{r} ** 2, -{r}], {r})",
           "np.select([{r} > 0], [{r}], default=0.25)", "np.select([{r} > 0, {r} > -1], [1, 2], 3)",
           "np.clip({r}, -0.5, 0.5)", "np.clip({r}, 0.5, -0.5)", "np.clip({r}, {r2}, {r2} + 0.3)",
           "np.clip(ix[i], 0, 2.5)", "np.clip(s[i], 0, np.float64(1))", "np.clip({r}, None, c)",
           "np.where(np.clip({r}, -1, 1) > 0.2, np.where({r} > 0.8, {r}, 0.8), np.clip({r}, -0.2, 0.2))",
           "np.where({r} > 0, np.where({r2} > 0, 1.0, 2.0), np.where({r2} > 0, 3.0, {r}))",
           "np.piecewise({r}, [{r} < 0, {r} >= 0], [lambda t: t ** 2, lambda t: t])",
           "np.heaviside({r}, 0.5) * {r}", "np.copysign({r}, {r2})", "np.where(True, {r}, 0)",
           "np.where({r} != {r}, 0.0, {r})", "np.nan_to_num({r} / ({r} > -5))"]
COMPLEX = ["np.abs({z})", "({z} * np.conj({z})).real", "np.angle({z} + 2.0)", "{z}.imag * {z}.real",
           "np.abs(np.exp(1j * {r}) + {r})", "np.real({z} ** 2)", "np.abs({z} @ {z})",
           "np.abs(np.fft.fft({r}))", "np.fft.ifft(np.fft.fft({r})).real", "np.abs(np.sqrt({z}))",
           "np.abs(1 / ({z} + 3.0))", "np.abs({z}).sum() * np.ones(2)", "np.real(np.sum({z} * {z}))",
           "np.abs({z}.conj().T)", "np.abs(np.linalg.det(np.outer({z}, {z}) + 2 * np.eye(len({z}))))",
           "np.abs(np.cumsum({z}))", "np.abs({z}[::-1] - {z})", "np.abs(np.exp({z} * 0.5))",
           "np.linalg.norm({z})", "np.abs(np.prod({z} * 0.5 + 1))"]


class SemGen(CallGen):
    """fuzz_calls.CallGen with the semantic styles: int / bool buffers, NEP 50 promotion in
    loops, reductions over axis tuples, per-item linalg, per-row sorting, select / clip
    chains with mixed dtypes, complex values."""

    def _loop_of(self, o: str, e: str, n: int) -> str:
        """e(i) for i in range(n): as a buffer of NumPy's dtype, a comprehension or an
        accumulator (the forms that carry a dtype differently)."""
        form = self.pick(["buf", "comp", "acc", "acc0", "list"])
        if form == "comp":
            return f"{o} = xp.array([{e} for i in range({n})])"
        if form == "list":
            return f"l{o} = []\nfor i in range({n}):\n    l{o}.append({e})\n{o} = np.stack(l{o})"
        if form in ("acc", "acc0"):
            init = "0" if form == "acc0" else self.pick(["0.0", "np.float32(0)", "False"])
            return f"{o} = {init}\nfor i in range({n}):\n    {o} = {o} + {e}"
        val = eval(e, {**self.ns, "i": 0})  # (our own expression: its NumPy dtype and shape)
        a = np.asarray(val)
        return (f"{o} = xp.zeros(({n},) + {a.shape}, dtype=np.{a.dtype.name})\n"
                f"for i in range({n}):\n    {o}[i] = {e}")

    def intbufs(self) -> str:
        """Int and bool buffers written in loops (floats written in truncate)."""
        o, n = self.fresh(), self.n
        L = len(self.inputs["ix"])
        e = self.pick(INT_E)
        return self.pick([
            self._loop_of(o, e, L),
            f"{o} = xp.zeros({n}, dtype=np.int64)\nfor i in range({n}):\n    {o}[i] = x[i, 0] * 3.0",
            f"{o} = xp.zeros({n}, dtype=np.int32)\nfor i in range({n}):\n    {o}[i] += v[i] * 2.5",
            f"{o} = xp.ones({n}, dtype=np.int64)\nfor i in range({L}):\n    {o}[ix[i]] += 1",
            f"{o} = xp.zeros({n}, dtype=bool)\nfor i in range({n}):\n    {o}[i] = x[i, 0] > v[i]",
            f"{o} = xp.zeros({n}, dtype=bool)\nfor i in range({L}):\n    {o}[ix[i]] = True",
            (f"{o} = xp.zeros({n}, dtype=np.int64)\nfor i in range({L}):\n"
             f"    {o}[ix[i]] = max({o}[ix[i]], {e})"),
            (f"{o} = xp.zeros({n})\nfor i in range({L}):\n    {o}[ix[i] % {n}] += ({e}) * 0.5"),
            f"{o} = xp.arange({n})\nfor i in range({n}):\n    {o}[i] = {o}[i] // 2 + (jx[i % {L}] % 3)",
            f"{o} = np.zeros({n}, dtype=np.uint8)\nfor i in range({n}):\n    {o}[i] = i * 37 % 256",
            f"{o} = xp.zeros({n}, dtype=np.int64)\nfor i in range({n}):\n    {o}[i] = -v[i] * 4.0",
            f"{o} = (xp.zeros({n}, dtype=np.int64) + ix[:1])\nfor i in range({n}):\n    {o}[i] *= 3\n{o} = {o} / 2",
            f"{o} = m.copy()\nfor i in range({n}):\n    {o}[i] = {o}[i] ^ (v[i] > 0)",
            f"{o} = xp.zeros({n})\nfor i in range({n}):\n    {o}[i] = m[i] + m[i] * 0.5 + m[i] * m[i]",
            f"{o} = sum(m[i] for i in range({n})) + sum(ix[i] % 2 == 0 for i in range({L}))",
            f"{o} = np.cumsum(m) * x[:, 0] + np.cumsum(ix % 3)[:1]",
            f"{o} = [{e} for i in range({L})]\n{o} = np.array({o}) * 1.5",
        ])

    def promote(self) -> str:
        """NEP 50 in loops: float32 with Python / NumPy scalars, ints with floats."""
        o, n = self.fresh(), self.n
        e = self.pick(F32_E)
        return self.pick([
            self._loop_of(o, e, n),
            self._loop_of(o, f"({e}) * x[i]", n),
            f"{o} = 0.0\nfor i in range({n}):\n    {o} += s[i] * 2.0\n{o} = {o} * v",
            f"{o} = np.float32(0)\nfor i in range({n}):\n    {o} = {o} + v[i]",
            f"{o} = xp.zeros({n}, dtype=np.float32)\nfor i in range({n}):\n    {o}[i] = v[i] * 1e-3 + s[i]",
            f"{o} = s.copy()\nfor i in range({n}):\n    {o}[i] *= 2.5\n    {o}[i] += v[i]",
            f"{o} = s * c + ix[:{n}].sum() * 0.5 if len(ix) >= {n} else s * c",
            f"{o} = [s[i] * 2.0 for i in range({n})]\n{o} = np.array({o}) + np.float32(1)",
            f"{o} = 0\nfor i in range({n}):\n    {o} = {o} + ix[i % len(ix)] * s[i]",
            f"{o} = xp.zeros({n}, dtype=np.float32)\nfor i in range({n}):\n    {o}[i] = np.sum(x[i]) * s[i]",
            f"{o} = sum(s[i] for i in range({n})) * 3 + sum(x[i, 0] for i in range({n}))",
            f"{o} = s.astype(np.float16)\nfor i in range({n}):\n    {o}[i] = {o}[i] * 2 + 1",
        ])

    def axes(self) -> str:
        """Reductions with keepdims, axis tuples and negative axes, in loops and whole."""
        o, n = self.fresh(), self.n
        T = self.pick(["(x[:, :, None] * x[:, None, :])", "np.tanh(x[:, :, None] - W[None])"])
        red = self.pick(RED3)
        kd = self.pick(["True", "False"])
        whole = red.format(T=T, ax=self.pick(AXES), ax1=self.pick(["0", "-1", "-2", "1"]),
                           ax2=self.pick(["(1, 2)", "(-1, -2)", "-1", "0", "(0, -1)"]), kd=kd)
        item = red.format(T=f"{T}[i]", ax=self.pick(["(0, -1)", "-1", "-2", "(-2, -1)", "(1, 0)", "None", "0"]),
                          ax1=self.pick(["0", "-1"]), ax2=self.pick(["(0, 1)", "(-1, -2)", "-1", "0"]), kd=kd)
        return self.pick([f"{o} = {whole}", self._loop_of(o, item, n)])

    def linalg(self) -> str:
        """np.linalg per item of a batch of matrices, and whole."""
        o, n, d = self.fresh(), self.n, self.d
        A = f"(np.outer(x[i], x[i]) + W @ W.T + {d} * np.eye({d}))"
        # (well conditioned, determinants of either sign: central differences of a nearly
        # singular matrix cross det = 0, where slogdet's sign jumps)
        B = f"(0.3 * W + np.diag((2.0 + np.tanh(x[i])) * np.array({[1, -1] * 2}[:{d}])))"
        b = self.pick(["x[i]", "np.tanh(x[i])", "v[:" + str(d) + "] * 1.0" if n >= d else "x[i]"])
        e = self.pick(LINALG).format(A=A, B=B, b=b, om=self.pick(ORDS_M), ov=self.pick(ORDS_V))
        return self.pick([self._loop_of(o, e, n),
                          f"{o} = np.stack([{e} for i in range({n})]).sum(0)" if "slogdet({B})[0]" not in e
                          else f"{o} = sum({e} for i in range({n}))"])

    def rowsort(self) -> str:
        """Sorting, argmax and argsort per row (ties among integer keys too)."""
        o, n = self.fresh(), self.n
        e = self.pick(SORTS).format(r="x[i]", r2="np.cos(x[i])", R="(x + 0.1 * i)",
                                    K="(ix % 3)" if self.i(0, 1) else "(jx // 4)")
        return self.pick([self._loop_of(o, e, n),
                          f"{o} = " + self.pick(SORTS).format(r="v", r2="x[:, 0]", R="x", K="ix % 4")])

    def selects(self) -> str:
        """np.where / np.select / np.clip chains, scalars of mixed dtypes."""
        o, n = self.fresh(), self.n
        e = self.pick(SELECTS).format(r=self.pick(["x[i]", "v[i]", "np.tanh(x[i])"]),
                                      r2=self.pick(["x[i - 1]", "np.cos(x[i])", "v[i]"]))
        return self._loop_of(o, e, n)

    def complexes(self) -> str:
        """Complex values from the float inputs, read back as real ones."""
        o, n = self.fresh(), self.n
        z = self.pick(["(x[i] + 1j * np.cos(x[i]))", "(x[i] * (1 + 2j))", "np.exp(1j * x[i])",
                       "(x[i] + 0.5j)", "(1j * x[i] - W[0])", "(x[i] + 1j * s[i])"])
        e = self.pick(COMPLEX).format(z=z, r="x[i]")
        return self.pick([self._loop_of(o, e, n),
                          f"z{o} = x + 1j * np.tanh(x)\n{o} = np.abs(z{o} * z{o}.conj().T[:, :1].T)",
                          (f"z{o} = xp.zeros({n}, dtype=complex)\nfor i in range({n}):\n"
                           f"    z{o}[i] = x[i, 0] + 1j * v[i]\n{o} = np.abs(z{o}) + z{o}.real")])

    NEW: ClassVar[dict[str, int]] = {
        "intbufs": 3, "promote": 3, "axes": 2, "linalg": 2, "rowsort": 2, "selects": 2,
        "complexes": 2}
    STYLES: ClassVar[dict[str, int]] = {**CallGen.STYLES, **NEW}
    FIRST: ClassVar[dict[str, int]] = NEW
    KEEP_FIRST: ClassVar[bool] = True
