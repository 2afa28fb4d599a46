"""Regression tests for the bugs the differential fuzzer found (tests/test_fuzz_numpy.py), one
per root cause, each named after it: the minimized program, compared with NumPy (values,
dtypes, shapes) and, where differentiable, with central differences; the batched graph with
the unbatched one."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import central_diff_check
from test_batch import assert_same_function, entry
from test_numpy_api import assert_same

import vecgrad as vg
import vecgrad.numpy as vnp
from vecgrad.tracing import Tracer


def same_as_numpy(f, *args, grad=True):
    """f traced equals f run by NumPy; its gradient (of a weighted sum of its outputs) and
    its batched graph agree with central differences and with the unbatched graph."""
    want = f(*[np.array(a) for a in args])
    assert_same(vg.jit(f)(*args), want)
    if not grad:
        return
    w = np.cos(np.arange(np.size(want))).reshape(np.shape(want))

    def loss(*a):
        return vnp.sum(f(*a) * w)
    central_diff_check(loss, list(args), argnums=tuple(range(len(args))))
    e, leaves = entry(loss, args, argnums=tuple(range(len(args))))
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)


X = np.random.default_rng(0).standard_normal((3, 4))


EMPTY_WRITES = {
    "1:1": lambda w, v: w[1:1].__iadd__(v),
    "1:0:-1": lambda w, v: w.__setitem__(slice(1, 0, -1), v),
    "view_of_view": lambda w, v: w[::-1][2:2].__isub__(v),
    "fancy_empty": lambda w, v: w.__setitem__(np.array([], dtype=int), v),
}


@pytest.mark.parametrize("region", sorted(EMPTY_WRITES))
def test_empty_region_write_is_a_no_op(region):
    """b[1:1] = v, w = b[::-1]; w[1:0:-1] += v: NumPy writes nothing (batching crashed on
    the empty region: zero-size min in deps, KeyError in batch)."""
    def f(x):
        b = x.copy()
        w = b[::-1]
        EMPTY_WRITES[region](w, np.sin(x[0]))
        b[1:1] = x[0]
        b[2:1, 1:] *= 3.0
        return b * w
    same_as_numpy(f, X)


def test_empty_region_write_still_checks_the_value_shape():
    def f(x):
        b = x.copy()
        b[1:1] = x[:, :2]  # (3, 2) does not broadcast to (0, 4): NumPy raises too
        return b
    with pytest.raises(ValueError):
        f(X.copy())
    with pytest.raises(ValueError):
        vg.jit(f)(X)


@pytest.mark.parametrize("index", ["[None]", "[...]", "[None, None]"])
def test_indexing_a_numpy_scalar_is_a_new_array(index):
    """s = np.sum(...) is a NumPy scalar; s[None] is a new writable array, not a view of s
    (a write into it reached s: 'numpy.float64' object does not support item assignment;
    and the unsimplified VJP of s[None] wrote into a NumPy scalar in the NumPy backend)."""
    def f(x):
        s = np.einsum("ij,ij->", x, x)
        w = {"[None]": lambda: s[None], "[...]": lambda: s[...],
             "[None, None]": lambda: s[None, None]}[index]()
        w[...] -= 0.5 * s
        w *= 2.0
        return w + s
    same_as_numpy(f, X)


@pytest.mark.parametrize("op", ["=", "-=", "+="])
def test_traced_scalar_into_a_numpy_buffer_is_numpys(op):
    """buf = np.zeros(...); buf[i, j] = traced_scalar: NumPy turned our typed error into
    'setting an array element with a sequence' (a bare ValueError); the trace now runs again
    with np.zeros making a vecgrad buffer (numpy/_buffers.py): NumPy's values."""
    def f(x):
        buf = np.zeros((3, 2))
        if op == "=":
            buf[1, 0] = vnp.sum(x)
        elif op == "+=":
            buf[1, 0] += vnp.sum(x)
        else:
            buf[1, 0] -= vnp.sum(x)
        return buf
    assert_same(vg.jit(f)(X), f(X), rtol=1e-13)


_OUTER = np.zeros(3)  # (made outside the traced function: the retry cannot make it a buffer)


def test_traced_scalar_into_a_numpy_buffer_names_the_users_line():
    def f(x):
        buf = _OUTER
        buf[0] = vnp.sum(x)  # this line
        return buf
    line = f.__code__.co_firstlineno + 2
    with pytest.raises(vg.TracedIntoNumpyError, match=rf"test_fuzz_regressions.py:{line}"):
        vg.jit(f)(X)


def test_empty_read_of_a_buffer_written_through_a_full_view():
    """w = b[:]; w[0:1] += 3; e = w[1:] (empty): batching looked up the buffer's base after
    the write and raised KeyError."""
    def f(x):
        b = x[:1].copy()
        w = b[:]
        w[0:1] += 3.0
        e = w[1:]
        return vnp.concatenate([b.ravel(), e.ravel(), w[:, 1:].ravel() * 2])
    same_as_numpy(f, X)


@pytest.mark.parametrize("dtype", [bool, np.int64, np.float32])
def test_read_modify_write_subtracting_another_dtype(dtype):
    """v[::-1] -= m with a bool m: simplify rewrote x[I] = x[I] - d as x[I] += -d, and
    NumPy has no negative of a bool (TypeError while building the rewritten graph)."""
    m = (X > 0).astype(dtype)

    def f(x):
        v = np.log1p(np.abs(x))
        v[::-1] -= m
        v[1] = v[1] - m[0]
        return v
    same_as_numpy(f, X)


INPLACE_INTO_INT = {
    "whole": lambda b, v: b.__iadd__(v[0]),
    "slice_view": lambda b, v: b[1:4].__iadd__(v),
    "fancy_copy": lambda b, v: b.__setitem__([2, 4, 0], b[[2, 4, 0]].__iadd__(v)),
    "divide": lambda b, v: b.__itruediv__(2),
    "python_float": lambda b, v: b.__imul__(0.5),
}


@pytest.mark.parametrize("case", sorted(INPLACE_INTO_INT))
def test_inplace_op_into_int_buffer_refuses_same_kind_cast_as_numpy(case):
    """int_buf += float raises in NumPy (casting='same_kind'); vecgrad truncated silently
    (whole array, fancy copy) or crashed with a bare UFuncTypeError at run time (view)."""
    def f(y, xp):
        b = xp.ones(5, dtype=np.int64)
        INPLACE_INTO_INT[case](b, y)
        return b
    with pytest.raises(TypeError, match="same_kind"):
        f(X[0, :3].copy(), np)
    with pytest.raises(vg.CastingError, match="same_kind"):
        vg.jit(lambda y: f(y, vnp))(X[0, :3])


def test_inplace_op_that_numpy_allows_still_works():
    def f(x):
        b = x.copy()
        i = (x > 0).astype(np.int64)
        b += i  # float += int: fine
        i += 2  # int += Python int: fine
        i[1:] *= np.int64(3)
        return b, i
    assert_same(vg.jit(f)(X), f(X.copy()))


@pytest.mark.parametrize("index", [slice(1, 4), [2, 4, 0], [2, 4, 2], 3])
def test_add_at_of_floats_into_int_buffer_casts_as_numpy(index):
    """np.add.at casts unsafely after each addition; vecgrad crashed at run time on
    distinct positions (a same_kind in-place add in the generated code)."""
    def f(y, xp):
        b = xp.ones(5, dtype=np.int64) * 2
        np.add.at(b, index, np.square(y) * 3 - 2)
        np.subtract.at(b, index, y)
        return b
    y = X[0, :3] if not isinstance(index, int) else X[0, 0]
    assert_same(vg.jit(lambda y: f(y, vnp))(y), f(y.copy(), np))


def test_unsupported_numpy_feature_is_a_typed_error():
    """`unsupported(...)` raised a bare NotImplementedError; it is a VecgradError now."""
    with pytest.raises(vg.UnsupportedError):
        vg.jit(lambda x: np.subtract.reduceat(x, [0, 2]))(X[0])
    assert issubclass(vg.UnsupportedError, NotImplementedError)


SCAN_STEPS = {
    "sum_start": lambda c, r: c + r,
    "affine": lambda c, r: 0.5 * c + r,
    "max": lambda c, r: np.maximum(c, r),
    "sub": lambda c, r: c - r,
}


@pytest.mark.parametrize("dtype", [bool, np.float32, np.int64])
@pytest.mark.parametrize("step", sorted(SCAN_STEPS))
def test_scan_of_terms_of_another_dtype_keeps_the_carrys_dtype(step, dtype):
    """sum([m[i] for i ...], vnp.zeros(d)) with bool or float32 rows: the loop became a
    cumsum of the rows in their own dtype (int64 or float32 instead of NumPy's float64)."""
    r6 = np.random.default_rng(1).standard_normal((6, 3))  # (enough steps to become a scan)
    rows = (r6 > 0) if dtype is bool else (r6 * 3).astype(dtype)
    if dtype is bool and step == "sub":
        rows = rows.astype(np.int64)

    def f(xp, r):
        c = xp.zeros(r.shape[1:])
        for i in range(len(r)):
            c = SCAN_STEPS[step](c, r[i])
        return c
    assert_same(vg.jit(lambda r: f(vnp, r))(rows), f(np, rows), rtol=1e-12)


