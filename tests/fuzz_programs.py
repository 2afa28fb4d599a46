"""A generator of random small NumPy programs, written the way users write them, for the
differential fuzzer (tests/test_fuzz_numpy.py).

A program is Python source: a function `f(x, y, s, k, m)` of a float64 matrix `x`, a float64
row `y`, a float32 matrix `s`, an int64 matrix `k` and a bool matrix `m`, made of a random
sequence of statements: elementwise ops (ufuncs, operators, Python scalars of every kind),
reductions with random axes and keepdims, basic and advanced indexing reads, reshapes and
transposes, concatenations, where/clip/maximum, dtype casts, buffers (`xp.zeros`,
`np.zeros_like`, `.copy()`) written in place through integer indices, slices, views, fancy
indices and `np.add.at`, `+=` on names and on views, swaps through temporaries, loops with
affine indices, comprehensions and `sum(...)` over rows, and a kernel passed as an argument.

Statements are drawn while the program runs eagerly in NumPy (inputs read-only, floating
errors raised), so only programs that NumPy runs cleanly are kept: a statement NumPy rejects
is drawn again. `draw` abstracts the source of choices, so the same generator serves
hypothesis (shrinking) and a plain seeded loop (tests/test_fuzz_numpy.py's `main`).
"""
from __future__ import annotations

import textwrap
import warnings
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

INPUTS = ("x", "y", "s", "k", "m")
MAX_SIZE = 64

PRELUDE = '''\
def kern(u):
    return np.tanh(u) * 1.5 + u

def apply(fn, u):
    return fn(u)
'''

UNARY = ["np.sin({})", "np.cos({})", "np.tanh({})", "np.exp(np.tanh({}))", "np.abs({})",
         "np.negative({})", "np.square({})", "np.sqrt(np.abs({}) + 1.0)",
         "np.log1p(np.abs({}))", "np.floor({})", "np.sign({})", "-{}", "abs({})",
         "{} ** 2", "{} ** 3", "np.arctan({})", "np.expm1(np.sin({}))", "np.round({})",
         "kern({})", "apply(np.sin, {})", "apply(kern, {})", "np.positive({})",
         "np.reciprocal(np.square({}) + 1.0)", "np.logaddexp({0}, 0.5)", "np.sinh(np.sin({}))"]
BINARY = ["{} + {}", "{} - {}", "{} * {}", "{} / (1.0 + {} ** 2)", "np.maximum({}, {})",
          "np.minimum({}, {})", "np.where({0} > {1}, {0}, {1})", "np.add({}, {})",
          "np.multiply({}, {})", "np.hypot({}, {})", "np.arctan2({}, {})",
          "np.where({1} < 0, {0}, 0.0)", "np.fmax({}, {})", "{} > {}", "{} == {}",
          "np.logical_and({} > 0, {} > 0)", "np.subtract({}, {})", "{0} * {1} - {1}"]
SCALARS = ["2", "-1", "0.5", "2.5", "True", "np.float32(1.5)", "np.float64(0.25)",
           "np.int64(3)", "3.0"]
SCALAR_OPS = ["{a} * {c}", "{c} - {a}", "{a} + {c}", "{a} / {c}", "{c} * {a} + 1",
              "np.maximum({a}, {c})", "np.clip({a}, -0.5, {c})", "{a} ** 2 * {c}"]
REDUCE = ["sum", "mean", "max", "min", "prod"]
CASTS = ["np.float32", "np.float64", "np.int64", "float", "int", "bool"]


class Sim:
    """Runs statements eagerly in NumPy: the environment after a prefix of the program."""

    def __init__(self, inputs: dict[str, np.ndarray]):
        self.inputs = inputs

    def run(self, lines: list[str]) -> dict[str, Any]:
        ns: dict[str, Any] = {"np": np, "xp": np}
        exec(PRELUDE, ns)  # noqa: S102 - the generated program is the point
        for name, v in self.inputs.items():
            a = v.copy()
            a.setflags(write=False)  # vecgrad's arguments are read-only: keep NumPy honest
            ns[name] = a
        with np.errstate(all="raise"), warnings.catch_warnings():
            warnings.simplefilter("error")
            exec("\n".join(lines), ns)  # noqa: S102
        return ns


