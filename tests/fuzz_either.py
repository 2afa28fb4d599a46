"""Python's max / min of traced values and Python numbers, then one more operation: the
result must equal NumPy's (value, dtype) or be refused with a typed error (pybuiltins'
EitherScalar: a NumPy scalar or a weakly typed Python number, as the values say).

Each program draws a dtype for v (int64, int8, uint8, float32, float64), a fold `max(...)` or
`min([...])` of 1-3 traced items and a Python number (some, as 0.1, not exact in float32),
optionally Python arithmetic on it, then an operation with a Python number, a NumPy scalar,
an array of another dtype or a traced Python-number argument `n`, or an array NumPy makes of
it (np.array / np.asarray of lists, np.stack, functions taking lists, np.sum, np.reshape,
np.atleast_1d, np.clip, np.where); it runs on three value sets (a traced item wins, the
number wins, ties), each with two values of n of one Python type through one compiled
function (n below and above the numbers); the fold may be a fold of a fold. Values are
compared to the dtype's rounding (1e-12 in float64). A returned Python number is compared by
value where vecgrad's documented rule returns it in its NumPy case's int64 / float64.
Refusals are counted apart where NumPy's dtype was one in every value set ('refused-fixed':
perhaps avoidable; `-v` prints them).

    nice .venv/bin/python tests/fuzz_either.py [COUNT] [SEED] [-v]
"""
from __future__ import annotations

import random
import sys
import warnings

import numpy as np

import vecgrad as vg

DT = ["int64", "int8", "float32", "float64", "uint8"]
NUMS = ["2", "0", "-1", "0.5", "2.0", "-3.0", "0.1", "1e-3"]
OPS = ["{a} + {b}", "{b} + {a}", "{a} * {b}", "{a} - {b}", "{b} / {a}", "{a} ** 2 + {b}",
       "abs({a}) + {b}", "-{a} * {b}", "np.exp({a}) + {b}", "np.maximum({a}, {b})",
       "np.sqrt(np.abs({a})) * {b}", "np.stack([{a}, {a}]) * {b}"]
# the either value where NumPy makes an array of it: constructors of (nested) lists, functions
# that take lists (pyarrays.LISTS), joins, reductions and shape functions of it alone
ARRAYS = ["np.array([{a}, {b}])", "np.array([{a}])", "np.array({a})", "np.asarray([{b}, {a}])",
          "np.array([[{a}], [{b}]])", "np.array([{a}, {b}], dtype=np.float64)",
          "np.array([{a}], dtype=np.float32)", "np.stack([{a}, {b}])", "np.mean([{a}, {b}])",
          "np.sum([{a}, {b}])", "np.max([{a}, {a}])", "np.dot([{a}, {a}], [1.0, 2.0])",
          "np.concatenate([[{a}], [{b}]])", "np.hstack([{a}, {b}])", "np.sum({a})",
          "np.reshape({a}, (1,)) * {b}", "np.atleast_1d({a}) + {b}", "np.where({a} > 0, {a}, {b})",
          "np.clip({a}, -1, 1) * {b}", "np.float64(1.0) * {a}", "np.cumsum([{a}, {b}])",
          "np.linalg.norm([{a}, {b}])", "np.array([{a}, {a}]).sum() * {b}"]
OTHERS = ["1", "1.5", "np.float32(1)", "np.int8(3)", "np.float64(2)", "np.int64(1)", "x32",
          "x16", "i8", "x64", "True", "n"]
ENV = {"np": np, "x32": np.ones(2, np.float32), "x16": np.ones(2, np.float16),
       "i8": np.ones(2, np.int8), "x64": np.ones(2)}


def program(r: random.Random) -> tuple[str, str]:
    k = r.choice([1, 2, 3])
    items = [f"v[{j}]" for j in range(k)] + [r.choice(NUMS)]
    r.shuffle(items)
    fold = r.choice(["max", "min"])
    a = f"{fold}({', '.join(items)})" if r.random() < 0.7 else f"{fold}([{', '.join(items)}])"
    if r.random() < 0.3:
        a = f"({a} {r.choice(['+ 1', '* 2.0', '- 3', '+ n'])})"
    if r.random() < 0.25:  # a fold of a fold (a clip written with max and min)
        a = f"{r.choice(['max', 'min'])}({a}, {r.choice(NUMS)})"
    return r.choice(DT), r.choice(OPS + ARRAYS).format(a=a, b=r.choice(OTHERS + NUMS[:4]))


def _same(w: np.ndarray, g: np.ndarray, py: bool) -> bool:
    """Equal dtype (a returned Python number: vecgrad's int64 / float64), shape and value (to
    the dtype's rounding: a number held in float32 where NumPy holds it in float64 differs)."""
    if (w.dtype != g.dtype and not py) or w.shape != g.shape:
        return False
    rtol = 1e-12 if np.result_type(w.dtype, g.dtype).itemsize >= 8 else 1e-3
    return bool(np.allclose(w, g, equal_nan=True, rtol=rtol, atol=0))


def check(dt: str, expr: str, ns: tuple) -> str:
    """'ok', 'wrong ...', or a refusal: 'refused' where NumPy's dtype (or whether it raises)
    varies with the value sets, 'refused-fixed' where every value set gave NumPy one dtype
    (so a refusal there may be avoidable; three value sets cannot prove it)."""
    f = eval(f"lambda v, n: {expr}", ENV)
    jf = vg.jit(f)  # (one compiled function: a new n of the same type reuses it)
    out, dts = [], set()
    for vals, n in [(vals, n) for n in ns for vals in ([5, -4, 7], [-9, -8, -7], [1, 1, 1])]:
        v = np.array(np.abs(vals) if dt == "uint8" else vals, dtype=dt)
        try:
            want = f(v, n)
        except Exception:  # noqa: BLE001 - NumPy refuses: nothing to compare
            dts.add("raises")
            continue
        w = np.asarray(want)
        dts.add((w.dtype, isinstance(want, (int, float))))
        try:
            got = jf(v, n)
        except vg.VecgradError:
            out.append("refused")
            continue
        g = np.asarray(got)
        if not _same(w, g, isinstance(want, (int, float)) and g.dtype in (np.int64, np.float64)):
            return f"WRONG {vals}, n={n}: NumPy {w!r}, vecgrad {g!r}"
        out.append("ok")
    if "refused" in out:
        return "refused" if len(dts) > 1 else "refused-fixed"
    return "ok"


def main(count: int = 1500, seed: int = 0, verbose: bool = False) -> None:
    warnings.simplefilter("ignore")
    r = random.Random(seed)
    stats = {"ok": 0, "refused": 0, "refused-fixed": 0, "wrong": 0, "crash": 0}
    for _ in range(count):
        dt, expr = program(r)
        ns = r.choice([(3, -5), (0.25, 7.5)])  # (a traced Python number: below and above)
        try:
            res = check(dt, expr, ns)
        except Exception as e:  # noqa: BLE001 - an untyped error is a bug
            res = f"CRASH {type(e).__name__}: {e}"
        key = res.split()[0].lower()
        stats[key] += 1
        if key in ("wrong", "crash") or verbose and key == "refused-fixed":
            print(f"{res}\n    v: {dt}, n={ns}: {expr}", flush=True)
    print(f"{count} programs (3 value sets each):", stats)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]), verbose="-v" in sys.argv)