def test_python_sum_with_a_float64_start_over_bool_rows():
    m = np.random.default_rng(2).standard_normal((6, 3)) > 0
    assert_same(vg.jit(lambda m: sum([m[i] for i in range(len(m))], vnp.zeros(3)))(m),
                sum([m[i] for i in range(len(m))], np.zeros(3)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("take", ["last_axis", "middle_axis", "ellipsis", "leading"])
def test_reshape_of_a_fancy_indexed_copy_copies_where_numpy_copies(take, dtype):
    """w = x[..., [0, -1]] is laid out with the indexed axis outermost (not C-contiguous),
    so w[-2:].reshape(-1) is a copy in NumPy: vecgrad made it a view, and a later
    `w *= 3` reached it."""
    x3 = np.random.default_rng(3).standard_normal((4, 3, 5)).astype(dtype)
    key = {"last_axis": (Ellipsis, np.array([0, -1])), "middle_axis": (slice(None), [0, 2]),
           "ellipsis": (Ellipsis, [1, 1], slice(None)), "leading": ([0, 3],)}[take]

    def f(x):
        w = x[key]
        r = w[-2:].reshape(-1)
        v = w.ravel()
        w *= 3
        return r, v, w
    assert_same(vg.jit(f)(x3), f(x3.copy()))


UFUNC_LAYOUTS = {  # NumPy gives a ufunc's result its inputs' memory order (order='K')
    "sin of x.T, reshape": lambda x: (np.sin(x.T), lambda y: y.reshape(-1)),
    "x.T * 2, ravel": lambda x: (x.T * 2.0, lambda y: y.ravel()),
    "x.T + x.T, reshape": lambda x: (x.T + x.T, lambda y: y.reshape(2, -1)),
    "exp of x (C), ravel": lambda x: (np.exp(x), lambda y: y.ravel()),
    "x.T + row (broadcast), ravel": lambda x: (x.T + x[0, :3], lambda y: y.ravel()),
    "sin of x.T[::2], ravel": lambda x: (np.sin(x.T[::2]), lambda y: y.ravel()),
}


@pytest.mark.parametrize("name", list(UFUNC_LAYOUTS))
def test_reshape_of_a_ufunc_result_copies_or_views_as_numpy(name):
    """np.sin(x.T) is F-ordered in NumPy, so its reshape(-1) is a copy: a later write into
    the result must not reach it (vecgrad once made every fresh value C-ordered)."""
    x = np.random.default_rng(4).standard_normal((3, 4))

    def f(x):
        y, view = UFUNC_LAYOUTS[name](x)
        z = view(y)
        y[0, 1] = 5.0
        return z * 1.0
    assert_same(vg.jit(f)(x), f(x.copy()))


@pytest.mark.parametrize("bounds", [(-0.5, np.float32(1.5)), (0, np.int8(3)),
                                    (np.float32(0), None), (-1, 2.5)])
@pytest.mark.parametrize("dtype", [bool, np.int64, np.float32])
def test_clip_takes_numpys_joint_result_dtype(bounds, dtype):
    """np.clip(bool_array, -0.5, np.float32(1.5)) is float32 (the dtype of all three
    together); vecgrad's maximum-then-minimum made it float64."""
    a = (X > 0).astype(dtype)
    lo, hi = bounds
    assert_same(vg.jit(lambda a: np.clip(a, lo, hi))(a), np.clip(a, lo, hi))


def test_hypot_gradient_at_the_origin_is_finite():
    """hypot(m, x * m) with m = 0 somewhere: its VJP divided by hypot = 0, and the nan
    (times the zero derivative of x * 0) made the whole gradient nan; central differences
    of the NumPy program give 0 there."""
    m = np.array([0.0, 1.0, 0.0, 2.0])

    def f(x):
        return np.hypot(m, x * m) + np.hypot(x * 0.0, m)
    same_as_numpy(f, X[0])
    g = vg.grad(lambda x: vnp.sum(f(x)))(X[0])
    assert np.all(np.isfinite(g)) and g[0] == 0.0 and g[2] == 0.0


def test_contraction_of_an_accumulation_of_another_dtype_is_not_split():
    """sum(w) after w[::-1] += float64 into a float32 w: simplify split the sum into
    sum(w_before) + sum(v) and declared the float64 sum float32 (TypeCheckError; without the
    typecheck, a float32 result computed in float64)."""
    s = np.random.default_rng(5).standard_normal((3, 2)).astype(np.float32)
    y = np.random.default_rng(6).standard_normal(2)

    def f(s, y):
        w = np.cos(s[0])
        w[::-1] += np.negative(y)
        return np.mean(w, axis=0) - w, np.sum(w * 2)
    assert_same(vg.jit(f)(s, y), f(s.copy(), y), rtol=1e-6)


@pytest.mark.parametrize("n", [1, 50])
def test_numpy_array_changed_in_place_after_its_first_use_is_captured_again(n):
    """buf = np.sin(c) (a plain NumPy array: c is not traced); y = buf + x; buf[0] = 2;
    y *= buf: NumPy uses the changed buf the second time; vecgrad's capture cache (one copy
    per array per trace) served the first copy again, a silently wrong value and gradient."""
    c = np.random.default_rng(7).standard_normal((n, 3)).astype(np.float32)

    def f(x):
        buf = np.sin(c)
        y = buf + x
        buf[0, ...] = 2
        y *= buf
        return y
    same_as_numpy(f, np.random.default_rng(8).standard_normal((n, 3)))


@pytest.mark.parametrize("how", ["np.positive", "unary_plus", "vnp.positive"])
def test_positive_is_a_new_array_not_an_alias(how):
    """v = np.positive(b); v[0] = 2 must not change b: vecgrad's positive returned its
    argument itself, so the write reached b."""
    pos = {"np.positive": np.positive, "unary_plus": lambda b: +b,
           "vnp.positive": vnp.positive}[how]

    def f(x):
        b = x.copy()
        v = pos(b)
        v[0] = 2.0
        w = pos(b[1, 0])  # (a NumPy scalar stays one)
        return b * 3 + v * w
    same_as_numpy(f, X)
    with pytest.raises(TypeError):
        vg.jit(lambda m: pos(m))(X > 0)


VIEWS = [lambda a: a[..., ::2], lambda a: a[..., :4].transpose(1, 0, 2),
         lambda a: a[..., 4:].transpose(2, 1, 0), lambda a: a[..., ::2].transpose(0, 2, 1),
         lambda a: a[:, ::-1, :4], lambda a: a[..., 1::2].transpose(1, 2, 0),
         lambda a: a[:1, :, :4], lambda a: a[..., ::-2].transpose(2, 0, 1)]


@pytest.mark.parametrize("i", range(len(VIEWS)))
@pytest.mark.parametrize("j", range(len(VIEWS)))
def test_ufunc_results_of_any_two_layouts_reshape_as_numpy(i, j):
    """Binary ufuncs of every pair of layouts (transposes, reversed and strided slices,
    broadcasts): the result's ravel is a view exactly where NumPy's is."""
    x = np.random.default_rng(5).standard_normal((4, 4, 8))

    def f(x):
        y = np.multiply(VIEWS[i](x), VIEWS[j](x))
        z = y.reshape(-1)
        y[0, 1, 2] = 7.0
        return z * 1.0
    assert_same(vg.jit(f)(x), f(x.copy()))


@pytest.mark.parametrize("part", ["real", "imag"])
def test_ufunc_of_a_complex_part_of_a_transpose_reshapes_as_numpy(part):
    """z.T.real is strided like z.T (F-ordered), so np.sin of it is F-ordered too."""
    z = np.random.default_rng(6).standard_normal((3, 4)) * (1 + 2j)

    def f(z):
        y = np.sin(getattr(z.T, part))
        r = y.ravel()
        y[0, 1] = 5.0
        return r * 1.0
    assert_same(vg.jit(f)(z), f(z.copy()))


# ------------------------------------------------ found by tests/test_fuzz_loops.py (loops)

TRACED_WRITES = {
    "row": lambda b, t, v: b.__setitem__(t, np.sin(v)),
    "element": lambda b, t, v: b.__setitem__((t, 1), v[0] * b[t, 2]),
    "column": lambda b, t, v: b.__setitem__((slice(None), t % 3), v[:1] * 2.0),
    "ellipsis": lambda b, t, v: b.__setitem__((Ellipsis, t % 3), b[..., (t + 1) % 3] * v[0]),
    "strided": lambda b, t, v: b.__setitem__((slice(1, None), t % 3), np.tanh(v[:1])),
    "max": lambda b, t, v: b.__setitem__(t, np.maximum(b[t], v)),
    "newaxis": lambda b, t, v: b.__setitem__((None, t, slice(None, None, -1)), v),
    "view": lambda b, t, v: b[1:].__setitem__(t % 3, v * 3.0),
}


def _traced_writes(form, xp):
    def f(x, ix):
        b = xp.zeros((4, 3)) + 0.5
        for e in range(len(ix)):
            TRACED_WRITES[form](b, ix[e], x[e % 4])
        return b
    return f


@pytest.mark.parametrize("form", sorted(TRACED_WRITES))
def test_write_at_one_traced_int_sets_that_region(form):
    """buf[dst[e]] = v in an edge loop (a set, not +=, at one traced integer; negative
    positions, repeats: the last write wins) was refused ('writing at a traced index is not
    supported'); now where(arange(n) == t, v, region): NumPy's result, its gradient, and the
    batched graph equal to the unbatched one. Out of bounds raises IndexError, as NumPy."""
    ix = np.array([2, -1, 0, 2, -4])
    x = np.random.default_rng(1).standard_normal((4, 3))
    assert_same(vg.jit(_traced_writes(form, vnp))(x, ix), _traced_writes(form, np)(x, ix))
    w = np.cos(np.arange(12.0)).reshape(4, 3)

    def loss(x, ix):
        return vnp.sum(_traced_writes(form, vnp)(x, ix) * w)
    central_diff_check(loss, [x, ix])
    e, leaves = entry(loss, (x, ix))
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)
    if form in ("row", "max", "element"):
        with pytest.raises(IndexError):
            vg.jit(_traced_writes(form, vnp))(x, np.array([1, 4]))


@pytest.mark.parametrize("d", [1, 3])
def test_gradient_with_a_rolled_loops_result_as_aux_output(d):
    """vg.grad(has_aux=True) where the aux is a recurrence's final state (a rolled loop whose
    whole result is a graph output): the backward pass's sharing of the forward loop with its
    residual-storing copy asserted that no output was the loop's result (AssertionError in
    batch/loopshare.share_forward)."""
    r = np.random.default_rng(0)
    x, W = r.standard_normal((7, d)), r.standard_normal((d, d)) * 0.5

    def f(xp, x, W):
        o1 = np.stack([np.sin(x[i:i + 2, 0]) for i in range(2, 6)])
        h = xp.zeros(d)
        for i in range(7):
            h = np.tanh(W @ h + x[i])
        return xp.sum(o1) + xp.sum(h * np.arange(1.0, d + 1)), (o1, h)
    g, aux = vg.grad(lambda x, W: f(vnp, x, W), argnums=(0, 1), has_aux=True)(x, W)
    want = f(np, x, W)[1]
    assert_same(aux[0], want[0])
    assert_same(aux[1], want[1])
    central_diff_check(lambda x, W: f(vnp, x, W)[0], [x, W], argnums=(0, 1))
    plain = vg.grad(lambda x, W: f(vnp, x, W)[0], argnums=(0, 1))(x, W)
    for a, b in zip(g, plain):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("const", [0.0, 2, True])
def test_vmap_of_a_python_number_output_is_stacked(const):
    """vg.vmap(f)(xs) is stack([f(x) for x in xs]): an output that is a Python number the
    function returned untouched (an accumulator `acc = 0.0` of an empty loop) has the mapped
    size, NumPy's dtype (as jax.vmap); it came back as the bare number. out_axes=None
    keeps it."""
    xs = np.random.default_rng(2).standard_normal((3, 2))

    def f(x):
        acc = const
        for i in range(0):
            acc = acc + x[i]
        return x.sum(), acc
    got = vg.vmap(f)(xs)
    want = [np.stack([np.asarray(f(x)[i]) for x in xs]) for i in range(2)]
    assert_same(got[0], want[0])
    assert_same(got[1], want[1])
    assert vg.vmap(f, out_axes=(0, None))(xs)[1] is const


@pytest.mark.parametrize("c", [1.5, 2, -1.0])
def test_vmap_keeps_a_python_number_argument_weak(c):
    """vg.vmap(f, in_axes=(0, None))(xs32, 1.5): the Python number is weak in f, as in
    stack([f(x, 1.5) for x in xs32]) (float32 * 1.5 is float32); it was traced as a float64
    array, so results that mixed it with float32 values came back float64. A number that
    f needs concretely (a slice bound, a branch) still works."""
    xs = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32)

    def f(x, c):
        acc = 0.0
        for i in range(1, 3):
            acc = acc + np.prod(np.tanh(x[i:i + 2]) + 2.0) * c
        return acc, x * c, x[:2].sum() * c
    got = vg.vmap(f, in_axes=(0, None))(xs, c)
    for i in range(3):
        assert_same(got[i], np.stack([np.asarray(f(x, c)[i]) for x in xs]))
    got = vg.vmap(lambda x, n: x[:n].sum(), in_axes=(0, None))(xs, 2)
    assert_same(got, xs[:, :2].sum(axis=1))


ROW_VIEWS = {  # the body of an edge loop over e; o is (6, 3), ix / jx traced int arrays
    "mul": "w = o[ix[e]]\nw *= 0.9\nw += x[e]",
    "add_then_mul": "w = o[ix[e]]\nw += x[e]\nw *= 0.9",
    "sees_later_write": "r = o[ix[e]]\no[ix[e]] = x[e] * 2\no[3] = r * 0.5",
    "slice_of_row": "w = o[ix[e]]\nw[1:] = x[e, :2] * w[0]",
    "row_of_a_view": "w = o[1:][jx[e] % 5]\nw -= x[e]",
    "two_rows": "a = o[ix[e]]\nb = o[jx[e]]\na += b\nb *= 0.5",
    "div": "o[ix[e]] /= 1.0 + o[jx[e]] ** 2",
    "iadd": "o[ix[e]] += x[e] * o[jx[e]]",
    "column": "w = o[:, jx[e] % 3]\nw *= 0.5\nw += x[:, e % 3]",
    "row_tail": "w = o[ix[e], 1:]\nw -= x[e, :2]\no[0] += w[0]",
    "ellipsis": "w = o[..., ix[e] % 3]\nw[::2] = x[::2, 0] * w[1::2]",
    "read_tail": "o[jx[e]] = o[ix[e], ::-1] * 0.5 + x[e]",
}


@pytest.mark.parametrize("form", sorted(ROW_VIEWS))
def test_a_row_read_at_a_traced_int_is_a_view(form):
    """w = o[ix[e]] (o of rank 2, one traced int) is, in NumPy, basic indexing: a view of
    row ix[e]. `w *= 0.9` wrote into a copy, and w did not see later writes to o: silent
    wrong values (found by the loop fuzzer). Now such a row (or column, or region: one
    traced int among basic indices, o[:, j], o[i, 1:], which were refused) is a view whose
    writes go back at the traced position and which is re-read after o changes."""
    body = "\n".join("        " + ln for ln in ROW_VIEWS[form].splitlines())
    src = (f"def f(x, ix, jx):\n    o = xp.ones((6, 3)) * 0.5 + x * 0.1\n"
           f"    for e in range(5):\n{body}\n    return o\n")
    fs = {}
    for xp in (np, vnp):
        ns = {"np": np, "xp": xp}
        exec(src, ns)  # noqa: S102 - the program is the test's subject
        fs[xp] = ns["f"]
    x = np.random.default_rng(4).standard_normal((6, 3))
    ix, jx = np.array([2, -1, 0, 2, 4]), np.array([1, 1, 3, -2, 0])
    assert_same(vg.jit(fs[vnp])(x, ix, jx), fs[np](x.copy(), ix, jx))
    w = np.cos(np.arange(18.0)).reshape(6, 3)

    def loss(x, ix, jx):
        return vnp.sum(fs[vnp](x, ix, jx) * w)
    central_diff_check(loss, [x, ix, jx])
    e, leaves = entry(loss, (x, ix, jx))
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)


