"""The IR: typecheck, the pretty-printer, CSE and DCE, and the schedule of generated code."""
from __future__ import annotations

import functools
import itertools
import re

import numpy as np
import pytest

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.backends import compile_graph
from vecgrad.backends.numpy import LOWERINGS
from vecgrad.inputs import trace
from vecgrad.ir import (
    Aval,
    Const,
    Eqn,
    Graph,
    Params,
    TypeCheckError,
    Var,
    VarTable,
    dce,
    pretty,
    typecheck,
)
from vecgrad.rewrite.cse import cse
from vecgrad.tracing import Builder, Tracer

F64 = np.dtype(np.float64)
F32 = np.dtype(np.float32)
X = np.random.default_rng(0).standard_normal((2, 3))
Y = np.random.default_rng(1).standard_normal(3).astype(np.float32)


def small(x, y):
    a = vnp.exp(x)
    b = vnp.exp(x)  # a duplicate: CSE merges it
    dead = vnp.sin(y)  # noqa: F841 - unused: DCE drops it
    return vnp.sum(a * b + y[0], axis=1)


def small_graph() -> Graph:
    b, out = trace(small, [Aval((2, 3), F64), Aval((3,), F32)], hash_cons=False)
    return typecheck(b.build([out.atom]))


def run(g: Graph, *args):
    return compile_graph(typecheck(g)).fn(*args)


def golden(text: str) -> str:
    """Fill in `L+k` placeholders with line numbers relative to `small`'s def line."""
    first = small.__code__.co_firstlineno
    for k in range(5, 0, -1):
        text = text.replace(f"L+{k}", str(first + k))
    return text


# ------------------------------------------------------------------------- value numbers

def test_value_numbers_are_dense_in_a_trace_and_unique():
    g = small_graph()
    nums = [e.out.num for e in g.eqns]
    assert nums == list(range(nums[0], nums[0] + len(nums)))  # (nothing else made vars)
    assert all(v.num < nums[0] for v in g.inputs)
    assert Var(g.inputs[0].aval).num > nums[-1]


def test_var_table_maps_vars_inside_and_outside_its_span():
    g = small_graph()
    t = VarTable(g.eqns)
    assert t.size == len(g.eqns)
    late = Var(g.inputs[0].aval)  # made after the table: kept aside
    for i, e in enumerate(g.eqns):
        t[e.out] = i
    t[late] = -1
    assert [t.get(e.out) for e in g.eqns] == list(range(len(g.eqns)))
    assert t.get(late) == -1 and late in t.extra
    assert t.get(g.inputs[0]) is None and t.get(Var(g.inputs[0].aval)) is None


def test_var_table_of_far_apart_numbers_is_a_dict():
    old = [Var(Aval((), F64)) for _ in range(3)]
    [Var(Aval((), F64)) for _ in range(5000)]  # (other traces' values)
    new = Var(Aval((), F64))
    far = [_eqn(P.sin, [old[0]], old[1]), _eqn(P.sin, [old[1]], new)]
    backwards = [_eqn(P.sin, [old[0]], new), _eqn(P.sin, [new], old[2])]
    for eqns in (far, backwards):
        t = VarTable(eqns)
        assert t.size == 0
        for i, e in enumerate(eqns):
            t[e.out] = i
        assert [t.get(e.out) for e in eqns] == [0, 1] and len(t.extra) == 2


# ------------------------------------------------------------------------------ typecheck

def _eqn(prim, ins, out, **params):
    return Eqn(prim, tuple(ins), Params(params), out)


def test_typecheck_accepts_a_traced_graph():
    g = small_graph()
    assert typecheck(g) is g


def test_typecheck_catches_undefined_var():
    x, ghost, out = Var(Aval((3,), F64)), Var(Aval((3,), F64)), Var(Aval((3,), F64))
    g = Graph((x,), (_eqn(P.add, [x, ghost], out),), (out,))
    with pytest.raises(TypeCheckError, match="undefined"):
        typecheck(g)


def test_typecheck_catches_use_before_definition():
    x, a, b = Var(Aval((3,), F64)), Var(Aval((3,), F64)), Var(Aval((3,), F64))
    g = Graph((x,), (_eqn(P.exp, [a], b), _eqn(P.exp, [x], a)), (b,))
    with pytest.raises(TypeCheckError, match="undefined"):
        typecheck(g)


