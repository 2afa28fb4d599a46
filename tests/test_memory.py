"""Memory of compilation (issue 11): the compile cache is one LRU over all functions, bounded
by entries and by estimated bytes; an entry keeps only what a cache hit needs; a trace that
exceeds the operation limit fails at the limit, naming the lines that ran most."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import api, compile_cache
from vecgrad import primitives as P


@pytest.fixture
def users_defaults():
    """The user's defaults (the test suite keeps every stage: see conftest), a clean cache."""
    vg.clear_cache()
    with vg.config(keep_stages=False):
        yield
    vg.clear_cache()


def loop_loss(n):
    def f(x):
        acc = 0.0
        for i in range(n):
            acc = acc + x[i] * x[i]
        return acc
    return f


def test_the_cache_is_one_lru_over_all_functions(users_defaults):
    fs = [loop_loss(3) for _ in range(5)]
    x = np.arange(4.0)
    with vg.config(cache_size=3):
        gs = [vg.grad(f) for f in fs]
        for g in gs[:3]:
            g(x)
        assert compile_cache.stats()["entries"] == 3
        gs[0](x)  # a hit: the first becomes the most recently used
        gs[3](x)  # drops the least recently used: the second
        assert compile_cache.stats()["entries"] == 3
        assert len(api._CACHE[fs[0]]) == 1 and len(api._CACHE[fs[1]]) == 0
        assert len(api._CACHE[fs[2]]) == 1 and len(api._CACHE[fs[3]]) == 1
        np.testing.assert_allclose(gs[1](x), 2 * x * (np.arange(4) < 3))  # compiled again


def test_the_cache_is_bounded_by_bytes(users_defaults):
    x = np.arange(200.0)
    big = loop_loss(200)
    vg.grad(big)(x)
    assert compile_cache.stats()["entries"] == 1
    one = compile_cache.stats()["bytes"]
    assert one > 0
    with vg.config(cache_bytes=int(1.5 * one)):
        fs = [loop_loss(200) for _ in range(3)]  # (alive: a dead function's entries go)
        for f in fs:
            vg.grad(f)(x)
        s = compile_cache.stats()
        assert s == {"entries": 1, "bytes": one}  # the most recent: fs[-1]'s
        assert len(api._CACHE[fs[-1]]) == 1 and len(api._CACHE[big]) == 0
    with vg.config(cache_bytes=1):  # the most recent entry always stays
        f = loop_loss(10)
        g = vg.grad(f)
        np.testing.assert_allclose(g(x), 2 * x * (np.arange(200) < 10))
        assert compile_cache.stats()["entries"] == 1


def test_clear_cache_empties_it(users_defaults):
    fs = [loop_loss(n) for n in (2, 3)]
    for f in fs:
        vg.grad(f)(np.ones(4))
    assert compile_cache.stats()["entries"] == 2
    vg.clear_cache()
    assert compile_cache.stats() == {"entries": 0, "bytes": 0}


def test_an_entry_keeps_only_what_a_hit_needs(users_defaults):
    """A 2,000-step loop traces 6,000 equations; its entry keeps the generated code and the
    graph that runs (a few equations), not the trace."""
    x = np.arange(2000.0)
    f = loop_loss(2000)
    g = vg.grad(f)
    e, _ = g.entry(x)
    assert e.slim and set(e.stages) <= {"final", "forward", "backward"}
    assert e.counts["traced"] >= 4000  # (the counts of every stage are kept: explain reads them)
    assert all(len(s.eqns) < 100 for s in e.stages.values())
    assert compile_cache.nbytes(e) < 200_000
    np.testing.assert_allclose(g(x), 2 * x)


def test_the_trace_is_not_kept_alive(users_defaults, monkeypatch):
    """Once compiled, nothing refers to the builder of the trace (its equations, the
    hash-consing tables): they are freed."""
    from vecgrad import builder
    made = []
    init = builder.Builder.__init__

    def record(self, *a, **k):
        init(self, *a, **k)
        made.append(weakref.ref(self))
    monkeypatch.setattr(builder.Builder, "__init__", record)
    x = np.arange(500.0)
    f = loop_loss(500)
    g = vg.grad(f)
    np.testing.assert_allclose(g(x), 2 * x)
    gc.collect()
    assert made and all(r() is None for r in made)
    assert compile_cache.stats()["entries"] == 1