def test_a_row_of_a_read_only_argument_at_a_traced_int_is_read_only():
    """As NumPy's view of a read-only array: writing into it raises."""
    def f(x, ix):
        w = x[ix[0]]
        w *= 2.0
        return w
    x = np.ones((3, 2))
    x.setflags(write=False)
    with pytest.raises(ValueError):
        f(x, np.array([1]))
    with pytest.raises(vg.VecgradError, match="test_fuzz_regressions.py"):
        vg.jit(f)(np.ones((3, 2)), np.array([1]))


SEVERAL_TRACED = {  # o is (4, 3, 5); i, j, k traced ints (negative ones too)
    "set_element": "o[i, j, k] = x[0, 0]",
    "iadd_element": "o[i, j, k] += x[0, 1] * o[j, i % 3, k]",
    "set_row": "o[i, j] = np.sin(x[1])",
    "set_strided": "o[i, ::2, k] = x[2, :2]",
    "first_and_last": "o[i, :, k] *= 2.0",
    "row_view": "w = o[i, j]\nw *= x[3]",
    "read_middle": "o[0, 0] = o[i, :, k] @ x[0, :3] + o[i, j, 1:].sum()",
    "newaxis": "o[None, i, j, ::-1] -= x[1]",
}


@pytest.mark.parametrize("form", sorted(SEVERAL_TRACED))
def test_several_traced_ints_among_basic_indices(form):
    """o[i, j, k] = v and o[i, ::2, k] += v with several traced integer scalars: NumPy's
    basic indexing of one region; were refused. Reads and writes (views included) now equal
    NumPy's, with gradients."""
    body = "\n".join("        " + ln for ln in SEVERAL_TRACED[form].splitlines())
    src = (f"def f(x, ix):\n    o = xp.zeros((4, 3, 5)) + x[:, :3, None] * 0.5\n"
           f"    for e in range(3):\n        i, j, k = ix[e], ix[e + 1] % 3, ix[e + 2]\n"
           f"{body}\n    return o\n")
    fs = {}
    for xp in (np, vnp):
        ns = {"np": np, "xp": xp}
        exec(src, ns)  # noqa: S102 - the program is the test's subject
        fs[xp] = ns["f"]
    x = np.random.default_rng(6).standard_normal((4, 5))
    ix = np.array([1, -1, 3, 0, -4])
    assert_same(vg.jit(fs[vnp])(x, ix), fs[np](x.copy(), ix))
    w = np.cos(np.arange(60.0)).reshape(4, 3, 5)
    central_diff_check(lambda x, ix: vnp.sum(fs[vnp](x, ix) * w), [x, ix])


def test_an_element_read_at_a_traced_int_is_a_numpy_scalar():
    """o[ix[e]] of a 1-D int array is a NumPy scalar: `t += 0.7 * t` makes a float (no
    in-place cast), and writing it back casts to int, as NumPy; vecgrad raised CastingError
    (it treated the element as a 0-d ndarray)."""
    def f(xp, v, ix):
        o = xp.ones(5, dtype=int) * 3
        for e in range(5):
            o[ix[e]] += 0.7 * o[ix[e]] + v[e]
            t = o[ix[(e + 1) % 5]]
            t += 0.5
        return o, t
    v, ix = np.linspace(-1, 2, 5), np.array([0, 2, 2, 4, -1])
    got, want = vg.jit(lambda v, ix: f(vnp, v, ix))(v, ix), f(np, v, ix)
    assert_same(got[0], want[0])
    assert_same(got[1], want[1])


def test_numpy_vectorize_of_a_traced_array_calls_it_per_element():
    """np.vectorize(f)(traced) was refused by NumPy's own conversion (the error named
    'numpy.lib.__call__', then 'numpy.vectorize'); it calls f per element now, as NumPy
    (more in test_vectorize.py)."""
    w = np.array([1.0, -2.0, 0.5])
    np.testing.assert_array_equal(vg.jit(lambda w: np.vectorize(lambda t: t * 2)(w))(w), w * 2)


POW_EXPONENTS = [2, 2.0, 0.5, 3, 1, 0, -2.0, np.int64(2), np.float64(2.0), np.float32(0.5)]


@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "float32", "float64"])
def test_power_with_a_number_exponent_has_numpys_dtype(dtype):
    """x ** 2.0 of ints was int (int8 ** 2.0 wrapped around), bool ** 2.0 int8, bool ** 1
    bool, x32 ** np.float64(2) float32, np.power(bool, 2) int8: NumPy 2 gives float64,
    float64, int64, float64, int64 (only an array's `** 2`, NumPy's square fast path, is int8
    for bools). Checked for arrays, 0-d arrays, NumPy scalars, np.power and the reflected
    power; found by hypothesis in test_fuzz_numpy."""
    a = np.array([True, False]) if dtype == "bool" else np.array([3, 12], dtype=dtype)
    forms = [lambda a, e: a ** e, lambda a, e: a[0] ** e, lambda a, e: np.power(a, e),
             lambda a, e: a[0, ...] ** e, lambda a, e: e ** a]
    for e in POW_EXPONENTS:
        for fn in forms:
            with np.errstate(all="ignore"):
                want = fn(a, e)
            got = vg.jit(lambda a, fn=fn, e=e: fn(a, e))(a)
            assert np.asarray(got).dtype == np.asarray(want).dtype, (e, fn)
            np.testing.assert_allclose(np.asarray(got, float), np.asarray(want, float))


def test_power_one_is_a_new_array():
    """y = x ** 1 returned x itself: a write into y reached x."""
    def f(x):
        b = x.copy()
        y = b ** 1
        y[0] = 7.0
        return b + y
    same_as_numpy(f, np.arange(3.0))


ARRAY_AMONG_SLICES = ["x[ix, 1:]", "x[::-1, ix % 5, None]", "x[None, ix, ::2, 1:]",
                      "x[1:, ix % 5]", "x[ix[:2, None] % 3, :, ::-1]", "x[..., ix % 5, :2]",
                      "x[-100:100, ix % 5][:, ::-1]"]


@pytest.mark.parametrize("key", ARRAY_AMONG_SLICES)
def test_a_traced_index_array_among_partial_slices(key):
    """x[ix, 1:] with ix a traced int array was refused (only full slices were supported
    beside one traced array): NumPy applies the slices and gathers along the array's axis,
    its shape in its place (found by the calls styles of tests/fuzz_calls.py)."""
    x = np.random.default_rng(1).standard_normal((4, 5, 3))
    ix = np.array([3, -1, 0, 2, 2])
    f = eval("lambda x, ix: " + key)
    assert_same(vg.jit(f)(x, ix), f(x, ix))
    w = np.cos(np.arange(f(x, ix).size)).reshape(f(x, ix).shape)
    central_diff_check(lambda x: vnp.sum(f(x, ix) * w), [x])


def test_a_traced_boolean_mask_among_indices_says_it_has_a_data_dependent_shape():
    """x[x[:, 0] > 0, -1] said 'must be an integer array, not bool': it is a boolean mask,
    whose result shape depends on the data; the error names vnp.where."""
    with pytest.raises(vg.VecgradError, match="boolean mask.*vnp.where"):
        vg.jit(lambda x: x[x[:, 0] > 0, -1])(X)


@pytest.mark.parametrize("nums", [-1, (-2, -1), (1, -1), [-2]])
def test_negative_static_argnums_count_from_the_end(nums):
    """jax.jit(f, static_argnums=-1) makes the last positional parameter static; vecgrad
    refused negative positions (found by tests/fuzz_calls.py's transforms)."""
    calls = []

    def f(a, n, scale):
        calls.append((isinstance(n, Tracer), isinstance(scale, Tracer)))  # (type(n) or
        return a[:n].sum() * scale  # repr(n) would make n static: see test_type_of_a_...)
    a = np.arange(5.0)
    g = vg.jit(f, static_argnums=nums)
    assert g(a, 2, 0.5) == f(a, 2, 0.5) and g(a, 3, 2.0) == f(a, 3, 2.0)
    static = {k % 3 for k in np.atleast_1d(nums)}
    assert not any(t for ts in calls for i, t in enumerate(ts) if i + 1 in static)
    assert (2 in static) == (not any(t for _, t in calls))  # (else traced)


OUT_FORMS = [
    "np.cumsum(o, axis=0, out=o)", "np.cumsum(o[:, 0], out=o[:, 1])", "o.cumsum(axis=0, out=o)",
    "np.cumprod(o, axis=1, out=o)", "np.nancumsum(o, axis=0, out=o)", "np.cumsum(o, 0, None, o)",
    "np.sum(o, axis=0, out=o[0])", "np.sum(o[1:], axis=1, keepdims=True, out=o[1:, :1])",
    "np.mean(o, axis=1, out=o[:, 2])", "o.sum(0, out=o[1])", "np.max(o, axis=0, out=o[3])",
    "np.prod(o, axis=0, out=o[2])", "np.take(o[0], [2, 0, 1], out=o[1])",
    "np.ptp(o[:2], axis=0, out=o[3])", "np.median(o, axis=0, out=o[1])",
    "np.quantile(o, 0.3, axis=0, out=o[1])", "np.nansum(o, axis=1, out=o[:, 1])",
    "np.dot(o[:3, :3], o[0], out=o[1])", "np.einsum('ij,j->i', o, o[0], out=o[:, 2])",
    "np.outer(o[0], o[1], out=o[:3])", "np.fix(o, out=o)", "o.max(axis=1, out=o[:, 1])",
]


@pytest.mark.parametrize("form", OUT_FORMS)
def test_out_argument_writes_the_result_into_the_buffer(form):
    """np.cumsum(o, axis=0, out=o) returned the cumsum but left o unchanged (out= was
    ignored by cumsum, cumprod, the nan-reductions, median, quantile, take, trace, ptp, all,
    any, argmax...); np.sum(..., out=) was refused, np.dot / einsum / outer / fix(out=)
    crashed with a TypeError. Now as NumPy: the result written into out, out returned."""
    def f(x):
        o = x.copy()
        r = eval(form)
        return o * 1.0, r
    x = np.random.default_rng(2).standard_normal((4, 3))
    assert_same(vg.jit(f)(x), f(x.copy()))
    central_diff_check(lambda x: sum(vnp.sum(a * np.cos(np.arange(a.size)).reshape(a.shape))
                                     for a in f(x)), [x])


_OUTER_32 = np.zeros((3, 2))


def test_out_argument_of_another_dtype_or_a_numpy_array_is_refused():
    """NumPy casts into an out of another dtype, by per-function rules: refused, with what
    to write instead; an out that is a NumPy array cannot hold a traced result."""
    x = np.ones((3, 2))
    with pytest.raises(vg.VecgradError, match=r"out\[...\] = numpy.cumsum"):
        vg.jit(lambda x: np.cumsum(x, axis=0, out=np.zeros((3, 2), int) + x.astype(int)))(x)
    with pytest.raises(vg.VecgradError, match="vnp.zeros"):
        vg.jit(lambda x: np.cumsum(x, axis=0, out=_OUTER_32))(x)
    # (np.zeros made in the traced function: a vecgrad buffer on the trace's second run)
    assert_same(vg.jit(lambda x: np.cumsum(x, axis=0, out=np.zeros((3, 2))))(x),
                np.cumsum(x, axis=0))


def test_nan_to_num_without_copy_changes_the_array_in_place():
    """np.nan_to_num(o, copy=False) returned the cleaned values but left o unchanged (copy
    was ignored), so a later read of o saw the NaNs; NumPy changes o and returns it."""
    def f(x):
        o = x * 1.0
        r = np.nan_to_num(o, copy=False, nan=0.5, posinf=2.0)
        o[0] = 7.0
        s = np.nan_to_num(o[1:], copy=False)
        return o * 1.0, r * 1.0, s * 1.0
    x = np.array([1.0, np.nan, np.inf, -2.0])
    assert_same(vg.jit(f)(x), f(x.copy()))
    central_diff_check(lambda x: sum(vnp.sum(a) for a in f(x)), [np.array([1.0, 2.0, 3.0])])


