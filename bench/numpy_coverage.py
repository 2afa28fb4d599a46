"""NumPy coverage as users call it: the NumPy functions and methods ML and scientific code calls
most (bench/numpy_coverage_cases.py), each called with its common keywords, traced on whole
arrays ("whole"), inside a loop over samples ("loop": a list comprehension over a leading
axis), and differentiated ("grad": central differences in float64 along a random direction,
on the whole arrays and in the loop), each result checked against NumPy's (values, dtype,
shape); "float32" repeats "whole" with the float inputs in float32 (NEP 50's dtypes).

Each check of each call is classified

    ok       equal to NumPy (values, dtype and shape; the gradient within tolerance)
    refused  a typed vecgrad error (VecgradError) whose message says what to do
    crash    any other exception (a bug: a refusal must be typed)
    wrong    a value, dtype or shape that differs from NumPy's: a silent wrong answer
    n/a      nothing to check (NumPy itself raises, no float output for a gradient)

    python bench/numpy_coverage.py [--only SUBSTR] [--verbose] [--json PATH]

prints the table of counts per check, then every call that is not ok.
"""
from __future__ import annotations

import argparse
import json
import sys
import traceback
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from numpy_coverage_cases import CASES, FLOATS, INPUTS, SHARED

import vecgrad as vg

N = 3  # loop iterations (samples)


def names_in(expr: str) -> list[str]:
    import ast
    used = {n.id for n in ast.walk(ast.parse(expr)) if isinstance(n, ast.Name)}
    return [k for k in INPUTS if k in used]


def make(rng: np.random.Generator, names: list[str], batch: bool) -> dict[str, np.ndarray]:
    out = {}
    for k in names:
        if batch and k not in SHARED:
            out[k] = np.stack([INPUTS[k](rng) for _ in range(N)])
        else:
            out[k] = INPUTS[k](rng)
    return out


def leaves(v: Any) -> list:
    if isinstance(v, (tuple, list)):
        return [x for e in v for x in leaves(e)]
    if hasattr(v, "_fields") or type(v).__name__.endswith("Result"):
        return [x for e in tuple(v) for x in leaves(e)]
    return [v]


def same(a: Any, b: Any, rtol: float = 1e-7) -> str | None:
    """None when `b` (vecgrad's) equals `a` (NumPy's), else what differs."""
    la, lb = leaves(a), leaves(b)
    if len(la) != len(lb):
        return f"{len(la)} outputs, vecgrad {len(lb)}"
    for p, q in zip(la, lb):
        if not isinstance(p, (np.ndarray, np.generic, int, float, bool, complex)):
            if p != q:
                return f"{p!r}, vecgrad {q!r}"
            continue
        pa, qa = np.asarray(p), np.asarray(q)
        if pa.shape != qa.shape:
            return f"shape {pa.shape}, vecgrad {qa.shape}"
        if pa.dtype != qa.dtype:
            return f"dtype {pa.dtype}, vecgrad {qa.dtype}"
        if pa.dtype.kind in "fc":
            tol = {2: 1e-3, 4: 1e-5}.get(pa.dtype.itemsize if pa.dtype.kind == "f"
                                          else pa.dtype.itemsize // 2, rtol)
            if not np.allclose(pa, qa, rtol=tol, atol=tol, equal_nan=True):
                return f"values differ (max {np.nanmax(np.abs(pa - qa)) if pa.size else 0:.3g})"
        elif not np.array_equal(pa, qa):
            return "values differ"
    return None


def classify_exc(e: BaseException) -> tuple[str, str]:
    msg = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:160]
    if isinstance(e, vg.VecgradError):
        return "refused", msg
    tb = traceback.extract_tb(e.__traceback__)
    where = next((f"{Path(f.filename).name}:{f.lineno}" for f in reversed(tb)
                  if "vecgrad" in f.filename), "")
    return "crash", f"{msg} [{where}]"


def float_leaves(v: Any) -> list:
    return [x for x in leaves(v)
            if (x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype).kind == "f"]


def loss_of(fn, weights: list[np.ndarray]):
    def loss(*args):
        out = fn(*args)
        total = 0.0
        for leaf, w in zip(float_leaves(out), weights):
            total = total + np.sum(leaf * w)
        return total
    return loss