def _coo(v, x, rows, cols):
    y = vnp.zeros(4)
    for k in range(len(v)):
        y[rows[k]] += v[k] * x[cols[k]]
    return vnp.sum(y ** 2)


def _sum_back(v, x, rows, cols):
    y = vnp.zeros(4)
    for k in range(len(v)):
        y[rows[k]] = y[rows[k]] - v[k]
    return vnp.sum(y * x)


def _max_back(v, x, rows, cols):
    y = vnp.zeros(4)
    for k in range(len(v)):
        y[cols[k]] = vnp.maximum(y[cols[k]], v[k] * x[rows[k]])
    return vnp.sum(y)


def _fresh_buffers(v, x, rows, cols):
    acc = 0.0
    for k in range(len(v)):
        z = vnp.zeros(4)  # (one shared constant per shape: the builder's scratch table)
        z[1] = v[k]
        acc = acc + vnp.sum(z * x)
    return acc


@pytest.mark.parametrize("f", [_coo, _sum_back, _max_back, _fresh_buffers])
def test_the_trace_is_freed_without_the_cyclic_gc(users_defaults, monkeypatch, f):
    """The tables a trace keeps for reads and writes at traced indices and for shared
    constants hold tracers, which hold the builder: dropped when the trace ends, so that the
    whole trace is freed by reference counting (the cyclic GC, off while compiling, would
    otherwise traverse every equation of a long trace once it is back on)."""
    from vecgrad import builder
    made = []
    init = builder.Builder.__init__

    def record(self, *a, **k):
        init(self, *a, **k)
        made.append(weakref.ref(self))
    monkeypatch.setattr(builder.Builder, "__init__", record)
    rng = np.random.default_rng(0)
    args = (rng.standard_normal(6), rng.standard_normal(4), np.array([0, 3, 1, 3, 2, 0]),
            np.array([2, 2, 0, 1, 3, 1]))
    g = vg.grad(f, argnums=(0, 1))
    was = gc.isenabled()
    gc.disable()
    try:
        g(*args)
        assert made and all(r() is None for r in made)
    finally:
        if was:
            gc.enable()


def test_keep_stages_compiles_again_for_show(users_defaults):
    x = np.arange(5.0)
    f = loop_loss(5)
    g = vg.grad(f)
    e1, _ = g.entry(x)
    assert "traced" not in e1.stages
    with vg.config(keep_stages=True):
        e2, _ = g.entry(x)
        assert "traced" in e2.stages and "batch" in e2.stages


# ------------------------------------------------------------------------ the operation limit

def test_a_trace_past_the_limit_fails_naming_its_lines(monkeypatch):
    monkeypatch.setenv("VECGRAD_MAX_EQNS", "5000")

    def f(x):
        acc = 0.0
        for i in range(1_000_000):  # would record 2,000,000 operations
            acc = acc + x[i % 7] * 2.0
        return acc
    with pytest.raises(vg.TraceError) as info:
        vg.grad(f)(np.ones(7))
    msg = str(info.value)
    assert "5,000 operations" in msg and "VECGRAD_MAX_EQNS" in msg
    assert "test_memory.py" in msg  # the user's own line, with its count
    line = f.__code__.co_firstlineno + 3
    assert f"test_memory.py:{line}" in msg, msg


def test_the_limit_counts_distinct_operations(monkeypatch):
    """Hash-consed repeats are not recorded again: a loop that recomputes one value stays
    under the limit."""
    monkeypatch.setenv("VECGRAD_MAX_EQNS", "100")

    def f(x):
        acc = x[0]
        for _ in range(1000):
            y = x[1] * 3.0  # the same operation every time: recorded once
        return acc * y
    np.testing.assert_allclose(vg.grad(f)(np.array([2.0, 5.0])), [15.0, 6.0])


