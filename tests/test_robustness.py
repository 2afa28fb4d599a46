"""Crashes inside the library: NumPy integers as parameters, code injection through generated
source, odd function names, empty means, einsum's sublist form, traced linspace, reductions
of lists, and which reduction keeps which axes."""
from __future__ import annotations

import functools
import io
import re
import tokenize
import warnings

import numpy as np
import pytest
from conftest import central_diff_check
from test_numpy_api import check
from test_primitives import _cases, one_eqn_graph

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad import primitives as P
from vecgrad.backends import compile_graph
from vecgrad.ir import Aval, Graph, Var

R = np.random.default_rng(7)
A = R.standard_normal((3, 4))
T3 = R.standard_normal((2, 3, 4))


# ------------------------------------------------ NumPy integers in shapes, axes, indices

NP_INT_PROGRAMS = {
    "reshape-np.prod": lambda xp, x: x.reshape(np.prod(x.shape)),
    "reshape-tuple": lambda xp, x: xp.reshape(x, (np.int64(2), -1)),
    "reshape-args": lambda xp, x: x.reshape(np.int64(4), np.int32(3)),
    "reshape-list": lambda xp, x: x.reshape([np.int64(4), 3]),
    "transpose-argsort": lambda xp, x: x.transpose(np.argsort([1, 0])),
    "transpose-list": lambda xp, x: xp.transpose(x, [np.int64(1), np.int64(0)]),
    "moveaxis": lambda xp, x: xp.moveaxis(x, np.int64(0), np.int64(1)),
    "swapaxes": lambda xp, x: xp.swapaxes(x, np.int64(0), np.int64(1)),
    "sum-axis": lambda xp, x: xp.sum(x, axis=np.int64(1)),
    "max-axes": lambda xp, x: xp.max(x, axis=(np.int64(0),), keepdims=True),
    "mean-axis": lambda xp, x: xp.mean(x, axis=np.int8(-1)),
    "index": lambda xp, x: x[np.int64(1), np.int32(2)] * x,
    "index-uint": lambda xp, x: x[np.uint8(1)],
    "slice": lambda xp, x: x[np.int64(1):np.int64(3)],
    "expand_dims": lambda xp, x: xp.expand_dims(x, np.int64(0)),
    "squeeze": lambda xp, x: xp.squeeze(x[:1], axis=np.int64(0)),
    "concatenate": lambda xp, x: xp.concatenate([x, x], axis=np.int64(1)),
    "stack": lambda xp, x: xp.stack([x, x], axis=np.int64(1)),
    "broadcast_to": lambda xp, x: xp.broadcast_to(x[0], (np.int64(2), np.int64(4))),
    "split": lambda xp, x: xp.split(x, np.int64(2), axis=np.int64(1))[0],
    "tensordot": lambda xp, x: xp.tensordot(x, x, axes=(np.array([1]), np.array([1]))),
    "zeros": lambda xp, x: xp.zeros(np.int64(3)) + x[:, 0],
}


def _python_ints_only(v) -> bool:
    if isinstance(v, (tuple, list)):
        return all(_python_ints_only(x) for x in v)
    return not isinstance(v, np.integer)


@pytest.mark.parametrize("name", list(NP_INT_PROGRAMS))
def test_numpy_integer_parameters_become_python_ints(name):
    f = NP_INT_PROGRAMS[name]
    check(f, A)
    g = vg.api.trace_graph(lambda x: f(vnp, x), (A,))
    for e in g.eqns:
        for k, v in e.params.items():
            assert _python_ints_only(v), f"{e.prim.name}: {k}={v!r}"


def test_numpy_integer_axes_in_nn_functions():
    check(lambda xp, x: vg.nn.softmax(x, axis=np.int64(0)) if xp is vnp else
          np.exp(x) / np.exp(x).sum(0), A)
    check(lambda xp, x: vg.nn.logsumexp(x, axis=np.int64(1)) if xp is vnp else
          np.log(np.exp(x).sum(1)), A)


def test_bad_axis_and_shape_arguments_raise_numpy_errors():
    with pytest.raises(np.exceptions.AxisError):
        vg.jit(lambda x: vnp.sum(x, axis=2))(A)
    with pytest.raises(TypeError, match="axis must be an integer"):
        vg.jit(lambda x: vnp.sum(x, axis=1.0))(A)
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        vg.jit(lambda x: vnp.sum(x, axis=(1, -1)))(A)
    with pytest.raises(ValueError, match="don't match"):
        vg.jit(lambda x: x.transpose(0, 0))(A)
    with pytest.raises(vg.ConcretizationError):
        vg.jit(lambda x: x.reshape(x[0, 0]))(A)