@pytest.mark.parametrize("ord_axis", [(np.inf, None), (np.inf, 0), (1, (1, 0)), (2, None),
                                      (np.inf, (0, 1)), (2, (-2, -1))])
def test_norm_of_an_empty_matrix_is_zero(ord_axis):
    """np.linalg.norm(np.zeros((0, 3)), np.inf) is 0 in NumPy (its max reductions take
    initial=0); vecgrad raised a plain ValueError (zero-size array to reduction maximum)."""
    o, ax = ord_axis
    f = lambda x: np.linalg.norm(x[:0], ord=o, axis=ax) + np.linalg.norm(x, ord=o, axis=ax)
    x = np.random.default_rng(3).standard_normal((4, 3))
    assert_same(vg.jit(f)(x), f(x))
    central_diff_check(lambda x: vnp.sum(f(x)), [x])


EINSUM_MIXED = [("i,i,i->", [(3,), (3,), (3,)]), ("ij,jk,k->i", [(2, 3), (3, 4), (4,)]),
                (",ee,e->", [(), (2, 2), (2,)]), ("e...c,cac->...c", [(1, 2, 2), (2, 3, 2)])]


@pytest.mark.parametrize("spec, shapes", EINSUM_MIXED)
@pytest.mark.parametrize("last", [np.float64, np.int64])
def test_einsum_casts_every_operand_to_the_common_type_first(spec, shapes, last):
    """np.einsum('i,i,i->', a32, b32, c64) multiplies in float64 (NumPy casts every operand
    first); vecgrad contracted the float32 pair in float32: a float64 result with float32
    rounding (found by a random-subscripts probe of the calls fuzzer's einsum templates)."""
    r = np.random.default_rng(4)
    ops = [r.standard_normal(s).astype(np.float32) for s in shapes[:-1]]
    ops.append((r.standard_normal(shapes[-1]) * 3).astype(last))
    want = np.einsum(spec, *ops)
    got = vg.jit(lambda *a: np.einsum(spec, *a))(*ops)
    assert np.asarray(got).dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("default", [0, 0.5, True, np.float32(1), np.array(2)])
@pytest.mark.parametrize("dtype", [bool, np.int8, np.float32])
def test_select_with_a_python_number_default_promotes_as_numpy(default, dtype):
    """np.select([m], [bools], 0) is int64 and np.select([m], [int8s], 0.5) float64 (the
    default is a weak Python number in NumPy's promotion); vecgrad kept the choices' dtype."""
    m, c = np.array([True, False, True]), np.array([1, 0, 3]).astype(dtype)
    f = lambda m, c: np.select([m], [c], default)
    assert_same(vg.jit(f)(m, c), f(m, c))


def _write_at(v, i):
    o = v * 1.0
    o[i] = 3.0
    return o


def _write_row_tail(x, i):
    o = x * 1.0
    o[i, 1:] = 3.0
    return o


def _read_row_tail(x, i):
    return x[i, 1:] * 2.0


def _write_in_loop(x, ix):
    o = x * 1.0
    for i in ix:
        o[i] = 7.0
    return o


@pytest.mark.parametrize("fn", [_write_at, _write_row_tail, _read_row_tail, _write_in_loop])
def test_traced_position_below_minus_n_raises_index_error(fn):
    """o[i] = 3.0 at a traced int i = -7 into 5 rows wrote row 3 (i + n = -2 wrapped around
    a second time) where NumPy raises IndexError; so did x[i, 1:] reads and writes."""
    x = np.arange(10.0).reshape(5, 2)
    arg = np.array([0, -7, 1]) if fn is _write_in_loop else np.int64(-7)
    ok = np.array([0, -5, 4]) if fn is _write_in_loop else np.int64(-5)
    jf = vg.jit(fn)
    assert_same(jf(x, ok), fn(x, ok))
    with pytest.raises(IndexError):
        fn(x, arg)
    with pytest.raises(IndexError):
        jf(x, arg)


@pytest.mark.parametrize("row", [[-np.inf, np.inf, 0.0, np.nan], [np.inf, np.inf, 1.0, np.nan],
                                 [1.0, np.nan, 2.0, 3.0, 4.0], [np.nan, np.nan]])
def test_nanmedian_takes_the_middle_values_as_numpy(row):
    """np.nanmedian([-inf, inf, 0, nan]) is 0 (the middle value; NumPy's nanmedian is the
    median of the valid entries), vecgrad gave NaN (it interpolated as nanquantile(a, 0.5)
    does, inf * 0)."""
    a = np.array([row, row[::-1]])
    for f in (lambda a: np.nanmedian(a, axis=1), lambda a: np.nanmedian(a, axis=0),
              lambda a: np.nanmedian(a.astype(np.float32), axis=1, keepdims=True)):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert_same(vg.jit(f)(a), f(a))
    x = np.random.default_rng(5).standard_normal((3, 4))
    central_diff_check(lambda x: vnp.sum(np.nanmedian(x, axis=1) * np.arange(1.0, 4.0)), [x])


@pytest.mark.parametrize("n", [5, 40])
def test_gradient_of_a_rolled_loop_reading_float32_rows_into_a_float64_carry(n):
    """h = tanh(W @ h + s[i]) with s float32 and h float64: the backward loop returned the
    float32 rows' cotangents beside the float64 carry's, and a loop packs one dtype (a
    ShapeError naming no line of the program); they are cast to the pack dtype and back."""
    r = np.random.default_rng(6)
    W, s = r.standard_normal((3, 3)) * 0.4, r.standard_normal((n, 3)).astype(np.float32)

    def f(W, s):
        h = vnp.zeros(3)
        for i in range(n):
            h = np.tanh(W @ h + s[i])
        return h

    def loss(W, s):
        return vnp.sum(f(W, s) * np.arange(1.0, 4.0))
    np.testing.assert_allclose(vg.jit(f)(W, s), f(W, s))
    central_diff_check(loss, [W, s.astype(np.float64)], argnums=(0,))
    gs = vg.grad(loss, argnums=(0, 1))(W, s)[1]
    assert gs.dtype == np.float32 and gs.shape == s.shape
    np.testing.assert_allclose(gs, vg.grad(loss, argnums=1)(W, s.astype(np.float64)),
                               rtol=1e-4, atol=1e-5)


def test_isinstance_of_a_python_number_argument_traces_it_static():
    """isinstance(n, int) of a Python int argument was False under vg.jit (it is traced as a
    weak 0-d value), so the function silently took NumPy's other branch; now the check makes
    n static (traced again with the int itself). Arithmetic alone keeps it traced: new
    values compile nothing new."""
    x = np.arange(4.0)

    def f(x, n):
        return x[:n].sum() if isinstance(n, int) else -1.0

    def g(x, c):
        return x * c if isinstance(c, (float, np.floating)) else x

    jf, jg = vg.jit(f), vg.jit(g)
    for n in (1, 3):
        assert jf(x, n) == f(x, n)
    for c in (2.0, 3.0, 2):
        np.testing.assert_array_equal(jg(x, c), g(x, c))
    calls = []

    def h(x, c):
        calls.append(c)
        return np.tanh(x * c) + vnp.sum(x) * c ** 2 - abs(c)
    want = [h(x, c) for c in (2.0, 3.0, 0.5)]
    calls.clear()
    jh = vg.jit(h)
    for c, w in zip((2.0, 3.0, 0.5), want):
        np.testing.assert_allclose(jh(x, c), w)
    assert len(calls) == 1  # (traced once)


TEMP_WRITES = {  # a write into a temporary whose value is a buffer's version, used whole
    "view_of_buffer": lambda b, x: b[:].__setitem__(slice(None), b),
    "copy_row": lambda b, x: b[1:].copy().__setitem__(slice(None), b[:-1] * 2.0),
    "twice_then_view": lambda b, x: (b.__setitem__(0, 2.0), b[::-1].__setitem__(
        slice(None), b)),
}


@pytest.mark.parametrize("form", sorted(TEMP_WRITES))
def test_buffer_version_as_the_value_of_a_write_into_a_temporary(form):
    """v1 = sin(y); v1[0] = 2; v1[0] = 2; w = v1[:]; w[:] = v1: the write into w (a
    temporary of one use) took v1's version whole, which was no snapshot (KeyError in
    batching's `ref`)."""
    def f(x):
        b = np.sin(x)
        b[0] = 2.0
        b[0] = 2.0
        t = b[:]
        TEMP_WRITES[form](b, x)
        t[:] = b
        return np.sum(t) + b * x
    same_as_numpy(f, np.linspace(0.3, 1.4, 5))


TYPE_CHECKS = {  # NumPy's program asks the type of a Python number argument
    "is_float": lambda n: 2.0 if type(n) is float else 3.0,
    "eq_int": lambda n: 2.0 if type(n) == int else 3.0,
    "in_tuple": lambda n: 2.0 if type(n) in (float, np.float64) else 3.0,
    "construct": lambda n: type(n)(1) * 2.0,  # (of the argument's own type: float(1), int(1))
    "name": lambda n: 2.0 if type(n).__name__ == "int" else 3.0,
}


@pytest.mark.parametrize("check", sorted(TYPE_CHECKS))
@pytest.mark.parametrize("n", [1.5, 2])
def test_type_of_a_python_number_argument_is_its_python_type(check, n):
    """type(n) is float was False under vg.jit for n=1.5 (n was traced as a WeakScalar): the
    function silently took NumPy's other branch. A function whose code (or a helper it calls,
    or a kernel passed to it) calls type() traces its Python numbers static."""
    kind = TYPE_CHECKS[check]

    def helper(n):
        return kind(n)

    def f(x, n):
        return vnp.sum(x * helper(n)) * n

    def g(x, fn, n):  # (the kernel passed as an argument)
        return np.stack(list(map(lambda r: r * fn(n), x)))  # noqa: C417 - the user's style
    x = np.arange(1.0, 4.0)
    want = np.sum(x * kind(n)) * n
    for run in (vg.jit(f), lambda x, n: vg.value_and_grad(f)(x, n)[0],
                lambda x, n: vg.jit(vg.vmap(f, in_axes=(0, None)))(x[None], n)[0]):
        assert run(x, n) == want
    np.testing.assert_allclose(vg.grad(f)(x, n), kind(n) * n)
    np.testing.assert_allclose(vg.jit(g, static_argnums=1)(x[:, None], kind, n),
                               g(x[:, None], kind, n))


def test_grad_of_a_pytree_with_int_leaves_says_which_leaf():
    """As JAX's grad: an integer leaf of a differentiated pytree is a TypeError that says
    why; vecgrad's names the leaf (a Python int inside a container, which vecgrad keeps
    static, gave a None gradient silently)."""
    def f(p):
        return vnp.sum(p["w"] * p["n"][0])
    for n, what in ((3, "Python int 3"), (np.arange(2), "dtype int64"),
                    (np.int32(2), "dtype int32")):
        with pytest.raises(TypeError, match=rf"argument 0\['n'\]\[0\] .*{what}") as e:
            vg.grad(f)({"w": np.ones(3), "n": (n,)})
        assert isinstance(e.value, vg.VecgradError) and "test_fuzz_regressions.py" in str(e.value)
    g = vg.grad(f)({"w": np.ones(3), "n": (2.5,), "flag": True})  # (floats: leaves, as JAX)
    assert g["flag"] is None  # (bools: static flags)
    np.testing.assert_allclose(g["w"], 2.5)
    np.testing.assert_allclose(g["n"][0], 3.0)
    assert vg.grad(lambda p, k: vnp.sum(p * k[0]))(np.ones(2), (3,))[0] == 3.0


def test_jit_of_a_call_with_keyword_arguments_only():
    """vg.jit(f)(a=x, b=2.0) with no positional argument: the fast path for arrays-only calls
    took the empty argument list as such and dropped the keywords (KeyError 'a' in f)."""
    x = np.arange(3.0)

    def f(**kw):
        return kw["a"] * kw["b"]

    def g(*, a, n=2):
        return a[:n] * 2.0
    for b in (2.0, x, 3):
        np.testing.assert_array_equal(vg.jit(f)(a=x, b=b), f(a=x, b=b))
    np.testing.assert_array_equal(vg.jit(g)(a=x), g(a=x))
    np.testing.assert_array_equal(vg.jit(g, static_argnames="n")(a=x, n=3), g(a=x, n=3))
    np.testing.assert_array_equal(vg.jit(vg.vmap(f))(a=x[:, None], b=x), x[:, None] ** 2)


