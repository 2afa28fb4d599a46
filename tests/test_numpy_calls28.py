"""NumPy calls that failed whole programs before session 28: np.place with a traced mask (was a
TraceError: its k-th selected entry takes vals[k % len(vals)], a running count), np.require
(was a TracedIntoNumpyError: NumPy's alias-or-copy by strides), np.packbits / np.unpackbits
of traced arrays (unsupported), and x[mask] op= v with an empty mask (an untyped ValueError
from argmax of an empty sequence: tests/test_fuzz_numpy.py seed 400537)."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import central_diff_check

import vecgrad as vg

RNG = np.random.default_rng(28)
X = RNG.standard_normal((4, 5))


def _placed(mask_of, vals_of):
    def f(x, v):
        y = x * 1.5
        np.place(y, mask_of(y), vals_of(v))
        return np.sum(y ** 2) + y[0, 0]
    return f


PLACES = [
    (lambda y: y < 0, lambda v: v[:1]), (lambda y: y < 0, lambda v: v[:3]),
    (lambda y: y > 0.5, lambda v: v), (lambda y: np.abs(y) > 9.0, lambda v: v[:2]),
    (lambda y: np.isfinite(y), lambda v: v[:4] * 2.0), (lambda y: (y < 0).ravel(), lambda v: v[:3]),
    (lambda y: y < 0, lambda v: v.reshape(2, 3)), (lambda y: y < 0, lambda v: [0.5, v[0]]),
]


@pytest.mark.parametrize("k", range(len(PLACES)))
def test_place_with_a_traced_mask(k):
    """Values and gradients (in x and in vals) NumPy's; vals repeat cyclically over the
    selected entries in flat order; no entry selected, every entry selected."""
    f = _placed(*PLACES[k])
    v = RNG.standard_normal(6)
    for x in (X, -X, np.abs(X)):
        np.testing.assert_allclose(vg.jit(f)(x, v), f(x.copy(), v), rtol=1e-12)
        central_diff_check(f, [x, v], argnums=(0, 1))


def test_place_batched_equals_unbatched():
    f = _placed(lambda y: y < 0, lambda v: v[:3])
    v = RNG.standard_normal(6)
    xs = RNG.standard_normal((5, 4, 5))
    got = vg.jit(vg.vmap(f, in_axes=(0, None)))(xs, v)
    np.testing.assert_allclose(got, [f(x, v) for x in xs], rtol=1e-9)


def test_place_traced_mask_refusals():
    """Empty vals with a traced mask: NumPy raises only where the mask selects something
    (a TraceError at the line); a mask of another size: NumPy's ValueError."""
    def empty(x):
        y = x.copy()
        np.place(y, y < 0, [])
        return y

    def sized(x):
        y = x.copy()
        np.place(y, y[:2] < 0, [1.0])
        return y
    with pytest.raises(vg.TraceError, match="at least one value") as e:
        vg.jit(empty)(X)
    assert "test_numpy_calls28.py" in str(e.value)
    with pytest.raises(ValueError, match="same size"):
        vg.jit(sized)(X)


def test_require_aliases_or_copies_as_numpy():
    """np.require returns its input where the flags hold (a write through it reaches the
    input, as NumPy's) and a copy otherwise (a write does not): 'C' of a transpose copies,
    'F' of it aliases, 'O' of a view copies, a dtype makes a new array."""
    def f(x):
        y = np.require(x * 1.0, requirements="C")
        y[0] = 5.0
        z = x * 2.0
        w = np.require(z.T, requirements=["C"])
        w[0, 0] = 100.0
        v = np.require(z.T, requirements="F")
        v[1, 0] = -7.0
        o = np.require(z[1:], requirements=["O", "W"])
        o[0, 0] = 3.0
        e = np.require(z, np.float64, "E")
        e[2, 2] = 0.25
        return np.sum(y ** 2) + np.sum(z ** 2) + np.sum(w) + np.sum(o) + np.require(
            [x[0], x[1]]).sum() + np.sum(np.require(z, np.float32, "C")).astype(np.float64)
    want = f(X.copy())
    np.testing.assert_allclose(vg.jit(f)(X), want, rtol=1e-6)

    def g(x):  # (float64 throughout: the gradient)
        y = np.require(x * 1.0, requirements="C")
        y[0] = 5.0
        z = x * 2.0
        v = np.require(z.T, requirements=["F_CONTIGUOUS"])
        v[1, 0] = -7.0
        return np.sum(y ** 2) + np.sum(z ** 3) + np.sum(np.require(z.T, requirements="C"))
    central_diff_check(g, [X], argnums=(0,))
    with pytest.raises(ValueError, match="both"):
        vg.jit(lambda x: np.require(x * 1.0, requirements="CF"))(X)