def test_typecheck_catches_wrong_aval():
    x = Var(Aval((3,), F64))
    g = Graph((x,), (_eqn(P.reduce_sum, [x], Var(Aval((3,), F64)), axes=(0,)),), ())
    with pytest.raises(TypeCheckError, match="declares"):
        typecheck(g)
    wrong_dtype = Var(Aval((3,), F32))
    with pytest.raises(TypeCheckError, match="declares"):
        typecheck(Graph((x,), (_eqn(P.exp, [x], wrong_dtype),), (wrong_dtype,)))


def test_typecheck_catches_shape_rule_failure():
    x, y, out = Var(Aval((3,), F64)), Var(Aval((4,), F64)), Var(Aval((3,), F64))
    with pytest.raises(TypeCheckError, match="shape rule"):
        typecheck(Graph((x, y), (_eqn(P.add, [x, y], out),), (out,)))


def test_typecheck_catches_double_definition_and_undefined_output():
    x, a = Var(Aval((3,), F64)), Var(Aval((3,), F64))
    with pytest.raises(TypeCheckError, match="twice"):
        typecheck(Graph((x,), (_eqn(P.exp, [x], a), _eqn(P.sin, [x], a)), (a,)))
    with pytest.raises(TypeCheckError, match="undefined"):
        typecheck(Graph((x,), (), (a,)))


def test_typecheck_accepts_constants():
    x, out = Var(Aval((3,), F64)), Var(Aval((3,), F64))
    g = Graph((x,), (_eqn(P.mul, [x, Const(np.float64(2.0))], out),), (out,))
    np.testing.assert_allclose(run(g, np.ones(3))[0], 2.0)


# ------------------------------------------------------------------------------- printing

TRACED = """\
{ lambda a:f64[2,3] b:f32[3] .
  c:f64[2,3] = exp a    # test_ir.py:L+1
  d:f64[2,3] = exp a    # test_ir.py:L+2
  e:f32[3] = sin b    # test_ir.py:L+3
  f:f64[2,3] = mul c d    # test_ir.py:L+4
  g:f32[] = getitem[idx=(0,)] b    # test_ir.py:L+4
  h:f64[2,3] = add f g    # test_ir.py:L+4
  i:f64[2] = reduce_sum[axes=(1,)] h    # test_ir.py:L+4
  in (i) }"""

AFTER_CSE = """\
{ lambda a:f64[2,3] b:f32[3] .
  c:f64[2,3] = exp a    # test_ir.py:L+1
  d:f32[3] = sin b    # test_ir.py:L+3
  e:f64[2,3] = mul c c    # test_ir.py:L+4
  f:f32[] = getitem[idx=(0,)] b    # test_ir.py:L+4
  g:f64[2,3] = add e f    # test_ir.py:L+4
  h:f64[2] = reduce_sum[axes=(1,)] g    # test_ir.py:L+4
  in (h) }"""

AFTER_DCE = """\
{ lambda a:f64[2,3] b:f32[3] .
  c:f64[2,3] = exp a    # test_ir.py:L+1
  d:f64[2,3] = mul c c    # test_ir.py:L+4
  e:f32[] = getitem[idx=(0,)] b    # test_ir.py:L+4
  f:f64[2,3] = add d e    # test_ir.py:L+4
  g:f64[2] = reduce_sum[axes=(1,)] f    # test_ir.py:L+4
  in (g) }"""


def test_pretty_print_golden():
    g = small_graph()
    assert pretty(g) == golden(TRACED)
    assert str(g) == pretty(g)


def test_pretty_print_truncates_long_graphs():
    text = pretty(small_graph(), max_eqns=3)
    assert text.splitlines()[-2] == "  ... 4 more equations"
    assert len(text.splitlines()) == 1 + 3 + 2


def test_pretty_print_params_and_slices():
    b, out = trace(lambda x: x[1:, ::-1][0], [Aval((3, 4), F64)], hash_cons=False)
    text = pretty(b.build([out.atom]))
    assert "getitem[idx=(1:3, 3:-1:-1)] a" in text
    assert "getitem[idx=(0, 0:4)]" in text