@pytest.mark.parametrize("out", ["list", "tuple", "pair", "dict", "none"])
def test_grad_of_a_container_output_says_it_needs_a_scalar(out):
    """vg.grad(lambda a: [vnp.sum(a)]) raised TracedIntoNumpyError ("if you are writing into
    a buffer...": NumPy's conversion of the list of tracers); JAX's grad says it needs a
    scalar output, and so does vecgrad's, at the user's function (with has_aux's hint for a
    pair)."""
    def f(a):
        s = vnp.sum(a ** 2)
        return {"list": [s], "tuple": (s,), "pair": (s, a), "dict": {"s": s}, "none": None}[out]
    with pytest.raises(vg.ArgumentError, match="scalar output") as e:
        vg.grad(f)(np.arange(3.0))
    assert "test_fuzz_regressions.py" in str(e.value)
    assert ("has_aux=True" in str(e.value)) == (out == "pair")


BINCOUNTS = {
    "weights_kw": lambda X, i: np.bincount(i, weights=X[:, 0]),
    "minlength": lambda X, i: np.bincount(i, X[:, 1] * 2.0, minlength=7),
    "bool_weights": lambda X, i: np.bincount(i, weights=X[:, 0] > 0) * X[0, 0],
    "int_weights": lambda X, i: np.bincount(i, weights=(X[:, 2] > 0).astype(np.int8)) * X[0, 0],
    "list": lambda X, i: np.bincount([2, 0, 2], weights=X[0]),
    "empty": lambda X, i: np.bincount(i[:0], weights=X[:0, 0], minlength=2) + X[0, 0],
    "counts": lambda X, i: np.bincount(i) * X[:4, 1],
}


@pytest.mark.parametrize("form", sorted(BINCOUNTS))
def test_bincount_of_known_positions_sums_traced_weights(form):
    """np.bincount(idx, weights=traced) with idx known while tracing (a segment sum) recursed
    without end (RecursionError: the data-dependent refusal looked only at positional
    arguments, then NumPy dispatched the keyword back to vecgrad); its length is known, so
    it is a scatter-add in float64, as NumPy's."""
    i = np.array([0, 3, 1, 1, 3])
    same_as_numpy(lambda X: BINCOUNTS[form](X, i), np.random.default_rng(1).standard_normal((5, 3)))


def test_bincount_refusals_are_numpys_or_typed():
    X = np.ones((4, 3))
    for f, err in ((lambda X, i: np.bincount(i, weights=X[:3, 0]), ValueError),
                   (lambda X, i: np.bincount(-i, weights=X[:, 0]), ValueError),
                   (lambda X, i: np.bincount(i, weights=X[:, 0] * 1j), TypeError)):
        with pytest.raises(err):
            f(X, np.arange(4))
        with pytest.raises(err):
            vg.jit(lambda X, f=f: f(X, np.arange(4)))(X)
    with pytest.raises(vg.TraceError, match="data-dependent"):
        vg.jit(lambda X, i: np.bincount(i, weights=X[:, 0]))(X, np.arange(4))
    with pytest.raises(vg.TraceError, match="data-dependent"):
        vg.jit(lambda X: np.setdiff1d(np.arange(3.0), ar2=X[0]))(X)


NUMBER_IDIOMS = {  # Python's own behavior of a number argument n, in a traced function
    "str": lambda x, n: x * len(str(n)),
    "fstring": lambda x, n: x * len(f"{n}"),
    "repr": lambda x, n: x * len(repr(n)),
    "format": lambda x, n: x * len(format(n, ".3f")),
    "is_integer": lambda x, n: x * (2.0 if float(n).is_integer() else 3.0),
    "method": lambda x, n: x * (n.is_integer() if isinstance(n, float) else n.bit_length()),
    "as_integer_ratio": lambda x, n: x * n.as_integer_ratio()[1],
    "negative_power": lambda x, n: x * n ** -1,
    "power_of_ints": lambda x, n: x * 2 ** (n - 4) if isinstance(n, int) else x,
    "big_int": lambda x, n: x * (n * 10 ** 20 % 7),
}


@pytest.mark.parametrize("idiom", sorted(NUMBER_IDIOMS))
@pytest.mark.parametrize("n", [2, 2.5, -3])
def test_python_number_arguments_behave_as_python_numbers(idiom, n):
    """A Python number argument is traced as a WeakScalar; where the user's code asks what
    only its value says (its digits: str(n), f"{n}" gave "WeakScalar(int, i64[])", silently;
    n.is_integer(), n.bit_length(): AttributeError; n ** -1 of an int: NumPy's ValueError
    where Python gives a float; n * 10 ** 20: OverflowError where Python's ints are exact),
    the function is traced again with n static."""
    f = NUMBER_IDIOMS[idiom]
    x = np.arange(1.0, 4.0)
    try:
        want = f(x, n)
    except (AttributeError, ZeroDivisionError):
        return  # (not a method of this kind of number)
    np.testing.assert_array_equal(vg.jit(f)(x, n), want)
    np.testing.assert_array_equal(vg.grad(lambda x, n: vnp.sum(f(x, n)))(x, n),
                                  vg.grad(lambda x: vnp.sum(f(x, n)))(x))


def test_python_number_arithmetic_alone_stays_traced():
    """Only the idioms above make a number static: arithmetic (powers by a known positive
    int, floats) keeps one compile for every value."""
    calls = []

    def f(x, n):
        calls.append(1)
        return x * n ** 2 + n ** 0.5 + 2.0 ** n + x ** n
    jf = vg.jit(f)
    for n in (1.5, 2.5, 4.0):
        np.testing.assert_allclose(jf(np.arange(3.0), n), f(np.arange(3.0), n))
    assert len(calls) == 4  # (one trace, plus NumPy's three calls)


def test_type_of_a_number_in_a_kernel_object_or_a_default_argument():
    """asks_type follows kernels passed as objects with __call__ and as default arguments."""
    class Kern:
        def __call__(self, n):
            return 2.0 if type(n) is float else 3.0

    kern = Kern()

    def f(x, n, k=kern.__call__):
        return x * k(n)

    def g(x, n, kern):
        return x * kern(n)
    x = np.ones(2)
    for n in (1.5, 2):
        np.testing.assert_array_equal(vg.jit(f)(x, n), f(x, n))
        np.testing.assert_array_equal(vg.jit(g, static_argnums=2)(x, n, Kern()), g(x, n, Kern()))


FLAGS = ["x.flags['C_CONTIGUOUS']", "x.T.flags.c_contiguous", "x.T.flags['F']",
         "x[:, ::2].flags.forc", "x.copy().flags.writeable", "x[0].flags['OWNDATA']",
         "x.T.flags['FNC']", "x[None].flags['C']", "x.copy().flags.carray"]


@pytest.mark.parametrize("expr", FLAGS)
def test_flags_of_traced_arrays_read_as_numpys(expr):
    """x.flags["C_CONTIGUOUS"] raised TypeError ('SimpleNamespace' object is not
    subscriptable) and x.flags.c_contiguous AttributeError; both are NumPy's answers for
    views vecgrad lays out as NumPy does (the arguments themselves are read-only)."""
    f = eval("lambda x: " + expr)
    X = np.arange(6.0).reshape(2, 3)
    assert vg.jit(lambda x: x[0, 0] * 0 + f(x))(X) == f(X.copy())
    with pytest.raises(KeyError):
        vg.jit(lambda x: x.flags["NOT_A_FLAG"])(X)


def test_np_copy_takes_numpys_order_and_subok():
    X = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(vg.jit(lambda x: np.copy(x, order="F", subok=True) * 2)(X),
                                  X * 2)


def test_a_slice_argument_is_static_by_its_values():
    """f(x, slice(1, None)): slices are unhashable before Python 3.12, and the call raised a
    plain TypeError; a slice is now static, keyed by (start, stop, step), and an argument
    vecgrad cannot key is the typed ArgumentError at the user's line."""
    x = np.arange(6.0)
    calls = []

    def f(x, s):
        calls.append(s)
        return x[s] * 2.0
    jf = vg.jit(f)
    for s in (slice(0, 2), slice(None, 4, 2), slice(0, 2), slice(np.int64(0), 2)):
        np.testing.assert_array_equal(jf(x, s), x[s] * 2.0)
    assert len(calls) == 2  # (equal slices share a compile)
    np.testing.assert_array_equal(vg.grad(lambda x, s: vnp.sum(x[s] ** 2))(x, slice(1, 3)),
                                  [0, 2, 4, 0, 0, 0])
    with pytest.raises(vg.ArgumentError, match="test_fuzz_regressions.py"):
        jf(x, {1, 2})


class _Holder:
    def __init__(self, v):
        self.v = v


ESCAPES = {  # results that hold traced values outside their array leaves
    "generator": lambda a: (s * 2 for s in [a]),
    "closure": lambda a: (lambda t: a * t),
    "object": lambda a: _Holder(a * 2),
    "object_of_list": lambda a: (a, _Holder([a, 1])),
    "aux_closure": lambda a: {"f": lambda: a},
}


@pytest.mark.parametrize("form", sorted(ESCAPES))
def test_a_result_that_would_leak_traced_values_is_refused(form):
    """vg.jit(lambda a: (s * 2 for s in [a])) returned the generator, whose values were then
    computed on a finished trace (Tracer(f64[3]) where NumPy gives numbers, silently); so
    did a closure over traced values or an object holding them. As JAX's jit, vecgrad refuses
    such results, naming the function; static results (a function of no traced value, a
    string, a dtype) are still returned."""
    with pytest.raises(vg.TraceError, match="returned .* traced|generator") as e:
        vg.jit(ESCAPES[form])(np.arange(3.0))
    assert "test_fuzz_regressions.py" in str(e.value)
    out = vg.jit(lambda a: (a * 2, np.sin, "s", a.dtype, _Holder(3)))(np.arange(3.0))
    assert out[1] is np.sin and out[2] == "s" and out[3] == np.float64 and out[4].v == 3


def test_static_argnums_and_argnames_that_name_no_parameter_are_errors():
    """As jax.jit's: vg.jit(f, static_argnums=5) of a one-parameter f, or a static name that
    is none of f's parameters, is an error at the user's line (it was ignored silently, and
    the argument stayed traced); *args and **kwargs take any."""
    x = np.arange(3.0)

    def f(a, n=2, *, m=1):
        return a[:n] * m
    for kw in ({"static_argnums": 5}, {"static_argnames": "zz"}, {"static_argnums": (1, 3)}):
        with pytest.raises(vg.ArgumentError, match="names no parameter.*test_fuzz_regressions"):
            vg.jit(f, **kw)
    np.testing.assert_array_equal(vg.jit(f, static_argnames="m")(x, m=2), f(x, m=2))
    np.testing.assert_array_equal(vg.jit(lambda *a: a[0] * a[3], static_argnums=3)(x, 1, 2, 3),
                                  x * 3)
    np.testing.assert_array_equal(vg.jit(lambda a, **kw: a * kw["q"], static_argnames="q")(
        x, q=2), x * 2)


ROLLED_TWICE = {  # a recurrence run twice over the rows (a region starting mid-iteration)
    "tanh": lambda prev, r: np.tanh(prev + r),
    "sin_mul": lambda prev, r: np.sin(prev * 0.5) * r + r,
    "three_passes": lambda prev, r: np.tanh(prev) * 0.9 + r,
}


@pytest.mark.parametrize("form", sorted(ROLLED_TWICE))
def test_a_recurrence_whose_rolled_step_starts_mid_iteration(form):
    """o[i] = tanh(o[i-1] + x[i]) over the rows twice (o[-1] read by the second pass's first
    step), next to another loop: the rolled step listed tanh before the add it reads
    (KeyError in batch/roll.py's _emit_region); its members are now emitted in dependence
    order."""
    step = ROLLED_TWICE[form]

    def f(x):
        o = x * 0.0 + 1.0
        xs = x * 0.5 + 1.0
        for _ in range(3 if form == "three_passes" else 2):
            for i in range(x.shape[0]):
                o[i] = step(o[i - 1], xs[i])
        back = (x * 0.5 + 1.0).copy()
        for i in range(x.shape[0] - 1, 0, -1):
            back[i - 1] += back[i] * 0.5
        return o * back
    x = np.random.default_rng(3).standard_normal((8, 2))
    same_as_numpy(f, x)
    X = np.stack([x, np.cos(x)])
    np.testing.assert_allclose(vg.vmap(f)(X), np.stack([f(a) for a in X]), rtol=1e-12)


