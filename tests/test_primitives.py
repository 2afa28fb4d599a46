"""One spec per primitive instance; every rule of every primitive is tested from this list.

For each spec: the impl (and the lowered callable codegen uses) against a NumPy reference, the
shape rule against the impl, the VJP against float64 central differences along random
directions, broadcasting variants, and the batching rule against stacking unbatched results.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from vecgrad import primitives as P
from vecgrad.autodiff import vjp_graph
from vecgrad.backends import compile_graph
from vecgrad.ir import Aval, Const, Var, typecheck
from vecgrad.tracing import Builder, Tracer

# ------------------------------------------------------------------ input domains

def normal(r: np.random.Generator, s: tuple) -> np.ndarray:
    return r.standard_normal(s)


def positive(r: np.random.Generator, s: tuple) -> np.ndarray:
    return r.uniform(0.5, 2.0, s)


def away0(r: np.random.Generator, s: tuple) -> np.ndarray:
    return r.choice([-1.0, 1.0], s) * r.uniform(0.5, 2.0, s)


def above_m1(r: np.random.Generator, s: tuple) -> np.ndarray:
    return r.uniform(-0.5, 2.0, s)


def boolean(r: np.random.Generator, s: tuple) -> np.ndarray:
    return r.random(s) > 0.5


def small_ints(r: np.random.Generator, s: tuple) -> np.ndarray:
    """Floats with many ties (for eq/ne and friends)."""
    return r.integers(0, 3, s).astype(np.float64)


def with_zeros(nz: int) -> Callable:
    """Normal values with `nz` zeros in every row of the last axis (prod's hard case)."""
    def gen(r: np.random.Generator, s: tuple) -> np.ndarray:
        x = away0(r, s)
        x[..., :nz] = 0.0
        return x
    return gen


# ------------------------------------------------------------------------------ the spec

@dataclass(frozen=True)
class Spec:
    name: str                      # the primitive's REGISTRY name
    shapes: tuple                  # one shape per input
    ref: Callable                  # NumPy reference: ref(*inputs) (params already bound)
    params: Any = field(default_factory=dict)  # dict, or shapes -> dict
    gens: Any = normal             # one domain for all inputs, or a tuple of them
    wrt: tuple | None = None       # differentiable inputs; None: all float inputs
    bcast: tuple = ()              # more shape tuples (broadcasting variants)
    tol: float = 1e-6              # rtol of the finite-difference check
    eps: float = 1e-6
    batchable: bool = True         # False: the batching rule must refuse (NotBatchable)
    label: str = ""

    @property
    def prim(self) -> P.Primitive:
        return P.REGISTRY[self.name]

    def params_for(self, shapes: tuple) -> dict:
        return self.params(shapes) if callable(self.params) else self.params

    def make(self, r: np.random.Generator, shapes: tuple) -> list[np.ndarray]:
        gens = self.gens if isinstance(self.gens, tuple) else (self.gens,) * len(shapes)
        return [np.asarray(g(r, s)) for g, s in zip(gens, shapes)]

    def diff_inputs(self, args: list[np.ndarray]) -> tuple[int, ...]:
        if self.wrt is not None:
            return self.wrt
        if self.prim.vjp is None:
            return ()
        return tuple(i for i, a in enumerate(args) if a.dtype.kind == "f")

    def variants(self) -> list[tuple]:
        return [self.shapes, *self.bcast]


def idx(key: Any) -> Callable[[tuple], dict]:
    """getitem/setitem params for a NumPy key, normalized against input 0's shape."""
    return lambda shapes: {"idx": P.normalize_index(key, shapes[0])}


def _set_ref(key: Any) -> Callable:
    def ref(x: np.ndarray, v: np.ndarray) -> np.ndarray:
        out = x.copy()
        out[key] = v
        return out
    return ref


def _add_ref(key: Any) -> Callable:
    def ref(x: np.ndarray, v: np.ndarray) -> np.ndarray:
        out = x.copy()
        np.add.at(out, key, v)
        return out
    return ref


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


BIN_BCAST = (((3, 4), (4,)), ((3, 1), (1, 4)), ((), (3, 4)), ((2, 1, 4), (3, 1)))
UN = ((3, 4),)
AX = lambda axes: {"axes": axes}
MASK = np.array([[True, False, True, False], [False, False, True, True], [True] * 4])


def unary(name: str, ref: Callable, gen: Callable = normal, **kw: Any) -> Spec:
    return Spec(name, UN, ref, gens=gen, bcast=(((),), ((2, 1, 3),)), **kw)


def binary(name: str, ref: Callable, gens: Any = normal, **kw: Any) -> Spec:
    return Spec(name, ((3, 4), (3, 4)), ref, gens=gens, bcast=BIN_BCAST, **kw)


SPECS: list[Spec] = [
    # unary elementwise
    unary("neg", np.negative),
    unary("exp", np.exp),
    unary("log", np.log, positive),
    unary("log1p", np.log1p, above_m1),
    unary("expm1", np.expm1),
    unary("sqrt", np.sqrt, positive),
    unary("abs", np.abs, away0),
    unary("tanh", np.tanh),
    unary("sin", np.sin),
    unary("cos", np.cos),
    unary("logistic", lambda x: 1 / (1 + np.exp(-x))),
    unary("sign", np.sign),
    unary("stop_gradient", lambda x: x),
    unary("logical_not", np.logical_not, boolean),
    Spec("powc", UN, np.square, {"p": 2}, label="p2"),
    Spec("powc", UN, lambda x: x ** 3, {"p": 3}, label="p3"),
    Spec("powc", UN, np.sqrt, {"p": 0.5}, positive, label="p0.5"),
    Spec("powc", UN, lambda x: 1 / x, {"p": -1}, away0, label="p-1"),
    Spec("powc", UN, np.ones_like, {"p": 0}, label="p0"),
    # binary elementwise
    binary("add", np.add),
    binary("sub", np.subtract),
    binary("mul", np.multiply),
    binary("div", np.divide, (normal, away0)),
    binary("pow", np.power, (positive, normal)),
    binary("maximum", np.maximum),
    binary("minimum", np.minimum),
    binary("lt", np.less, small_ints),
    binary("le", np.less_equal, small_ints),
    binary("gt", np.greater, small_ints),
    binary("ge", np.greater_equal, small_ints),
    binary("eq", np.equal, small_ints),
    binary("ne", np.not_equal, small_ints),
    binary("logical_and", np.logical_and, boolean),
    binary("logical_or", np.logical_or, boolean),
    Spec("where", ((3, 4),) * 3, np.where, gens=(boolean, normal, normal), wrt=(1, 2),
         bcast=(((3, 1), (4,), ()), ((4,), (2, 3, 1), (1, 4)))),
    Spec("cast", UN, lambda x: x.astype(np.float32), {"dtype": np.dtype(np.float32)},
         tol=1e-3, eps=1e-2, label="f64-f32"),
    Spec("cast", UN, lambda x: x.astype(np.float64), {"dtype": np.dtype(np.float64)},
         gens=boolean, label="bool-f64"),
    # reductions
    Spec("reduce_sum", ((3, 4, 5),), lambda x: x.sum((0, 2)), AX((0, 2)), label="02"),
    Spec("reduce_sum", ((3, 4),), np.sum, AX((0, 1)), label="all"),
    Spec("reduce_sum", ((3, 4),), lambda x: x, AX(()), label="none"),
    Spec("reduce_max", ((3, 4, 5),), lambda x: x.max(1), AX((1,)), label="1"),
    Spec("reduce_max", ((3, 4),), np.max, AX((0, 1)), label="all"),
    Spec("reduce_min", ((3, 4, 5),), lambda x: x.min((0, 2)), AX((0, 2)), label="02"),
    # many short rows: the transposed-copy fast path of reduce_along
    Spec("reduce_max", ((5, 8, 6),), lambda x: x.max(2), AX((2,)), label="short-rows"),
    Spec("reduce_sum", ((40, 7),), lambda x: x.sum(1), AX((1,)), label="short-rows"),
    Spec("reduce_prod", ((3, 4),), lambda x: x.prod(1), AX((1,)), away0, label="1"),
    Spec("reduce_prod", ((3, 4),), lambda x: x.prod(1), AX((1,)), with_zeros(1),
         label="one-zero"),
    Spec("reduce_prod", ((3, 4),), lambda x: x.prod(1), AX((1,)), with_zeros(2),
         label="two-zeros"),
    Spec("reduce_prod", ((2, 3, 2),), lambda x: x.prod((0, 2)), AX((0, 2)), with_zeros(1),
         label="02-zeros"),
    # indexing and writes
    Spec("getitem", ((4, 5, 6),), lambda x: x[1, ::2, -1], idx((1, slice(None, None, 2), -1)),
         label="int-step"),
    Spec("getitem", ((4, 5, 6),), lambda x: x[::-2, None, ..., 1:5:3],
         idx((slice(None, None, -2), None, Ellipsis, slice(1, 5, 3))), label="neg-step-none"),
    Spec("getitem", ((4, 5),), lambda x: x[np.array([3, -1, 0, 3])],
         idx(np.array([3, -1, 0, 3])), label="int-array"),
    Spec("getitem", ((4, 5, 6),), lambda x: x[:, [0, 2], [1, 1]],
         idx((slice(None), np.array([0, 2]), np.array([1, 1]))), label="int-arrays"),
    Spec("getitem", ((4, 5, 6),), lambda x: x[1, :, [0, 2]],
         idx((1, slice(None), np.array([0, 2]))), label="int-slice-array"),
    Spec("getitem", ((4, 5, 6),), lambda x: x[[0, 2], 1:4, [1, 1]],
         idx((np.array([0, 2]), slice(1, 4), np.array([1, 1]))), label="separated-arrays"),
    Spec("getitem", ((3, 4),), lambda x: x[MASK], idx(MASK), label="bool-mask"),
    Spec("setitem", ((4, 5), (5,)), _set_ref((slice(1, 4, 2), slice(None))),
         idx((slice(1, 4, 2), slice(None))), label="basic-bcast"),
    Spec("setitem", ((4, 5), ()), _set_ref((-1, 2)), idx((-1, 2)), label="scalar"),
    Spec("setitem", ((4, 5), (3, 5)), _set_ref(np.array([2, 0, 3])),
         idx(np.array([2, 0, 3])), batchable=False, label="int-array"),
    Spec("setitem_add", ((4, 5), (2, 1)), _add_ref((slice(0, 2), slice(None))),
         idx((slice(0, 2), slice(None))), label="basic"),
    Spec("setitem_add", ((4, 5), (4, 5)), _add_ref(np.array([1, 1, 3, 1])),
         idx(np.array([1, 1, 3, 1])), batchable=False, label="repeated"),
    Spec("full", (), lambda: np.full((2, 3), 1.5, np.float32),
         {"shape": (2, 3), "dtype": np.dtype(np.float32), "value": 1.5}),
    # shapes
    Spec("reshape", ((3, 4),), lambda x: x.reshape(2, 6), {"shape": (2, 6)}),
    Spec("transpose", ((2, 3, 4),), lambda x: x.transpose(1, 2, 0), {"perm": (1, 2, 0)}),
    *[Spec("relayout", (shape,), lambda x, p=perm: x.transpose(p), {"perm": perm},
           label=f"{shape} {perm}")
      for shape, perm in [((2, 3, 4), (2, 0, 1)), ((2, 3, 4), (1, 2, 0)),
                          # big enough for transpose_copy's tiles: first axis last, last first,
                          # and reversed
                          ((40, 30, 32), (1, 2, 0)), ((40, 30, 32), (2, 0, 1)),
                          ((40, 30, 32), (2, 1, 0))]],
    Spec("broadcast_to", ((3, 1),), lambda x: np.broadcast_to(x, (2, 3, 4)),
         {"shape": (2, 3, 4)}),
    Spec("concatenate", ((2, 3), (2, 1), (2, 2)), lambda *xs: np.concatenate(xs, 1),
         {"axis": 1}),
    Spec("stack", ((2, 3), (2, 3), (2, 3)), lambda *xs: np.stack(xs, 1), {"axis": 1}),
    Spec("stack", ((), ()), lambda *xs: np.stack(xs, 0), {"axis": 0}, label="scalars"),
    # contractions
    *[Spec("einsum", shapes, lambda *xs, s=spec: np.einsum(s, *xs), {"spec": spec}, label=spec)
      for spec, shapes in [
          ("ij,jk->ik", ((3, 4), (4, 2))), ("ij,kj->ik", ((3, 4), (2, 4))),
          ("bij,bjk->bik", ((2, 3, 4), (2, 4, 2))), ("i,i->", ((4,), (4,))),
          ("i,j->ij", ((3,), (4,))), ("ij,j->i", ((3, 4), (4,))), ("ijk->kj", ((2, 3, 4),)),
          ("ij->", ((3, 4),)), ("ii->i", ((3, 3),)), ("ii->", ((3, 3),)),
          ("ij,k->i", ((3, 4), (2,))), ("ij,jk,kl->il", ((2, 3), (3, 4), (4, 2))),
          ("iij,jk->ik", ((3, 3, 2), (2, 4)))]],
    *[Spec("muladd", shapes, lambda x, y, c, s=spec: np.einsum(s, x, y) + c, {"spec": spec},
           label=spec + " " + str(shapes[2]))
      for spec, shapes in [("ij,jk->ik", ((3, 4), (4, 2), (2,))),
                           ("ij,jk->ik", ((3, 4), (4, 2), (3, 1))),
                           ("bij,bjk->bik", ((2, 3, 4), (2, 4, 2), (2, 3, 2))),
                           ("i,i->", ((4,), (4,), ()))]],
    # fused nn
    Spec("softmax", ((3, 4),), lambda x: _softmax(x, 1), {"axis": 1}, label="1"),
    Spec("softmax", ((3, 4),), lambda x: _softmax(x, 0), {"axis": 0}, label="0"),
    Spec("softmax", ((5, 8, 6),), lambda x: _softmax(x, 2), {"axis": 2}, label="short-rows"),
    Spec("logsumexp", ((3, 4),), lambda x: np.log(np.exp(x).sum(1)), {"axis": 1}),
    *[Spec("softmax_vjp", shapes, lambda g, p, a=axis: p * (g - (g * p).sum(a, keepdims=True)),
           {"axis": axis}, label=label)
      for shapes, axis, label in [(((3, 4), (3, 4)), 1, "1"), (((3, 4), (3, 4)), 0, "0"),
                                  (((5, 8, 6), (5, 8, 6)), 2, "short-rows")]],
    Spec("logsumexp", ((40, 7),), lambda x: np.log(np.exp(x).sum(1)), {"axis": 1},
         label="short-rows"),
    *[Spec("norm", shapes, lambda x, s=spec: np.sqrt(np.einsum(s, x ** 2)), {"spec": spec},
           away0, label=spec)
      for spec, shapes in [("abc->ca", ((2, 3, 4),)), ("ij->", ((3, 4),)),
                           ("ij->j", ((3, 4),)), ("ij->ji", ((3, 4),))]],
]


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
    return s.prim.vjp is not None and s.wrt != ()


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
    lowered = np.asarray(spec.prim.lowered(params, [Aval(a.shape, a.dtype) for a in args])(*args))
    aval = spec.prim.shape_rule(*[Aval(a.shape, a.dtype) for a in args], **params)
    for out in (got, lowered):
        assert out.shape == want.shape and out.dtype == want.dtype
        np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)
    assert aval == Aval(want.shape, want.dtype), "shape rule disagrees with the impl"


