"""The `patterns` benchmark programs (bench/patterns, issue 14) at small sizes: every
natural-style program must give its hand-vectorized reference's value and gradient today, and
its batched graph must compute what its unbatched trace computes.

Each program is checked against three oracles, in float64:
- the reference forward (value), and central differences of the reference (gradient);
- central differences of vecgrad's own compiled forward (`vg.check_grads`);
- the unbatched traced graph: values and VJPs of the graph before and after `batch`, and the
  compiled gradient against the unbatched graph's gradient (test_batch.check).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_batch import check as check_batched

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.pytree import flatten

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from patterns import ITEMS, PATTERNS
from patterns import run as patterns_run
from patterns.harness import as_float64, check_grad, check_value, fresh

NAMES = sorted(PATTERNS)


@pytest.mark.parametrize("name", NAMES)
def test_value_and_gradient_match_reference(name):
    p = PATTERNS[name]
    args = p.args("small")
    assert check_value(p, args) < 1e-10
    grads = vg.grad(p.natural, argnums=p.argnums)(*args)
    single = any(np.asarray(x).dtype == np.float32 for a in p.argnums
                 for x in flatten(args[a])[0])
    if not single:
        assert check_grad(p, args, grads) < 1e-6
        return
    # A gradient computed in float32 is good to float32's rounding only: a component that
    # cancels (a sum of larger terms) is off by some ulps of those terms, how many depending
    # on the CPU's BLAS kernels (AVX2 or AVX-512). So the program is checked to 1e-6 on
    # float64 inputs, and its float32 gradient to 64 ulps of float32 (7.6e-6).
    args64 = as_float64(args, p.argnums)
    assert check_grad(p, args64, vg.grad(p.natural, argnums=p.argnums)(*args64)) < 1e-6
    assert check_grad(p, args, grads) < 64 * np.finfo(np.float32).eps


@pytest.mark.parametrize("name", NAMES)
def test_batched_equals_unbatched_and_central_differences(name):
    p = PATTERNS[name]
    check_batched(p.natural, p.args("small"), argnums=p.argnums)


def test_every_item_has_several_programs():
    per_item = {i: [n for n, p in PATTERNS.items() if p.item == i] for i in ITEMS}
    assert all(len(per_item[i]) >= 3 for i in range(1, 9)), per_item
    assert per_item[0], "programs that mix several patterns"


@pytest.mark.parametrize("name", NAMES)
def test_program_is_documented(name):
    doc = PATTERNS[name].doc
    assert doc.startswith(("Item", "Items", "Mixed")), doc


def test_runner_through_the_cli(tmp_path):
    """`python -m vecgrad bench patterns ...` runs bench/patterns/run.py: a table row per
    program, explain's line, and JSON records with the measured fields."""
    out = tmp_path / "p.json"
    p = subprocess.run([sys.executable, "-m", "vecgrad", "bench", "patterns", "--sizes", "small",
                        "--only", "conv1d,8", "--repeat", "2", "--budget", "0.01", "--json",
                        str(out)], capture_output=True, text=True, timeout=300, check=False)
    assert p.returncode == 0, p.stderr
    assert "What did not batch" in p.stdout and "passed" in p.stdout
    recs = {r["name"]: r for r in json.loads(out.read_text())["programs"]}
    assert set(recs) == {"conv1d"} | {n for n, q in PATTERNS.items() if q.item == 8}
    for r in recs.values():
        assert r["checks_ok"] and r["grad"]["runs"] == 2 and r["compile"] > 0
        assert r["ratio"] == pytest.approx(r["grad"]["min"] / r["reference"]["min"])


def test_runner_rejects_unknown_program():
    with pytest.raises(SystemExit):
        patterns_run.main(["--only", "no_such_program"])


def test_long_accumulation_chain_under_a_contraction_compiles():
    """Regression (found by the suite at default sizes): 400 read-modify-writes of a buffer's
    rows under one sum overflowed the stack in the contraction_of_scatter_add rewrite."""
    n = 400

    def f(X, c):
        buf = vnp.zeros(X.shape)
        for i in range(n):
            buf[i] = X[i]
            buf[i] = buf[i] * c[i]
        return vnp.sum(vnp.sin(buf))

    rng = np.random.default_rng(0)
    X, c = rng.standard_normal((n, 3)), rng.standard_normal(n)
    gX, gc = vg.grad(f, argnums=(0, 1))(X, c)
    np.testing.assert_allclose(gX, np.cos(X * c[:, None]) * c[:, None], rtol=1e-12)
    np.testing.assert_allclose(gc, np.sum(np.cos(X * c[:, None]) * X, axis=1), rtol=1e-12)


def test_explain_when_the_stage_graphs_are_not_kept():
    """Regression (found by the suite at default sizes): explain raised KeyError 'final' when
    the gradient graph was larger than the compile cache keeps (keep_stage_eqns). The graph
    that runs is always kept now (the intermediate stages are not), so it is profiled."""
    p = PATTERNS["cumsum_buffer"]
    with vg.config(keep_stage_eqns=3, keep_stages=False):
        r = vg.explain(fresh(p.natural), *p.args("small"), argnums=p.argnums, budget=0.01)
    assert r.hot and r.memory["gradient_arrays"] > 0
    assert r.recurrences  # c[i] = c[i-1] + x[i]: a scan, said as such (nothing unbatched)
