"""One spec per primitive instance; every rule of every primitive is tested from this list.

The specs live in `tests/specs_*.py` (one module per area, each defining `SPECS`; the record
and its helpers are in `spec_lib`). For each spec: the impl (and the lowered callable codegen
uses) against a NumPy reference, the shape rule against the impl, the VJP against float64
central differences along random directions, broadcasting variants, and the batching rule
against stacking unbatched results.
"""
from __future__ import annotations

import importlib
import os
import pathlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from spec_lib import Spec

from vecgrad import backends
from vecgrad import primitives as P
from vecgrad.autodiff import vjp_graph
from vecgrad.backends import compile_graph
from vecgrad.backends.lowering import missing
from vecgrad.backends.numpy.table import lower
from vecgrad.errors import NoGradientError
from vecgrad.ir import Aval, Const, Graph, Var, typecheck
from vecgrad.tracing import Builder, Tracer

SPECS: list[Spec] = [s for f in sorted(pathlib.Path(__file__).parent.glob("specs_*.py"))
                     for s in importlib.import_module(f.stem).SPECS]


def _ids(specs: list[Spec]) -> list[str]:
    return [f"{s.name}-{s.label}" if s.label else s.name for s in specs]


def _cases(pred: Callable[[Spec], bool] = lambda s: True) -> Any:
    """(spec, shapes) pairs, one per shape variant, for pytest.mark.parametrize."""
    out = []
    for s in SPECS:
        if not pred(s):
            continue
        for k, shapes in enumerate(s.variants()):
            sid = _ids([s])[0] + (f"-bcast{k}" if k else "")
            out.append(pytest.param(s, shapes, id=sid))
    return out


def _is_diff(s: Spec) -> bool:
    return s.prim.vjp is not None and s.wrt != () and not s.no_grad and not s.phase


# ------------------------------------------------------------------ graph helpers

def one_eqn_graph(prim: P.Primitive, args: list[np.ndarray], params: dict):
    ins = [Var(Aval(np.shape(a), np.asarray(a).dtype)) for a in args]
    b = Builder(ins)
    with b:
        out = b.emit(prim, ins, params)
    return b.build([out])


def run_traced(fn: Callable[..., Tracer], args: list[np.ndarray]) -> np.ndarray:
    """Trace fn on tracers for args inside a Builder, typecheck, compile and run."""
    ins = [Var(Aval(np.shape(a), np.asarray(a).dtype)) for a in args]
    b = Builder(ins)
    with b:
        out = fn(*[Tracer(b, v) for v in ins])
    g = typecheck(b.build([out.atom if isinstance(out, Tracer) else Const(out)]))
    return compile_graph(g).fn(*args)[0]


# ------------------------------------------------------------------------------- tests

def test_every_registered_primitive_has_a_spec():
    missing = sorted(set(P.REGISTRY) - {s.name for s in SPECS})
    assert not missing, f"primitives without a spec in tests/test_primitives.py: {missing}"


def test_specs_name_registered_primitives():
    assert {s.name for s in SPECS} <= set(P.REGISTRY)


@pytest.mark.parametrize("spec,shapes", _cases())
def test_impl_matches_numpy(spec: Spec, shapes: tuple):
    args = spec.make(np.random.default_rng(0), shapes)
    params = spec.params_for(shapes)
    want = np.asarray(spec.ref(*args))
    got = np.asarray(spec.prim.impl(*args, **params))
    lowered = np.asarray(lower(spec.prim, params, [Aval(a.shape, a.dtype) for a in args])(*args))
    aval = spec.prim.shape_rule(*[Aval(a.shape, a.dtype) for a in args], **params)
    for out in (got, lowered):
        assert out.shape == want.shape and out.dtype == want.dtype
        np.testing.assert_allclose(out, want, rtol=spec.impl_tol, atol=spec.impl_tol)
    assert aval == Aval(want.shape, want.dtype), "shape rule disagrees with the impl"


# (a loop's step graph fixes its operands' dtypes)
@pytest.mark.parametrize("spec,shapes", _cases(lambda s: s.name not in ("full", "cast", "loop")))
def test_float32_stays_float32(spec: Spec, shapes: tuple):
    args = [a.astype(np.float32) if a.dtype == np.float64 else a
            for a in spec.make(np.random.default_rng(1), shapes)]
    params = spec.params_for(shapes)
    got = np.asarray(spec.prim.impl(*args, **params))
    want = np.asarray(spec.ref(*args))
    assert got.dtype == want.dtype
    assert spec.prim.shape_rule(*[Aval(a.shape, a.dtype) for a in args], **params).dtype \
        == want.dtype


