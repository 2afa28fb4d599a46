"""The vecgrad tool for GradBench (bench/gradbench): the protocol, and every eval's natural-style
program against an independent NumPy reference (values) and central differences (derivatives),
on small inputs. GradBench's own validation runs in bench/gradbench/run.py, not here."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import vecgrad as vg

BENCH = Path(__file__).resolve().parents[1] / "bench" / "gradbench"
sys.path.insert(0, str(BENCH))
from vecgrad_tool import ba, det, gmm, hello, ht, kmeans, llsq, lse, lstm, ode, particle, saddle
from vecgrad_tool.protocol import respond, timed_runs

RNG = np.random.default_rng(0)


def run(module, function, input):
    """Evaluate through the protocol, as GradBench would (one run, no minimum time)."""
    if isinstance(input, dict):
        input = input | {"min_runs": 1, "min_seconds": 0}
    r = respond({"id": 7, "kind": "evaluate", "module": module.__name__.rsplit(".")[-1],
                 "function": function, "input": input})
    assert r["success"], r.get("error")
    json.dumps(r)  # the output must be JSON
    return r["output"], r["timings"]


def central(f, x, eps=1e-6):
    """Central differences of a scalar function along each coordinate of x."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


# ---------------------------------------------------------------- protocol


def test_protocol_messages():
    assert respond({"id": 0, "kind": "start", "eval": "x"}) == {"id": 0, "tool": "vecgrad"}
    ok = respond({"id": 1, "kind": "define", "module": "lse"})
    assert ok["success"] and ok["id"] == 1
    bad = respond({"id": 2, "kind": "define", "module": "no_such_eval"})
    assert bad["success"] is False and "no_such_eval" in bad["error"]
    assert respond({"id": 3, "kind": "analysis", "of": 2, "valid": True}) == {"id": 3}
    failed = respond({"id": 4, "kind": "evaluate", "module": "lse", "function": "primal",
                      "input": {"x": "not numbers", "min_runs": 1, "min_seconds": 0}})
    assert failed["success"] is False and failed["error"]


def test_timed_runs_honours_min_runs_and_min_seconds():
    calls = []
    out, timings = timed_runs(lambda: calls.append(1) or len(calls), min_runs=5, min_seconds=0)
    runs = [t for t in timings if t["name"] == "evaluate"]
    assert len(runs) == 5 and len(calls) == 6 and out == 6  # the first call: the compile run
    assert all(t["name"] == "evaluate" for t in timings)  # it compiled nothing
    _, timings = timed_runs(lambda: sum(range(1000)), min_runs=1, min_seconds=0.02)
    runs = [t["nanoseconds"] for t in timings if t["name"] == "evaluate"]
    assert sum(runs) >= 0.02e9


def test_compile_is_reported_once_per_signature():
    x = RNG.random(17)
    _, first = run(lse, "gradient", {"x": x.tolist()})
    _, again = run(lse, "gradient", {"x": (x + 1).tolist()})
    assert first[0]["name"] == "compile"
    assert all(t["name"] == "evaluate" for t in again)


def test_script_speaks_the_protocol():
    msgs = [{"id": 0, "kind": "start"}, {"id": 1, "kind": "define", "module": "hello"},
            {"id": 2, "kind": "evaluate", "module": "hello", "function": "double", "input": 3.0}]
    p = subprocess.run([sys.executable, str(BENCH / "vecgrad_tool" / "run.py")],
                       input="".join(json.dumps(m) + "\n" for m in msgs), text=True,
                       capture_output=True, timeout=120, check=True)
    replies = [json.loads(line) for line in p.stdout.splitlines()]
    assert [r["id"] for r in replies] == [0, 1, 2]
    assert replies[2]["output"] == 6.0


# ---------------------------------------------------------------- evals


def test_hello():
    assert run(hello, "square", 3.0)[0] == 9.0
    assert run(hello, "double", 3.0)[0] == 6.0


def test_lse():
    x = RNG.normal(size=50) * 30
    ref = x.max() + np.log(np.exp(x - x.max()).sum())
    assert np.isclose(run(lse, "primal", {"x": x.tolist()})[0], ref)
    g = np.asarray(run(lse, "gradient", {"x": x.tolist()})[0])
    np.testing.assert_allclose(g, np.exp(x - ref), rtol=1e-10)


def test_llsq():
    x, n = RNG.random(6), 9
    t = -1 + 2 * np.arange(n) / (n - 1)
    A = t[:, None] ** np.arange(6)
    r = np.sign(t) - A @ x
    assert np.isclose(run(llsq, "primal", {"x": x.tolist(), "n": n})[0], r @ r / 2)
    g = run(llsq, "gradient", {"x": x.tolist(), "n": n})[0]
    np.testing.assert_allclose(g, -A.T @ r, rtol=1e-9, atol=1e-12)