def arrays_in(ns: dict[str, Any]) -> dict[str, np.ndarray]:
    """The array variables of a namespace (inputs, values v*, buffers b*, views w*)."""
    return {n: np.asarray(v) for n, v in ns.items()
            if (n in INPUTS or n[:1] in "vbwt" and n[1:].isdigit())
            and isinstance(v, (np.ndarray, np.generic))}


def ok(ns: dict[str, Any]) -> bool:
    for v in arrays_in(ns).values():
        if v.size > MAX_SIZE or v.ndim > 4 or v.dtype.kind not in "biuf":
            return False
        if v.dtype.kind == "f" and not (np.isfinite(v).all() and np.abs(v).max(initial=0) < 1e6):
            return False
        if v.dtype.kind in "iu" and np.abs(v).max(initial=0) > 10**6:
            return False
    return True


class Gen:
    """Draws one program. `draw(options)` picks one of a list; `integer(lo, hi)` is inclusive."""

    def __init__(self, draw: Callable[[list], Any], integer: Callable[[int, int], int],
                 inputs: dict[str, np.ndarray]):
        self.draw, self.integer = draw, integer
        self.sim = Sim(inputs)
        self.lines: list[str] = []
        self.ns = self.sim.run([])
        self.count = 0

    # ------------------------------------------------------------------ helpers
    def fresh(self, prefix: str = "v") -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def env(self, kinds: str = "biuf", writable: bool = False, min_ndim: int = 0):
        out = [(n, v) for n, v in arrays_in(self.ns).items() if v.dtype.kind in kinds
               and v.ndim >= min_ndim and (not writable or (isinstance(self.ns[n], np.ndarray)
                                                           and self.ns[n].flags.writeable))]
        return sorted(out, key=lambda t: t[0])

    def pick(self, kinds: str = "biuf", writable: bool = False, min_ndim: int = 0):
        e = self.env(kinds, writable, min_ndim)
        if not e:
            return None, None
        # favour floats and recent values, so programs chain
        e = [t for t in e if t[1].dtype.kind == "f"] * 2 + e + e[-3:] * 2
        return self.draw(e)

    def axis(self, ndim: int, none: bool = True):
        return self.draw(list(range(-ndim, ndim)) + ([None] if none else []))

    def slice_(self, n: int) -> str:
        kind = self.draw(["full", "range", "step", "rev", "neg"])
        if kind == "full":
            return ":"
        lo = self.integer(0, max(0, n - 1))
        hi = self.integer(lo, n)
        if kind == "range":
            return f"{lo}:{hi}"
        if kind == "step":
            return f"{lo}::{self.draw([2, 3])}"
        if kind == "rev":
            return "::-1" if self.integer(0, 1) else f"{hi}:{lo}:-1" if hi > lo else "::-2"
        return f"-{max(1, n - lo)}:"

    def index(self, shape: tuple, advanced: bool = False) -> str:
        """A random index expression for an array of this shape."""
        if not shape:
            return self.draw(["...", "()", "None"])
        nd = self.integer(1, len(shape))
        parts = []
        for d in range(nd):
            n = shape[d]
            kind = self.draw(["int", "slice", "slice", "int"] + (["fancy"] if advanced else []))
            if kind == "int" and n > 0:
                parts.append(str(self.integer(-n, n - 1)))
            elif kind == "fancy" and n > 0:
                idx = [self.integer(-n, n - 1) for _ in range(self.integer(1, 4))]
                parts.append(self.draw([str(idx), f"np.array({idx})"]))
            else:
                parts.append(self.slice_(n))
        if self.integer(0, 5) == 0:
            parts = (["..."] + parts[1:]) if len(parts) > 1 else parts + ["..."]
        if self.integer(0, 8) == 0:
            parts.insert(self.integer(0, len(parts)), "None")
        return ", ".join(parts)

    def rhs(self, shape: tuple, kinds: str = "biuf") -> str:
        """A value that broadcasts to `shape`: a scalar, a variable, or one read from one."""
        fits = [n for n, v in self.env(kinds)
                if _broadcasts(v.shape, shape)]
        choice = self.draw(["scalar", "var", "var", "expr"] if fits else ["scalar"])
        if choice == "scalar":
            return self.draw(SCALARS)
        name = self.draw(fits)
        return name if choice == "var" else self.draw(UNARY[:12]).format(name)

    # ------------------------------------------------------------------ statements
    def s_unary(self):
        a, _ = self.pick()
        return f"{self.fresh()} = {self.draw(UNARY).format(a)}"

    def s_binary(self):
        a, va = self.pick()
        fits = [n for n, v in self.env() if _compatible(v.shape, va.shape)]
        b = self.draw(fits)
        if self.integer(0, 1):
            a, b = b, a
        return f"{self.fresh()} = {self.draw(BINARY).format(a, b)}"

    def s_scalar(self):
        a, _ = self.pick()
        return f"{self.fresh()} = " + self.draw(SCALAR_OPS).format(a=a, c=self.draw(SCALARS))

    def s_reduce(self):
        a, v = self.pick()
        ax = self.axis(v.ndim) if v.ndim else None
        kd = self.draw([False, True])
        r = self.draw(REDUCE)
        if self.integer(0, 2) == 0:
            return f"{self.fresh()} = {a}.{r}(axis={ax}, keepdims={kd})"
        return f"{self.fresh()} = np.{r}({a}, axis={ax}, keepdims={kd})"

    def s_read(self):
        a, v = self.pick(min_ndim=1)
        if a is None:
            return None
        adv = self.integer(0, 2) == 0
        return f"{self.fresh(self.draw(['v', 'w']))} = {a}[{self.index(v.shape, adv)}]"

    def s_shape(self):
        a, v = self.pick()
        n = v.size
        opts = [f"{a}.reshape(-1)", f"{a}.T", f"{a}.ravel()", f"np.expand_dims({a}, 0)",
                f"np.squeeze({a})", f"{a}[None]", f"np.atleast_2d({a})"]
        if v.ndim >= 2:
            perm = list(range(v.ndim))[::-1]
            opts += [f"np.swapaxes({a}, 0, 1)", f"np.transpose({a}, {tuple(perm)})",
                     f"{a}.reshape({v.shape[0]}, -1)", f"np.moveaxis({a}, 0, -1)"]
        for d in (2, 3):
            if n % d == 0 and n:
                opts.append(f"{a}.reshape({d}, {n // d})")
                opts.append(f"np.reshape({a}, (-1, {d}))")
        opts.append(f"np.broadcast_to({a}, (2,) + {a}.shape)")
        return f"{self.fresh(self.draw(['v', 'w']))} = {self.draw(opts)}"

    def s_concat(self):
        a, va = self.pick(min_ndim=1)
        if a is None:
            return None
        same = [n for n, v in self.env() if v.ndim == va.ndim]
        b = self.draw(same)
        f = self.draw([f"np.concatenate([{a}, {b}], axis={self.axis(va.ndim, False)})",
                       f"np.stack([{a}, {b}], axis={self.axis(va.ndim + 1, False)})",
                       f"np.concatenate(({a}, {a}[::-1]))", f"np.vstack([{a}, {b}])",
                       f"np.hstack([{a}, {b}])"])
        return f"{self.fresh()} = {f}"

    def s_misc(self):
        a, v = self.pick()
        c, _ = self.pick("b")
        opts = [f"np.clip({a}, -0.5, 0.75)", f"np.where({c}, {a}, 0.0)" if c else None,
                f"np.where({a} > 0, {a}, 2 * {a})", f"{a}.astype({self.draw(CASTS)})",
                f"np.asarray({a}, dtype={self.draw(CASTS)})", f"np.cumsum({a})",
                f"np.dot({a}.ravel(), {a}.ravel())", f"np.flip({a})", f"np.roll({a}, 1)",
                f"np.sum({a} * {a}[..., ::-1])", f"np.outer({a}, {a})[0]",
                f"{a} @ np.ones({a}.shape[-1:])" if v.ndim else None,
                f"np.einsum('...i,...i->...', {a}, {a})" if v.ndim else None,
                f"np.mean({a}, axis=0) - {a}" if v.ndim else None]
        return f"{self.fresh()} = {self.draw([o for o in opts if o])}"

    def s_buffer(self):
        a, v = self.pick()
        shape = v.shape
        dt = self.draw(["", ", dtype=np.float32", ", dtype=np.int64", ", dtype=bool"] +
                       [""] * 4)
        opts = [f"xp.zeros({shape}{dt})", f"np.zeros_like({a})", f"{a}.copy()",
                f"np.array({a})", f"xp.ones({shape}{dt})", f"np.full_like({a}, 0.5)",
                f"xp.zeros(({self.integer(1, 5)}, {self.integer(1, 4)}){dt})",
                f"np.copy({a})", f"xp.zeros_like({a}, dtype=float)"]
        return f"{self.fresh('b')} = {self.draw(opts)}"

    def s_write(self):
        b, vb = self.pick(writable=True)
        if b is None:
            return self.s_buffer()
        idx = self.index(vb.shape, advanced=self.integer(0, 3) == 0)
        sel = _sel_shape(vb.shape, idx)
        if sel is None:
            return None
        op = self.draw(["=", "=", "+=", "-=", "*="])
        return f"{b}[{idx}] {op} {self.rhs(sel)}"

    def s_name_inplace(self):
        b, vb = self.pick(writable=True)
        if b is None:
            return None
        op = self.draw(["+=", "*=", "-=", "/="])
        return f"{b} {op} {self.rhs(vb.shape)}"

    def s_view_write(self):
        b, vb = self.pick(writable=True, min_ndim=1)
        if b is None:
            return None
        w = self.fresh("w")
        view = self.draw(["::2", "1:", "::-1", ":", "..., 0", "-2:"])
        sel = _sel_shape(vb.shape, view)
        if sel is None:
            return None
        if not sel:
            return f"{w} = {b}[{view}]\n{b}[{view}] = {self.rhs(sel)}"
        idx = self.index(sel)
        sel2 = _sel_shape(sel, idx)
        if sel2 is None:
            return None
        return f"{w} = {b}[{view}]\n{w}[{idx}] {self.draw(['=', '+='])} {self.rhs(sel2)}"

    def s_swap(self):
        b, vb = self.pick(writable=True, min_ndim=1)
        if b is None or vb.shape[0] < 2:
            return None
        i, j = self.integer(0, vb.shape[0] - 1), self.integer(0, vb.shape[0] - 1)
        t = self.fresh("t")
        cp = self.draw(["", ".copy()"])
        return f"{t} = {b}[{i}]{cp}\n{b}[{i}] = {b}[{j}]\n{b}[{j}] = {t}"

    def s_add_at(self):
        b, vb = self.pick(writable=True, min_ndim=1)
        if b is None:
            return None
        n = vb.shape[0]
        idx = [self.integer(0, n - 1) for _ in range(self.integer(1, 5))]
        sel = (len(idx),) + vb.shape[1:]
        return self.draw([f"np.add.at({b}, {idx}, {self.rhs(sel)})",
                          f"{b}[{idx}] += {self.rhs(sel)}"])

    def s_loop(self):
        a, va = self.pick("f", min_ndim=1)
        if a is None:
            return None
        n = va.shape[0]
        lo = self.integer(0, n - 1)
        hi = self.integer(lo + 1, n)
        body = self.draw(UNARY[:8] + ["kern({})"]).format(f"{a}[i]")
        kind = self.draw(["acc", "sum", "comp", "buf", "rec", "shift", "rev", "map"])
        v = self.fresh()
        if kind == "acc":
            return (f"{v} = 0.0\nfor i in range({lo}, {hi}):\n"
                    f"    {v} = {v} + {body} * {self.draw(['1.0', 'i', '0.5'])}")
        if kind == "sum":
            return f"{v} = sum({body} for i in range({lo}, {hi}))"
        if kind == "comp":
            return f"{v} = np.stack([{body} for i in range({lo}, {hi})])"
        if kind == "map":
            return f"{v} = xp.array(list(map(kern, [{a}[i] for i in range({lo}, {hi})])))"
        b = self.fresh("b")
        init = f"{b} = np.zeros_like({a})\n"
        if kind == "buf":
            op = self.draw(["=", "+=", "-="])
            return init + f"for i in range({lo}, {hi}):\n    {b}[i] {op} {body}"
        if kind == "rec":
            return (f"{b} = {a}.copy()\nfor i in range({max(lo, 1)}, {hi}):\n"
                    f"    {b}[i] = {b}[i - 1] * 0.5 + {body}")
        if kind == "shift":
            return init + (f"for i in range({lo}, {hi} - 1):\n"
                           f"    {b}[i + 1] += {body}")
        return init + f"for i in range({lo}, {hi}):\n    {b}[{n - 1} - i] = {body}"

    def s_overlap(self):
        """Writes whose value reads the same buffer (NumPy copies the overlap first)."""
        b, vb = self.pick(writable=True, min_ndim=1)
        if b is None or vb.shape[0] < 2:
            return None
        return self.draw([f"{b}[1:] = {b}[:-1]", f"{b}[:-1] += {b}[1:]",
                          f"{b}[::2] += {b}[1::2][:{b}[::2].shape[0]]",
                          f"{b}[::-1] = {b}", f"{b}[0] = {b}[-1] * 2",
                          f"{b}[..., 0] = {b}[..., -1]", f"{b} += {b}[::-1]"])

    def s_view2(self):
        """Writes through transposed, reshaped and chained views, and 2-D element swaps."""
        b, vb = self.pick(writable=True, min_ndim=2)
        if b is None:
            return None
        n0, n1 = vb.shape[0], vb.shape[1]
        i, j = self.integer(0, n0 - 1), self.integer(0, n1 - 1)
        w = self.fresh("w")
        t = self.fresh("t")
        return self.draw([
            f"{w} = {b}.T\n{w}[{j}] = {self.rhs(vb.T.shape[1:])}",
            f"{b}[{i}][{j}] = {self.rhs(())}",
            f"{b}[{i}][{j}:] += {self.rhs(vb.shape[1:])}",
            f"{w} = {b}.reshape(-1)\n{w}[{self.integer(0, vb.size - 1)}] = 1.5",
            (f"{t} = {b}[{i}, {j}]\n{b}[{i}, {j}] = {b}[{n0 - 1 - i}, {n1 - 1 - j}]\n"
             f"{b}[{n0 - 1 - i}, {n1 - 1 - j}] = {t}"),
            f"{w} = {b}[:, {j}]\n{w} *= 2\n{w}[0] = {w}[-1]",
        ])

    def s_mask(self):
        """Boolean masks: reads (data-dependent shapes) and writes (a where)."""
        a, _ = self.pick("f", min_ndim=1)
        if a is None:
            return None
        b, _ = self.pick(writable=True, min_ndim=1)
        opts = [f"{self.fresh()} = {a}[{a} > 0]", f"{self.fresh()} = np.sum({a}[m])",
                f"{self.fresh()} = {a}[np.nonzero({a} > 0)]"]
        if b is not None:
            opts += [f"{b}[{b} > 0.5] = 0.0", f"{b}[{b} < 0] *= -1"]
        return self.draw(opts)

    def s_intops(self):
        a, _ = self.pick("iub")
        c, _ = self.pick("f")
        return f"{self.fresh()} = " + self.draw([
            f"{a} // 2", f"{a} % 3", f"np.abs({a}) + {a}", f"{a}.sum()", f"{a}.mean()",
            f"{a} * 0.5", f"{a} + True", f"np.maximum({a}, 1)", f"{a}.astype(float) * {c}",
            f"{c} * {a}", f"np.where({a} > 0, {c}, {a})", f"{a} ** 2", f"-{a}" if
            np.asarray(self.ns[a]).dtype.kind != "b" else f"~{a}"])

    def s_reduce2(self):
        a, v = self.pick(min_ndim=2)
        if a is None:
            return None
        axes = self.draw([(0, 1), (-1, 0), (1,)])
        return f"{self.fresh()} = " + self.draw([
            f"np.{self.draw(REDUCE)}({a}, axis={axes}, keepdims={self.draw([False, True])})",
            f"{a}.sum() / {a}.size", f"len({a}) * {a}[0]", f"{a} @ {a}.T",
            f"np.dot({a}, {a}[0])",
            f"sum([{a}[i] for i in range(len({a}))], xp.zeros({a}.shape[1:]))",
            f"np.arange({v.shape[-1]}) * {a}", f"np.linspace(0, 1, {v.shape[-1]}) + {a}",
            f"np.argmax({a}, axis=0)", f"np.take({a}, [0, -1], axis=1)"])

    STATEMENTS: ClassVar[dict[str, int]] = {
        "unary": 3, "binary": 3, "scalar": 2, "reduce": 2, "read": 3, "shape": 2,
        "concat": 1, "misc": 2, "buffer": 2, "write": 4, "name_inplace": 1,
        "view_write": 2, "swap": 1, "add_at": 1, "loop": 2, "overlap": 1, "view2": 2,
        "mask": 1, "intops": 1, "reduce2": 1}

    def statement(self) -> bool:
        kinds = [k for k, w in self.STATEMENTS.items() for _ in range(w)]
        for _ in range(6):
            kind = self.draw(kinds)
            try:
                line = getattr(self, "s_" + kind)()
            except (ValueError, IndexError):  # nothing to draw from (an empty axis)
                continue
            if line is None:
                continue
            try:
                ns = self.sim.run(self.lines + [line])
            except Exception:  # noqa: BLE001, S112 - NumPy rejects it: draw another statement
                continue
            if ok(ns):
                self.lines.append(line)
                self.ns = ns
                return True
        return False

    def program(self, n: int) -> str:
        for _ in range(n):
            self.statement()
        names = [n for n in arrays_in(self.ns) if n not in INPUTS]
        outs = names[-self.integer(1, 3):] if names else ["x"]
        outs += [n for n in names if n.startswith("b") and n not in outs][:2]
        body = "\n".join(self.lines + [f"return ({', '.join(outs)},)"])
        return PRELUDE + "\ndef f(x, y, s, k, m):\n" + textwrap.indent(body, "    ") + "\n"