# ---------------------------------------------------------------------------- CSE and DCE

def test_cse_merges_duplicates_and_keeps_values():
    g = small_graph()
    g2 = typecheck(cse(g))
    assert pretty(g2) == golden(AFTER_CSE)
    np.testing.assert_allclose(run(g2, X, Y)[0], run(g, X, Y)[0], rtol=0)


def test_dce_drops_dead_code_and_keeps_values():
    g = small_graph()
    g3 = typecheck(dce(cse(g)))
    assert pretty(g3) == golden(AFTER_DCE)
    np.testing.assert_allclose(run(g3, X, Y)[0], np.sum(np.exp(X) ** 2 + Y[0], axis=1),
                               rtol=1e-12)
    assert typecheck(dce(g)).eqns[-1].prim is P.reduce_sum and len(dce(g).eqns) == 6


def test_cse_merges_equal_small_constants_but_not_different_params():
    def f(x):
        return (x * np.array([1.0, 2.0, 3.0]) + x * np.array([1.0, 2.0, 3.0]) + vnp.sum(x, 0)
                + vnp.sum(x[None], (0, 1)))
    b, out = trace(f, [Aval((3,), F64)], hash_cons=False)
    g = typecheck(b.build([out.atom]))
    g2 = typecheck(cse(g))
    assert [e.prim.name for e in g2.eqns].count("mul") == 1
    assert [e.prim.name for e in g2.eqns].count("reduce_sum") == 2
    x = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(run(g2, x)[0], run(g, x)[0])


def test_cse_keeps_writes_to_distinct_buffers_apart():
    def f(x):
        b1 = vnp.zeros(3)
        b2 = vnp.zeros(3)
        b1[0] = x[0]
        b2[1] = x[1]
        return b1 + b2 * 10
    x = np.array([1.0, 2.0, 3.0])
    b, out = trace(f, [Aval((3,), F64)], hash_cons=False)
    g = typecheck(b.build([out.atom]))
    np.testing.assert_allclose(run(cse(g), x)[0], [1.0, 20.0, 0.0])
    np.testing.assert_allclose(vg.jit(f)(x), [1.0, 20.0, 0.0])


# ----------------------------------------------------------------------- codegen schedule

def test_codegen_frees_dead_intermediates():
    def f(x):
        a = vnp.exp(x)
        b = vnp.sin(a)
        c = vnp.cos(b)
        return vnp.sum(c * 2.0)
    entry, _ = vg.grad(f).entry(X)
    src = entry.compiled.source
    assert "del " in src
    jsrc = vg.jit(f).entry(X)[0].compiled.source
    assert "del " in jsrc
    # every intermediate is deleted exactly once and never read after its del
    lines = jsrc.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("del "):
            for name in line.strip()[4:].split(", "):
                later = "\n".join(lines[i + 1:])
                assert f"{name}," not in later and f"{name})" not in later


def test_sign_never_computed_in_place():
    # np.sign runs ~9x slower writing over its own input (codegen._SLOW_IN_PLACE); the abs
    # VJP's sign(x - w) of a dead x - w goes to a fresh buffer, other ufuncs still reuse
    def l1(x, w):
        return vnp.sum(vnp.abs(x - w)) + vnp.sum(vnp.exp(x * 2.0))
    x, w = np.linspace(-1.0, 1.0, 60).reshape(20, 3), np.array([0.1, -0.2, 0.3])
    entry, _ = vg.grad(l1, argnums=(0, 1)).entry(x, w)
    fns = entry.compiled.fn.__globals__
    calls = re.findall(r"^\s+v\d+ = (f\d+)\((.*)\)$", entry.compiled.source, re.MULTILINE)
    signs = [a for f, a in calls if fns[f] is np.sign]
    assert signs and not any("out=" in a for a in signs), calls
    assert any("out=" in a for f, a in calls if fns[f] is not np.sign), calls
    gx, gw = vg.grad(l1, argnums=(0, 1))(x, w)
    np.testing.assert_array_equal(gx, np.sign(x - w) + 2.0 * np.exp(x * 2.0))
    np.testing.assert_array_equal(gw, -np.sign(x - w).sum(0))