def check_grad(loss, args: list, fl: list[int], rng: np.random.Generator,
               eps: float) -> str | None:
    g = vg.grad(loss, argnums=tuple(fl))(*args)
    dirs = [rng.standard_normal(np.shape(args[i])) for i in fl]
    ana = sum(float(np.sum(np.asarray(gi) * d)) for gi, d in zip(g, dirs))

    def at(t):
        a = list(args)
        for i, d in zip(fl, dirs):
            a[i] = args[i] + t * d
        return float(loss(*a))
    num = (at(eps) - at(-eps)) / (2 * eps)
    if not np.isfinite(num):
        return None
    if abs(num - ana) > 1e-4 * (1 + abs(num)):
        return f"directional derivative {ana:.6g}, central differences {num:.6g}"
    return None


def run_case(expr: str, seed: int) -> dict[str, tuple[str, str]]:
    names = names_in(expr)
    fn = eval(f"lambda {', '.join(names)}: {expr}", {"np": np})
    res: dict[str, tuple[str, str]] = {}
    for mode in ("whole", "loop", "float32"):
        rng = np.random.default_rng(seed)
        inp = make(rng, names, batch=mode == "loop")
        if mode == "float32":  # the float inputs in float32: NumPy's dtypes (NEP 50)
            if not FLOATS & set(names):
                res[mode] = ("n/a", "no float input")
                continue
            inp = {k: v.astype(np.float32) if k in FLOATS else v for k, v in inp.items()}
        args = [inp[k] for k in names]
        if mode != "loop":
            f = fn
        else:
            batched = [k not in SHARED for k in names]

            def f(*a, _b=batched):
                return [fn(*(x[j] if b else x for x, b in zip(a, _b))) for j in range(N)]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = f(*[a.copy() for a in args])
        except Exception as e:  # noqa: BLE001  # NumPy refuses: vecgrad should too (not checked here)
            res[mode] = ("n/a", f"NumPy raises {type(e).__name__}")
            if mode != "float32":
                res["grad " + mode] = ("n/a", "")
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = vg.jit(f)(*[a.copy() for a in args])
            d = same(want, got)
            res[mode] = ("wrong", d) if d else ("ok", "")
        except Exception as e:  # noqa: BLE001
            res[mode] = classify_exc(e)
        if mode == "float32":
            continue
        fl = [j for j, k in enumerate(names) if k in FLOATS]
        outs = float_leaves(want)
        if not fl or not outs or any(np.asarray(o).dtype != np.float64 for o in outs):
            res["grad " + mode] = ("n/a", "no float64 output" if fl else "no float input")
            continue
        if res[mode][0] != "ok":
            res["grad " + mode] = ("n/a", "forward not ok")
            continue
        weights = [rng.standard_normal(np.shape(o)) for o in outs]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                d = check_grad(loss_of(f, weights), args, fl, rng,
                               1e-2 if "float32" in expr or "f4" in expr else 1e-6)
            res["grad " + mode] = ("wrong", d) if d else ("ok", "")
        except Exception as e:  # noqa: BLE001
            res["grad " + mode] = classify_exc(e)
    return res


CHECKS = ["whole", "loop", "float32", "grad whole", "grad loop"]
KINDS = ["ok", "refused", "crash", "wrong", "n/a"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    table = {c: dict.fromkeys(KINDS, 0) for c in CHECKS}
    report = {}
    cases = [c for c in CASES if a.only in c]
    for n, expr in enumerate(cases):
        try:
            r = run_case(expr, n)
        except Exception as e:  # noqa: BLE001  # the harness itself
            r = {c: ("crash", f"harness: {type(e).__name__}: {e}"[:160]) for c in CHECKS}
        report[expr] = r
        for c in CHECKS:
            table[c][r[c][0]] += 1
        bad = {c: v for c, v in r.items() if v[0] not in ("ok", "n/a")}
        if bad or a.verbose:
            for c, (k, m) in (r if a.verbose else bad).items():
                print(f"{k:8} {c:11} {expr}   {m}", flush=True)
    distinct = {k: sum(any(v[c][0] == k for c in CHECKS) for v in report.values())
                for k in KINDS}
    print(f"\n{len(cases)} calls; calls with at least one check of each kind: {distinct}")
    print(f"{'check':12}" + "".join(f"{k:>9}" for k in KINDS))
    for c in CHECKS:
        print(f"{c:12}" + "".join(f"{table[c][k]:>9}" for k in KINDS))
    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