@pytest.mark.parametrize("spec,shapes", _cases(lambda s: s.name not in ("full", "cast")))
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
    r = np.random.default_rng(2)
    args = spec.make(r, shapes)
    params = spec.params_for(shapes)
    wrt = spec.diff_inputs(args)
    g = one_eqn_graph(spec.prim, args, params)
    gg = typecheck(vjp_graph(g, wrt))
    out = spec.prim.impl(*args, **params)
    w = r.standard_normal(np.shape(out))  # the fixed random output weights (the seed)
    res = compile_graph(gg).fn(*args, np.asarray(w, np.asarray(out).dtype))
    np.testing.assert_allclose(res[0], out, rtol=1e-12)
    cts = res[1:]
    for i, ct in zip(wrt, cts):
        assert ct.shape == args[i].shape and ct.dtype == args[i].dtype

    def f(xs: list) -> float:
        return float(np.sum(w * spec.prim.impl(*xs, **params)))
    for _ in range(2):
        dirs = {i: r.standard_normal(args[i].shape) for i in wrt}
        shifted = [[a + s * spec.eps * dirs[i] if i in dirs else a for i, a in enumerate(args)]
                   for s in (1, -1)]
        fd = (f(shifted[0]) - f(shifted[1])) / (2 * spec.eps)
        analytic = sum(float(np.vdot(ct, dirs[i])) for i, ct in zip(wrt, cts))
        assert analytic == pytest.approx(fd, rel=spec.tol, abs=1e-8)


@pytest.mark.parametrize("spec,shapes", _cases(lambda s: not _is_diff(s) and s.name != "full"))
def test_nondifferentiable_primitives_contribute_zero_gradient(spec: Spec, shapes: tuple):
    args = spec.make(np.random.default_rng(3), shapes)
    floats = tuple(i for i, a in enumerate(args) if a.dtype.kind == "f")
    if not floats:  # boolean-only primitives: differentiate through a float input upstream
        args = [a.astype(np.float64) for a in args]
        floats = tuple(range(len(args)))
        prim = spec.prim

        def fn(*xs: Tracer) -> Tracer:
            return P.cast(prim(*[P.gt(x, 0.5) for x in xs], **spec.params_for(shapes)),
                          dtype=np.dtype(np.float64))
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
