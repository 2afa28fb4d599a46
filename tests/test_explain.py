"""`vg.explain`: the Report fields on the seed programs (small sizes) and on a recurrence."""
from __future__ import annotations

import inspect
import io
import math
import os
import re

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.examples import seeds as S
from vecgrad.examples.seeds import WORKLOADS
from vecgrad.explain_text import render, summary

BUDGET = 0.02


def line_of(fun, text: str) -> int:
    """The line number, in its file, of the first line of `fun` containing `text`."""
    lines, start = inspect.getsourcelines(fun)
    (off,) = [i for i, s in enumerate(lines) if text in s][:1]
    return start + off


def group(found, fun, text: str):
    """The entry of `found` (batched or unbatched) at the line of `fun` containing `text`."""
    line = line_of(fun, text)
    file = inspect.getsourcefile(fun)
    hits = [f for f in found if f.src.line == line and os.path.samefile(f.src.file, file)]
    assert len(hits) == 1, [(f.src, f.count) for f in found]
    return hits[0]


@pytest.fixture(scope="module")
def reports():
    out = {}
    for name, w in WORKLOADS.items():
        out[name] = vg.explain(w.fresh_loss(), *w.inputs("small"), argnums=w.argnums,
                               budget=BUDGET)
    return out


def sizes(name: str) -> dict:
    return WORKLOADS[name].sizes["small"]


def test_seed000_batched_groups_name_kernel_lines_with_trip_counts(reports):
    r, z = reports["000"], sizes("000")
    assert group(r.batched, S.cosinesim, "np.dot(u, v)").count == z["N"] * z["R"] * z["B"]
    assert group(r.batched, S.pairwise, "aj = a[:, j, k]").count == z["R"] * z["B"]
    soft = group(r.batched, S.pairwise, "vg.nn.softmax(out")
    assert soft.count == z["B"]
    assert any("softmax" in b for b in soft.became)
    assert r.unbatched == []


def test_seed001_and_002_trip_counts(reports):
    z = sizes("001")
    dots = group(reports["001"].batched, S.colwise, "y1[:, i] @ y[:, i]")
    assert dots.count == z["T"] * z["batch"]
    assert group(reports["001"].batched, S.dense, "W @ x").count == z["T"]
    layer = group(reports["002"].batched, S.mlp, "h = W @ h + b")
    assert layer.count == sizes("002")["n"]
    assert any("muladd" in b for b in layer.became)  # W @ h + b: one addmm-style call


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_counts_ratio_and_memory(reports, name):
    r = reports[name]
    assert r.name == WORKLOADS[name].loss.__name__
    assert {"traced", "cse", "batch", "simplify", "grad.simplify"} <= set(r.eqns)
    # Batching merges the unrolled loops: far fewer equations than were traced.
    assert 0 < r.eqns["batch"] * 3 < r.eqns["traced"]
    assert r.eqns["cse"] <= r.eqns["traced"]
    # an eager tape runs every operation as written, repeats included (vecgrad records the
    # trace hash-consed, so its "traced" count is smaller where the loop repeats work)
    assert r.eager_ops["forward"] >= r.eqns["traced"]
    assert r.eager_ops["backward"] > 0
    assert math.isfinite(r.ratio) and r.ratio > 0
    assert r.ratio == pytest.approx(r.gradient.min / r.forward.min)
    assert r.compile_seconds > 0 and set(r.compile_stages) >= {"trace", "batch", "codegen"}
    assert r.view_zero_arrays > 0 and r.view_zero_bytes > 0
    assert r.op_floor > 0 and r.eager_estimate > 0
    assert set(r.memory) == {"forward_peak", "gradient_peak", "forward_arrays",
                             "gradient_arrays"}
    assert all(isinstance(v, int) and v > 0 for v in r.memory.values())
    assert r.hot and all(h.seconds >= 0 and 0 <= h.share <= 1 for h in r.hot)


def test_seed000_inplace_writes_count_buffer_writes(reports):
    z = sizes("000")
    write = f"seeds.py:{line_of(S.pairwise, 'out[i, j, k] = K(')}"
    soft = f"seeds.py:{line_of(S.pairwise, 'out[:, :, k] = vg.nn.softmax')}"
    assert reports["000"].inplace_writes == {write: z["N"] * z["R"] * z["B"], soft: z["B"]}
    assert reports["002"].inplace_writes == {}


