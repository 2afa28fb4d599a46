"""Python's max / min of traced values and Python numbers, then one more operation: the
result must equal NumPy's (value, dtype) or be refused with a typed error (pybuiltins'
EitherScalar: a NumPy scalar or a weakly typed Python number, as the values say).

Each program draws a dtype for v (int64, int8, uint8, float32, float64), a fold `max(...)` or
`min([...])` of 1-3 traced items and a Python number, optionally Python arithmetic on it, then
an operation with a Python number, a NumPy scalar, an array of another dtype or a traced
Python-number argument `n`; it runs on three value sets (a traced item wins, the number
wins, ties); the operation may be a NumPy function (np.exp, np.maximum, np.stack), and the
fold a fold of a fold. A returned Python number is compared by value where vecgrad's documented rule
returns it in its NumPy case's int64 / float64.

    nice .venv/bin/python tests/fuzz_either.py [COUNT] [SEED]
"""
from __future__ import annotations

import random
import sys
import warnings

import numpy as np

import vecgrad as vg

DT = ["int64", "int8", "float32", "float64", "uint8"]
NUMS = ["2", "0", "-1", "0.5", "2.0", "-3.0"]
OPS = ["{a} + {b}", "{b} + {a}", "{a} * {b}", "{a} - {b}", "{b} / {a}", "{a} ** 2 + {b}",
       "abs({a}) + {b}", "-{a} * {b}", "np.exp({a}) + {b}", "np.maximum({a}, {b})",
       "np.sqrt(np.abs({a})) * {b}", "np.stack([{a}, {a}]) * {b}"]
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
    return r.choice(DT), r.choice(OPS).format(a=a, b=r.choice(OTHERS))


def check(dt: str, expr: str, n: float) -> str:
    f = eval(f"lambda v, n: {expr}", ENV)
    out = []
    for vals in ([5, -4, 7], [-9, -8, -7], [1, 1, 1]):
        v = np.array(np.abs(vals) if dt == "uint8" else vals, dtype=dt)
        try:
            want = f(v, n)
        except Exception:  # noqa: BLE001, S112 - NumPy refuses: nothing to compare
            continue
        try:
            got = vg.jit(f)(v, n)
        except vg.VecgradError:
            out.append("refused")
            continue
        w, g = np.asarray(want), np.asarray(got)
        py = isinstance(want, (int, float)) and g.dtype in (np.int64, np.float64)
        if (w.dtype != g.dtype and not py) or w.shape != g.shape or \
                not np.allclose(w, g, equal_nan=True, rtol=1e-3):
            return f"WRONG {vals}: NumPy {w!r}, vecgrad {g!r}"
        out.append("ok")
    return "refused" if "refused" in out else "ok"


def main(count: int = 1500, seed: int = 0) -> None:
    warnings.simplefilter("ignore")
    r = random.Random(seed)
    stats = {"ok": 0, "refused": 0, "wrong": 0, "crash": 0}
    for _ in range(count):
        dt, expr = program(r)
        n = r.choice([3, 0.25])
        try:
            res = check(dt, expr, n)
        except Exception as e:  # noqa: BLE001 - an untyped error is a bug
            res = f"CRASH {type(e).__name__}: {e}"
        key = res.split()[0].lower()
        stats[key] += 1
        if key in ("wrong", "crash"):
            print(f"{res}\n    v: {dt}, n={n}: {expr}", flush=True)
    print(f"{count} programs (3 value sets each):", stats)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
