"""Kernel choices (vecgrad.kernels): the cost model, the on-disk cache of measured choices,
and deterministic mode, which gives the same generated code in every process."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vecgrad as vg
from vecgrad import kernels
from vecgrad.backends.numpy import costs
from vecgrad.backends.numpy import planner as L

# A machine whose BLAS is nearly free, and one whose BLAS is very slow: the model must choose
# differently on them (unless deterministic mode ignores the machine).
FAST_BLAS = dataclasses.replace(kernels.REFERENCE, gemm64=1e-13, gemm32=1e-13, matrix=0.0)
SLOW_BLAS = dataclasses.replace(kernels.REFERENCE, gemm64=1e-7, gemm32=1e-7, matrix=1e-4)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A fresh kernel cache directory for this test (and this process's loaded state reset)."""
    monkeypatch.setenv("VECGRAD_CACHE_DIR", str(tmp_path))
    kernels.forget()
    yield tmp_path
    kernels.forget()


SCRIPT = textwrap.dedent("""
    import hashlib, sys
    import numpy as np
    import vecgrad as vg
    from vecgrad import kernels
    from vecgrad.examples import seeds as S
    h = hashlib.sha256()
    def leaves(t):
        return [x for v in t for x in leaves(v)] if isinstance(t, (tuple, list)) else [t]
    cases = [(S.seed000_loss, S.seed000_inputs(), (0, 1)),
             (S.seed001_loss, S.seed001_inputs(T=24, batch=32, n_in=64, n_out=32, D=20), (0, 1)),
             (S.mapall, S.seed002_inputs(n=64, sizes=(1, 128, 20, 1)), (0,))]
    for loss, args, argnums in cases:
        g = vg.grad(loss, argnums=argnums)
        entry, _ = g.entry(*args)
        h.update(entry.compiled.source.encode())
        for x in leaves(g(*args)):
            h.update(np.ascontiguousarray(x).tobytes())
    print(h.hexdigest())
    print(sorted({(f, repr(k), n) for f, k, n, _ in kernels.history}))
""")


def run_fresh(cache: str, machine: kernels.Machine, deterministic: bool) -> tuple[str, str]:
    """In a fresh process with its own cache directory holding `machine`: the hash of the
    generated code and gradients of the three seeds, and the kernel choices made."""
    env = dict(os.environ, VECGRAD_CACHE_DIR=cache)
    env.pop("VECGRAD_DETERMINISTIC", None)
    if deterministic:
        env["VECGRAD_DETERMINISTIC"] = "1"
    old = os.environ.get("VECGRAD_CACHE_DIR")
    os.environ["VECGRAD_CACHE_DIR"] = cache  # (store_machine writes to the current directory)
    try:
        kernels.store_machine(machine)
    finally:
        if old is None:
            os.environ.pop("VECGRAD_CACHE_DIR", None)
        else:
            os.environ["VECGRAD_CACHE_DIR"] = old
        kernels.forget()
    p = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                       text=True, timeout=600, check=False)
    assert p.returncode == 0, p.stderr
    digest, choices = p.stdout.strip().splitlines()
    return digest, choices


def test_deterministic_mode_is_bit_identical_across_fresh_processes(tmp_path):
    a = run_fresh(str(tmp_path / "a"), FAST_BLAS, deterministic=True)
    b = run_fresh(str(tmp_path / "b"), SLOW_BLAS, deterministic=True)
    assert a == b  # same code, same bits, whatever this machine's constants say
    # the check can fail: without deterministic mode the machine's model decides, and the
    # two machines choose different kernels for the same programs
    fast = run_fresh(str(tmp_path / "c"), FAST_BLAS, deterministic=False)
    slow = run_fresh(str(tmp_path / "d"), SLOW_BLAS, deterministic=False)
    assert fast[1] != slow[1]


def test_deterministic_mode_ignores_stored_choices_and_the_machine(cache_dir):
    def choose():
        return kernels.choose("test", (1,), lambda m: {"a": m.gemm64, "b": 2 * m.gemm64},
                              lambda: {"a": 2.0, "b": 1.0})
    kernels.store_machine(SLOW_BLAS)
    kernels._store().put(kernels._key("test", (1,)), "b")
    assert choose() == "b"  # the stored choice
    with vg.config(deterministic=True):
        assert choose() == "a"  # the reference model
        assert kernels.history[-1][3] == "reference model"
    assert choose() == "b"