def test_a_bad_limit_falls_back_to_the_default(monkeypatch):
    from vecgrad.builder import MAX_EQNS, _limit
    monkeypatch.setenv("VECGRAD_MAX_EQNS", "many")
    assert _limit() == MAX_EQNS
    monkeypatch.setenv("VECGRAD_MAX_EQNS", "0")
    assert _limit() == 1


def test_the_memo_window_keeps_the_table_bounded(monkeypatch):
    """Hash-consing looks back a window of equations: the tables of a long trace stay
    bounded, and a repeat within the window is still found."""
    from vecgrad import builder
    monkeypatch.setattr(builder, "MEMO_WINDOW", 64)
    b = builder.Builder(inputs=())
    from vecgrad import primitives as P
    from vecgrad.ir import Aval, Var
    x = Var(Aval((), np.dtype(np.float64)))
    b._check = 64
    outs = []
    v = x
    for _ in range(1000):
        v = b.emit(P.mul, (v, x), {})
        outs.append(v)
        assert len(b._memo) + len(b._older) <= 2 * 64
    assert b.emit(P.mul, (outs[-2], x), {}) is outs[-1]  # a recent repeat: found
    assert len(b.eqns) == 1000
    ref = weakref.ref(b)
    del b
    gc.collect()
    assert ref() is None


def test_parameter_ids_outlive_the_memo_entries_keyed_by_them(monkeypatch):
    """Parameters keep their id (and one shared Params) across the memo's window, so an
    operation with parameters repeated every few equations is found again across many
    windows, and the parameter table stays bounded like the memo."""
    from vecgrad import builder
    from vecgrad import primitives as P
    from vecgrad.ir import Aval, Var
    monkeypatch.setattr(builder, "MEMO_WINDOW", 64)
    b = builder.Builder(inputs=())
    b._check = 64
    x = Var(Aval((2000,), np.dtype(np.float64)))
    idx = {"idx": P.BasicIndex((P.Sl(0, 3, 1),))}
    for i in range(1000):
        # a new operation each time (a fresh parameter set), then the repeated read
        v = b.emit(P.getitem, (x,), {"idx": P.BasicIndex((P.Sl(i + 3, i + 6, 1),))})
        b.emit(P.mul, (v, b.emit(P.getitem, (x,), dict(idx))), {})
        assert len(b._params) + len(b._params_older) <= 2 * 64 + 2
    reads = [e for e in b.eqns if e.prim is P.getitem and e.params == idx]
    # an entry found again is kept into the next window, and only if the read's parameters
    # kept their id across windows: recorded once (it was once per two windows before: a
    # loop invariant then became several values, which split its batched group)
    assert len(reads) == 1
    assert len({id(e.params) for e in reads}) == 1  # one Params object shared


def test_a_loop_invariant_stays_one_value_past_the_memo_window(monkeypatch):
    """A value recomputed in every iteration (`2 * ell ** 2` inside the loop body) stays one
    value however long the trace: an RBF kernel matrix of 181 x 181 entries split its
    batched groups in two (a scatter by 32,745 index pairs in the compiled gradient)."""
    from vecgrad import builder
    monkeypatch.setattr(builder, "MEMO_WINDOW", 64)

    def f(x, ell):
        K = vnp.zeros((x.shape[0], x.shape[0]))
        for i in range(x.shape[0]):
            for j in range(x.shape[0]):
                K[i, j] = vnp.exp(-(x[i] - x[j]) ** 2 / (2 * ell ** 2))
        return vnp.sum(K)
    x = np.linspace(0, 1, 30)
    e = vg.grad(f, argnums=(0, 1)).entry(x, np.array(0.7))[0]
    traced = e.stages["traced"]
    ell = traced.inputs[1]
    ell2 = [q.out for q in traced.eqns if q.prim is P.powc and q.inputs[0] is ell]
    assert len(ell2) == 1  # ell ** 2 recorded once, and 2 * ell ** 2 once
    assert sum(any(a is ell2[0] for a in q.inputs) for q in traced.eqns) == 1
    assert not any(e.prim is P.setitem for e in e.stages["final"].eqns)  # K written whole
    small = vg.grad(f, argnums=(0, 1)).entry(x[:5], np.array(0.7))[0]
    assert e.counts["final"] == small.counts["final"]