@pytest.mark.parametrize("axis", [None, 0, 1, -1, 2])
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_unpackbits(axis, bitorder):
    """NumPy's bytes and bits: bools and ints (nonzero: 1), a short last byte, count= keeping,
    dropping and padding bits; uint8 results of NumPy's shapes."""
    x = RNG.standard_normal((3, 5, 11))
    k = RNG.integers(-3, 4, (3, 5, 11))
    for count in (None, 3, -5, 200, 0):
        def f(x, k, count=count):
            p = np.packbits(x > 0, axis=axis, bitorder=bitorder)
            q = np.packbits(k, axis=axis, bitorder=bitorder)
            return p, q, np.unpackbits(p, axis=axis, count=count, bitorder=bitorder)
        for w, g in zip(f(x, k), vg.jit(f)(x, k)):
            assert g.dtype == w.dtype == np.uint8
            np.testing.assert_array_equal(g, w)


def test_packbits_batched_and_differentiated_through():
    def h(x):
        bits = np.unpackbits(np.packbits(x > 0))[: x.shape[0]]
        return np.sum(bits * x ** 2)
    xs = RNG.standard_normal((4, 11))
    np.testing.assert_allclose(vg.jit(vg.vmap(h))(xs), [h(r) for r in xs], rtol=1e-9)
    central_diff_check(h, [xs[0]], argnums=(0,))
    with pytest.raises(TypeError, match="integer or boolean"):
        vg.jit(lambda x: np.packbits(x))(xs)
    with pytest.raises(TypeError, match="unsigned byte"):
        vg.jit(lambda x: np.unpackbits(x > 0))(xs)


@pytest.mark.parametrize("rows", [slice(4, 3, -1), slice(2, 2), slice(0, 0)])
def test_masked_update_of_an_empty_array(rows):
    """x[mask] *= -1 where x (and the mask) are empty: nothing changes, as in NumPy (an
    argmax of an empty sequence was raised while tracing)."""
    def f(s):
        w = s[rows]
        v = np.int64(3) - w
        v[v < 0] *= -1
        z = s[:, :0] * 1.0
        z[z > 1] = 0.0
        return np.sum(v ** 2) + np.sum(z) + np.sum(s ** 2)
    s = RNG.standard_normal((4, 2)) * 5
    np.testing.assert_allclose(vg.jit(f)(s), f(s), rtol=1e-12)
    central_diff_check(f, [s], argnums=(0,))


WHERES = [
    # (program, its arguments): masks past the leading axis, read per sample then summed
    (lambda T, g: sum(np.sum(np.sum(t[..., g > 0], axis=-1) ** 2) for t in T),
     lambda r: (r.standard_normal((6, 3, 7)), r.standard_normal(7))),
    (lambda X, g: sum(np.mean(x[g > 0]) ** 2 for x in X),
     lambda r: (r.standard_normal((5, 8)), np.abs(r.standard_normal(8)) * np.sign(np.arange(8) - 1))),
    (lambda X, g: np.sum(np.where(g > 0, np.where(g > 0, X, X ** 2), 0.5) ** 2),
     lambda r: (r.standard_normal((4, 6)), r.standard_normal(6))),
    (lambda X, g: np.sum(np.where(g > 0, 1.0, np.where(g > 0, X, -X)) * X),
     lambda r: (r.standard_normal((4, 6)), r.standard_normal(6))),
]


@pytest.mark.parametrize("k", range(len(WHERES)))
def test_selection_of_a_selection_by_one_mask(k):
    """where(m, where(m, x, y), z) is where(m, x, z): a masked read's fill (argmax, take_along)
    is not computed any more where the selection is reduced as it is; values, gradients and
    batching as before. (Where an elementwise function reads the selection, the fill stays:
    f runs on selected values only, as NumPy's, so that no NaN of f' at an unselected entry
    reaches the gradient.)"""
    from test_batch import check

    from vecgrad import primitives as P
    f, make = WHERES[k]
    args = make(np.random.default_rng(k))
    e = check(f, args, 0)
    g = e.stages["final"]
    assert not any(q.prim in (P.argmax, P.take_along) for q in g.eqns), vg.ir.pretty(g)
    nested = [q for q in g.eqns if q.prim is P.where and any(
        (d := next((p for p in g.eqns if p.out is a), None)) is not None and d.prim is P.where
        and d.inputs[0] is q.inputs[0] for a in q.inputs[1:])]
    assert not nested, vg.ir.pretty(g)