@pytest.mark.parametrize("spec,shapes", _cases(_is_diff))
def test_vjp_matches_central_differences(spec: Spec, shapes: tuple):
    """Complex values follow JAX's convention: the VJP is the transpose of the JVP for the
    pairing Re(sum(a * b)) (no conjugation), checked along complex directions."""
    r = np.random.default_rng(2)

    def rand(shape: tuple, like: Any) -> np.ndarray:
        x = r.standard_normal(shape)
        return x + 1j * r.standard_normal(shape) if np.iscomplexobj(like) else x
    args = spec.make(r, shapes)
    params = spec.params_for(shapes)
    wrt = spec.diff_inputs(args)
    g = one_eqn_graph(spec.prim, args, params)
    gg = typecheck(vjp_graph(g, wrt))
    out = spec.prim.impl(*args, **params)
    w = rand(np.shape(out), out)  # the fixed random output weights (the seed)
    res = compile_graph(gg).fn(*args, np.asarray(w, np.asarray(out).dtype))
    np.testing.assert_allclose(res[0], out, rtol=1e-12)
    cts = res[1:]
    for i, ct in zip(wrt, cts):
        assert ct.shape == args[i].shape and ct.dtype == args[i].dtype

    def f(xs: list) -> float:
        return float(np.real(np.sum(w * spec.prim.impl(*xs, **params))))
    for _ in range(2):
        dirs = {i: rand(args[i].shape, args[i]) for i in wrt}
        shifted = [[a + s * spec.eps * dirs[i] if i in dirs else a for i, a in enumerate(args)]
                   for s in (1, -1)]
        fd = (f(shifted[0]) - f(shifted[1])) / (2 * spec.eps)
        analytic = sum(float(np.real(np.sum(ct * dirs[i]))) for i, ct in zip(wrt, cts))
        assert analytic == pytest.approx(fd, rel=spec.tol, abs=1e-8)


@pytest.mark.parametrize("spec,shapes", _cases(lambda s: s.no_grad))
def test_vjp_without_a_rule_raises(spec: Spec, shapes: tuple):
    args = spec.make(np.random.default_rng(2), shapes)
    g = one_eqn_graph(spec.prim, args, spec.params_for(shapes))
    with pytest.raises(NoGradientError):
        vjp_graph(g, tuple(i for i, a in enumerate(args) if a.dtype.kind in "fc"))


@pytest.mark.parametrize("spec,shapes", _cases(lambda s: not _is_diff(s) and s.name != "full"
                                               and not s.no_grad and not s.phase))
def test_nondifferentiable_primitives_contribute_zero_gradient(spec: Spec, shapes: tuple):
    args = spec.make(np.random.default_rng(3), shapes)
    floats = tuple(i for i, a in enumerate(args) if a.dtype.kind == "f")
    if not floats:  # boolean or integer primitives: differentiate through a float input
        dts = [a.dtype for a in args]  # upstream, cast to the spec's own input dtypes
        args = [a.astype(np.float64) for a in args]
        floats = tuple(range(len(args)))
        prim = spec.prim

        def fn(*xs: Tracer) -> Tracer:
            ins = [P.cast(P.gt(x, 0.5), dtype=dt) if dt != bool else P.gt(x, 0.5)
                   for x, dt in zip(xs, dts)]
            return P.cast(prim(*ins, **spec.params_for(shapes)), dtype=np.dtype(np.float64))
    else:
        def fn(*xs: Tracer) -> Tracer:
            return P.cast(spec.prim(*xs, **spec.params_for(shapes)), dtype=np.dtype(np.float64))
    ins = [Var(Aval(a.shape, a.dtype)) for a in args]
    b = Builder(ins)
    with b:
        out = fn(*[Tracer(b, v) for v in ins])
    gg = typecheck(vjp_graph(b.build([out.atom]), floats))
    w = np.random.default_rng(4).standard_normal(out.shape)
    cts = compile_graph(gg).fn(*args, w)[1:]
    assert len(cts) == len(floats)
    for ct, i in zip(cts, floats):
        assert ct.shape == args[i].shape
        np.testing.assert_array_equal(ct, 0.0)


def _flag_sets(spec: Spec, n_in: int) -> list[tuple[bool, ...]]:
    if spec.name in ("getitem", "reshape", "transpose", "broadcast_to", "softmax", "logsumexp") \
            or spec.name.startswith("reduce_") or n_in == 1:
        return [(True,) * n_in]
    flags = [(True,) * n_in]
    flags += [tuple(j != i for j in range(n_in)) for i in range(n_in)]  # one operand shared
    flags += [tuple(j == i for j in range(n_in)) for i in range(n_in) if n_in > 2]
    return flags