def test_failed_compile_is_not_cached():
    calls = {"n": 0}

    def f(x):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("first trace fails")
        return x * 2
    jf = vg.jit(f)
    with pytest.raises(RuntimeError):
        jf(A)
    np.testing.assert_array_equal(jf(A), A * 2)


# ------------------------------------------------------------ generated source and names

_ALLOWED = re.compile(r"^(?:[xvckf]\d+|_asarray|_copy|out)$")


def _assert_generated_names_only(src: str, fn_name: str) -> None:
    """Every name token is a keyword, the function's name, an attribute after '.', or one the
    code generator makes (x0 inputs, v1 values, c2 constants, k3 bound values, f4 callables)."""
    import keyword
    prev = None
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.NAME and not keyword.iskeyword(tok.string) \
                and tok.string != fn_name and not (prev is not None and prev.string == "."):
            assert _ALLOWED.match(tok.string), f"name {tok.string!r} in generated source:\n{src}"
        assert tok.type != tokenize.STRING, f"a string literal in generated source:\n{src}"
        if tok.type == tokenize.NUMBER:  # numbers may appear only inside generated names
            raise AssertionError(f"a number literal in generated source:\n{src}")
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                            tokenize.COMMENT):
            prev = tok


@pytest.mark.parametrize("spec,shapes", _cases())
def test_generated_source_holds_only_generated_names(spec, shapes):
    args = spec.make(np.random.default_rng(0), shapes)
    c = compile_graph(one_eqn_graph(spec.prim, args, spec.params_for(shapes)), "fn")
    _assert_generated_names_only(c.source, "fn")


class _Evil(int):
    """An int whose repr is code: spliced into source, it would run on every call (and
    fail: there is no such module)."""

    def __repr__(self) -> str:
        return "__import__('tests_evil_marker').ran.append(1) or " + int.__repr__(self)

    def __index__(self) -> int:
        return int(self)


def test_parameters_cannot_inject_code():
    e = _Evil
    programs = [
        lambda x: x.reshape(e(12)),
        lambda x: x.reshape((e(4), e(3))),
        lambda x: x.transpose((e(1), e(0))),
        lambda x: x[e(1)],
        lambda x: x[e(1):e(3), :e(2)],
        lambda x: vnp.sum(x, axis=e(1)),
        lambda x: vnp.expand_dims(x, e(0)),
        lambda x: vnp.moveaxis(x, e(0), e(1)),
        lambda x: vnp.concatenate([x, x], axis=e(0)),
        lambda x: vnp.stack([x, x], axis=e(1)),
        lambda x: vnp.broadcast_to(x, (e(2), e(3), e(4))),
        lambda x: vg.nn.softmax(x, axis=e(0)),
        lambda x: vnp.zeros((e(3), e(4))) + x,
        lambda x: vnp.einsum(x, [e(0), e(1)], [e(1)]),
    ]
    for prog in programs:
        c = vg.jit(prog)
        want = prog(A)
        np.testing.assert_allclose(c(A), want)
        entry, _ = c.entry(A)
        assert "tests_evil_marker" not in entry.compiled.source
        _assert_generated_names_only(entry.compiled.source, entry.compiled.fn.__name__)


@pytest.mark.parametrize("prim", [P.reshape, P.transpose, P.getitem])
def test_inline_hooks_bind_parameters_instead_of_formatting_them(prim):
    """Even a hand-built graph with repr-injecting parameters compiles to safe source."""
    x = Var(Aval((2, 3), np.dtype(np.float64)))
    params = {P.reshape: {"shape": (_Evil(3), _Evil(2))},
              P.transpose: {"perm": (_Evil(1), _Evil(0))},
              P.getitem: {"idx": P.BasicIndex((_Evil(1), P.Sl(0, 3, 1)))}}[prim]
    out = Var(prim.shape_rule(x.aval, **params))
    from vecgrad.ir import Eqn, Params
    g = Graph((x,), (Eqn(prim, (x,), Params(params), out),), (out,))
    c = compile_graph(g, "fn")
    assert "tests_evil_marker" not in c.source
    _assert_generated_names_only(c.source, "fn")
    v = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(c.fn(v)[0], prim.impl(v, **params))