def test_selection_read_by_a_function_keeps_its_fill():
    """sqrt(x[g > 0]) per sample: the unselected entries (negative, 0) never reach sqrt or
    its derivative (a NaN there would reach the gradient through 0 * inf)."""
    def f(T, g):
        return sum(np.sum(np.sqrt(t[:, g > 0]) * 2.0) for t in T)
    T = np.abs(np.random.default_rng(3).standard_normal((5, 4, 6))) + 0.1
    T[:, :, 1] = -1.0
    T[:, :, 4] = 0.0
    g = np.array([1.0, -1.0, 2.0, 0.5, -3.0, 1.0])
    grad = vg.grad(f)(T, g)
    assert np.isfinite(grad).all()
    np.testing.assert_allclose(vg.jit(f)(T, g), f(T, g), rtol=1e-12)
    central_diff_check(f, [T, g], argnums=(0,))


def test_selection_of_a_selection_keeps_a_broadcast_shape():
    """where(m, where(m, x, y), z) with y the only operand of the result's full shape keeps
    the inner selection (dropping y would change the shape)."""
    def f(x, y):
        m = np.array([True, False, True])
        return np.sum(np.where(m, np.where(m, x, y), 0.5) * y)
    x, y = np.array([1.0, 2.0, 3.0]), np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(vg.jit(f)(x, y), f(x, y))
    central_diff_check(f, [x, y], argnums=(0, 1))


BINS = [np.array([-1.0, 0.0, 0.5, 2.0]), np.array([2.0, 0.5, 0.0, -1.0]),
        np.array([0.0, 0.0, 1.0, 1.0]), np.array([1.0, 1.0, 1.0]), np.array([1.0, np.nan, 3.0]),
        np.array([np.nan, 1.0, 0.0]), np.array([0.5]), np.array([3.0, 3.0, 1.0, 1.0])]


@pytest.mark.parametrize("k", range(len(BINS)))
@pytest.mark.parametrize("right", [False, True])
def test_digitize_with_traced_bins(k, right):
    """np.digitize(x, bins) with learned (traced) bins: NumPy's indices for increasing,
    decreasing, repeated and NaN-holding bins (the direction as NumPy's check picks it), and
    a gradient through values weighted by the bin each x falls in."""
    x = np.array([-2.0, -1.0, 0.0, 0.25, 0.5, 1.0, 2.0, 3.0, np.nan])

    def f(x, b):
        return np.digitize(x, b, right=right)

    def g(x, b):
        i = np.digitize(x[:-1], b * 1.0, right=right)
        return np.sum(np.where(i % 2 == 0, x[:-1] ** 2, x[:-1]))
    b = BINS[k]
    got = vg.jit(f)(x, b)
    assert got.dtype == f(x, b).dtype
    np.testing.assert_array_equal(got, f(x, b))
    np.testing.assert_allclose(vg.jit(g)(x, b), g(x, b))
    central_diff_check(lambda x: g(x, b), [x + 0.01], argnums=(0,))


def test_digitize_traced_bins_not_monotonic_raises_where_it_runs():
    def f(x, b):
        return np.digitize(x, b)
    jf = vg.jit(f)
    x = np.array([0.5, 1.5])
    np.testing.assert_array_equal(jf(x, np.array([0.0, 1.0, 2.0])), [1, 2])
    with pytest.raises(ValueError, match="monotonically"):
        jf(x, np.array([0.0, 2.0, 1.0]))
    # batched: each sample's bins checked
    bs = np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])
    np.testing.assert_array_equal(vg.jit(vg.vmap(f, in_axes=(None, 0)))(x, bs),
                                  [f(x, b) for b in bs])
    with pytest.raises(ValueError, match="monotonically"):
        vg.jit(vg.vmap(f, in_axes=(None, 0)))(x, np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0]]))