def test_text_report_and_summary(reports):
    r = reports["000"]
    full = str(r)
    for title in ["Summary", "Loops and maps found", "Not batched",
                  "Where the gradient's time goes", "Why eager AD would be slow", "Memory"]:
        assert title in full
    short = summary(r)
    assert "Summary" in short and "Loops and maps found" in short
    assert "Where the gradient's time goes" not in short and "Memory" not in short
    n = sizes("000")
    assert f"{n['N'] * n['R'] * n['B']:>7,} x  seeds.py:{line_of(S.cosinesim, 'np.dot')}" in short
    only_memory = render(r, ("memory",))
    assert "Memory" in only_memory and "Summary" not in only_memory


def rnn(W, U, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
    return vnp.sum(h)


def test_recurrence_is_reported_as_a_rolled_loop_with_reason():
    T, H, D = 7, 5, 3
    rng = np.random.default_rng(0)
    args = (0.3 * rng.standard_normal((H, H)), rng.standard_normal((H, D)),
            rng.standard_normal((T, D)), np.zeros(H))
    r = vg.explain(rnn, *args, argnums=(0, 1), budget=BUDGET)
    rec = group(r.recurrences, rnn, "h = np.tanh(W @ h + U @ xs[t])")
    assert rec.count == T  # (h0 is an input: every step is the same step)
    assert "previous" in rec.reason and any("loop" in b for b in rec.became)
    assert not r.unbatched  # nothing is said to be sequential that was rolled
    text = str(r)
    assert "Recurrences" in text and "loop over a step of" in text
    # The input projections U @ xs[t] do not depend on h: they still batch.
    assert group(r.batched, rnn, "h = np.tanh(").count == T
    assert r.inplace_writes == {}
    # a loop among the hot operations says how many steps and operations per step it runs
    # (each pays a NumPy dispatch: the floor of a rolled loop on small arrays)
    loops = [h.what for h in r.hot if h.what.startswith("loop")]
    # (with numba installed, the hint that backend='numba' would run it as one kernel)
    assert loops and all(re.fullmatch(r"loop\[7 steps x [1-9]\d* operations(, \d+ NumPy "
                                      r"calls; backend='numba' would run them .*)?\]", w)
                         for w in loops), loops
    # one forward loop (rebuilt by the gradient's `loops` pass to store its residuals: still
    # forward work) and the backward loops
    sides = sorted(h.backward for h in r.hot if h.what.startswith("loop"))
    assert sides[0] is False and sides[-1] is True, sides


def _two_negs_on_a_line(X):
    D = vnp.sum(X ** 2, axis=1)[:, None] * X
    return -vnp.sum(vg.nn.logsumexp(-D, axis=1))


def _shrinking(x):
    # (elementwise work, row-wise products, sums and extremes over shrinking slices batch
    # packed (batch/packed.py); a product over the rows does not)
    e = 0.0
    for i in range(len(x) - 1):
        e = e + vnp.prod(vnp.exp(-(x[i + 1:] @ x[i]) ** 2))
    return e


def test_shape_claims_name_loops_not_two_expressions_on_a_line():
    """`-D` and `-sum(...)` on one line are two expressions (ranks 2 and 0), not an operation
    whose loop iterations differ in shape; x[i+1:] @ x[i] in a loop is."""
    X = np.random.default_rng(1).standard_normal((5, 3))
    assert not vg.explain(_two_negs_on_a_line, X, budget=BUDGET).unbatched
    r = vg.explain(_shrinking, X, budget=BUDGET)
    assert any("differ in operand shapes" in f.reason and f.count == 4 for f in r.unbatched)


def test_explain_accepts_the_transformed_loss_as_jax_users_write_it():
    """`vg.explain(vg.grad(loss, argnums=1), ...)` explains loss's gradient in argument 1, as
    `vg.explain(loss, ..., argnums=1)` does; a non-loss transform gets a typed error naming
    the caller's line."""
    x, y = np.arange(3.0), np.arange(1.0, 4.0)

    def loss(a, b):
        return vnp.sum(a * b ** 2)

    direct = vg.explain(loss, x, y, argnums=1, budget=0.01)
    assert direct.eqns != vg.explain(loss, x, y, budget=0.01).eqns  # the argnums show
    for f, kw in ((vg.grad(loss, argnums=1), {}), (vg.value_and_grad(loss, argnums=1), {}),
                  (vg.jit(loss), {"argnums": 1})):
        r = vg.explain(f, x, y, budget=0.01, **kw)
        assert (r.name, r.eqns) == ("loss", direct.eqns)
    with pytest.raises(vg.ArgumentError, match=r"pass the loss function itself \(at .*test_explain"):
        vg.explain(vg.jacobian(loss), x, y, budget=0.01)
    assert vg.show(vg.grad(loss, argnums=1), x, y, file=io.StringIO()) == vg.show(
        loss, x, y, argnums=1, file=io.StringIO())


def test_hot_operations_fold_runs_of_equal_operands():
    """A stack of 400 scalars reads `f64[] x400`, not 400 repeated types on one line; short
    runs stay spelled out."""
    from vecgrad import primitives as P
    from vecgrad.explain import _shapes
    from vecgrad.ir import Aval, Eqn, Params, Var

    f64 = np.dtype("float64")
    ins = tuple(Var(Aval((), f64)) for _ in range(400)) + (Var(Aval((2,), f64)),) * 2
    e = Eqn(P.stack, ins, Params(axis=0), Var(Aval((402,), f64)), None)
    assert _shapes(e) == "f64[] x400, f64[2], f64[2] -> f64[402]"


def test_compile_line_of_an_entry_compiled_before_explain_says_so():
    def loss(x):
        total = 0.0
        for i in range(x.shape[0]):
            total += vnp.sum(vnp.sin(x[i]) ** 2)
        return total

    x = np.random.default_rng(0).normal(size=(60, 3))
    fresh = summary(vg.explain(loss, x, budget=0.01))
    assert "first call (compile)" in fresh and "found it cached" not in fresh
    again = summary(vg.explain(loss, x, budget=0.01))  # the grad entry is cached now
    line = next(ln for ln in again.splitlines() if "first call (compile)" in ln)
    assert "in an earlier call (this one found it cached" in line
    staged = re.search(r"first call \(compile\) ([0-9.]+) (ms|us|s) in an earlier", line)
    assert staged is not None


def _two_carries_one_line(g):
    v, p, tot = 0.0, 0.0, 0.0
    for t in range(g.shape[0]):
        v, p = 0.9 * v + g[t], p - 0.1 * (0.9 * v + g[t])
        tot += p ** 2
    return tot


def _two_carries_semicolons(g):
    v = 0.0
    p = 0.0
    tot = 0.0
    for t in range(g.shape[0]):
        v = 0.9 * v + g[t]; p = p - 0.1 * v; tot += p ** 2
    return tot


@pytest.mark.parametrize("fun", [_two_carries_one_line, _two_carries_semicolons])
def test_repeated_work_on_a_recurrence_line_is_listed(fun):
    """Whatever batching makes of these lines, explain lists every line whose operations
    remain one per iteration in the compiled gradient, also a line that holds a rolled
    recurrence too (it once said "all repeated work was merged" at 18,000 equations)."""
    from vecgrad.explain import REPEATED
    g = np.random.default_rng(0).normal(size=300)
    r = vg.explain(fun, g, budget=0.01)
    final = vg.grad(fun).entry(g)[0].stages["final"]
    counts: dict = {}
    for e in final.eqns:
        if e.src is not None:
            k = (e.src.line, e.prim.name, str(e.out.aval))
            counts[k] = counts.get(k, 0) + 1
    repeated = {k[0] for k, c in counts.items() if c >= REPEATED}
    listed = {f.src.line for f in r.unbatched}
    assert repeated <= listed, (repeated, listed)


def _rolled_pairs(X):
    acc = 0.0
    for i in range(len(X)):
        r = X[i]
        acc = acc + sum(r[j] * r[(j + 1) % 3] for j in range(3))
    return acc


def _rows_scaled(X):
    acc = 0.0
    for i in range(len(X)):
        acc = acc + vnp.sum(X[i] * 2.0)
    return acc


def test_a_line_batched_into_a_gather_says_gather_not_a_view():
    """r[(j + 1) % 3] over rows batches into a gather with two index arrays (a copy of every
    element); explain said 'no gather: a strided view (reshape/transpose) of the array'
    (found by tests/fuzz_funcs.py, closures/nested). A plain row read is still a view."""
    X = np.random.default_rng(0).standard_normal((6, 3))
    r = vg.explain(_rolled_pairs, X, budget=BUDGET)
    line = group(r.batched, _rolled_pairs, "acc = acc + sum(r[j]")
    # (a gather with two index arrays, or what simplify makes of it: a take)
    assert any(b.startswith(("gather[", "take[")) for b in line.became), line.became
    assert not any("no gather" in b for f in r.batched for b in f.became)
    r = vg.explain(_rows_scaled, X, budget=BUDGET)
    assert not any(b.startswith("gather") for f in r.batched for b in f.became)


def _bucket_decay(x, idx, a):
    acc = vnp.zeros(8)
    for i in range(len(x)):
        acc[idx[i]] = a * acc[idx[i]] + x[i]
    return vnp.sum(acc ** 2)


def _rotations(U, c, s):
    x = vnp.zeros(U.shape[1])
    y = vnp.zeros(U.shape[1])
    energy = 0.0
    for t in range(len(U)):
        x, y = c * x - s * y + U[t], s * x + c * y
        energy = energy + vnp.sum(x * x + y * y)
    return energy


@pytest.mark.parametrize("case", ["bucket_decay"])
def test_a_few_operations_left_on_a_batched_line_are_not_called_a_cliff(case):
    """A line whose iterations batched, with a handful of operations left apart (the glue of
    a scan or of a chain of writes), is not listed under "Not batched" as if it fell off the
    cliff: its leftovers are named on one line as a fixed cost. The report's data keeps them."""
    r = np.random.default_rng(0)
    fun, args = {"bucket_decay": (_bucket_decay, (r.standard_normal(400),
                                                  r.integers(0, 8, 400), 0.9)),
                 "rotations": (_rotations, (r.standard_normal((300, 4)), 0.8, 0.6))}[case]
    rep = vg.explain(fun, *args, budget=BUDGET)
    text = render(rep)
    body = text.split("Not batched\n", 1)[1]
    assert body.startswith("  nothing: all repeated work was merged"), body[:400]
    line = line_of(fun, "= a * acc" if case == "bucket_decay" else "x, y = c")
    left = [f for f in rep.unbatched if f.src.line == line]
    assert left and all(f.count <= 4 for f in left), [(f.src.line, f.count) for f in rep.unbatched]
    assert "a fixed cost" in body and f":{line} x{left[0].count}" in body


def test_a_scan_from_zeros_leaves_nothing_on_its_line():
    """The rotations' first step reads the zeros they start from and the shared c and s: a
    loop invariant beside the run (batching's `_invariant`), which runs alone and folds
    away, so the scan takes every step and no operation is left on the line (until session
    30 the first step was padded into the run and three operations were left apart)."""
    r = np.random.default_rng(0)
    rep = vg.explain(_rotations, r.standard_normal((300, 4)), 0.8, 0.6, budget=BUDGET)
    body = render(rep).split("Not batched\n", 1)[1]
    assert body.startswith("  nothing: all repeated work was merged"), body[:400]
    assert not rep.unbatched and "a fixed cost" not in body.split("\n\n", 1)[0]


def test_a_line_whose_iterations_stay_apart_is_still_listed():
    """The minor-leftover rule needs many more merged iterations than leftovers: a loop of 4
    shrinking slices that do not batch stays under "Not batched"."""
    X = np.random.default_rng(1).standard_normal((5, 3))
    text = render(vg.explain(_shrinking, X, budget=BUDGET))
    body = text.split("Not batched\n", 1)[1]
    assert not body.startswith("  nothing"), body[:400]
    assert f":{line_of(_shrinking, 'vnp.prod')}" in body.split("\n\n")[0]


def _edge_penalty(h, w, edges):
    e = 0.0
    for u, v in edges:
        e += w * vnp.sum((h[u] - h[v]) ** 2)
    return e


@pytest.mark.parametrize("argnums", [(0, 1), 1, (1, 0), -2])
def test_explain_counts_eager_work_for_python_number_arguments(argnums):
    """A differentiated Python float beside a list of int tuples: explain's eager-tape count
    numbers the traced leaves as the gradient does (it raised IndexError)."""
    h = np.random.default_rng(2).standard_normal((6, 3))
    edges = [(0, 1), (1, 2), (3, 5), (4, 0)]
    rep = vg.explain(_edge_penalty, h, 0.7, edges, argnums=argnums, budget=BUDGET)
    assert rep.eager_ops["forward"] > 0 and rep.eager_ops["backward"] > 0