def test_codegen_refuses_source_with_unbound_names(monkeypatch):
    from vecgrad.backends.numpy import LOWERINGS
    from vecgrad.backends.numpy.lowering import Lowering
    bad = P.Primitive("bad_inline", np.negative, lambda x: x)
    monkeypatch.setitem(LOWERINGS, "bad_inline",
                        Lowering(inline=lambda xs, p, bind: f"undefined_helper({xs[0]})"))
    x = Var(Aval((2,), np.dtype(np.float64)))
    out = Var(x.aval)
    from vecgrad.ir import Eqn, Params
    g = Graph((x,), (Eqn(bad, (x,), Params(), out),), (out,))
    with pytest.raises(RuntimeError, match="undefined_helper"):
        compile_graph(g, "fn")


def _nfkc(x):
    return vnp.sum(x * x)


_nfkc.__name__ = "\ufb01"  # 'ﬁ': Python's parser would read it as 'fi' in generated source


class _Callable:
    def __call__(self, x):
        return vnp.sum(x * 3.0)


def _odd_name(x):
    return vnp.sum(x)


_odd_name.__name__ = "if"  # a keyword


def _weird_name(x):
    return vnp.sum(x * x)


_weird_name.__name__ = "spaces and-dashes!"


@pytest.mark.parametrize("fun,grad", [
    (_nfkc, lambda x: 2 * x),
    (lambda x: vnp.sum(x * x), lambda x: 2 * x),
    (functools.partial(lambda x, k: vnp.sum(x * k), k=2.0), lambda x: 2.0 + 0 * x),
    (_Callable(), lambda x: 3.0 + 0 * x),
    (_odd_name, lambda x: 1.0 + 0 * x),
    (_weird_name, lambda x: 2 * x),
], ids=["nfkc", "lambda", "partial", "callable-instance", "keyword", "weird"])
def test_function_names_that_are_not_plain_identifiers(fun, grad):
    np.testing.assert_allclose(vg.grad(fun)(A), grad(A))
    vg.jit(fun)(A)


# --------------------------------------------------------------------------- mean of empty

def test_mean_of_empty_is_nan_with_numpy_warning():
    for axis in (None, 0):
        with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
            got = vg.jit(lambda x, a=axis: vnp.mean(x[:0], axis=a))(A)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = np.mean(A[:0], axis=axis)
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(vg.jit(lambda x: vnp.mean(x[:0], axis=1))(A),
                                  np.mean(A[:0], axis=1))  # no empty slice: no warning
    g = vg.grad(lambda x: vnp.sum(x) + vnp.sum(vnp.mean(x[:0], axis=1)))(A)
    np.testing.assert_array_equal(g, np.ones_like(A))


# -------------------------------------------------------------------- einsum sublist form

@pytest.mark.parametrize("args,ref", [
    (lambda a, b: (a, [0, 1], b, [1, 2], [0, 2]), "ij,jk->ik"),
    (lambda a, b: (a, [0, 1], b, [1, 2]), "ij,jk"),
    (lambda a, b: (a, [Ellipsis, 1], b, [1, 2], [Ellipsis, 2]), "...j,jk->...k"),
    (lambda a, b: (a, [np.int64(0), 1], [1]), "ij->j"),
    (lambda a, b: (a, [0, 1], b, [1, 2], []), "ij,jk->"),
])
def test_einsum_sublist_form(args, ref):
    b = R.standard_normal((4, 5))

    def f(xp, a):
        ops = args(a, b)
        return np.einsum(*ops) if xp is np else vnp.einsum(*ops)
    want = np.einsum(ref, *[o for o in args(A, b)[::2] if isinstance(o, np.ndarray)])
    np.testing.assert_allclose(f(np, A), want)
    check(f, A)
    check(lambda xp, a: np.einsum(*args(a, b)), A)  # np.einsum on tracers dispatches


def test_einsum_optimize_keyword_is_accepted():
    check(lambda xp, a: np.einsum("ij,kj->ik", a, a, optimize=True), A)


# --------------------------------------------------------------------- linspace, traced

@pytest.mark.parametrize("kw", [{}, {"endpoint": False}, {"num": 1}, {"num": 2},
                                {"retstep": True}, {"dtype": np.float32}])