@pytest.mark.parametrize("form", ["r_", "c_"])
def test_np_r_and_c_of_traced_arrays_are_vnps(form):
    """np.r_[x, 1.0] of a traced x was refused (NumPy's AxisConcatenator converts it without
    dispatching); while tracing, np.r_ / np.c_ of traced items are vnp.r_ / vnp.c_ (more
    variants in test_numpy_semantics25.py)."""
    x = np.arange(3.0)
    np.testing.assert_array_equal(vg.jit(lambda x: getattr(np, form)[x, x * 2.0])(x),
                                  getattr(np, form)[x, x * 2.0])
    np.testing.assert_array_equal(vg.jit(lambda x: getattr(vnp, form)[x, x * 2.0])(x),
                                  getattr(np, form)[x, x * 2.0])


def test_a_transformed_function_called_as_a_method_is_refused_with_what_to_do():
    """@vg.jit on a method: m.predict(x) called predict(x) without self (a plain TypeError
    about a missing argument); keying by the object would go stale when its attributes
    change, so the call raises ArgumentError saying what to do; staticmethods still work."""
    class Model:
        def __init__(self, w):
            self.w = w

        @vg.jit
        def predict(self, x):
            return np.tanh(x @ self.w)

        @staticmethod
        @vg.jit
        def act(x):
            return np.tanh(x)
    m, x = Model(np.eye(3)), np.ones((2, 3))
    with pytest.raises(vg.ArgumentError, match="called as a method.*test_fuzz_regressions"):
        m.predict(x)
    np.testing.assert_allclose(m.act(x), np.tanh(x))
    assert hasattr(m, "predict") and isinstance(Model.predict, vg.Transformed)


def test_a_chain_of_adds_of_empty_arrays_does_not_recurse():
    """`o = o * 0.5 + x[:, ::-1][i][2:]` over empty rows: the add-chain rewrite took every
    term of an empty sum for a small one (0 * 4 <= 0) and regrouped the chain forever
    (RecursionError in simplify); small terms are now strictly smaller than the sum."""
    def f(x):
        o = np.float64(0.5)
        for i in range(6):
            o = o * 0.5 + x[:, ::-1][i][2:]
        z = vnp.zeros((4, 0))
        for i in range(5):
            z = z + x[i, 2:] + x[:4, 2:] * 0.5
        return o, z
    x = np.random.default_rng(4).standard_normal((6, 2))
    got, want = vg.jit(f)(x), f(x)
    for g, w in zip(got, want):
        assert_same(g, w)


def test_a_masked_selection_returned_names_the_line_that_made_it():
    """Returning x.T[x.T > 0] (a data-dependent length) raised at the caller's line, naming
    no line of the traced function: the error names the line of the selection now."""
    def f(x):
        return x.T[x.T > 0]  # the line the error must name
    line = f.__code__.co_firstlineno + 1
    with pytest.raises(vg.TraceError, match=rf"data-dependent.*test_fuzz_regressions.py:{line}\)"):
        vg.jit(f)(np.ones((3, 2)))


def test_explain_does_not_call_a_line_batched_while_its_pieces_remain_one_by_one():
    """CSR rows through a static indptr (rows of 1-3 items): batching grouped the rows by
    length, yet the compiled gradient kept one slice per row and one scatter per row, and
    vg.explain said 'nothing: all repeated work was merged' (found by tests/fuzz_cliffs.py).
    Whatever batching does with such a line, explain must not call a line merged while the
    compiled gradient holds explain.REPEATED or more operations of one kind from it."""
    from collections import Counter

    from vecgrad.explain import REPEATED
    r = np.random.default_rng(0)
    lens = r.integers(1, 4, 60)
    ptr = [0] + [int(v) for v in np.cumsum(lens)]
    x = r.standard_normal(ptr[-1])

    def f(x, ptr):
        out = vnp.zeros(len(ptr) - 1)
        for i in range(len(ptr) - 1):
            out[i] = np.max(x[ptr[i]:ptr[i + 1]])
        return np.sum(out ** 2)
    with vg.config(keep_stages=True):
        rep = vg.explain(f, x, ptr, budget=0.002)
        e, _ = vg.grad(f).entry(x, ptr)
    line = f.__code__.co_firstlineno + 3
    per = Counter((q.prim.name, str(q.out.aval)) for q in e.stages["final"].eqns
                  if q.src is not None and q.src.line == line)
    left = max(per.values(), default=0) >= REPEATED
    said = [u for u in rep.unbatched if u.src.line == line]
    assert bool(said) == left, (per, said)
    if said:
        assert said[0].kind == "repeated" and "remain" in said[0].reason
        assert "Suggestion: give the pieces one length" in str(rep)


@pytest.mark.parametrize("form", ["acc", "any", "genexpr", "buf", "scatter", "long"])
def test_bool_accumulations_are_logical_ors(form):
    """`acc = False; acc = acc + (x[i] > t)` over a loop: bool + bool is a logical or, and
    batching took the chain for a signed sum (its constants accumulated as ints: a crash,
    UFuncTypeError in batch/sums.py; found by tests/fuzz_semantics.py). Bool chains are ors,
    batched as elementwise operations."""
    def f(x, ix):
        n = 40 if form == "long" else 5
        if form in ("acc", "long"):
            o = False
            for i in range(n):
                o = o + (x[i % len(x)] > 0.9 + 0.01 * i)
            return o, o + True
        if form == "any":
            o = False
            for i in range(n):
                o = o + np.any(x[i] > 1.0, axis=-1, keepdims=True)
            return o
        if form == "genexpr":
            return sum(x[i] > 0.8 for i in range(n)), sum((x[i] < -1.2 for i in range(n)), False)
        if form == "buf":
            o = vnp.zeros(x.shape[1], dtype=bool)
            for i in range(n):
                o += x[i] > 1.1
            return o
        o = vnp.zeros(len(x), dtype=bool)
        for i in range(len(ix)):
            o[ix[i]] += x[i, 0] > 0.5
        return o
    r = np.random.default_rng(5)
    for _ in range(3):
        x, ix = r.standard_normal((6, 4)), r.integers(0, 6, 6)
        assert_same(vg.jit(f)(x, ix), f(x, ix))
    def flat(x):  # (the outputs weighted into a scalar: the batched graph is checked on it)
        outs = f(x, ix)
        v = vnp.concatenate([vnp.ravel(o * 1.0) for o in
                             (outs if isinstance(outs, tuple) else (outs,))])
        return vnp.sum(v * np.cos(np.arange(v.size)))
    e, leaves = entry(flat, (x,), argnums=(0,))
    assert_same_function(e.stages["cse"], e.stages["batch"], leaves)


def test_a_masked_selection_used_elsewhere_names_both_lines():
    """x[mask] made on one line and used as an array on another (in a helper, or by the
    caller of the traced function): the error names the use and the selection's line."""
    def pick(x):
        return x[x > 0]  # the selection

    def f(x):
        return len(pick(x))  # the use
    made, used = pick.__code__.co_firstlineno + 1, f.__code__.co_firstlineno + 1
    with pytest.raises(vg.TraceError, match=rf"regressions.py:{used}\) \(x\[mask\] at "
                                            rf".*regressions.py:{made}\)"):
        vg.jit(f)(np.ones(3))


@pytest.mark.parametrize("call,refused", [
    (lambda x, o: np.add(x, 1.0, out=o), True),
    (lambda x, o: np.maximum(x, 0.5, out=o), True),
    (lambda x, o: np.round(x, out=o), True),
    (lambda x, o: np.clip(x, 0.0, 1.5, out=o), True),
    (lambda x, o: np.add(x, 1.0, out=o, casting="unsafe"), False),
    (lambda x, o: np.add(x.astype(np.int64), 2, out=o), False),
    (lambda x, o: np.add.accumulate(x, out=o), False),  # (reductions cast: 'unsafe')
])
def test_ufunc_out_of_another_kind_is_refused_as_numpy(call, refused):
    """np.add(x[i], 1.0, out=int_buffer[i]) in a loop: NumPy refuses the cast (casting=
    'same_kind': UFuncTypeError); vecgrad ignored `casting` and wrote truncated floats (a
    silent wrong answer; found by the semantics probes). Now a CastingError (a TypeError);
    an explicit casting='unsafe' and the reductions' casts still write, as NumPy's."""
    x = np.random.default_rng(6).standard_normal((4, 3)) * 2

    def f(x):
        o = vnp.zeros((4, 3), dtype=np.int64)
        for i in range(4):
            call(x[i], o[i])
        return o
    if refused:
        with pytest.raises(TypeError):
            f(np.array(x))  # (NumPy: the oracle refuses it too)
        with pytest.raises(vg.CastingError, match="test_fuzz_regressions.py"):
            vg.jit(f)(x)
    else:
        assert_same(vg.jit(f)(x), f(np.array(x)))


@pytest.mark.parametrize("lo,hi", [(-1, 2), (-1000, 1000), (1, 300), (None, 300), (-300, None),
                                   (-1.5, 2), (np.int64(-1), 2)])
def test_clip_of_small_ints_by_python_ints_past_their_range(lo, hi):
    """np.clip(uint8_array, -1, 2): NumPy takes Python int bounds past the dtype's range as
    its ends (uint8 result); vecgrad raised OverflowError (a false refusal, found by the
    semantics probes). In a loop over rows and as a method too."""
    a = np.array([[0, 5, 200], [7, 1, 3]], np.uint8)
    b = np.array([[-5, 0, 100], [9, -128, 127]], np.int8)
    for arr in (a, b):
        assert_same(vg.jit(lambda t: np.clip(t, lo, hi))(arr), np.clip(arr, lo, hi))
        assert_same(vg.jit(lambda t: vnp.stack([t[i].clip(lo, hi) for i in range(2)]))(arr),
                    arr.clip(lo, hi))


@pytest.mark.parametrize("call,refused", [
    (lambda b, x: np.copyto(b, x), True),  # float64 into int64: 'same_kind' refuses
    (lambda b, x: np.copyto(b, 2.5), True),
    (lambda b, x: np.copyto(b, 2), False),
    (lambda b, x: np.copyto(b, x * 3, casting="unsafe"), False),
    (lambda b, x: np.copyto(b, (x * 3).astype(np.int32)), False),
    (lambda b, x: np.putmask(b, x > 0, x * 3), True),  # arrays: 'safe'
    (lambda b, x: np.putmask(b, x > 0, 2.5), False),  # Python scalars: cast
    (lambda b, x: np.putmask(b, x > 0, (x * 3).astype(np.int8)), False),
])
def test_copyto_and_putmask_cast_as_numpy(call, refused):
    """np.copyto(int_row, float_row) and np.putmask(int_buffer, m, floats) in a loop: NumPy
    refuses the cast (copyto by its casting rule, putmask's array values by 'safe'); vecgrad
    wrote truncated values (silent wrong answers, found by the semantics probes)."""
    x = np.random.default_rng(7).standard_normal((4, 3)) * 2

    def f(x):
        o = vnp.zeros((4, 3), dtype=np.int64)
        for i in range(4):
            call(o[i], x[i])
        return o
    if refused:
        with pytest.raises(TypeError):
            f(np.array(x))
        with pytest.raises(vg.CastingError, match="test_fuzz_regressions.py"):
            vg.jit(f)(x)
    else:
        assert_same(vg.jit(f)(x), f(np.array(x)))


BOOL_SCALAR_KEYS = {
    "True": lambda a: a[True], "False": lambda a: a[False], "True, 1": lambda a: a[True, 1],
    "1, True": lambda a: a[1, True], ":, True": lambda a: a[:, True],
    "True, True": lambda a: a[True, True], "True, [0, 1]": lambda a: a[True, [0, 1]],
    "array(True)": lambda a: a[np.array(True)], "..., True": lambda a: a[..., True],
    "True, ..., None": lambda a: a[True, ..., None], "True, :, 1": lambda a: a[True, :, 1],
    "np.True_, 2:": lambda a: a[np.True_, 2:], "mask, True": lambda a: a[[True, False, True], True],
    "[0][True]": lambda a: a[0][True], "[0, 0][False]": lambda a: a[0, 0][False],
}


@pytest.mark.parametrize("key", BOOL_SCALAR_KEYS)
def test_a_boolean_scalar_index_is_a_new_axis_as_numpy(key):
    """x[True] is x[None] (x[False] its empty selection), as NumPy reads a 0-d boolean index:
    it raised IndexError (found by the semantics probes)."""
    same_as_numpy(lambda a: BOOL_SCALAR_KEYS[key](a) * 1.0, X, grad=key != "[0, 0][False]")


