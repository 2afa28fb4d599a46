"""Differential fuzzing (issue 10, no silent wrong answers): random small NumPy programs
(tests/fuzz_programs.py: elementwise ops, reductions, views, in-place writes, fancy indexing,
`np.add.at`, loops, comprehensions, kernels passed as arguments, dtype promotion) run

(a) eagerly in NumPy, and (b) under `vg.jit`: equal values, dtypes and shapes, or vecgrad
    raises a typed `VecgradError` (any other exception from vecgrad is a bug);
(c) `vg.grad` of a random weighting of the float64 outputs equals float64 central differences
    of the NumPy program, in random directions;
(d) the batched graph computes what the unbatched one does (values and VJPs).

CI runs VECGRAD_FUZZ_EXAMPLES hypothesis examples per check (default 100) and VECGRAD_FUZZ_SEEDS
seeded programs per check (default 300). Thousands, locally:

    VECGRAD_FUZZ_EXAMPLES=3000 .venv/bin/python -m pytest -q tests/test_fuzz_numpy.py
    .venv/bin/python tests/test_fuzz_numpy.py 5000      # seeded loop: every distinct failure,
                                                        # each minimized, printed as source
"""
from __future__ import annotations

import os
import re
import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.dirname(__file__))
os.environ.setdefault("VECGRAD_TYPECHECK", "1")  # (run as a script: stages kept, as in tests)
from fuzz_programs import INPUTS, Gen, load, make_inputs, shrink
from test_batch import assert_same_function, entry

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.errors import VecgradError

EXAMPLES = int(os.environ.get("VECGRAD_FUZZ_EXAMPLES", "100"))
EPS = 1e-6


def eager(src: str, inputs: dict) -> tuple:
    f = load(src, np)
    args = [inputs[n].copy() for n in INPUTS]
    for a in args:
        a.setflags(write=False)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args)


def check_jit(src: str, inputs: dict) -> str:
    """(b): 'ok', or 'refused' when vecgrad raised a typed error."""
    want = eager(src, inputs)
    args = [inputs[n].copy() for n in INPUTS]
    try:
        got = vg.jit(load(src, vnp))(*args)
    except VecgradError:
        return "refused"
    for a, n in zip(args, INPUTS):
        np.testing.assert_array_equal(a, inputs[n], err_msg=f"vecgrad changed argument {n}")
    assert isinstance(got, tuple) and len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        w = np.asarray(w)
        assert isinstance(g, (np.ndarray, np.generic)), f"output {i}: {type(g).__name__}"
        g = np.asarray(g)
        assert (g.shape, g.dtype) == (w.shape, w.dtype), f"output {i}: {g.shape} {g.dtype} " \
            f"!= NumPy's {w.shape} {w.dtype}"
        # (float16: two ulps, for sums NumPy rounds in another order, e.g. np.add.at at a
        # repeated index adds one at a time)
        tol = 2e-3 if w.dtype == np.float16 else \
            2e-5 if w.dtype == np.float32 or re.search(r"float32|\bs\b", src) else 1e-9
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=f"output {i}")
    return "ok"


def _loss_parts(src: str, inputs: dict):
    out = eager(src, inputs)
    keep = [i for i, o in enumerate(out) if np.asarray(o).dtype == np.float64]
    ws = [np.random.default_rng(i).standard_normal(np.shape(out[i])) for i in keep]
    return keep, ws


def check_grad(src: str, inputs: dict) -> str:
    """(c): the gradient wrt x and y of sum_i <out_i, w_i> over float64 outputs."""
    keep, ws = _loss_parts(src, inputs)
    if not keep:
        return "skip"

    def loss(xp, x, y):
        out = load(src, xp)(x, y, *[inputs[n] for n in INPUTS[2:]])
        return sum((xp.sum(out[i] * w) for i, w in zip(keep, ws)), 0.0)
    try:
        gx, gy = vg.grad(lambda x, y: loss(vnp, x, y), argnums=(0, 1))(inputs["x"], inputs["y"])
    except VecgradError:
        return "refused"
    # Through a float32 cast, central differences need a larger step and tolerance (and a
    # larger step may cross a kink the small one does not): any step that agrees passes.
    # (`s` is a float32 input: writing a float64 value into an array made of it casts too)
    steps = [(EPS, 1e-5)] + ([(1e-4, 2e-3), (1e-3, 2e-3)] if re.search(r"float32|\bs\b", src)
                             else [])
    r = np.random.default_rng(7)
    x, y = inputs["x"], inputs["y"]
    for _ in range(2):
        dx, dy = r.standard_normal(x.shape), r.standard_normal(y.shape)
        an = float(np.sum(gx * dx) + np.sum(gy * dy))
        fds = []
        for eps, tol in steps:
            with np.errstate(all="ignore"):
                fd = (loss(np, x + eps * dx, y + eps * dy)
                      - loss(np, x - eps * dx, y - eps * dy)) / (2 * eps)
            fds.append(fd)
            if abs(an - fd) <= tol * (1 + abs(fd)):
                break
        else:
            raise AssertionError(f"gradient {an} != central differences {fds}")
    return "ok"