def _graph(fn, *avals):
    ins = [Var(a) for a in avals]
    b = Builder(ins)
    with b:
        out = fn(*[Tracer(b, v) for v in ins])
    outs = out if isinstance(out, tuple) else (out,)
    return typecheck(b.build([o.atom for o in outs]))


def _inplace_calls(c) -> int:
    """Writes done into their operand's own buffer: calls of the in-place kernels, and the
    statements `vN = buffer` then `vN[key] = v` (or `+=`) the generated code writes for a
    basic index (a copy is `vN = _copy(buffer)`)."""
    calls = sum(isinstance(v, functools.partial) and v.func in (LOWERINGS["setitem"].inplace,
                                                                 LOWERINGS["setitem_add"].inplace)
                for k, v in c.fn.__globals__.items() if k.startswith("f"))
    lines = [ln.strip() for ln in c.source.splitlines()]
    stmts = sum(bool(re.fullmatch(r"(v\d+) = [vx]\d+", a)) and
                re.match(re.escape(a.split(" = ")[0]) + r"\[k\d+\] \+?= ", b) is not None
                for a, b in itertools.pairwise(lines))
    return calls + stmts


def test_basic_writes_are_statements_without_a_call():
    def fn(x):
        buf = P.mul(x, 1.0)
        buf = P.setitem(buf, 5.0, idx=P.normalize_index(0, (2, 3)))
        live = P.setitem_add(buf, x[1], idx=P.normalize_index(1, (2, 3)))  # buf read later
        return live, P.mul(buf, 2.0)
    c = compile_graph(_graph(fn, Aval((2, 3), F64)))
    assert "_copy(" in c.source and "] += " in c.source and "] = " in c.source
    assert not any(isinstance(v, functools.partial) for v in c.fn.__globals__.values())
    want = X.copy()
    want[0] = 5.0
    live, twice = c.fn(X)
    np.testing.assert_array_equal(twice, 2 * want)
    want[1] += X[1]
    np.testing.assert_array_equal(live, want)


def test_inplace_write_when_safe():
    def fn(x):
        buf = P.mul(x, 1.0)  # a fresh buffer
        buf = P.setitem(buf, 5.0, idx=P.normalize_index(0, (2, 3)))
        return P.setitem_add(buf, x[1], idx=P.normalize_index(1, (2, 3)))
    g = _graph(fn, Aval((2, 3), F64))
    c = compile_graph(g)
    assert _inplace_calls(c) == 2
    want = X.copy()
    want[0] = 5.0
    want[1] += X[1]
    x = X.copy()
    np.testing.assert_array_equal(c.fn(x)[0], want)
    np.testing.assert_array_equal(x, X)  # the input itself is never written


def test_write_with_live_view_is_not_in_place():
    def fn(x):
        buf = P.mul(x, 1.0)
        row = P.getitem(buf, idx=P.normalize_index(0, (2, 3)))  # a view of buf
        col_t = P.transpose(buf, perm=(1, 0))  # another view
        buf2 = P.setitem(buf, 7.0, idx=P.normalize_index((slice(None), 0), (2, 3)))
        return P.mul(row, 2.0), P.mul(col_t, 1.0), buf2  # the views are read after the write
    g = _graph(fn, Aval((2, 3), F64))
    c = compile_graph(g)
    assert _inplace_calls(c) == 0
    row, col_t, buf2 = c.fn(X)
    want_buf = X.copy()
    want_buf[:, 0] = 7.0
    np.testing.assert_array_equal(row, X[0] * 2.0)
    np.testing.assert_array_equal(col_t, X.T)
    np.testing.assert_array_equal(buf2, want_buf)


def test_write_into_input_is_never_in_place():
    def fn(x):
        return P.setitem(x, 0.0, idx=P.normalize_index(0, (2, 3)))
    c = compile_graph(_graph(fn, Aval((2, 3), F64)))
    x = X.copy()
    out = c.fn(x)[0]
    np.testing.assert_array_equal(x, X)
    np.testing.assert_array_equal(out[0], 0.0)