def _ode_reference(x, s):
    def f(y):
        return np.concatenate([x[:1], x[1:] * y[:-1]])
    h, y = 2.0 / s, np.zeros_like(x)
    for _ in range(s):
        k1 = f(y)
        k2 = f(y + h * k1 / 2)
        k3 = f(y + h * k2 / 2)
        k4 = f(y + h * k3)
        y = y + h * (k1 + 2 * k2 + 2 * k3 + k4) / 6
    return y


def test_ode():
    x, s = RNG.random(8), 5
    np.testing.assert_allclose(run(ode, "primal", {"x": x.tolist(), "s": s})[0],
                               _ode_reference(x, s), rtol=1e-12)
    g = run(ode, "gradient", {"x": x.tolist(), "s": s})[0]
    np.testing.assert_allclose(g, central(lambda v: _ode_reference(v, s)[-1], x), rtol=1e-6)


def test_det():
    A = RNG.random((4, 4))
    assert np.isclose(run(det, "primal", {"A": A.ravel().tolist(), "ell": 4})[0],
                      np.linalg.det(A))
    g = np.asarray(run(det, "gradient", {"A": A.ravel().tolist(), "ell": 4})[0])
    np.testing.assert_allclose(g, (np.linalg.det(A) * np.linalg.inv(A).T).ravel(), rtol=1e-9)