def check_batched(src: str, inputs: dict) -> str:
    """(d): the batched graph equals the unbatched one (values and VJPs)."""
    keep, ws = _loss_parts(src, inputs)
    if not keep:
        return "skip"
    rest = [inputs[n] for n in INPUTS[2:]]

    def loss(x, y):
        out = load(src, vnp)(x, y, *rest)
        return sum((vnp.sum(out[i] * w) for i, w in zip(keep, ws)), 0.0)
    try:
        e, leaves = entry(loss, (inputs["x"], inputs["y"]), argnums=(0, 1))
    except VecgradError:
        return "refused"
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)
    return "ok"


CHECKS = {"jit": check_jit, "grad": check_grad, "batched": check_batched}


def _empty():
    raise ValueError("nothing to draw from")


@st.composite
def programs(draw):
    rows, cols = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    inputs = make_inputs(draw(st.integers(0, 2**16)), rows, cols)
    g = Gen(lambda opts: draw(st.sampled_from(opts)),
            lambda lo, hi: draw(st.integers(lo, hi)) if lo <= hi else _empty(), inputs)
    return g.program(draw(st.integers(1, 8))), inputs


def _run(check, prog):
    src, inputs = prog
    try:
        CHECKS[check](src, inputs)
    except AssertionError as e:
        raise AssertionError(f"{e}\n--- program:\n{src}") from None


@pytest.mark.parametrize("check", sorted(CHECKS))
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(prog=programs())
def test_fuzz(check, prog):
    _run(check, prog)


SEEDS = int(os.environ.get("VECGRAD_FUZZ_SEEDS", "300"))


@pytest.mark.parametrize("check", sorted(CHECKS))
def test_fuzz_seeded(check):
    """The same checks on SEEDS programs drawn by a seeded generator (larger and more varied
    than hypothesis's first examples, which favour the smallest choices)."""
    for seed in range(SEEDS):
        src, inputs = seeded(seed)
        sig = signature(check, src, inputs)
        assert sig is None, f"seed {seed}: {sig}\n--- program:\n{src}"


# ---------------------------------------------------------------- local: thousands of seeds


def seeded(seed: int):
    r = np.random.default_rng(seed)
    inputs = make_inputs(seed, int(r.integers(1, 6)), int(r.integers(1, 5)))
    g = Gen(lambda opts: opts[int(r.integers(len(opts)))],
            lambda lo, hi: int(r.integers(lo, hi + 1)), inputs)
    return g.program(int(r.integers(1, 9))), inputs


def signature(check: str, src: str, inputs: dict) -> str | None:
    """None when the check passes (or refuses), else the failure's kind and place."""
    return run_one(check, src, inputs)[0]


def run_one(check: str, src: str, inputs: dict) -> tuple[str | None, str]:
    try:
        return None, CHECKS[check](src, inputs)
    except AssertionError as e:
        first = next((ln for ln in str(e).splitlines() if ln.strip()), "")
        return f"{check}: AssertionError {first.strip()[:60]}", "fail"
    except Exception as e:  # noqa: BLE001 - a bare exception from vecgrad is a bug too
        tb = e.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
        where = f"{tb.tb_frame.f_code.co_filename.split('/')[-1]}:{tb.tb_lineno}"
        return f"{check}: {type(e).__name__} at {where}", "fail"


def minimize(check: str, src: str, inputs: dict, sig: str) -> str:
    """Delete statement lines (and whole loop blocks) while the failure stays the same."""
    return shrink(src, lambda cand: signature(check, cand, inputs) == sig)


def main(n: int, start: int = 0) -> None:
    found: dict[str, tuple] = {}
    counts = {c: {} for c in CHECKS}
    for seed in range(start, start + n):
        src, inputs = seeded(seed)
        for check in CHECKS:
            sig, status = run_one(check, src, inputs)
            counts[check][status] = counts[check].get(status, 0) + 1
            if sig and (sig not in found or len(src) < len(found[sig][1])):
                found[sig] = (seed, src, inputs)
    print(counts)
    for sig, (seed, src, inputs) in sorted(found.items()):
        check = sig.split(":")[0]
        print(f"=== {sig}  (seed {seed}; shapes x{inputs['x'].shape})")
        print(minimize(check, src, inputs, sig))


if __name__ == "__main__":
    vg.config(keep_stages=True)  # (as tests/conftest.py: the batched check reads the stages)
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500,
         int(sys.argv[2]) if len(sys.argv) > 2 else 0)


def test_shrink_deletes_statements_and_blocks_while_the_failure_stays():
    """The fuzzers' shared minimizer: whole loop blocks go at once, lines before `first` stay,
    and a candidate whose check raises is kept out."""
    src = ("def k(y):\n    z = 1\n    return z\ndef f(x):\n    a = 1\n    for i in range(3):\n"
           "        a += i\n    bad = a\n    return bad")
    assert shrink(src, lambda s: "bad = a" in s, 4) == \
        "def k(y):\n    z = 1\n    return z\ndef f(x):\n    bad = a\n    return bad"
    assert shrink(src, lambda s: "a += i" in s and 1 / 0, 4) == src