def test_linspace_with_traced_endpoints(kw):
    def f(xp, x):
        r = xp.linspace(x[0, 0], x[1, 2], **{"num": 5, **kw})
        return r if not kw.get("retstep") else r[0] * r[1]
    f32 = "dtype" in kw  # (float32 output: no float64 central differences)
    check(f, A, grad=not f32, rtol=1e-6 if f32 else 1e-10)


def test_linspace_of_traced_vectors_along_an_axis():
    check(lambda xp, x: xp.linspace(x[0], x[1], 3, axis=1), A)
    check(lambda xp, x: xp.linspace(0.0, x[1], 4), A)
    check(lambda xp, x: np.linspace(x[0, 0], 1.0, 4), A)  # np.linspace dispatches here


# ----------------------------------------------------------------- reductions of lists

@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
def test_reductions_of_lists_of_traced_values(name):
    check(lambda xp, x: getattr(xp, name)([x[0, 0], x[1, 1], x[2, 3]]), A)
    check(lambda xp, x: getattr(xp, name)((x[0], x[1]), axis=0), A)


def test_norm_of_a_list():
    check(lambda xp, x: xp.linalg.norm([x[0, 0], x[1, 1], x[2, 3]]), A)


def test_numpy_function_on_a_list_of_tracers_names_the_vnp_function():
    """np.mean / np.linalg.norm of a list of traced values are traced (vecgrad.pyarrays); a
    function that takes no such list from users still names its vnp equivalent."""
    np.testing.assert_allclose(vg.jit(lambda x: np.mean([x[0, 0], x[1, 1]]))(A),
                               np.mean([A[0, 0], A[1, 1]]))
    np.testing.assert_allclose(vg.jit(lambda x: np.linalg.norm([x[0, 0], x[1, 1]]))(A),
                               np.linalg.norm([A[0, 0], A[1, 1]]))
    with pytest.raises(vg.TracedIntoNumpyError, match=r"numpy\.percentile .*vnp\.percentile"):
        vg.jit(lambda x: np.percentile([x[0, 0], x[1, 1]], 50))(A)


# ---------------------------------------------------------- axes and keepdims of nn