def _gmm_input(d, k, n):
    return {"d": d, "k": k, "n": n, "x": RNG.normal(size=(n, d)).tolist(), "m": 2,
            "gamma": 1.5, "alpha": RNG.normal(size=k).tolist(),
            "mu": RNG.uniform(size=(k, d)).tolist(), "q": RNG.normal(size=(k, d)).tolist(),
            "l": RNG.normal(size=(k, d * (d - 1) // 2)).tolist()}


def _gmm_reference(alpha, mu, q, l, x, gamma, m):
    """The eval's README formula, vectorized, with explicit triangular factors."""
    from scipy.special import logsumexp, multigammaln
    n, d = x.shape
    K = len(alpha)
    Q = np.zeros((K, d, d))
    rows, cols = np.tril_indices(d, -1)
    order = np.lexsort((rows, cols))  # l fills Q column by column
    for k in range(K):
        Q[k][np.diag_indices(d)] = np.exp(q[k])
        Q[k][rows[order], cols[order]] = l[k]
    z = np.einsum("kij,nkj->nki", Q, x[:, None, :] - mu[None])
    beta = alpha + q.sum(1) - 0.5 * (z ** 2).sum(-1)
    nn = d + m + 1
    prior = K * (nn * d * np.log(gamma / np.sqrt(2)) - multigammaln(nn / 2, d)) - (
        gamma ** 2 / 2 * (Q ** 2).sum() - m * q.sum())
    return (-n * (d / 2 * np.log(2 * np.pi) + logsumexp(alpha)) + logsumexp(beta, 1).sum()
            + prior)


def test_gmm():
    inp = _gmm_input(3, 4, 6)
    args = gmm._arrays(inp)
    ref = _gmm_reference(*args[:5], *args[5])
    assert np.isclose(run(gmm, "objective", inp)[0], ref, rtol=1e-10)
    g = run(gmm, "jacobian", inp)[0]
    for i, name in enumerate(("alpha", "mu", "q", "l")):
        def f(v, i=i):
            a = list(args[:5])
            a[i] = v
            return _gmm_reference(*a, *args[5])
        np.testing.assert_allclose(g[name], central(f, args[i]), rtol=1e-5, atol=1e-7)


def _lstm_input(layers, b, c):
    return {"main_params": RNG.random((2 * layers, 4 * b)).tolist(),
            "extra_params": RNG.random((3, b)).tolist(),
            "state": RNG.random((2 * layers, b)).tolist(),
            "sequence": (RNG.random((c, b)) > 0.5).astype(float).tolist()}


def _lstm_reference(main, extra, state, seq):
    def sig(v):
        return 1 / (1 + np.exp(-v))
    layers, (c, b) = main.shape[0] // 2, seq.shape
    h, cell = [state[2 * i].copy() for i in range(layers)], [state[2 * i + 1].copy()
                                                           for i in range(layers)]
    total = 0.0
    for t in range(c - 1):
        x = seq[t] * extra[0]
        for i in range(layers):
            w, bias = main[2 * i], main[2 * i + 1]
            gates = np.concatenate([x, h[i], x, h[i]]) * w + bias
            f, ig, o = sig(gates[:b]), sig(gates[b:2 * b]), sig(gates[2 * b:3 * b])
            cell[i] = cell[i] * f + ig * np.tanh(gates[3 * b:])
            h[i] = o * np.tanh(cell[i])
            x = h[i]
        y = x * extra[1] + extra[2]
        total += seq[t + 1] @ (y - np.log(np.exp(y).sum() + 2))
    return -total / ((c - 1) * b)


def test_lstm():
    inp = _lstm_input(2, 3, 5)
    args = lstm._arrays(inp)
    assert np.isclose(run(lstm, "objective", inp)[0], _lstm_reference(*args), rtol=1e-12)
    g = np.asarray(run(lstm, "jacobian", inp)[0])
    ref = [central(lambda v, i=i: _lstm_reference(*args[:i], v, *args[i + 1:]), args[i])
           for i in (0, 1)]
    np.testing.assert_allclose(g, np.concatenate([r.ravel() for r in ref]), rtol=1e-5,
                               atol=1e-9)


def test_kmeans():
    P = RNG.random((40, 3))
    C = P[-4:]
    D = ((P[:, None] - C[None]) ** 2).sum(-1)
    assert np.isclose(run(kmeans, "cost", {"points": P.tolist(), "centroids": C.tolist()})[0],
                      D.min(1).sum())
    a = D.argmin(1)
    J = np.stack([2 * (C[j] - P[a == j]).sum(0) for j in range(4)])
    H = np.stack([np.full(3, 2.0 * (a == j).sum()) for j in range(4)])
    d = run(kmeans, "dir", {"points": P.tolist(), "centroids": C.tolist()})[0]
    np.testing.assert_allclose(d, J / H, atol=1e-12)


def _ba_input(p):
    return {"n": 3, "m": 5, "p": p, "cam": (RNG.normal(size=11) * 0.3 + [0, 0, 0, 0, 0, -5, 1, 0,
                                                                      0, 0, 0]).tolist(),
            "x": RNG.normal(size=3).tolist(), "w": 0.7, "feat": RNG.normal(size=2).tolist()}


def test_ba():
    inp = _ba_input(7)
    cams, X, w, feats = ba._arrays(inp)
    out = run(ba, "objective", inp)[0]
    assert out["reproj_error"]["repeated"] == 7 and out["w_err"]["repeated"] == 7
    assert np.isclose(out["w_err"]["element"], 1 - 0.49)
    blocks, w_d = ba.blocks_jit(cams, X, w, feats)
    for i in (0, 6):
        def err(v, i=i):
            return ba.reproj_error(v[:11], v[11:14], v[14], feats[i])
        v = np.concatenate([cams[i % 3], X[i % 5], [w[i]]])
        num = np.stack([(np.asarray(vg.jit(err)(v + e)) - np.asarray(vg.jit(err)(v - e)))
                        / 2e-6 for e in np.eye(15) * 1e-6], axis=1)
        np.testing.assert_allclose(blocks[i], num, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w_d, -2 * w)
    jac = run(ba, "jacobian", inp)[0]
    assert jac["rows"][:3] == [0, 15, 30] and jac["rows"][-1] == 2 * 7 * 15 + 7
    assert jac["cols"][:15] == [*range(11), 33, 34, 35, 48]  # camera 0, point 0, weight 0
    np.testing.assert_allclose(jac["vals"][:15], blocks[0, 0])
    assert np.isclose(jac["vals"][-1], -2 * 0.7)


def _ht_input(complicated, n_points=5, n_verts=12, n_bones=22):
    parents = [-1] + [int(RNG.integers(0, i)) for i in range(1, n_bones)]
    model = {"bone_count": n_bones, "bone_names": [f"b{i}" for i in range(n_bones)],
             "parents": parents,
             "base_relatives": (np.eye(4) + 0.1 * RNG.normal(size=(n_bones, 4, 4))).tolist(),
             "inverse_base_absolutes": (np.eye(4) + 0.1 * RNG.normal(size=(n_bones, 4, 4))
                                        ).tolist(),
             "base_positions": np.c_[RNG.normal(size=(n_verts, 3)), np.ones(n_verts)].tolist(),
             "weights": RNG.dirichlet(np.ones(n_bones), size=n_verts).tolist(),
             "triangles": RNG.integers(0, n_verts, size=(8, 3)).tolist(), "is_mirrored": False}
    corr = RNG.integers(0, 8 if complicated else n_verts, size=n_points).tolist()
    return {"theta": (0.3 * RNG.normal(size=26)).tolist(),
            "data": {"model": model, "correspondences": corr,
                     "points": RNG.normal(size=(n_points, 3)).tolist()},
            "us": RNG.random((n_points, 2)).tolist() if complicated else []}


@pytest.mark.parametrize("complicated", [False, True])
def test_ht_jacobian(complicated):
    inp = _ht_input(complicated)
    args, _ = ht._arrays(inp)
    fn = ht.objective_complicated if complicated else ht.objective_simple
    obj = np.asarray(run(ht, "objective", inp)[0])
    assert obj.shape == (15,)
    J = np.asarray(run(ht, "jacobian", inp)[0])
    assert J.shape == (15, 26 + 2 * complicated)

    def f(theta, us=args[1] if complicated else None):
        rest = (us, *args[2:]) if complicated else args[1:]
        return np.asarray(vg.jit(fn)(theta, *rest)).ravel()
    eps = 1e-6
    theta = args[0]
    num = np.stack([(f(theta + e) - f(theta - e)) / (2 * eps) for e in np.eye(26) * eps], 1)
    np.testing.assert_allclose(J[:, -26:], num, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(f(theta, *([args[1]] if complicated else [])), obj)
    if complicated:
        us = args[1]
        for i in (0, 4):
            for j in (0, 1):
                d = np.zeros_like(us)
                d[i, j] = eps
                col = (f(theta, us + d) - f(theta, us - d)) / (2 * eps)
                np.testing.assert_allclose(J[3 * i:3 * i + 3, j], col[3 * i:3 * i + 3],
                                           rtol=1e-6, atol=1e-8)


def test_particle_nested_derivative():
    steps = 30
    w = np.float64(0.3)
    for outer, inner in (("r", "r"), ("f", "f")):
        value, deriv = particle.compiled(inner, outer)
        d = float(deriv(w, steps, inner))
        num = (value(w + 1e-6, steps, inner) - value(w - 1e-6, steps, inner)) / 2e-6
        assert np.isclose(d, num, rtol=1e-6)
    assert particle.crossing_steps(np.float64(0.0), "r") == 353


def test_saddle():
    out = run(saddle, "rr", {"start": [1.0, 1.0]})[0]
    np.testing.assert_allclose(out, [8.246324826140356e-06] * 4, rtol=1e-9)


def _session(runner, tool, evals):
    """A logged session as the intermediary records it: per (function, size, runs in seconds,
    valid) one evaluate message, the tool's response and the eval's analysis."""
    s = runner.Session("gmm", tool)
    for i, (function, size, runs, valid) in enumerate(evals):
        s.log.append({"message": {"id": i, "kind": "evaluate", "function": function,
                                  "description": size, "input": {"n": 1}}})
        s.log.append({"response": {"id": i, "success": True, "timings": [
            {"name": "compile", "nanoseconds": 3e9}] + [
            {"name": "evaluate", "nanoseconds": t * 1e9} for t in runs]}})
        s.log.append({"message": {"id": 100 + i, "kind": "analysis", "of": i, "valid": valid}})
    return s


def _gradbench_runner():
    """bench/gradbench/run.py, loaded by its path: `import run` finds whichever run.py another
    test put first on sys.path (tests/test_cli.py's bench/run.py, for one)."""
    import importlib.util
    name = "gradbench_run"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, BENCH / "run.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod  # (before running it: its dataclasses look themselves up)
        spec.loader.exec_module(mod)
    return sys.modules[name]


def test_runner_table_from_logs(tmp_path):
    """The runner's table: validity from the eval's analysis, min or median of the runs, the
    ratio to JAX, and the targets missed (gradient slower than JAX's, compile over 2 s)."""
    runner = _gradbench_runner()
    vg_ = _session(runner, "vecgrad", [("objective", "s", [1e-3, 2e-3, 9e-3], True),
                                       ("jacobian", "s", [4e-3, 5e-3, 9e-3], True)])
    jx = _session(runner, "jax", [("jacobian", "s", [2e-3, 2e-3, 2e-3], True)])
    bad = _session(runner, "pytorch", [("jacobian", "s", [1e-3], False)])
    recs = runner.merge_repeats([r for s in (vg_, jx, bad) for r in runner.results(s)])
    (row,) = runner.rows(recs, "min")
    assert row["valid"] == {"vecgrad": True, "jax": True, "pytorch": False, "manual": None}
    assert (row["obj"], row["grad"], row["jax"]) == (1e-3, 4e-3, 2e-3)
    assert row["ratio"] == pytest.approx(2.0) and row["met"] == "no"
    assert row["misses"] == ["gradient 2x jax", "compile 3.0 s"]
    (med,) = runner.rows(recs, "median")
    assert med["grad"] == 5e-3 and med["ratio"] == pytest.approx(2.5)
    text = runner.table([row])
    assert "| gmm | s | yes/yes/NO/- |" in text and "2x jax" in text
    doc = tmp_path / "B.md"
    doc.write_text("# Benchmarks\n\nintro\n\n## Older\n\nold\n")
    runner.write_benchmarks("## GradBench\n\nfirst", doc)
    runner.write_benchmarks("## GradBench\n\nsecond", doc)
    out = doc.read_text()
    assert "second" in out and "first" not in out and out.index("second") < out.index("## Older")