SERIES = [np.polynomial.polynomial.polyval, np.polynomial.chebyshev.chebval,
          np.polynomial.legendre.legval]


@pytest.mark.parametrize("fn", SERIES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_series_with_traced_coefficients_and_points(fn, n):
    """numpy.polynomial's polyval / chebval / legval of traced x and c (a TracedIntoNumpyError
    before: NumPy's make a plain array of c): NumPy's values (its recurrences step for step),
    shapes for 2-d coefficients with tensor True and False, int coefficients, x a list, a
    scalar, an array; gradients in x and c; batched equals unbatched."""
    from numpy.polynomial import chebyshev, legendre, polynomial  # noqa: F401 (as users import)
    r = np.random.default_rng(n)
    x, c = r.uniform(-1, 1, 6), r.standard_normal(n)
    C = r.standard_normal((n, 6))
    name = fn.__name__
    mod = {"polyval": "polynomial", "chebval": "chebyshev", "legval": "legendre"}[name]
    progs = [
        f"lambda x, c: np.sum(np.polynomial.{mod}.{name}(x, c) ** 2)",
        f"lambda x, c: np.polynomial.{mod}.{name}(x[2], c) * 1.5",
        f"lambda x, c: np.sum(np.polynomial.{mod}.{name}([x[0], x[1]], c))",
        f"lambda x, c: np.sum({mod}.{name}(x, np.arange(1, {n + 1})) * x)",
        f"lambda x, c: np.sum({mod}.{name}(x.reshape(2, 3), c) ** 2)",
    ]
    for src in progs:
        f = eval(src, {"np": np, mod: getattr(np.polynomial, mod)})
        np.testing.assert_allclose(vg.jit(f)(x, c), f(x, c), rtol=1e-13)
        central_diff_check(f, [x, c], argnums=(0, 1))
    for tensor in (True, False):
        def g(x, C, tensor=tensor):
            return getattr(np.polynomial, mod).__dict__[name](x, C, tensor=tensor)
        want = g(x, C)
        got = vg.jit(g)(x, C)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-13)
    h = eval(progs[0], {"np": np})
    xs = r.uniform(-1, 1, (4, 6))
    np.testing.assert_allclose(vg.jit(vg.vmap(h, in_axes=(0, None)))(xs, c),
                               [h(x, c) for x in xs], rtol=1e-9)


ACCUMULATES = ["power", "arctan2", "copysign", "fmod", "hypot", "subtract", "float_power",
               "nextafter", "heaviside"]


@pytest.mark.parametrize("name", ACCUMULATES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_accumulate_of_a_binary_ufunc_step_by_step(name, axis):
    """np.<ufunc>.accumulate for binary ufuncs with no scan (power, arctan2, copysign: an
    UnsupportedError before): NumPy's left fold out[k] = f(out[k-1], a[k]) along the axis,
    its values and dtype (int arrays too), gradients, batched equals unbatched."""
    r = np.random.default_rng(len(name))
    X = np.abs(r.standard_normal((3, 4))) + 0.5
    ufunc = getattr(np, name)

    def f(X):
        return ufunc.accumulate(X, axis=axis)
    np.testing.assert_allclose(vg.jit(f)(X), f(X), rtol=1e-13)
    if name not in ("nextafter", "heaviside", "copysign", "fmod"):
        central_diff_check(lambda X: np.sum(f(X) ** 2), [X], argnums=(0,))
    np.testing.assert_allclose(vg.jit(vg.vmap(f))(np.stack([X, 2 * X])), [f(X), f(2 * X)],
                               rtol=1e-9)


def test_accumulate_step_by_step_dtypes():
    """Int arrays keep their dtype (np.power.accumulate of ints, floor_divide); a ufunc
    whose result has another dtype raises a TypeError as NumPy's."""
    k = np.array([[2, 3, 2], [1, 5, 2]])
    for ufunc in (np.power, np.floor_divide, np.remainder, np.left_shift):
        def f(k, ufunc=ufunc):
            return ufunc.accumulate(k, axis=1)
        got, want = vg.jit(f)(k), f(k)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    with pytest.raises(TypeError):
        vg.jit(lambda x: np.greater.accumulate(x))(np.ones(3))
    with pytest.raises(vg.UnsupportedError, match="power.reduce"):
        vg.jit(lambda x: np.power.reduce(x))(np.ones(3))