def test_autotuned_choices_are_stored_and_read_back(cache_dir):
    measured = []

    def choose():
        return kernels.choose("test", ("k",), lambda m: {"a": 1.0, "b": 2.0},
                              lambda: measured.append(1) or {"a": 2.0, "b": 1.0})
    assert choose() == "a" and kernels.history[-1][3] == "model"  # nothing stored: the model
    with vg.config(autotune=True):
        kernels.forget()
        assert choose() == "b" and measured == [1]  # measured now, and stored
    files = list(cache_dir.glob("kernels-*.json"))
    assert len(files) == 1 and "b" in json.loads(files[0].read_text())["choices"].values()
    kernels.forget()  # as a fresh process: read from disk, not measured again
    assert choose() == "b" and kernels.history[-1][3] == "stored" and measured == [1]


def test_the_machine_is_calibrated_once_and_stored(cache_dir, monkeypatch):
    m = kernels.machine()
    assert all(v >= 0 for v in dataclasses.asdict(m).values()) and m.gemm64 > 0
    assert list(cache_dir.glob("machine-*.json"))
    kernels.forget()
    monkeypatch.setattr(kernels, "calibrate", lambda: pytest.fail("calibrated again"))
    assert kernels.machine() == m


def test_a_stall_in_one_calibration_round_is_not_stored(monkeypatch):
    # a BLAS thread stall once made float32 GEMM look 1000x slower than float64 and steered
    # float32 contractions away from BLAS: each constant is the min over the rounds
    good = dataclasses.asdict(kernels._calibrate_round())
    rounds = iter([{**good, "gemm32": good["gemm32"] * 1000}, good, {**good, "copy": 1.0}])
    monkeypatch.setattr(kernels, "_calibrate_round", lambda: kernels.Machine(**next(rounds)))
    assert dataclasses.asdict(kernels.calibrate(rounds=3)) == good