def _sel_shape(shape: tuple, idx: str) -> tuple | None:
    """The shape of `a[idx]` for an array of this shape, or None where NumPy refuses it."""
    try:
        return np.zeros(shape)[eval(f"np.s_[{idx}]", {"np": np})].shape
    except (IndexError, ValueError, TypeError):
        return None


def _broadcasts(src: tuple, dst: tuple) -> bool:
    try:
        return np.broadcast_shapes(src, dst) == tuple(dst)
    except ValueError:
        return False


def _compatible(a: tuple, b: tuple) -> bool:
    try:
        return len(np.broadcast_shapes(a, b)) <= 4
    except ValueError:
        return False


def make_inputs(seed: int, rows: int, cols: int) -> dict[str, np.ndarray]:
    r = np.random.default_rng(seed)
    return {"x": r.standard_normal((rows, cols)), "y": r.standard_normal(cols),
            "s": r.standard_normal((rows, cols)).astype(np.float32),
            "k": r.integers(-3, 4, (rows, cols)), "m": r.standard_normal((rows, cols)) > 0}


def load(src: str, xp) -> Callable:
    """The program's function `f`, with `xp` bound to NumPy or vecgrad.numpy."""
    ns: dict[str, Any] = {"np": np, "xp": xp}
    exec(compile(src, "<fuzz>", "exec"), ns)  # noqa: S102
    return ns["f"]


def shrink(src: str, keeps_failing: Callable[[str], bool], first: int = 0) -> str:
    """Delete body statements of `src` (a line at the body's indent, with the block under it)
    from line `first` on, one at a time, while `keeps_failing(candidate)` holds; a candidate
    whose check raises (NumPy itself fails: the line was needed) is kept out. The fuzzers'
    minimizer of a failing program."""
    lines = src.splitlines()
    changed = True
    while changed:
        changed = False
        for i in range(first, len(lines)):
            ln = lines[i]
            if not ln.startswith("    ") or ln.startswith("     ") or "return" in ln:
                continue
            j = i + 1
            while j < len(lines) and lines[j].startswith("        "):
                j += 1
            cand = "\n".join(lines[:i] + lines[j:])
            try:
                same = keeps_failing(cand)
            except Exception:  # noqa: BLE001 - NumPy itself fails: the line was needed
                same = False
            if same:
                lines, changed = cand.splitlines(), True
                break
    return "\n".join(lines)