@pytest.mark.parametrize("key", ["True", "False", "True, 1", "1, True", ":, True", "..., True"])
def test_writes_through_a_boolean_scalar_index(key):
    def f(a):
        c = a * 1.0
        k = eval(f"np.s_[{key}]")
        c[k] = a[0] * 2.0 if key in ("True", "1, True", "True, 1") else 1.5
        c[k] += 0.5
        return c
    same_as_numpy(f, X)


MAX_CHAIN_BODIES = {
    "self": "o[c] = np.maximum(o[c], o[c])",
    "scaled": "o[c] = np.minimum(o[c], o[c] * 2.0)",
    "shifted": "o[c] = np.maximum(o[c], np.tanh(o[c]) + a[i, 0])",
    "used": "t = np.maximum(o[c], a[i])\n        o[c] = t\n        acc = acc + t",
}


@pytest.mark.parametrize("body", MAX_CHAIN_BODIES)
@pytest.mark.parametrize("rows", [[1, 1], [1, 1, 0, 1], [0, 2, 0, 2, 2]])
def test_a_running_maximum_whose_value_reads_the_buffer_is_not_joined(body, rows):
    """`o[c] = np.maximum(o[c], g(o[c]))` at Python-int rows that repeat: the join of
    scatter-maxima (batch/extremes.py) took the value for independent of the buffer and read
    a removed write (KeyError; found by the semantics fuzzer's edge propagation)."""
    ns: dict = {"np": np}
    exec("def f(a):\n    o = a * 1.0\n    acc = 0.0\n"  # noqa: S102 - the program under test
         f"    for i, c in enumerate({rows}):\n        {MAX_CHAIN_BODIES[body]}\n"
         "    return o + acc", ns)
    same_as_numpy(ns["f"], np.random.default_rng(1).standard_normal((5, 3)))


def test_explain_finds_a_dependence_past_a_wide_operand(monkeypatch):
    """A sum of 22,500 terms feeding one more `sum` (`e += (4 * u[i, j] - s) ** 2` over a
    grid): the dependence search started from every member and operand at once, spent its
    budget before one step and told the user "the trace is too large to say whether they
    depend on each other" (the lead's mixed_boundary_ifs reproducer). Here with the budget
    made small."""
    from vecgrad.batch import notes
    monkeypatch.setattr(notes, "PATH_BUDGET", 60)

    def f(u):
        e = 0.0
        for i in range(1, len(u) - 1):
            s = u[i - 1] + u[i + 1]
            e += (2 * u[i] - s) ** 2
        return e
    rep = vg.explain(f, np.random.default_rng(0).standard_normal(200), budget=0.001)
    assert not [n for n in rep.unbatched if "too large" in getattr(n, "reason", "")], \
        [n.reason for n in rep.unbatched]


def test_explain_lists_operations_left_at_a_line_it_calls_a_rolled_recurrence():
    """A line noted as a recurrence (rolled) whose steps also remain one operation each in the
    compiled gradient is listed as 'repeated': explain said "Not batched: nothing" for the
    lead's scan_momentum_two_carries (2,000 scalar steps left unrolled beside a cumsum)."""
    from types import SimpleNamespace

    from vecgrad.explain import _repeated
    from vecgrad.ir import Const, Eqn, Params, Src, Var
    from vecgrad.notes import Recurrence
    from vecgrad.primitives import add

    src = Src("user.py", 7, "f")
    eqns, a = [], Const(np.float64(1.0))
    for _ in range(20):
        v = Var(add.shape_rule(a.aval, a.aval))
        eqns.append(Eqn(add, (a, a), Params({}), v, src))
        a = v
    entry = SimpleNamespace(stages={"final": SimpleNamespace(eqns=eqns)})
    found = _repeated(entry, (Recurrence(src, "add", 20, became="cumsum"),))
    assert [f.kind for f in found] == ["repeated"] and found[0].count == 20


FOLD_VALUES = {
    "plain": [0.3, -1.2, 2.5, 0.7, 2.4, -0.1, 1.1, 0.0, 0.9],
    "ties": [1.0, 2.0, 2.0, -3.0, 2.0, 0.5, -3.0, 1.5, 0.25],
    "nan_first": [np.nan, 1.0, 3.0, -2.0, 0.5, 0.1, 0.2, 0.3],
    "nan_later": [1.0, np.nan, 3.0, -2.0, np.nan, 4.0, 0.2, -5.0],
    "signed_zeros": [-0.0, 0.0, -0.0, 0.0, -1.0, -1.0, -2.0, -0.0],
    "infs": [-np.inf, np.nan, -np.inf, -np.inf, np.inf, np.inf, -1.0, 0.0],
}


@pytest.mark.parametrize("name", FOLD_VALUES)
@pytest.mark.parametrize("fn", ["max", "min"])
@pytest.mark.parametrize("form", ["gen", "args", "mixed", "float32", "int"])
def test_builtin_max_of_many_traced_items_is_pythons_fold(name, fn, form):
    """max(...) / min(...) of 8 or more traced 0-d values is one selection (stack, argmax,
    gather): it was a chain of one selection per item, a graph growing with the items
    (the cliff detector's genexpr/max). The value is Python's own fold, NaNs, ties and signed
    zeros included, and the gradient goes to the first of equal items."""
    vals = np.array(FOLD_VALUES[name])
    if form == "int":
        vals = np.nan_to_num(vals, nan=7, posinf=9, neginf=-9).astype(np.int64) * 3
    elif form == "float32":
        vals = vals.astype(np.float32)
    import builtins

    def op(*a):  # (looked up at the call: vecgrad patches builtins.max while it traces)
        return getattr(builtins, fn)(*a)

    def f(a):
        if form == "args":
            return op(*[a[i] for i in range(len(a))]) * 1
        if form == "mixed":  # Python numbers among the traced items
            return op(a[0], 0.5, *[a[i] for i in range(1, len(a))], -0.25) * 1
        return op(a[i] for i in range(len(a))) * 1
    got, want = vg.jit(f)(vals), f(vals)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert np.signbit(got) == np.signbit(want)
    if form in ("gen", "args") and np.isfinite(want):
        g = vg.grad(lambda a: f(a) * 1.0)(vals.astype(np.float64))
        first = next(i for i, v in enumerate(vals) if v == want)
        np.testing.assert_array_equal(g, np.eye(len(vals))[first])


def test_builtin_max_over_a_loop_has_a_flat_graph():
    def f(X, w):
        return max(np.sum(X[i] * w[0]) for i in range(len(X)))
    counts = [vg.value_and_grad(f, argnums=(0, 1)).entry(
        np.random.default_rng(n).standard_normal((n, 3)), np.ones(2))[0].counts["final"]
        for n in (40, 80)]
    assert counts[0] == counts[1]


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.float16])
def test_modf_of_infinities_is_signed_zero_and_infinity(dt):
    """np.modf(+-inf) is (+-0.0, +-inf) in NumPy; vecgrad's fmod(x, 1) made the fractional
    part NaN (a silent wrong answer, found by the semantics probes)."""
    b = np.array([np.nan, -np.inf, np.inf, 0.0, -0.0, -1.5, 2.25, 1e4], dtype=dt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = vg.jit(np.modf)(b)
    for g, w in zip(got, np.modf(b)):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w))
    same_as_numpy(lambda a: np.modf(a)[0] * 2.0 + np.modf(a)[1], np.array([0.25, -1.75, 3.5]))


@pytest.mark.parametrize("make", ["vnp.arange(3.0)", "vnp.linspace(0.0, 1.0, 3)", "vnp.eye(3)[0]",
                                  "vnp.array([1.0, 2.0, 3.0])"])
def test_a_write_into_a_constant_vnp_array_says_how_to_make_a_buffer(make):
    """vnp.arange & co. give constant NumPy arrays, which a traced write cannot enter: the
    refusal said 'create it with vnp.zeros/vnp.empty' to a user who had used vnp (found by
    the corner styles)."""
    ns: dict = {"vnp": vnp}
    exec(f"def f(v):\n    o = {make}\n    for i in range(3):\n"  # noqa: S102
         "        o[i] = v[i] * 2\n    return o", ns)
    if "array" in make:
        with pytest.raises(vg.errors.TracedIntoNumpyError,
                           match=r"vnp\.zeros\(n\) \+ vnp\.arange"):
            vg.jit(ns["f"])(np.ones(3))
    else:  # (session 26: the trace runs again with these made buffers, numpy/_buffers.py)
        np.testing.assert_array_equal(vg.jit(ns["f"])(np.arange(3.0)), np.arange(3.0) * 2)
    ns2: dict = {"vnp": vnp}
    exec("def g(v):\n    o = vnp.zeros(3) + vnp.arange(3.0)\n    for i in range(3):\n"  # noqa: S102
         "        o[i] = o[i] + v[i] * 2\n    return o", ns2)
    np.testing.assert_array_equal(vg.jit(ns2["g"])(np.ones(3)), np.arange(3.0) + 2)


@pytest.mark.parametrize("shape", [(0, 0), (3, 0), (0, 2), (2, 0, 0)])
def test_matrix_rank_and_lstsq_of_empty_matrices(shape):
    """np.linalg.matrix_rank of a matrix with no singular values is 0 (NumPy's max over
    them starts at 0), and lstsq, which reads it, solves: both raised 'zero-size array to
    reduction operation maximum' (found by the semantics probes)."""
    A = np.zeros(shape)
    np.testing.assert_array_equal(vg.jit(np.linalg.matrix_rank)(A), np.linalg.matrix_rank(A))
    if len(shape) == 2:
        b = np.ones(shape[0])
        got = vg.jit(lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0])(A, b)
        assert_same(got, np.linalg.lstsq(A, b, rcond=None)[0])


@pytest.mark.parametrize("p", [None, 2, -2, 1, "fro"])
def test_cond_of_an_empty_matrix_raises_numpys_linalgerror(p):
    """np.linalg.cond of a 0 x 0 matrix raises LinAlgError in NumPy; vecgrad raised a
    ValueError from a reduction (found by the semantics probes)."""
    with pytest.raises(np.linalg.LinAlgError, match="empty"):
        vg.jit(lambda a: np.linalg.cond(a, p))(np.zeros((0, 0)))
    assert_same(vg.jit(lambda a: np.linalg.cond(a, p))(np.eye(2) * 3), np.linalg.cond(np.eye(2) * 3, p))


@pytest.mark.parametrize("m, n, bshape", [(4, 4, ()), (3, 5, ()), (4, 4, (2,)), (6, 4, ()),
                                          (6, 4, (2,))])
def test_lstsq_residuals_empty_where_numpys_are_and_rank_int32(m, n, bshape):
    """np.linalg.lstsq's residuals are empty when a has no more rows than columns (a shape
    known from the shapes), and its rank is LAPACK's int32: vecgrad returned the squared
    norms (shape (k,)) and an int64 (found by bench/numpy_coverage.py)."""
    r = np.random.default_rng(1)
    a, b = r.standard_normal((m, n)), r.standard_normal((m, *bshape))
    got = vg.jit(lambda a, b: np.linalg.lstsq(a, b, rcond=None))(a, b)
    for g, w in zip(got, np.linalg.lstsq(a, b, rcond=None)):
        assert_same(g, np.asarray(w))
    same_as_numpy(lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0], a, b)


def test_nextafter_passes_the_gradient_to_its_first_argument():
    """np.nextafter(x, y) is x moved by one ulp: its gradient for x is 1, which central
    differences see; vecgrad's was 0 (found by bench/numpy_coverage.py)."""
    same_as_numpy(lambda x, y: np.nextafter(x, y) * x, X, X[::-1].copy())


@pytest.mark.parametrize("dt", [np.float32, np.int8, np.bool_, np.uint8, np.complex64])
def test_vander_has_numpys_dtype(dt):
    """np.vander computes in x's dtype promoted with int (float32 -> float64, int8 ->
    int64): vecgrad kept x's dtype (found by bench/numpy_coverage.py's float32 check)."""
    v = (np.arange(4) - 1).astype(dt)
    for n, inc in [(None, False), (3, True), (1, False)]:
        assert_same(vg.jit(lambda v, n=n, inc=inc: np.vander(v, n, inc))(v), np.vander(v, n, inc))
    same_as_numpy(lambda v: np.vander(v, 3), X[0].astype(np.float64))