def test_cache_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("VECGRAD_CACHE_DIR", str(tmp_path / "here"))
    assert kernels.cache_dir() == tmp_path / "here"
    monkeypatch.delenv("VECGRAD_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert kernels.cache_dir() == tmp_path / "xdg" / "vecgrad"


def test_an_unwritable_cache_directory_keeps_choices_in_memory(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("VECGRAD_CACHE_DIR", str(blocker / "sub"))
    kernels.forget()
    try:
        with vg.config(autotune=True):
            name = kernels.choose("test", (2,), lambda m: {"a": 1.0}, lambda: {"a": 1.0})
        assert name == "a" and kernels.choose("test", (2,), lambda m: {"a": 1.0}) == "a"
        x = np.random.default_rng(0).standard_normal((30, 40))
        # d/dx sum(x @ x.T) = 2 * (row sums of x, broadcast): compiled without a cache dir
        want = 2 * np.broadcast_to(x.sum(0), x.shape)
        np.testing.assert_allclose(vg.grad(lambda x: (x @ x.T).sum())(x), want, rtol=1e-12)
    finally:
        kernels.forget()


def test_the_store_is_bounded(cache_dir, monkeypatch):
    monkeypatch.setattr(kernels, "MAX_CHOICES", 3)
    st_ = kernels._store()
    for i in range(5):
        st_.put(f"k{i}", "a")
    assert list(st_.choices) == ["k2", "k3", "k4"]


def test_config_settings_are_typed():
    with pytest.raises(vg.ArgumentError, match="bool"):
        vg.config(deterministic=1)
    with pytest.raises(vg.ArgumentError, match="bool"):
        vg.config(autotune="yes")
    with vg.config(deterministic=True):
        assert kernels.deterministic()
    assert vg.config().deterministic is False


@st.composite
def contractions(draw):
    letters = "abcde"[:draw(st.integers(1, 5))]
    sizes = {c: draw(st.integers(1, 40)) for c in letters}
    a = "".join(draw(st.permutations(letters))[:draw(st.integers(1, len(letters)))])
    b = "".join(draw(st.permutations(letters))[:draw(st.integers(1, len(letters)))])
    pool = sorted(set(a + b))
    out = "".join(draw(st.permutations(pool))[:draw(st.integers(0, len(pool)))])
    return f"{a},{b}->{out}", [tuple(sizes[c] for c in a), tuple(sizes[c] for c in b)]


@settings(max_examples=200, deadline=None)
@given(contractions(), st.sampled_from([np.float32, np.float64]))
def test_every_plan_has_a_finite_positive_estimate(c, dtype):
    spec, shapes = c
    dts = [np.dtype(dtype)] * 2
    for name in L._candidates(spec, shapes):
        t = costs.einsum_plan(name, spec, shapes, dts, kernels.REFERENCE)
        assert np.isfinite(t) and t > 0, (name, spec, shapes)
    assert L.choose_einsum(spec, shapes, dts) in L._candidates(spec, shapes)


def test_the_model_avoids_the_known_traps():
    """Cases where one plan is many times slower than another (measured on the development
    machine): a strided batched matmul operand that NumPy copies on every call (2.7 ms
    against 0.14 ms for the einsum loop), and dot products BLAS does best."""
    f32 = [np.dtype(np.float32)] * 2
    with vg.config(deterministic=True):
        assert L.choose_einsum("bc,bic->ci", [(256, 128), (256, 32, 128)], f32) != "mm"
        assert L.choose_einsum("ab,ab->", [(400, 400), (400, 400)], f32) in ("mm", "mm_c")
        # seeds/000's forward contraction: a batched matmul on views, no copy of b
        assert L.choose_einsum("bcd,bid->icb", [(16, 4, 16), (16, 64, 16)], f32) in (
            "mm", "mm_c")


# ------------------------------------------- segment sums and scatter-adds (gathers.py)

def _gather_loss(x, idx):
    return vg.numpy.sum(vg.numpy.sin(x[idx]) * 2.0)  # gradient: a segment sum over idx


def _no_timing(*_a, **_k):
    raise AssertionError("a kernel was timed")


def test_segment_sum_plans_are_not_timed_in_deterministic_mode(cache_dir, monkeypatch):
    from vecgrad.backends.numpy import gathers
    monkeypatch.setattr(gathers, "timings", _no_timing)
    rng = np.random.default_rng(0)
    x, idx = rng.normal(size=(50, 8)), rng.integers(0, 50, size=400)
    kernels.history.clear()  # (choices of earlier tests)
    with vg.config(deterministic=True):
        vg.clear_cache()
        g = vg.grad(_gather_loss)(x, idx)
        plan = gathers.scatter_add_plan((gathers.Adv(idx[:30]),), (60,), np.dtype("f8"))
    ref = np.zeros_like(x)
    np.add.at(ref, idx, 2 * np.cos(x[idx]))
    np.testing.assert_allclose(g, ref, rtol=1e-12)
    assert {h[3] for h in kernels.history if h[0] in ("segment_sum", "scatter_add")} == {
        "reference model"}
    base = np.zeros(60)
    ref = np.zeros(60)
    np.add.at(ref, idx[:30], 1.0)
    np.testing.assert_allclose(plan(base, np.ones(30)), ref)


def test_segment_sum_plans_are_measured_once_then_read_from_the_cache(cache_dir, monkeypatch):
    from vecgrad.backends.numpy import gathers
    ids = np.random.default_rng(1).integers(0, 30, size=500)
    gathers._choose_segment(ids, 30, (500, 4), 0, np.dtype("f8"))
    assert kernels.history[-1][:1] == ("segment_sum",) and kernels.history[-1][3] == "measured"
    kernels.forget()  # a fresh process: the choice is read back, nothing is timed
    monkeypatch.setattr(gathers, "timings", _no_timing)
    run = gathers._choose_segment(ids, 30, (500, 4), 0, np.dtype("f8"))
    assert kernels.history[-1][3] == "stored"
    v = np.random.default_rng(2).normal(size=(500, 4))
    ref = np.zeros((30, 4))
    np.add.at(ref, ids, v)
    np.testing.assert_allclose(run(v), ref, rtol=1e-12)