def test_user_program_copy_of_view_survives_base_write():
    def f(xp, x):
        buf = x * 1.0
        keep = buf[0].copy()  # a copy of a row, taken before the write
        t = buf.T.copy()
        buf[0] = 3.0
        buf[:, 1] += 1.0
        return keep * 2.0, t, buf
    got = vg.jit(lambda x: f(vnp, x))(X)
    for g, w in zip(got, f(np, X)):
        np.testing.assert_array_equal(g, w)
    central = vg.check_grads(lambda x: sum(vnp.sum(o * o) for o in f(vnp, x)), [X])
    assert central < 1e-5


# ---------------------------------------------------------------------------------- show

def test_show_prints_each_stage(capsys):
    text = vg.show(lambda x: vnp.sum(vnp.exp(x) * x), X)
    assert capsys.readouterr().out.strip() == text.strip()
    assert "=== traced:" in text and "=== grad:" in text and "=== generated code" in text
    assert "exp a" in text and "def grad_" in text


@pytest.mark.parametrize("name,ref", [("reduce_sum", np.sum), ("reduce_max", np.max),
                                      ("reduce_min", np.min), ("reduce_prod", np.prod)])
def test_reduction_kernels_match_numpy(name, ref):
    """The NumPy backend's reduction kernels (the ufunc's reduce bound once, a transposed
    copy for many short rows) give NumPy's values and dtypes; a whole reduction is a 0-d
    array, as the impl's."""
    from vecgrad.backends.numpy.table import lower
    prim = getattr(P, name)
    r = np.random.default_rng(3)
    cases = [((7,), (0,)), ((4, 5), (1,)), ((4, 5), (0,)), ((4, 5), (0, 1)), ((3,), ()),
             ((200, 8), (1,)), ((2, 3, 4), (0, 2)), ((6, 3), (1,))]
    for dtype in (np.float64, np.float32, np.int8, np.bool_):
        for shape, axes in cases:
            x = (r.standard_normal(shape) * 3).astype(dtype)
            got = lower(prim, {"axes": axes}, [Aval(shape, np.dtype(dtype))])(x)
            want = ref(x, axis=axes)
            assert isinstance(got, np.ndarray) or got.shape != ()
            assert got.dtype == want.dtype and got.shape == want.shape, (name, dtype, shape)
            tol = 1e-5 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(x).sum())


def _writes_progs(m):
    """Writes of an elementwise result into a buffer's region, each way codegen can meet
    them: into a fresh copy, in place (the region's ufunc reading the same buffer), a
    strided region, a block of a 2-D buffer, a scalar position, a value read again."""
    def fresh(x):
        z = m.zeros_like(x)
        z[0] = x[0]
        z[1:] = x[1:] * m.sin(x[:-1])
        return z

    def aliasing(x):
        buf = x * 1.0
        buf[1:] = buf[:-1] * 2.0
        return buf

    def strided_kept(x):
        buf = x * 1.0
        keep = buf * 3.0
        buf[::2] = m.exp(x[::2])
        return buf + keep

    def block(x):
        b = m.zeros((x.shape[0] + 2, 3))
        b[1:-1, :] = m.tanh(m.outer(x, x[:3])) + 1.0
        return b

    def scalar_and_range(x):
        z = m.ones(x.shape)
        z[2] = x[1] * x[2]
        z[3:5] = x[3:5] - x[0]
        return z

    def value_read_again(x):
        buf = x * 1.0
        v = buf[2:] + 1.0
        buf[:-2] = v
        return buf * v[0], v
    return [fresh, aliasing, strided_kept, block, scalar_and_range, value_read_again]


def test_elementwise_results_are_computed_into_the_region_they_are_written_to():
    x = np.random.default_rng(0).standard_normal(9)
    into = 0
    for f, ref in zip(_writes_progs(vnp), _writes_progs(np)):
        got, want = vg.jit(f)(x.copy()), ref(x.copy())
        for a, b in zip(*(o if isinstance(o, tuple) else (o,) for o in (got, want))):
            np.testing.assert_array_equal(a, b, err_msg=f.__name__)
        src = vg.jit(f).entry(x)[0].compiled.source
        into += bool(re.search(r"^\s+f\d+\(.*, out=v\d+\[k\d+\]\)$", src, re.MULTILINE))
        vg.check_grads(lambda x, f=f: sum(vnp.sum(o * o) for o in (
            f(x) if isinstance(f(x), tuple) else (f(x),))), (x,))
    assert into >= 4