ARRAY_CALLS = [
    "np.array(x)", "np.asarray(x)", "np.array([x, x * 2])", "np.asarray([x[0], x[1]])",
    "np.array([[x[0, 0], x[0, 1]], [x[1, 0], 1.0]])", "np.array([x[0, 0], 0.1])",
    "np.array([x[0, 0], 1])", "np.array([x[0, 0], True])", "np.array(x, dtype=np.float32)",
    "np.asarray(x, np.float32)", "np.array(x, ndmin=3)", "np.array(x[0, 0])",
    "np.ascontiguousarray(x.T)", "np.asfortranarray(x)", "np.asanyarray([x, x])",
    "np.array([x[0], np.ones(4)])", "np.array((x[0, 0], x[1, 1]))",
    "np.array([[x[i, j] * 2 for j in range(4)] for i in range(3)])",
    "np.array([np.float32(0.1), x[0, 0]])", "np.array([x[0].sum(), 0], dtype=int)",
    "np.array([x[0, 0], 1 + 2j])", "np.array([x[0, 0] > 0, True])"]


@pytest.mark.parametrize("call", ARRAY_CALLS)
@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_np_array_of_traced_values_is_numpys_array(call, dt):
    """np.array / np.asarray & co. of traced values (or lists of them) from the user's code
    make NumPy's array, in NumPy's dtype (a Python float beside a float32 makes float64,
    and keeps its float64 value): they raised TracedIntoNumpyError (NumPy's constructors do
    not dispatch; found by bench/numpy_coverage.py)."""
    f = eval(f"lambda x: {call}")
    x = X.astype(dt)
    got, want = vg.jit(f)(x), f(x)
    assert_same(got, np.asarray(want), rtol=1e-6 if dt == np.float32 else 1e-10)
    if dt == np.float64 and np.asarray(want).dtype == np.float64:
        same_as_numpy(f, X)


def test_np_array_copy_is_writable_and_leaves_its_source():
    def f(x):
        y = np.array(x)
        y[0] = 5.0
        z = np.asarray(x, dtype=np.float32)
        return x + y + z
    assert_same(vg.jit(f)(X), f(X))
    same_as_numpy(lambda x: f(x) - np.asarray(x, dtype=np.float32), X)


@pytest.mark.parametrize("f", [np.var, np.std, np.nanvar, np.nanstd])
@pytest.mark.parametrize("dt", [None, np.float32, np.complex128])
@pytest.mark.parametrize("kind", ["real", "complex", "nan"])
def test_variance_dtypes_are_numpys(f, dt, kind):
    """np.var / np.std with dtype=complex128 are complex in NumPy (vecgrad's were float64);
    np.nanvar / np.nanstd ignored dtype=float32 and were complex for complex values (NumPy:
    real |d|^2); an integer dtype= (NumPy rounds the mean and the result, or raises) is
    refused (found by bench/numpy_coverage.py's dtype= variants)."""
    a = np.abs(X) + 0.5
    if kind == "complex":
        a = a + 1j * X[::-1]
    elif kind == "nan":
        a[0, 1] = np.nan
    if dt is np.float32 and kind == "complex":
        with pytest.raises(vg.UnsupportedError, match="dtype"):
            vg.jit(lambda a: f(a, axis=0, dtype=dt))(a)
        return
    for ax in (0, None):
        assert_same(vg.jit(lambda a, ax=ax: f(a, axis=ax, dtype=dt))(a),
                    np.asarray(f(a, axis=ax, dtype=dt)), rtol=1e-5)
    with pytest.raises(vg.UnsupportedError, match="dtype=int64"):
        vg.jit(lambda a: f(a, axis=0, dtype=np.int64))(a)


@pytest.mark.parametrize("f", [np.std, np.var, np.nanstd, np.nanvar, np.matmul])
def test_out_holds_the_result(f):
    """np.nanstd(x, out=o) wrote the variance into o (it passed out= on to nanvar, then took
    the square root: a silent wrong buffer); np.var / np.std / np.matmul with out= were
    refused (found by bench/numpy_coverage.py's out= variants)."""
    def g(x):
        if f is np.matmul:
            o = np.zeros_like(x)
            r = f(x, x.T[:, :3] @ x, out=o)
        else:
            o = np.zeros_like(x[:, 0])
            r = f(x, axis=1, out=o, ddof=1)
        return o * 2.0 + r
    same_as_numpy(g, X)


IX = np.array([0, 5, 1, 3])
EITHER_REFUSED = [
    "np.float32(0) + max(ix[0], 2)", "max(ix[0], 2) + x32", "x32 * min(ix[1], 2)",
    "max(x[0], 0.0) + x32", "max([ix[0], 2, ix[2]]) + np.int8(1)", "(max(x[0], 0.0) * 2) + x32",
    "max(x.astype(np.float32)[0], 0.1)", "min(ix.astype(np.uint8)[0], 2) - 3", "sum(max(ix[i], 2) for i in range(4)) * x32"]
EITHER_OK = [
    "max(x[0], 0.0) + x", "max(x32[0], 0.0) + x32", "max(ix[0], 2) + x", "max(x[1], 0.5) * 2.0",
    "np.sqrt(max(ix[0], 2)) + x32", "max(ix[0], 2) * np.int64(3)", "x[max(ix[0], 1)]",
    "sum(max(x[i], 0.0) for i in range(4)) * x", "0 + max(x32[0], 0.0) + max(x32[1], 0.0) + x32",
    "np.asarray(max(x[0], 0.0), np.float32) + x32", "np.maximum(ix[0], 2) + x32", "max(x[0], x[1]) + x32"]


def _either(expr, x, ix):
    ns = {"np": np, "x32": x.astype(np.float32), "u8": np.array([1, 2, 3], np.uint8)}
    return eval(f"lambda x, ix: {expr}", ns)


@pytest.mark.parametrize("expr", EITHER_REFUSED)
def test_max_of_traced_values_and_python_numbers_refuses_a_value_dependent_dtype(expr):
    """`o = np.float32(0); o = o + max(ix[i], 2)` is float32 in NumPy where the Python int 2
    wins (weakly typed) and float64 where an np.int64 does: vecgrad gave float64 silently.
    Python's max / min of traced values and Python numbers is now either (an EitherScalar):
    where the cases' dtypes (or, for narrow ints, their arithmetic) differ it is refused with
    a typed error naming np.maximum (found by the semantics generator, session 22)."""
    x = X[0] * 3
    with pytest.raises(vg.TraceError, match=r"np\.(maximum|minimum)"):
        vg.jit(_either(expr, x, IX))(x, IX)


@pytest.mark.parametrize("expr", EITHER_OK)
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_max_of_traced_values_and_python_numbers_where_every_case_agrees(expr, sign):
    """Where every case gives one dtype (a float64 array, Python numbers, a NumPy function of
    it, an explicit cast) the value is NumPy's, whichever item wins."""
    x = X[0] * 3 * sign
    f = _either(expr, x, IX)
    want = np.asarray(f(x, IX))
    assert_same(vg.jit(f)(x, IX), want, rtol=1e-6 if want.dtype == np.float32 else 1e-10)
    if want.dtype == np.float64:
        central_diff_check(lambda x: vnp.sum(f(x, IX)), [x], argnums=(0,))


def test_returned_max_with_a_python_int_is_float64():
    """`max(loss, 0)` returns the int 0 in NumPy's program where 0 wins: vecgrad returns the
    value as its NumPy case's float64 (exactly), as the docstring of pybuiltins.returned
    says; a hinge loss summed over samples stays traceable."""
    def hinge(s, y):
        return sum(max(0, 1 - y[i] * s[i]) for i in range(4))
    s, y = X[0], np.array([1.0, -1.0, 1.0, -1.0])
    assert float(vg.jit(hinge)(s, y)) == float(hinge(s, y))
    central_diff_check(hinge, [s, y], argnums=(0,))


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2", "fmax", "fmin", "hypot",
                                  "subtract", "divide"])
@pytest.mark.parametrize("method", ["accumulate", "reduce"])
@pytest.mark.parametrize("shape, axis", [((3, 7), 1), ((3, 7), 0), ((3, 1), 1), ((5,), 0)])
def test_ufunc_scans_and_reductions_without_a_primitive(name, method, shape, axis):
    """np.logaddexp.accumulate (a log-space running total), np.hypot.reduce,
    np.subtract.reduce & co. were refused: associative ufuncs now scan by doubling and
    reduce pairwise (log2(n) whole-array steps), subtract / divide by their closed forms
    (found by bench/numpy_coverage.py)."""
    x = np.random.default_rng(2).uniform(0.5, 2.0, shape) * np.where(
        np.arange(np.prod(shape)).reshape(shape) % 3 == 0, -1, 1)

    def f(a):
        return getattr(getattr(np, name), method)(a, axis=axis)
    assert_same(vg.jit(f)(x), np.asarray(f(x)))
    same_as_numpy(f, x)
    assert_same(vg.jit(f)(x.astype(np.float32)), np.asarray(f(x.astype(np.float32))), rtol=1e-5)


@pytest.mark.parametrize("ord_", [None, 2, 0.5, 1.5, 3, -1, -2])
@pytest.mark.parametrize("x", [np.zeros(4), np.array([0.0, 1.0, -2.0, 0.0]),
                               np.array([[0.0, 0.0], [1.0, -2.0]])])
def test_norm_gradient_at_zeros_is_the_zero_subgradient(ord_, x):
    """The gradient of np.linalg.norm at a vector of zeros (and of a p-norm at zero entries)
    was nan (x / |x| = 0 / 0; |x|^(p-1) = inf at 0): central differences see 0, as vecgrad's
    std and hypot give (found by the corner styles, seed 520081: a norm of a row zeroed by
    `o2 * zeros`)."""
    def f(a):
        return vnp.sum(np.linalg.norm(a, ord_, axis=-1) * 1.5)
    g = vg.grad(f)(x)
    assert np.all(np.isfinite(g))
    if ord_ != 0.5 or not x.any():  # (|t|^0.5 at a zero entry of a nonzero row: central
        central_diff_check(f, [x], argnums=(0,))  # differences are off by eps^0.5 there)
    assert_same(vg.jit(lambda a: np.linalg.norm(a, ord_, axis=-1))(x),
                np.linalg.norm(x, ord_, axis=-1))


@pytest.mark.parametrize("fn, kw", [(np.cov, {}), (np.cov, {"rowvar": False}),
                                    (np.cov, {"bias": True}), (np.corrcoef, {}),
                                    (np.corrcoef, {"rowvar": False})])
def test_cov_and_corrcoef_of_complex_values_conjugate(fn, kw):
    """np.cov of complex data is X @ X^H / (n - 1): vecgrad left out the conjugate (a silent
    wrong matrix), and np.corrcoef divides by the real standard deviations and clips the
    real and imaginary parts each (found by the fuzz lane's complex probes)."""
    r = np.random.default_rng(3)
    z = r.standard_normal((3, 5)) + 1j * r.standard_normal((3, 5))
    for a in (z, z[0], z.astype(np.complex64)):
        assert_same(vg.jit(lambda a: fn(a, **kw))(a), np.asarray(fn(a, **kw)), rtol=1e-5)
    w = np.array([1, 2, 1, 3, 1])
    assert_same(vg.jit(lambda a: np.cov(a, fweights=w))(z), np.cov(z, fweights=w))
    same_as_numpy(lambda x: fn(x, **kw), X)


@pytest.mark.parametrize("expr, refused", [
    ("min(max(x[0], -1.0), 1.0) * x", False), ("x[max(ix[0], 1)] * 2", False),
    ("x[min(ix[1], 1)]", False), ("-max(x[0], 0.0) + x", False),
    ("np.exp(max(x[1], 0.0))", True), ("np.maximum(max(x[1], 0.0), 0.0)", True),
    ("np.stack([max(x[1], 0.5), max(x[2], 0.5)])", True),
    ("np.stack([max(x[1], 0.5), x[0]])", True)])
def test_either_in_folds_indices_numpy_functions_and_stacks(expr, refused):
    """A fold of a fold (a clip written with max and min) of float32 values was refused, as
    was a float32 array indexed at max(ix[k], 1): the inner result met the fold's selection
    and the gather as an operation with a dtype to weigh; a NumPy function of it alone
    (np.exp(max(x32[i], 0.0)): float32 or float64) and a stack of it (NumPy makes the number
    a float64 array) gave float32 silently (found by tests/fuzz_either.py)."""
    ns = {"np": np}
    f = eval(f"lambda x, ix: {expr}", ns)
    x, ix = np.array([1.0, -2.0, 3.0], np.float32), np.array([0, 2, 1])
    for v in (x, -x):
        if refused:
            with pytest.raises(vg.TraceError, match="depends on the values"):
                vg.jit(f)(v, ix)
        else:
            assert_same(vg.jit(f)(v, ix), np.asarray(f(v, ix)), rtol=1e-6)