@pytest.mark.parametrize("spec,shapes", _cases(lambda s: s.prim.batch is not None))
def test_batch_rule_matches_stacked_instances(spec: Spec, shapes: tuple):
    n = 3
    r = np.random.default_rng(5)
    params = spec.params_for(shapes)
    insts = [spec.make(r, shapes) for _ in range(n)]
    for flags in _flag_sets(spec, len(shapes)):
        per = [[inst[k] if flags[k] else insts[0][k] for k in range(len(shapes))]
               for inst in insts]
        want = np.stack([np.asarray(spec.prim.impl(*a, **params)) for a in per])
        ins = [np.stack([inst[k] for inst in insts]) if flags[k] else insts[0][k]
               for k in range(len(shapes))]
        if not spec.batchable:
            with pytest.raises(P.NotBatchable):
                run_traced(lambda *ts, fl=flags: spec.prim.batch(n, fl, *ts, **params), ins)
            continue
        got = run_traced(lambda *ts, fl=flags: spec.prim.batch(n, fl, *ts, **params), ins)
        assert got.shape == want.shape, f"batched flags {flags}"
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12,
                                   err_msg=f"batched flags {flags}")


def test_only_creation_primitives_lack_a_batch_rule():
    assert sorted(n for n, p in P.REGISTRY.items() if p.batch is None) == ["full"]


def test_getitem_batch_moves_batch_axis_for_separated_advanced_indices():
    # NumPy puts the axes of separated advanced indices first; the batch axis must stay first
    key = (np.array([0, 1]), None, slice(None), np.array([1, 2]))
    x = np.random.default_rng(6).standard_normal((2, 3, 4, 5))
    idx = P.normalize_index(key, x.shape[1:])
    got = run_traced(lambda t: P.getitem.batch(2, (True,), t, idx=idx), [x])
    np.testing.assert_array_equal(got, np.stack([x[0][key], x[1][key]]))


# ------------------------------------------------------------------ every installed backend
# Each spec's graph (its equation and, where differentiable, its VJP, in float64; and the
# equation alone in float32) runs on every installed backend and is compared with the NumPy
# backend. All cases of a backend run as one graph, compiled once (a jax.jit compile per
# case would cost a minute); if that fails, each case is compiled alone to find the culprit.

OTHER_BACKENDS = [n for n in backends.NAMES if n != "numpy"]


def _backend(name: str) -> backends.Backend:
    if not backends.available(name):
        pytest.skip(f"backend {name}: its package is not installed")
    return backends.get(name)


@pytest.mark.parametrize("name", OTHER_BACKENDS)
def test_every_registered_primitive_has_a_lowering(name: str):
    assert not missing(_backend(name).lowerings), f"no {name} lowering for these primitives"


def _backend_case(spec: Spec, shapes: tuple, dt: type) -> tuple[Graph, list[np.ndarray]]:
    """The graph of one spec instance and its inputs: float64 with the VJP (seeded by a fixed
    random cotangent, the graph's last input) where differentiable, float32 without."""
    args = [a.astype(dt) if a.dtype.kind == "f" else a
            for a in spec.make(np.random.default_rng(7), shapes)]
    params = spec.params_for(shapes)
    g = one_eqn_graph(spec.prim, args, params)
    wrt = spec.diff_inputs(args) if _is_diff(spec) and dt is np.float64 else ()
    if not wrt:
        return g, args
    out = np.asarray(spec.prim.impl(*args, **params))
    w = np.random.default_rng(8).standard_normal(out.shape).astype(out.dtype)
    return vjp_graph(g, wrt), args + [w]


def _takes_float32(spec: Spec, shapes: tuple) -> bool:
    """Whether the spec's params accept float32 operands (a loop's step was traced for
    float64, say)."""
    args = spec.make(np.random.default_rng(7), shapes)
    try:
        spec.prim.shape_rule(*[Aval(a.shape, np.dtype(np.float32) if a.dtype.kind == "f" else
                                    a.dtype) for a in args], **spec.params_for(shapes))
    except Exception:  # noqa: BLE001
        return False
    return True


BACKEND_CASES = [pytest.param(s, shapes, dt, id=f"{p.id}-{dt.__name__}")
                 for p in _cases() for s, shapes in [p.values] for dt in (np.float64, np.float32)
                 if dt is np.float64 or _takes_float32(s, shapes)]
_RUNS: dict[str, dict] = {}

# numba compiles each fused region cold at about 50 ms of CPU per fused equation: the whole
# list (about 3,100 fused equations) takes minutes. By default it runs a slice that still
# reaches every lowering: each primitive once in float32 (its equation alone, fused or run as
# NumPy; float64 where it takes no float32) and the float64 VJP graph of each primitive the
# kernels fuse (300 cases, 335 fused equations), and every case of the loop primitive.
# VECGRAD_NUMBA_FULL=1 runs every case.
NUMBA_FULL = os.environ.get("VECGRAD_NUMBA_FULL", "") not in ("", "0")