def _lse(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    if keepdims:
        return r
    return r.reshape(()) if axis is None else np.squeeze(r, axis=axis)


def _softmax(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


AXES = [None, 0, 1, -1, (0, 2), (2, 0), (-1, -2), (0, 1, 2), ()]


@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_axis_and_keepdims_as_scipy(axis, keepdims):
    check(lambda xp, x: vg.nn.logsumexp(x, axis=axis, keepdims=keepdims) if xp is vnp
          else _lse(x, axis, keepdims), T3)


def test_logsumexp_axis_none_keepdims_keeps_every_axis():
    assert vg.jit(lambda x: vg.nn.logsumexp(x, keepdims=True))(T3).shape == (1, 1, 1)
    assert vg.nn.logsumexp(T3, keepdims=True).shape == (1, 1, 1)


@pytest.mark.parametrize("axis", AXES, ids=str)
def test_softmax_and_log_softmax_over_axis_tuples(axis):
    check(lambda xp, x: vg.nn.softmax(x, axis=axis) if xp is vnp else _softmax(x, axis), T3)
    check(lambda xp, x: vg.nn.log_softmax(x, axis=axis) if xp is vnp
          else np.log(_softmax(x, axis)), T3)


REDUCTIONS = ["sum", "mean", "max", "min", "prod", "amax", "amin", "var", "std", "ptp", "any",
              "all", "count_nonzero", "argmax", "argmin", "median", "quantile", "percentile",
              "nansum", "nanmean", "nanmax", "nanmin", "nanprod", "nanvar", "nanstd",
              "nanmedian", "nanargmax", "linalg.norm"]
_NO_GRAD = {"any", "all", "count_nonzero", "argmax", "argmin", "nanargmax"}


def _reduction(xp, name, x, axis, keepdims):
    fn = getattr(xp.linalg if name.startswith("linalg.") else xp, name.split(".")[-1])
    extra = (30,) if name in ("quantile", "percentile") else ()
    return fn(x > 0 if name in ("any", "all") else x, *extra, axis=axis,
              keepdims=keepdims) * 1.0


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction_axes_and_keepdims_as_numpy(name, axis, keepdims):
    """Every reduction-like function: tuple, negative and empty axes, keepdims; where NumPy
    refuses an axis (linalg.norm of three axes, argmax of a tuple), vecgrad refuses too."""
    x = T3 + 3.0 if name in ("prod", "nanprod") else T3
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _reduction(np, name, x, axis, keepdims)
    except (ValueError, TypeError):
        with pytest.raises((ValueError, TypeError)):
            vg.jit(lambda x: _reduction(vnp, name, x, axis, keepdims))(x)
        return
    check(lambda xp, x: _reduction(xp, name, x, axis, keepdims), x, grad=name not in _NO_GRAD)


# ------------------------------------------------- found by writing user programs

def test_traced_index_next_to_an_index_array_gathers():
    """x[rows, argmax per row] (once a TraceError): NumPy's values, and the gradient flows to
    the selected elements."""
    f = lambda x: x[np.arange(3), vnp.argmax(x, axis=1)]
    np.testing.assert_allclose(vg.jit(f)(A), A[np.arange(3), np.argmax(A, axis=1)])
    vg.check_grads(lambda x: vnp.sum(f(x) ** 2), [A])


def test_array_of_a_list_of_traced_rows():
    check(lambda xp, x: xp.array([r.sum() for r in x]), A)
    check(lambda xp, x: xp.array([x[0, 0], x[1, 1]]), A)


@pytest.mark.parametrize("name,kw", [
    ("sum", {"where": A > 0}), ("sum", {"initial": 2.0}), ("sum", {"axis": 1, "where": A > 0}),
    ("prod", {"where": A > 0, "axis": 0}), ("prod", {"initial": 2.0}),
    ("max", {"initial": 0.5}), ("max", {"axis": 0, "where": A > 0, "initial": -5.0}),
    ("min", {"axis": 1, "initial": 0.0}), ("mean", {"where": A > 0}),
    ("mean", {"axis": 1, "where": A > -0.5, "keepdims": True}),
])
def test_reduction_keywords_where_and_initial(name, kw):
    check(lambda xp, x: getattr(xp, name)(x, **kw), A)


_OUT0 = np.zeros(())


def test_reduction_keyword_errors_as_numpy():
    with pytest.raises(ValueError, match="initial"):
        vg.jit(lambda x: vnp.max(x, where=x > 0))(A)
    with pytest.raises(ValueError, match="zero-size"):
        vg.jit(lambda x: vnp.max(x[:0]))(A)
    # (np.zeros made in the traced function: a buffer, on the trace's second run)
    np.testing.assert_allclose(vg.jit(lambda x: vnp.sum(x, out=np.zeros(())))(A), A.sum())
    with pytest.raises(vg.TracedIntoNumpyError, match="vnp.zeros"):  # (a traced out= works)
        vg.jit(lambda x: vnp.sum(x, out=_OUT0))(A)
    check(lambda xp, x: xp.max(x[:0], initial=1.0), A)


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
def test_ravel_flatten_reshape_order(order):
    check(lambda xp, x: (x.ravel(order), x.T.ravel(order), x.flatten(order),
                         x[:, ::2].T.ravel(order)), A)
    if order != "K":
        check(lambda xp, x: (x.reshape(2, 6, order=order), xp.reshape(x.T, (6, 2), order)), A)


@pytest.mark.parametrize("offset", [-11, -9, 0, 9, 10, 11])
def test_trace_with_an_empty_diagonal_differentiates(offset):
    """(An empty diagonal made the contraction rewrites divide by a zero axis size.)"""
    x = R.standard_normal((11, 10))
    central_diff_check(lambda x: vnp.trace(x, offset=offset) * 1.0, [x])
    _, f_vjp = vg.vjp(lambda x: vnp.trace(x, offset=offset), x)
    np.testing.assert_allclose(f_vjp(np.ones(()))[0], np.eye(11, 10, offset))


def test_write_into_an_argument_is_a_value_and_a_type_error():
    def f(a):
        a[1] = 3.0
        return a
    for exc in (ValueError, TypeError, vg.ReadOnlyError):  # NumPy's, and JAX's/autograd's
        with pytest.raises(exc):
            vg.jit(f)(A)


def test_numpy_function_vecgrad_lacks_says_so_and_names_its_public_name():
    # np.asarray_chkfinite lives in numpy.lib._function_base_impl and never dispatches
    with pytest.raises(vg.TracedIntoNumpyError,
                       match=r"numpy\.asarray_chkfinite .*vecgrad\.numpy has no asarray_chkfinite"):
        vg.jit(lambda x: np.asarray_chkfinite(x).sum())(A)