def _numba_slice() -> set[tuple]:
    """The keys (id(spec), shapes, dtype) of the cases the numba backend runs by default."""
    from vecgrad.backends.numba import FUSIBLE
    from vecgrad.backends.numba.regions import fusible
    firsts: dict[tuple, tuple] = {}
    for s, shapes, dt in (p.values for p in BACKEND_CASES):
        firsts.setdefault((s.prim.name, dt), (s, shapes, dt))
    keep = set()
    for (name, dt), (s, shapes, _) in firsts.items():
        eqn = one_eqn_graph(s.prim, s.make(np.random.default_rng(7), shapes),
                            s.params_for(shapes)).eqns[0]
        if dt is np.float32 or (name, np.float32) not in firsts or fusible(eqn, FUSIBLE):
            keep.add((id(s), shapes, dt))
    # every loop case: each is one compiled step kernel and driver (backends/numba/loop.py)
    keep |= {(id(s), shapes, dt) for s, shapes, dt in (p.values for p in BACKEND_CASES)
             if s.prim.name == "loop"}
    return keep


_SLICES: dict[str, set[tuple] | None] = {}


def _selected(name: str) -> set[tuple] | None:
    """The cases backend `name` runs (None: all of them)."""
    if name not in _SLICES:
        _SLICES[name] = _numba_slice() if name == "numba" and not NUMBA_FULL else None
    return _SLICES[name]


def _run_all(be: backends.Backend) -> dict:
    """Every backend case's outputs (as NumPy arrays) or the exception it raised."""
    runs = _RUNS.get(be.name)
    if runs is not None:
        return runs
    chosen = _selected(be.name)
    cases = {(id(s), shapes, dt): _backend_case(s, shapes, dt)
             for s, shapes, dt in (p.values for p in BACKEND_CASES)
             if chosen is None or (id(s), shapes, dt) in chosen}
    graphs = [g for g, _ in cases.values()]
    big = Graph(sum((g.inputs for g in graphs), ()), sum((g.eqns for g in graphs), ()),
                sum((g.outputs for g in graphs), ()))
    try:
        flat = iter(be.compile(big, "all_specs").fn(*[x for _, xs in cases.values() for x in xs]))
        runs = {k: [be.to_numpy(next(flat)) for _ in g.outputs] for k, (g, _) in cases.items()}
    except Exception:  # noqa: BLE001 - one case broke the whole graph: find it
        runs = {}
        for k, (g, xs) in cases.items():
            try:
                runs[k] = [be.to_numpy(r) for r in be.compile(g, "one_spec").fn(*xs)]
            except Exception as e:  # noqa: BLE001
                runs[k] = e
    _RUNS[be.name] = runs
    return runs


@pytest.mark.parametrize("name", OTHER_BACKENDS)
@pytest.mark.parametrize("spec,shapes,dt", BACKEND_CASES)
def test_backend_matches_numpy(name: str, spec: Spec, shapes: tuple, dt: type, x64: None):
    be = _backend(name)
    chosen = _selected(name)
    if chosen is not None and (id(spec), shapes, dt) not in chosen:
        pytest.skip(f"{name}: outside the default slice of the spec list "
                    "(VECGRAD_NUMBA_FULL=1 runs every case)")
    got = _run_all(be)[(id(spec), shapes, dt)]
    if isinstance(got, Exception):
        raise got
    g, xs = _backend_case(spec, shapes, dt)
    want = compile_graph(g).fn(*xs)
    tol = {"rtol": 1e-9, "atol": 1e-12} if dt is np.float64 else {"rtol": 2e-5, "atol": 1e-6}
    if spec.gauge or spec.phase:  # vectors up to sign or phase: the VJP in the backend's
        # choice is NumPy's VJP of the cotangent times those factors (f_backend = s f_numpy
        # near the input, s of modulus 1)
        np.testing.assert_allclose(np.abs(got[0]), np.abs(want[0]), **tol)
        if len(xs) > len(spec.shapes):
            big = np.abs(want[0]) > 1e-9
            s = np.where(big, got[0] / np.where(big, want[0], 1), 1)
            want = compile_graph(g).fn(*xs[:-1], xs[-1] * s.astype(xs[-1].dtype))
        want = [got[0]] + list(want[1:])
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want)):
        assert a.shape == b.shape and a.dtype == b.dtype, f"output {k}: {a.dtype}{list(a.shape)}" \
            f" on {name}, {b.dtype}{list(b.shape)} on numpy"
        np.testing.assert_allclose(a, b, **tol, err_msg=f"output {k} on {name}")
